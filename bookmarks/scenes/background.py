"""Background synchronization for Play: memory is grounded ahead for the next speaker
while the writer reads and types, so that pressing Next finds the grounding ready and only
the actor call remains.

One `Prefetcher` per app runs its work on its own event loop thread. The rules:

- **One job per scene, always.** A new step (another speaker, a new line, an undo) supersedes
  the scene's job: the old one is cancelled, and stays tracked until its task has really
  ended, so `cancel`, `wait_idle` and `running` see every task the prefetcher started
  (`untracked` says whether any runs outside them). At most `concurrency` jobs run at
  once, so many open scenes do not flood one model server.
- **The branch epoch decides.** A prepared step commits its memory writes as ordinary
  versions, in one transaction, and only if nothing it may have read changed since it
  started (`Store.branch_epoch`: undo, edit, presence corrections, merges, bookmark edits
  and pins, cards). The store tells the prefetcher of each such change: the affected
  scenes' prepared steps are dropped and their jobs cancelled; deleting a story or a scene
  cancels its jobs.
- **Turns never wait blindly.** `take` hands a turn the step prepared for it, waiting for
  it when it is being prepared — with a bound, and not at all when partial memory is on
  (the turn then answers with the memory that is ready). A preparation that failed is
  reported once, to the turn that asked for its step, instead of being silently redone.

Versions at earlier points stay valid checkpoints whatever the writer does next, so a
step for another speaker or after a new line reads only the difference.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from bookmarks.config import Settings
from bookmarks.engine.ground import ground_at
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.progress import watch
from bookmarks.errors import BookmarksError, ModelError, NotFoundError, StaleMemoryError
from bookmarks.models.llm import LLM, scene_scope
from bookmarks.scenes.play import Prepared, play_memory
from bookmarks.store import Store

log = logging.getLogger(__name__)

WAIT_LIMIT = 600.0  # the longest a turn waits for its step being prepared (seconds)
_JOB: contextvars.ContextVar[_Job | None] = contextvars.ContextVar("bookmarks_job", default=None)


class PreparationFailedError(ModelError):
    """The background preparation of this very step failed; said once, to the turn."""


@dataclass(eq=False)
class _Job:
    scene_id: int
    story_id: int
    step: tuple
    started: float
    done: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)
    task: asyncio.Task | None = None
    cancelled: bool = False


class Prefetcher:
    def __init__(self, store: Store, llms: dict[str, LLM], *, window: int = 10,
                 state_block: int = 64, concurrency: int = 2,
                 settings: Callable[[], Settings] | None = None,
                 wait_limit: float = WAIT_LIMIT):
        self.store, self.llms = store, llms  # the app's dict: settings changes apply here too
        self._fixed = (window, state_block)
        self._settings = settings  # the app's current settings (scene window, state block)
        self.wait_limit = wait_limit
        self._loop = asyncio.new_event_loop()
        self._sem: asyncio.Semaphore | None = None
        self._concurrency = max(1, concurrency)
        self._current: dict[int, _Job] = {}  # scene → its one job (running or ended)
        self._live: set[_Job] = set()  # every job whose task has not ended yet
        self._ready: dict[int, Prepared] = {}
        self._failed: dict[int, tuple[tuple, str]] = {}  # scene → (step, why), said once
        self._lock = threading.Lock()
        # every task a job starts (its concurrent synchronizations) is known to be its own
        self._owners: weakref.WeakKeyDictionary[asyncio.Task, _Job] = weakref.WeakKeyDictionary()
        self._loop.set_task_factory(self._task_factory)
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="bookmarks-background-sync")
        self._thread.start()
        subscribe = getattr(store, "subscribe", None)
        if subscribe is not None:  # changes of what memory may read (see Store.subscribe)
            subscribe(self._on_change)

    @property
    def window(self) -> int:
        return self._settings().scene_window if self._settings else self._fixed[0]

    @property
    def state_block(self) -> int:
        return self._settings().state_block if self._settings else self._fixed[1]

    @property
    def partial_after(self) -> int:
        return self._settings().partial_after if self._settings else 0

    # -- what a step is --------------------------------------------------------------------
    def step_for(self, scene_id: int, character: str) -> tuple:
        """The step a turn of `character` would be now (see `generate_turn`)."""
        scene = self.store.scene(scene_id)
        lineage = Lineage.of(self.store, scene.branch_id)
        return (scene.branch_id, lineage.length(self.store) + 1, character,
                scene.method or "vanilla", int(scene.settings.get("budget", 3)),
                self.store.branch_epoch(scene.branch_id))

    # -- scheduling ------------------------------------------------------------------------
    def schedule(self, scene_id: int, character: str) -> tuple | None:
        """Prepare `character`'s next step in the background: a no-op when that step is
        being prepared or is ready (or the scene's method reads no memory); otherwise the
        scene's previous job is cancelled and this one takes its place."""
        scene = self.store.scene(scene_id)
        step = self.step_for(scene_id, character)
        if step[3] == "vanilla":
            return None
        with self._lock:
            job = self._current.get(scene_id)
            ready = self._ready.get(scene_id)
            if (job and job.step == step and not job.done.done() and not job.cancelled) \
                    or (ready and ready.step == step):
                return step
            if job is not None:
                self._stop(job)
            self._ready.pop(scene_id, None)
            self._failed.pop(scene_id, None)
            job = _Job(scene_id, scene.story_id, step, time.monotonic())
            self._current[scene_id] = job
            self._live.add(job)
        self._loop.call_soon_threadsafe(self._start, job)
        return step

    def _task_factory(self, loop: asyncio.AbstractEventLoop, coro, **kw) -> asyncio.Task:
        task = asyncio.Task(coro, loop=loop, **kw)
        job = _JOB.get()
        if job is not None:
            self._owners[task] = job
        return task

    def _start(self, job: _Job) -> None:  # on the loop
        if job.cancelled:
            self._ended(job, None)
            return
        job.task = self._loop.create_task(self._prepare(job))
        job.task.add_done_callback(lambda task: self._ended(job, task))

    def _ended(self, job: _Job, task: asyncio.Task | None) -> None:  # on the loop
        error: BaseException | None = None
        if task is not None and not task.cancelled():
            error = task.exception()
        with self._lock:
            self._live.discard(job)
            if error is not None and self._current.get(job.scene_id) is job and not job.cancelled:
                self._failed[job.scene_id] = (job.step, _reason(error))
        if error is not None and not isinstance(error, BookmarksError):
            log.error("background synchronization failed", exc_info=error)
        if task is None or task.cancelled() or job.cancelled:
            job.done.cancel()
            job.done.set_running_or_notify_cancel()  # wakes `concurrent.futures.wait`
        elif error is not None:
            job.done.set_exception(error)
        else:
            job.done.set_result(None)

    def _stop(self, job: _Job) -> None:
        """Cancel a job (under the lock); it stays in `_live` until its task has ended."""
        if job.cancelled:
            return
        job.cancelled = True

        def cancel() -> None:
            if job.task is not None:
                job.task.cancel()

        self._loop.call_soon_threadsafe(cancel)

    async def _prepare(self, job: _Job) -> None:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self._concurrency)
        async with self._sem:
            _JOB.set(job)  # the tasks this job starts are its own (see `untracked`)
            branch_id, position, character, method, budget, epoch = job.step
            scene_id = job.scene_id
            scene_scope.set(scene_id)
            watch(scene_id)
            started = time.perf_counter()
            try:
                scene = self.store.scene(scene_id)
                grounding, lines = await ground_at(
                    self.store, play_memory(self.llms["memory"]), story_id=scene.story_id,
                    lineage=Lineage.of(self.store, branch_id), position=position,
                    character=character, method=method, budget=budget, window=self.window,
                    state_block=self.state_block, scene_id=scene_id, scene_cast=scene.cast,
                    knowledge=scene.settings.get("knowledge", "omniscient"))
                if job.cancelled:
                    return  # superseded while the last call answered: nothing to keep
                self.store.commit_memory(grounding.writes, expect_epoch=(branch_id, epoch))
            except (StaleMemoryError, NotFoundError):
                return  # something it read changed, or the scene is gone: the step is void
            grounding.writes = type(grounding.writes)()  # committed: nothing left to write
            with self._lock:
                if self._current.get(scene_id) is job and not job.cancelled:
                    self._ready[scene_id] = Prepared(job.step, grounding, lines,
                                                     time.perf_counter() - started)

    # -- handing a step to its turn ----------------------------------------------------------
    async def take(self, scene_id: int, step: tuple, *, partial: int | None = None,
                   timeout: float | None = None) -> Prepared | None:
        """The prepared grounding of exactly this step, or None (the turn grounds itself).

        While the step is being prepared: with partial memory on (`partial` > 0; default
        the app's setting) the turn does not wait — it answers with what is ready; else it
        waits, at most `timeout` seconds (default `wait_limit`), after which the job is
        cancelled. A preparation of this step that failed raises PreparationFailedError,
        once: the turn reports it instead of redoing the same failing work."""
        partial = self.partial_after if partial is None else partial
        with self._lock:
            job = self._current.get(scene_id)
        if job is not None and job.step == step and not job.done.done() and not partial:
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(job.done)),
                                       timeout or self.wait_limit)
            except TimeoutError:
                with self._lock:
                    self._stop(job)
                log.warning("background preparation of scene %s took over %.0f s; the turn "
                            "grounds itself", scene_id, timeout or self.wait_limit)
            except (asyncio.CancelledError, concurrent.futures.CancelledError):
                if not job.done.cancelled():
                    raise  # the turn itself was cancelled
            except Exception:  # noqa: BLE001 - logged in _ended; reported once below
                pass
        with self._lock:
            failed = self._failed.get(scene_id)
            if failed is not None and failed[0] == step:
                del self._failed[scene_id]
                raise PreparationFailedError(
                    f"Preparing {step[2]}'s memory in the background failed: {failed[1]} "
                    "Try again when the model server answers.")
            ready = self._ready.get(scene_id)
            if ready is not None and ready.step == step:
                del self._ready[scene_id]
                return ready
        return None

    def status(self, scene_id: int) -> dict:
        """What the background is doing for a scene: idle, preparing (since when), ready,
        or failed (why; until the turn of that step has been told)."""
        with self._lock:
            job, ready = self._current.get(scene_id), self._ready.get(scene_id)
            failed = self._failed.get(scene_id)
        if job is not None and not job.done.done() and not job.cancelled:
            return {"state": "preparing", "character": job.step[2], "position": job.step[1],
                    "seconds": round(time.monotonic() - job.started, 1)}
        if ready is not None:
            return {"state": "ready", "character": ready.step[2], "position": ready.step[1],
                    "seconds": round(ready.seconds, 1)}
        if failed is not None:
            return {"state": "failed", "character": failed[0][2], "position": failed[0][1],
                    "error": failed[1]}
        return {"state": "idle"}

    # -- stopping --------------------------------------------------------------------------
    def cancel(self, scene_id: int) -> None:
        """Stop the scene's background work and forget what was prepared."""
        with self._lock:
            job = self._current.pop(scene_id, None)
            self._ready.pop(scene_id, None)
            self._failed.pop(scene_id, None)
            if job is not None:
                self._stop(job)

    def cancel_story(self, story_id: int) -> None:
        """Stop every scene's background work in a story (it is being deleted)."""
        with self._lock:
            scenes = [s for s, j in self._current.items() if j.story_id == story_id]
        for scene_id in scenes:
            self.cancel(scene_id)

    def _on_change(self, change: dict) -> None:
        """The store says something memory may read has changed (see Store.subscribe):
        every scene whose step no longer holds (its lineage's epoch moved, or it is gone)
        loses its prepared step and its job."""
        if change.get("kind") == "story_deleted":
            self.cancel_story(change["story_id"])
            return
        with self._lock:
            jobs = list(self._current.items())
        for scene_id, job in jobs:
            try:
                stale = self.store.branch_epoch(job.step[0]) != job.step[5]
            except NotFoundError:
                stale = True
            if stale:
                self.cancel(scene_id)

    def running(self) -> list[dict]:
        """Every job whose task has not ended, the cancelled ones included."""
        with self._lock:
            return [{"scene": j.scene_id, "step": j.step, "cancelled": j.cancelled}
                    for j in self._live]

    def untracked(self, timeout: float = 60.0) -> int:
        """How many tasks run on the prefetcher's loop outside its tracked jobs: neither a
        live job's task nor one that a live job started (always 0)."""
        async def count() -> int:
            tasks = asyncio.all_tasks() - {asyncio.current_task()}
            with self._lock:
                live = set(self._live)
            return sum(1 for t in tasks if not any(t is j.task for j in live)
                       and self._owners.get(t) not in live)

        return asyncio.run_coroutine_threadsafe(count(), self._loop).result(timeout)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until no background task runs (tests, shutdown); False on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                futures = [j.done for j in self._live]
            if not futures:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            concurrent.futures.wait(futures, timeout=left)

    def close(self) -> None:
        with self._lock:
            for job in list(self._live):
                self._stop(job)
            self._current.clear()
            self._ready.clear()
            self._failed.clear()
        unsubscribe = getattr(self.store, "unsubscribe", None)
        if unsubscribe is not None:
            unsubscribe(self._on_change)
        self.wait_idle(10.0)
        self._loop.call_soon_threadsafe(self._loop.stop)


def _reason(error: BaseException) -> str:
    return (str(error) or type(error).__name__)[:300]

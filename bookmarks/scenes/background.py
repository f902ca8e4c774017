"""Background synchronization for Play: memory is grounded ahead for the next speaker
while the writer reads and types, so that pressing Next finds the grounding ready and only
the actor call remains.

One `Prefetcher` per app runs its work on its own event loop thread. Per scene at most one
step is prepared at a time (single-flight: a turn for the same step waits for it instead of
doing it again); at most `concurrency` scenes are prepared at once, so many open scenes do
not flood one model server. A prepared step commits its memory writes as ordinary
versions, in one transaction, and only if no line of the scene was undone or edited since
it read them (the branch epoch); versions at earlier points stay valid checkpoints
whatever the writer does next, so a step for another speaker or after a new line reads
only the difference. Cancelling a scene stops its work.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from bookmarks.config import Settings
from bookmarks.engine.ground import ground_at
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.progress import watch
from bookmarks.errors import BookmarksError, StaleMemoryError
from bookmarks.models.llm import LLM, scene_scope
from bookmarks.scenes.play import Prepared
from bookmarks.store import Store

log = logging.getLogger(__name__)


@dataclass
class _Job:
    step: tuple
    future: concurrent.futures.Future
    started: float


class Prefetcher:
    def __init__(self, store: Store, llms: dict[str, LLM], *, window: int = 10,
                 state_block: int = 64, concurrency: int = 2,
                 settings: Callable[[], Settings] | None = None):
        self.store, self.llms = store, llms  # the app's dict: settings changes apply here too
        self._fixed = (window, state_block)
        self._settings = settings  # the app's current settings (scene window, state block)
        self._loop = asyncio.new_event_loop()
        self._sem: asyncio.Semaphore | None = None
        self._concurrency = max(1, concurrency)
        self._jobs: dict[int, _Job] = {}
        self._ready: dict[int, Prepared] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="bookmarks-background-sync")
        self._thread.start()

    @property
    def window(self) -> int:
        return self._settings().scene_window if self._settings else self._fixed[0]

    @property
    def state_block(self) -> int:
        return self._settings().state_block if self._settings else self._fixed[1]

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
        """Start preparing `character`'s next step in the background (no-op when it is
        already prepared or being prepared, or the scene's method reads no memory)."""
        step = self.step_for(scene_id, character)
        if step[3] == "vanilla":
            return None
        with self._lock:
            job = self._jobs.get(scene_id)
            ready = self._ready.get(scene_id)
            if (job and job.step == step and not job.future.done()) or (ready and ready.step == step):
                return step
            future = asyncio.run_coroutine_threadsafe(self._prepare(scene_id, step), self._loop)
            self._jobs[scene_id] = _Job(step, future, time.monotonic())
        return step

    async def _prepare(self, scene_id: int, step: tuple) -> None:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self._concurrency)
        async with self._sem:
            branch_id, position, character, method, budget, epoch = step
            scene_scope.set(scene_id)
            watch(scene_id)
            started = time.perf_counter()
            scene = self.store.scene(scene_id)
            grounding, lines = await ground_at(
                self.store, self.llms["memory"], story_id=scene.story_id,
                lineage=Lineage.of(self.store, branch_id), position=position,
                character=character, method=method, budget=budget, window=self.window,
                state_block=self.state_block, scene_id=scene_id, scene_cast=scene.cast,
                knowledge=scene.settings.get("knowledge", "omniscient"))

            try:
                self.store.commit_memory(grounding.writes, expect_epoch=(branch_id, epoch))
            except StaleMemoryError:
                return  # a line was undone or edited meanwhile: this step no longer exists
            grounding.writes = type(grounding.writes)()  # committed: nothing left to write
            with self._lock:
                self._ready[scene_id] = Prepared(step, grounding, lines,
                                                 time.perf_counter() - started)

    async def take(self, scene_id: int, step: tuple) -> Prepared | None:
        """The prepared grounding of exactly this step, waiting for it if it is being
        prepared right now (single-flight); None when there is none (or it failed: the
        turn then grounds itself and meets the error, if any, in the open)."""
        with self._lock:
            job = self._jobs.get(scene_id)
        if job is not None and job.step == step and not job.future.done():
            try:
                await asyncio.wrap_future(job.future)
            except (BookmarksError, asyncio.CancelledError, concurrent.futures.CancelledError):
                pass
            except Exception:  # noqa: BLE001 - logged; the turn grounds itself
                log.exception("background synchronization failed")
        with self._lock:
            ready = self._ready.get(scene_id)
            if ready is not None and ready.step == step:
                del self._ready[scene_id]
                return ready
        return None

    def status(self, scene_id: int) -> dict:
        """What the background is doing for a scene: idle, preparing (since when) or ready."""
        with self._lock:
            job, ready = self._jobs.get(scene_id), self._ready.get(scene_id)
        if job is not None and not job.future.done():
            return {"state": "preparing", "character": job.step[2], "position": job.step[1],
                    "seconds": round(time.monotonic() - job.started, 1)}
        if ready is not None:
            return {"state": "ready", "character": ready.step[2], "position": ready.step[1],
                    "seconds": round(ready.seconds, 1)}
        if job is not None and job.future.done() and not job.future.cancelled() \
                and job.future.exception() is not None:
            return {"state": "failed", "character": job.step[2], "position": job.step[1],
                    "error": str(job.future.exception())[:300]}
        return {"state": "idle"}

    def cancel(self, scene_id: int) -> None:
        """Stop the scene's background work and forget what was prepared."""
        with self._lock:
            job = self._jobs.pop(scene_id, None)
            self._ready.pop(scene_id, None)
        if job is not None:
            job.future.cancel()

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Block until no background work runs (tests, shutdown)."""
        with self._lock:
            futures = [j.future for j in self._jobs.values()]
        concurrent.futures.wait(futures, timeout=timeout)

    def close(self) -> None:
        with self._lock:
            jobs = list(self._jobs.values())
            self._jobs.clear()
            self._ready.clear()
        for job in jobs:
            job.future.cancel()
        self._loop.call_soon_threadsafe(self._loop.stop)

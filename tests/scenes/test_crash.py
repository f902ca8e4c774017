"""Crash safety: SIGKILL the worker process at points the test chooses — while a proposal,
a synchronization block or the actor's call is in flight, inside a turn's transaction
before it commits, and right after a commit — each kind several times. After each kill the
database passes an integrity check, every turn is whole, every bookmark's versions are
consistent with their checkpoints, no committed turn was lost, and the scene resumes.

No sleeps: the worker says where it is (tests/crash_worker.py) and the scripted server
holds the chosen request until the kill, so every kind of point is reached on any machine,
however busy."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from bookmarks.engine.lineage import Lineage
from bookmarks.memory import parse_content
from bookmarks.models.testing import ScriptedMemory
from bookmarks.models.transport import ChatRequest
from bookmarks.store import Store
from tests.conftest import ROOT
from tests.engine_helpers import generated_story
from tests.fake_server import scripted_server

# Where to kill: a model call of this kind in flight, or a point the worker reports.
# "sync": any synchronization block in flight (a state or behavioral block read alone, or
# the block read jointly for all of a step's bookmarks)
POINTS = ("propose", "sync", "act", "in-transaction", "committed")
SYNC_KINDS = ("state", "first_state", "behavioral", "concept", "joint")
ROUNDS = 3  # each point is hit this many times
WAIT = 120.0  # a generous bound on reaching a point: never a timing assumption


class PausingMemory(ScriptedMemory):
    """Fresh section titles every turn (so every turn synchronizes), and a request of the
    armed kind is held until the test has killed the worker."""

    def __init__(self):
        super().__init__()
        self.armed: str | None = None
        self.reached = threading.Event()
        self.release = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str:
        kind = self.kind(request)
        with self.lock:
            hold = kind == self.armed or (self.armed == "sync" and kind in SYNC_KINDS)
            if hold:
                self.armed = None
        if hold:
            self.reached.set()
            self.release.wait(WAIT)
        if kind == "propose":
            with self.lock:
                n = self.counts.get("propose", 0)
                self.counts["propose"] = n + 1
            who = "Ada" if "Ada acts next" in request.messages[-1]["content"] else "Ben"
            return json.dumps({"sections": [
                {"title": f"{who}'s plans, part {n}", "type": "state", "subject": who},
                {"title": f"{who}'s manner, part {n}", "type": "behavioral", "subject": who}]})
        return super().__call__(request)


class Worker:
    """The crash worker as a subprocess, its report lines read on a thread."""

    def __init__(self, tmp_path, url: str, scene_id: int):
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "crash_worker.py"), str(tmp_path), url,
             str(scene_id)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def next_line(self) -> str:
        try:
            line = self.lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError("the worker said nothing for two minutes") from None
        if line is None:
            raise AssertionError("the worker ended: " + self.proc.stderr.read()[-2000:])
        return line

    def go(self) -> None:
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def check(store: Store, scene_id: int) -> int:
    assert store.integrity_ok()
    scene = store.scene(scene_id)
    lineage = Lineage.of(store, scene.branch_id)
    end = lineage.length(store)
    turns = store.turns(scene_id)
    assert [t.idx for t in turns] == list(range(scene.start_point + 1, end + 1))
    for t in turns:
        if t.source == "model":
            kinds = [e["kind"] for e in store.turn_events(t.id)]
            assert "grounded" in kinds and "acted" in kinds  # never half a turn
    for v in store.db["bookmark_versions"].rows:
        bm = store.bookmark(v["bookmark_id"])
        parse_content(bm["type"], v["content"])  # whole, valid content
        assert v["p"] <= end - 1  # a checkpoint never runs ahead of the storyline
        if v["turn_id"] is not None:
            assert store.turn(v["turn_id"]).idx == v["p"] + 1  # written with its own turn
    orphans = store._one("SELECT COUNT(*) AS n FROM sync_costs WHERE turn_id IS NULL")["n"]
    assert orphans == 0
    return len(turns)


def kill_at(point: str, worker: Worker, memory: PausingMemory) -> int:
    """Run the worker until it reaches `point`, kill it there; the turns it said were
    committed before the kill."""
    committed = 0
    if point in ("in-transaction", "committed"):
        while True:
            line = worker.next_line()
            if line.startswith("committed"):
                committed = int(line.split()[1])
                if point == "committed":
                    break
            elif line == "in-transaction":
                if point == "in-transaction":
                    break
                worker.go()
    else:
        memory.reached.clear()
        memory.release.clear()
        memory.armed = point
        deadline = time.monotonic() + WAIT
        while not memory.reached.wait(0.05):  # answer the worker's commits meanwhile
            assert time.monotonic() < deadline, f"no {point} request in two minutes"
            if worker.proc.poll() is not None:
                raise AssertionError("the worker ended: " + worker.proc.stderr.read()[-2000:])
            try:
                line = worker.lines.get_nowait()
            except queue.Empty:
                continue
            if line == "in-transaction":
                worker.go()
            elif line and line.startswith("committed"):
                committed = int(line.split()[1])
    worker.kill()
    memory.release.set()
    return committed


def test_sigkill_at_every_kind_of_point(tmp_path):
    store = Store(tmp_path / "bookmarks.db")
    sid = store.add_story(generated_story(200))
    scene = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    store.close()
    memory = PausingMemory()
    turns_before = 0
    with scripted_server(memory) as url:
        for point in POINTS * ROUNDS:
            worker = Worker(tmp_path, url, scene.id)
            said = kill_at(point, worker, memory)
            store = Store(tmp_path / "bookmarks.db")
            turns = check(store, scene.id)
            store.close()
            # no committed turn is ever lost; a kill inside the transaction adds none
            assert turns >= max(said, turns_before), (point, turns, said, turns_before)
            if point == "committed":
                assert turns == said
            if point == "in-transaction":  # killed before this run's first commit
                assert turns == turns_before, (point, turns)
            turns_before = turns
    assert turns_before >= ROUNDS  # the scene kept resuming and growing

"""Crash safety: SIGKILL the process at random moments during synchronization, 20 times;
after each restart the database passes an integrity check, every turn is whole, every
bookmark's versions are consistent with their checkpoints, and the scene resumes."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

from bookmarks.lineage import Lineage
from bookmarks.llm import ChatRequest
from bookmarks.memory import parse_content
from bookmarks.store import Store
from bookmarks.testing import ScriptedMemory

from .conftest import ROOT
from .engine_helpers import generated_story
from .fake_server import scripted_server

KILLS = 20


class SlowMemory(ScriptedMemory):
    """Fresh section titles every turn and a little latency, so most time is spent syncing."""

    def __call__(self, request: ChatRequest) -> str:
        time.sleep(0.01)
        if self.kind(request) == "propose":
            n = self.counts.get("propose", 0)
            self.counts["propose"] = n + 1
            who = "Ada" if "Ada acts next" in request.messages[-1]["content"] else "Ben"
            return json.dumps({"sections": [
                {"title": f"{who}'s plans, part {n}", "type": "state", "subject": who},
                {"title": f"{who}'s manner, part {n}", "type": "behavioral", "subject": who}]})
        return super().__call__(request)


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


def test_sigkill_during_synchronization(tmp_path):
    store = Store(tmp_path / "bookmarks.db")
    sid = store.add_story(generated_story(200))
    scene = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    store.close()
    rng = random.Random(5)
    progress = []
    with scripted_server(SlowMemory()) as url:
        for _ in range(KILLS):
            proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "crash_worker.py"),
                                     str(tmp_path), url, str(scene.id)], cwd=ROOT,
                                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(rng.uniform(0.8, 2.0))
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            store = Store(tmp_path / "bookmarks.db")
            progress.append(check(store, scene.id))
            store.close()
    # the scene kept resuming and growing: committed turns are never lost to a kill (the
    # first kills may land before any turn when the machine is busy)
    assert progress == sorted(progress) and progress[-1] > 0

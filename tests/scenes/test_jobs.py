"""One background job per scene, always; creating a bookmark is idempotent.

A new step supersedes the scene's job: the old one is cancelled and tracked until its task
has ended (`cancel`, `wait_idle`, `running` and `untracked` see it); the two never both
create the same bookmarks. A bookmark's identity (story, space, type, subject, title,
compared normalized) is unique in the schema; a migration merges existing duplicates."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter

import pytest

from bookmarks.engine.grounding import MemoryWrites
from bookmarks.engine.recall import new_bookmark
from bookmarks.errors import ModelError
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.background import Prefetcher
from bookmarks.scenes.play import add_user_turn, generate_turn
from bookmarks.store import Store
from tests.conftest import make_llm
from tests.engine_helpers import generated_story

SECTIONS = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
            {"title": "Harbour gate", "type": "concept", "subject": "harbour gate"}]


def identities(store) -> Counter:
    return Counter((r["story_id"], r["space"], r["type"], r["subject"].casefold(),
                    " ".join(r["title"].casefold().split()))
                   for r in store.db["bookmarks"].rows)


@pytest.fixture
def setup(store):
    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=SECTIONS)
    fake = ScriptedFakeModel(default=script)
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=250, cast=["Ada", "Ben"], method="bookmarks",
                               settings={"budget": 3})
    pre = Prefetcher(store, llms, state_block=16)
    yield store, llms, fake, script, scene, pre
    fake.gate = None
    pre.close()


def test_a_new_step_supersedes_and_cancels_the_scene_job(setup):
    store, llms, fake, script, scene, pre = setup
    fake.gate = threading.Event()
    first = pre.schedule(scene.id, "Ada")
    assert fake.entered.wait(120)  # the first job is at the server
    add_user_turn(store, scene.id, "Ben", "The gate is sealed.")
    second = pre.schedule(scene.id, "Ada")  # the app schedules the next speaker again
    assert second != first
    jobs = pre.running()
    assert [j["step"] for j in jobs if not j["cancelled"]] == [second]
    assert pre.untracked() == 0  # the cancelled one is tracked until its task ends
    fake.gate.set()
    assert pre.wait_idle(120)
    assert pre.running() == [] and pre.untracked() == 0
    assert max(identities(store).values()) == 1  # no bookmark created twice
    # only the second step's memory was committed (the first never reached its commit)
    assert {v["p"] for v in store.db["bookmark_versions"].rows} == {251}
    assert pre.status(scene.id)["state"] == "ready"


def test_cancel_and_wait_idle_see_a_superseded_job_until_it_ends(setup):
    store, llms, fake, script, scene, pre = setup
    fake.gate = threading.Event()
    pre.schedule(scene.id, "Ada")
    assert fake.entered.wait(120)
    pre.schedule(scene.id, "Ben")  # another speaker: supersedes
    pre.cancel(scene.id)
    assert all(j["cancelled"] for j in pre.running())
    fake.gate.set()
    assert pre.wait_idle(120) and pre.running() == []
    assert pre.status(scene.id)["state"] == "idle"
    assert not list(store.db["bookmark_versions"].rows)


def test_a_turn_and_a_background_job_create_each_bookmark_once(setup):
    store, llms, fake, script, scene, pre = setup
    fake.gate = threading.Event()
    pre.schedule(scene.id, "Ada")
    assert fake.entered.wait(120)

    async def turn():
        return await generate_turn(store, llms, scene.id, "Ben", state_block=16)

    result: dict = {}
    worker = threading.Thread(target=lambda: result.update(turn=run_sync(turn())))
    worker.start()
    fake.gate.set()
    worker.join(120)
    assert pre.wait_idle(120) and "turn" in result
    assert max(identities(store).values()) == 1


class OneFailsOneWaits(ScriptedFakeModel):
    """Test double: the concept synchronization fails at once, the state one waits."""

    def __init__(self):
        self.script = ScriptedMemory(sections=SECTIONS)
        super().__init__(default=self.script, sync_mode="separate")
        self.held, self.waiting = threading.Event(), threading.Event()

    async def chat(self, request):
        kind = self.script.kind(request)
        if kind == "concept":
            raise ModelError("The model server refused: injected")
        if kind in ("state", "first_state"):
            self.waiting.set()
            await asyncio.to_thread(self.held.wait, 120)
        return await super().chat(request)


def test_a_failed_synchronization_leaves_none_of_its_siblings_running(store):
    """One of a step's synchronizations fails while another is at the server: the job
    ends only once the other has been cancelled (it used to run on, untracked)."""
    sid = store.add_story(generated_story(300))
    fake = OneFailsOneWaits()
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=250, cast=["Ada", "Ben"], method="bookmarks",
                               settings={"budget": 3})
    pre = Prefetcher(store, llms, state_block=16)
    try:
        pre.schedule(scene.id, "Ada")
        assert fake.waiting.wait(60)  # the state synchronization is at the server
        assert pre.wait_idle(60)  # the concept one failed: the job ended
        assert pre.status(scene.id)["state"] == "failed"
        assert pre.untracked() == 0 and pre.running() == []
    finally:
        fake.held.set()
        pre.close()


def test_creating_a_bookmark_is_idempotent(store):
    sid = store.add_story(generated_story(50))
    trunk = store.story(sid).trunk_id
    a = new_bookmark(sid, "story", "Ada", "state", "Ada's standing with Ben")
    b = new_bookmark(sid, "story", "ada ", "state", "  ada's standing  WITH ben.")
    for bm in (a, b):  # two steps, each believing the bookmark is new
        store.commit_memory(MemoryWrites(new_bookmarks=[bm]))
    assert a.id == b.id and store.db["bookmarks"].count == 1
    assert new_bookmark(sid, "story", "ADA", "state", "Ada's standing with Ben", store).id == a.id
    # another type, subject or space is another bookmark
    for other in (new_bookmark(sid, "story", "Ada", "concept", "Ada's standing with Ben"),
                  new_bookmark(sid, "story@Ada", "Ada", "state", "Ada's standing with Ben")):
        store.commit_memory(MemoryWrites(new_bookmarks=[other]))
        assert other.id != a.id
    assert trunk


def test_the_migration_merges_existing_duplicates(tmp_path):
    from tests.tools import old_database

    path = tmp_path / "old.db"
    db = old_database(path, "m010_bookmark_identity", n_actions=10)
    for n, title in enumerate(["Harbour gate", "harbour gate", "Harbour  Gate.", "Tide"], 1):
        db["bookmarks"].insert({"id": n, "story_id": 1, "space": "story", "subject": "harbour gate",
                                "type": "concept", "title": title, "pinned": int(n == 3),
                                "created_at": "t"})
        db["bookmark_versions"].insert({"bookmark_id": n, "branch_id": 1, "p": n,
                                        "content": "{}", "created_at": "t"})
        db["match_decisions"].insert({"story_id": 1, "space": "story", "proposal": "x",
                                      "bookmark_id": n, "decision": "new"})
    db.conn.close()
    store = Store(path)
    rows = list(store.db["bookmarks"].rows)
    assert [(r["id"], r["title"]) for r in rows] == [(1, "Harbour gate"), (4, "Tide")]
    # a duplicate's pin is kept (as the story-wide override it became in m011)
    assert [(o["bookmark_id"], o["branch_id"], o["pinned"])
            for o in store.db["bookmark_overrides"].rows] == [(1, 1, 1)]
    versions = store.db.execute("SELECT bookmark_id, p FROM bookmark_versions ORDER BY p").fetchall()
    assert versions == [(1, 1), (1, 2), (1, 3), (4, 4)]
    assert {r["bookmark_id"] for r in store.db["match_decisions"].rows} == {1, 4}
    assert any(i.unique and i.name == "bookmark_identity" for i in store.db["bookmarks"].indexes)
    store.close()

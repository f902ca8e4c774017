"""The Bookmarks engine on the scripted fake model: reuse, branches, matching, costs."""

from __future__ import annotations

import math

import pytest

from bookmarks.engine.lineage import Lineage
from bookmarks.engine.recall import visible_bookmarks
from bookmarks.errors import ModelError
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.play import generate_turn
from tests.conftest import make_llm
from tests.engine_helpers import generated_story, ground, kinds

HARBOUR = {"title": "Harbour gate schedule", "type": "concept", "subject": "harbour gate"}
ADA_STATE = {"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"}
ADA_HABITS = {"title": "Ada Penrose habits of speech", "type": "behavioral", "subject": "Ada"}


@pytest.fixture
def story_id(store):
    return store.add_story(generated_story())


def memory(sections, **kw):
    script = ScriptedMemory(sections=sections, **kw)
    return ScriptedFakeModel(default=script), script


def test_reused_bookmark_reads_only_the_new_suffix(store, story_id):
    fake, _ = memory([HARBOUR])
    llm = make_llm(fake, store)
    g1 = ground(store, llm, story_id, 100)
    (init,) = kinds(g1, "initialized")
    (sync1,) = kinds(g1, "synchronized")
    assert init["p"] == 0 and (sync1["p_old"], sync1["p_new"], sync1["actions_read"]) == (0, 99, 99)
    g2 = ground(store, llm, story_id, 150)
    (reused,) = kinds(g2, "reused")
    (sync2,) = kinds(g2, "synchronized")
    assert reused["from_p"] == 99 and reused["bookmark"] == init["bookmark"]
    assert (sync2["p_old"], sync2["p_new"], sync2["actions_read"]) == (99, 149, 150 - 1 - 99)
    history = store.bookmark_history(init["bookmark"])
    assert [v["p"] for v in history] == [99, 149]
    assert "update" in history[0]["content"] and history[1]["content"] != history[0]["content"]


def test_versions_are_immutable(store, story_id):
    fake, _ = memory([HARBOUR])
    llm = make_llm(fake, store)
    ground(store, llm, story_id, 100)
    before = store.db["bookmark_versions"].rows.__next__()
    ground(store, llm, story_id, 200)
    assert store.db["bookmark_versions"].get(before["id"]) == before


def test_new_section_starts_at_zero(store, story_id):
    fake, script = memory([HARBOUR])
    llm = make_llm(fake, store)
    ground(store, llm, story_id, 100)
    script.sections = [ADA_STATE]
    g = ground(store, llm, story_id, 150)
    (sync,) = kinds(g, "synchronized")
    assert kinds(g, "initialized") and sync["p_old"] == 0 and sync["actions_read"] == 149
    appended = kinds(g, "state_appended")
    assert len(appended) == math.ceil(149 / 64) and appended[0]["before"] == ""


def test_branch_isolation_and_earlier_scene(store, story_id):
    fake, _ = memory([HARBOUR])
    llm = make_llm(fake, store)
    ground(store, llm, story_id, 41)  # trunk version at p = 40
    ground(store, llm, story_id, 100)  # trunk version at p = 99
    trunk = Lineage.of(store, store.story(story_id).trunk_id)
    scene = store.create_scene(story_id, start_point=120, cast=["Ada", "Ben"])
    branch = Lineage.of(store, scene.branch_id)
    store.add_turn(scene.id, character="Ben", text="A new line about the harbour gate.", source="user")
    g = ground(store, llm, story_id, 122, lineage=branch)
    (sync,) = kinds(g, "synchronized")
    assert (sync["p_old"], sync["p_new"]) == (99, 121)
    assert [b.p for b in visible_bookmarks(store, story_id, "test", trunk, 199)] == [99]
    assert [b.p for b in visible_bookmarks(store, story_id, "test", branch, 199)] == [121]
    # a scene started earlier than the latest trunk checkpoint reuses the older version
    early = Lineage.of(store, store.create_scene(story_id, start_point=60, cast=["Ada"]).branch_id)
    g = ground(store, llm, story_id, 61, lineage=early)
    (reused,) = kinds(g, "reused")
    (sync,) = kinds(g, "synchronized")
    assert reused["from_p"] == 40 and (sync["p_old"], sync["actions_read"]) == (40, 20)
    # and one started before any checkpoint initializes the same bookmark from p = 0
    first = Lineage.of(store, store.create_scene(story_id, start_point=30, cast=["Ada"]).branch_id)
    g = ground(store, llm, story_id, 31, lineage=first)
    assert kinds(g, "initialized")[0]["bookmark"] == reused["bookmark"]
    assert len(store.bookmarks(story_id, "test")) == 1


def test_equivalent_proposal_reuses_and_decision_is_remembered(store, story_id):
    fake, script = memory([HARBOUR], decide="reuse")
    llm = make_llm(fake, store)
    ground(store, llm, story_id, 100)
    script.sections = [{"title": "Schedule of the harbour gate", "type": "concept",
                        "subject": "Harbour Gate"}]
    g = ground(store, llm, story_id, 120)
    (reused,) = kinds(g, "reused")
    assert reused["asked"] == 1 and reused["proposed_title"] == "Schedule of the harbour gate"
    asks = script.counts["match"]
    g = ground(store, llm, story_id, 130)
    assert kinds(g, "reused")[0]["asked"] == 0 and script.counts["match"] == asks


def test_model_saying_new_initializes(store, story_id):
    fake, script = memory([HARBOUR], decide="new")
    llm = make_llm(fake, store)
    ground(store, llm, story_id, 100)
    script.sections = [{"title": "Harbour gate opening hours", "type": "concept",
                        "subject": "harbour gate"}]
    g = ground(store, llm, story_id, 120)
    assert kinds(g, "initialized") and script.counts["match"] == 1


@pytest.mark.parametrize("other", [
    {"title": "Harbour gate schedule", "type": "concept", "subject": "Ben"},
    {"title": "Harbour gate schedule", "type": "state", "subject": "harbour gate"},
])
def test_different_subject_or_type_never_matches(store, story_id, other):
    fake, script = memory([HARBOUR], decide="reuse")
    llm = make_llm(fake, store)
    ground(store, llm, story_id, 100)
    script.sections = [other]
    g = ground(store, llm, story_id, 120)
    assert kinds(g, "initialized") and not kinds(g, "reused")
    assert script.counts.get("match", 0) == 0


def test_duplicate_proposals_collapse_and_budget_is_respected(store, story_id):
    sections = [HARBOUR, {**HARBOUR, "title": "harbour  gate SCHEDULE"}, ADA_STATE, ADA_HABITS]
    fake, _ = memory(sections)
    g = ground(store, make_llm(fake, store), story_id, 100, budget=3)
    assert len(kinds(g, "proposed")) == 3  # duplicate dropped, then capped at K = 3
    assert len(kinds(g, "synchronized")) == 3


def test_pronoun_titles_are_dropped(store, story_id):
    fake, _ = memory([{"title": "his plan", "type": "state", "subject": "Ada"}, HARBOUR])
    g = ground(store, make_llm(fake, store), story_id, 100)
    assert [e["title"] for e in kinds(g, "proposed")] == [HARBOUR["title"]]


def test_behavioral_sync_filters_in_batches(store, story_id):
    fake, script = memory([ADA_HABITS], keep=[1, 2])
    fake.sync_mode = "separate"  # sync.py's per-bookmark rule (block-major: test_read_once)
    g = ground(store, make_llm(fake, store), story_id, 200)
    ada_actions = sum(1 for a in generated_story().actions[:199] if a.character == "Ada")
    assert script.counts["behavioral"] == math.ceil(ada_actions / 16) <= 199 // 16
    assert "→ Ada:" in g.text
    assert len([p for p in g.pieces if p.evidence]) == 1


def test_concept_without_mentions_makes_no_call(store, story_id):
    fake, script = memory([{"title": "The lighthouse lamp", "type": "concept",
                            "subject": "lighthouse lamp"}])
    g = ground(store, make_llm(fake, store), story_id, 100)
    assert "concept" not in script.counts
    assert kinds(g, "synchronized")[0]["calls"] == 0


def test_syncs_run_concurrently():
    from bookmarks.store import Store

    three = [HARBOUR, {"title": "Ada in the harbour", "type": "concept", "subject": "Ada"},
             {"title": "Ben at the gate", "type": "concept", "subject": "Ben"}]
    in_flight = []
    for concurrency in (4, 1):
        store = Store(":memory:")
        sid = store.add_story(generated_story())
        fake = ScriptedFakeModel(default=ScriptedMemory(sections=three), delay=0.05,
                                 sync_mode="separate")  # each sync on its own
        import bookmarks.engine.methods as methods
        from bookmarks.engine.method_bookmarks import BookmarksOptions
        opts = BookmarksOptions(concurrency=concurrency)
        lineage = Lineage.of(store, store.story(sid).trunk_id)
        grounder = methods.make_grounder("bookmarks", store, make_llm(fake, store), options=opts)
        from bookmarks.engine.grounding import GroundRequest
        req = GroundRequest(story_id=sid, story_title="G", lineage=lineage, position=60,
                            character="Ada", scene=[], cast=["Ada", "Ben"], space="c")
        g = run_sync(grounder.ground(req))
        in_flight.append(fake.max_in_flight)
        assert len(kinds(g, "synchronized")) == 3
    # three independent syncs run side by side with 4 slots, one at a time with 1
    assert in_flight == [3, 1]


def test_turn_result_does_not_depend_on_completion_order(store, story_id):
    import random

    sections = [HARBOUR, ADA_STATE, ADA_HABITS]
    outputs = []
    for seed in (1, 2):
        rng = random.Random(seed)
        fake = ScriptedFakeModel(default=ScriptedMemory(sections=sections))
        original = fake.chat

        async def jittery(req, original=original, rng=rng):
            import asyncio
            await asyncio.sleep(rng.random() * 0.05)
            return await original(req)

        fake.chat = jittery
        g = ground(store, make_llm(fake), story_id, 100, space=f"order{seed}", commit=False)
        outputs.append((g.text, [(e["kind"], e.get("title")) for e in g.events]))
    assert outputs[0] == outputs[1]


def _counts(store):
    return {t: store.db[t].count for t in ("turns", "turn_events", "bookmarks",
                                           "bookmark_versions", "sync_costs", "match_decisions")}


def test_model_error_mid_turn_leaves_database_unchanged(store, story_id):
    fake, script = memory([HARBOUR, ADA_STATE])
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(story_id, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    before = _counts(store)
    versions_before = list(store.db["bookmark_versions"].rows)
    calls = {"n": 0}
    inner = script.__call__

    def failing(request):
        calls["n"] += 1
        if script.kind(request) in ("state", "joint"):
            raise ModelError("The model server answered HTTP 401: bad key")
        return inner(request)

    fake.default = failing
    store.add_turn(scene.id, character="Ben", text="The harbour gate is open now.", source="user")
    before = _counts(store)
    with pytest.raises(ModelError, match="HTTP 401"):
        run_sync(generate_turn(store, llms, scene.id, "Ada"))
    assert _counts(store) == before
    assert list(store.db["bookmark_versions"].rows) == versions_before
    # once the model works again, the same turn succeeds
    fake.default = script
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada"))
    assert turn.idx == 153


def test_turn_commits_events_and_memory_together(store, story_id):
    fake, _ = memory([HARBOUR])
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(story_id, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada"))
    kinds_ = [e["kind"] for e in store.turn_events(turn.id)]
    assert kinds_[:3] == ["proposed", "initialized", "synchronized"] and "grounded" in kinds_
    (version,) = store.db["bookmark_versions"].rows
    assert version["turn_id"] == turn.id and version["branch_id"] == scene.branch_id
    (cost,) = store.sync_costs(story_id)
    assert cost["turn_id"] == turn.id
    grounded = next(e for e in store.turn_events(turn.id) if e["kind"] == "grounded")
    assert grounded["pieces"][0]["bookmark_id"] == version["bookmark_id"]
    assert all(isinstance(x, int) for x in grounded["pieces"][0]["evidence"])


def test_counterfactual_cost(store, story_id):
    fake, _ = memory([HARBOUR, ADA_STATE, ADA_HABITS])
    llm = make_llm(fake, store)
    for position in (60, 130, 200, 280):
        ground(store, llm, story_id, position)
    rows = store.sync_costs(story_id, "test")
    assert len(rows) == 12
    for r in rows:
        assert r["actions_read_wo"] == r["p_new"] >= r["actions_read"]
        assert r["calls_wo"] >= r["calls"]
        assert r["prompt_tokens_wo"] >= r["prompt_tokens"]
        if r["p_old"] == 0:
            assert (r["calls_wo"], r["prompt_tokens_wo"], r["completion_tokens_wo"]) == (
                r["calls"], r["prompt_tokens"], r["completion_tokens"])
    late = [r for r in rows if r["p_old"] > 0 and r["type"] == "state"]
    assert late and all(r["calls_wo"] > r["calls"] for r in late)


@pytest.mark.parametrize("method", ["vanilla", "ricl", "eta", "eta3"])
def test_baselines_share_the_interface(store, story_id, method):
    fake, script = memory([HARBOUR])
    llm = make_llm(fake, store)
    g1 = ground(store, llm, story_id, 120, method=method)
    g2 = ground(store, llm, story_id, 180, method=method)
    assert g1.method == method and kinds(g2, "grounded")
    if method == "vanilla":
        assert g1.text == "" and not g1.writes.versions
        return
    assert g2.text
    if method == "ricl":
        assert "→ Ada:" in g2.text and len(g2.pieces[0].evidence) == 8
        assert max(g2.pieces[0].evidence) < 180 - 10
        return
    syncs = kinds(g2, "synchronized")
    assert syncs and all(s["p_old"] == 119 and s["actions_read"] == 60 for s in syncs)
    assert "Profile, update" in g2.text
    if method == "eta3":
        assert {e["title"] for e in kinds(g2, "reused")} == {
            "ETA3 state of Ada", "ETA3 behavior of Ada"}


def test_unknown_method_is_a_clear_error(store, story_id):
    from bookmarks.engine.methods import UnknownMethodError
    with pytest.raises(UnknownMethodError, match="choose one of bookmarks, vanilla"):
        ground(store, make_llm(ScriptedFakeModel()), story_id, 10, method="magic")


def test_walk_reports_a_failed_point_and_goes_on(store, story_id):
    from bookmarks.evaluation.walk import walk

    script = ScriptedMemory(sections=[HARBOUR])
    calls = {"act": 0}

    def flaky(request):
        if script.kind(request) == "act":
            calls["act"] += 1
            if calls["act"] == 1:  # the first point's actor call is refused
                raise ModelError("HTTP 400: bad request")
        return script(request)

    fake = ScriptedFakeModel(default=flaky)
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    records = []
    summary = run_sync(walk(store, llms, story_id, method="bookmarks", characters=["Ada"],
                            points=3, on_point=records.append))
    assert "error" in records[0] and "HTTP 400" in summary.errors[0]
    assert summary.points == 2 and len(summary.errors) == 1
    # the failed point committed nothing: the next point initialized the bookmark
    assert records[1]["initialized"] == [HARBOUR["title"]]

"""Model calls per prediction at adjacent points (one character's consecutive speeches, as
the paper's protocol walks them), counted on the scripted model's side — every request it
receives, by kind — never by the engine's own meters: after the first prediction, the
proposal, one memory call and the actor's (issue 22, item 5)."""

from __future__ import annotations

from collections import Counter

from bookmarks.evaluation.evaluate import run_nap
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.store import Store
from tests.conftest import make_llm
from tests.engine_helpers import generated_story, ground, kinds

SECTIONS = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
            {"title": "The harbour gate", "type": "concept", "subject": "harbour gate"},
            {"title": "How Ada speaks", "type": "behavioral", "subject": "Ada"}]


def _walk(tmp_path, name: str, span: tuple[int, int], sections=SECTIONS) -> tuple[int, Counter]:
    """NAP over Ada's points in `span` without the reply cache: (predictions, requests
    the scripted model received by kind)."""
    store = Store(tmp_path / f"{name}.db")
    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=sections)
    fake = ScriptedFakeModel(default=script)
    llms = {role: make_llm(fake, store, role=role) for role in ("memory", "actor", "judge")}
    run = run_sync(run_nap(store, llms, sid, characters=["Ada"], span=span, judge_mode="single",
                           concurrency=1, use_cache=False))
    n = len(store.records(run["id"]))
    store.close()
    return n, Counter(script.kind(r) for r in fake.history)


def test_adjacent_points_cost_at_most_three_calls_after_the_first(tmp_path):
    n, asked = _walk(tmp_path, "walk", (101, 170))
    one, first = _walk(tmp_path, "first", (101, 101))  # the walk's first prediction alone
    assert n >= 20 and one == 1
    after = asked - first
    assert set(after) <= {"propose", "joint", "act", "judge"}, after  # no match, no single sync
    calls = sum(v for k, v in after.items() if k != "judge")  # the judge apart
    assert calls / (n - 1) <= 3, after
    assert after["propose"] == after["joint"] == after["act"] == n - 1


def test_a_title_that_differs_only_in_case_and_punctuation_is_reused_without_asking(store):
    sid = store.add_story(generated_story())
    script = ScriptedMemory(sections=SECTIONS)
    fake = ScriptedFakeModel(default=script)
    llm = make_llm(fake)
    ground(store, llm, sid, 101)
    script.sections = [{"title": "  ada's STANDING with Ben.", "type": "state", "subject": "ada"},
                       *SECTIONS[1:]]
    before = len(fake.history)
    g = ground(store, llm, sid, 105)
    assert [script.kind(r) for r in fake.history[before:]] == ["propose", "joint"]
    assert [e["title"] for e in kinds(g, "reused")] == [s["title"] for s in SECTIONS]


def test_a_long_gap_is_cut_in_equal_blocks_from_the_checkpoint(store):
    """126 actions since the checkpoint: two blocks counted from it, 101–164 and 165–226
    (not 101–128, 129–192 and 193–226 on the grid of multiples of 64), read once for every
    reused bookmark — in one call, as they fit the context: the state decides once per
    block, the examples once for both."""
    sid = store.add_story(generated_story())
    script = ScriptedMemory(sections=SECTIONS[:1] + SECTIONS[2:])
    fake = ScriptedFakeModel(default=script)
    llm = make_llm(fake)
    ground(store, llm, sid, 101)
    before = len(fake.history)
    g = ground(store, llm, sid, 227)  # reads 101–226
    asked = fake.history[before:]
    assert [script.kind(r) for r in asked] == ["propose", "joint"]
    prompt = asked[1].messages[-1]["content"]
    assert "Block 1 of 2 (actions 101–164):" in prompt and "Block 2 of 2 (actions 165–226):" in prompt
    assert sorted(asked[1].response_format["json_schema"]["schema"]["properties"]) == [
        "s1_b1", "s1_b2", "s2"]
    assert {(e["p_old"], e["p_new"]) for e in kinds(g, "synchronized")} == {(100, 226)}
    (state,) = [e for e in kinds(g, "synchronized") if e["type"] == "state"]
    assert state["calls"] == 0.5  # its share of the one call


def test_a_new_section_among_reused_ones_reads_block_major(store):
    """One section new, two reused: the new one reads from the start alone until it
    reaches the others' checkpoint (1–64 and 65–100 in one call, a first state and a
    decision), then the short gap is one joint call for all three."""
    sid = store.add_story(generated_story())
    script = ScriptedMemory(sections=SECTIONS[:1] + SECTIONS[2:])
    fake = ScriptedFakeModel(default=script)
    llm = make_llm(fake)
    ground(store, llm, sid, 101)
    script.sections = [*SECTIONS[:1], {"title": "Ben's debts", "type": "state",
                                       "subject": "Ben"}, *SECTIONS[2:]]
    before = len(fake.history)
    g = ground(store, llm, sid, 105)  # the reused ones read 101–104, the new one 1–104
    asked = fake.history[before:]
    assert [script.kind(r) for r in asked] == ["propose", "joint", "joint"]
    alone, last = asked[1:]  # 1–64 and 65–100 alone, then 101–104 for all
    assert "Ben's debts" in alone.messages[-1]["content"]
    assert "Ada's standing with Ben" not in alone.messages[-1]["content"]
    assert "Block 2 of 2 (actions 65–100):" in alone.messages[-1]["content"]
    assert sorted(alone.response_format["json_schema"]["schema"]["properties"]) == [
        "s1_b1", "s1_b2"]
    for title in ("Ben's debts", "Ada's standing with Ben"):
        assert title in last.messages[-1]["content"]
    assert "[101] " in last.messages[-1]["content"]
    assert "[100] " not in last.messages[-1]["content"]
    assert {e["title"]: (e["p_old"], e["p_new"]) for e in kinds(g, "synchronized")} == {
        "Ada's standing with Ben": (100, 104), "Ben's debts": (0, 104),
        "How Ada speaks": (100, 104)}


NEAR = [{"title": "Ada's standing with Ben now", "type": "state", "subject": "Ada"},
        {"title": "The harbour gate lock", "type": "concept", "subject": "harbour gate"},
        SECTIONS[2]]


def test_the_decisions_one_prediction_needs_are_asked_in_one_call(store):
    """Two new titles close to existing bookmarks: one match call with a decision per pair
    (not one call per pair), each remembered."""
    sid = store.add_story(generated_story())
    script = ScriptedMemory(sections=SECTIONS)
    fake = ScriptedFakeModel(default=script)
    llm = make_llm(fake, store)
    ground(store, llm, sid, 101)
    script.sections = NEAR
    before = len(fake.history)
    g = ground(store, llm, sid, 105)
    asked = fake.history[before:]
    assert [script.kind(r) for r in asked] == ["propose", "match", "joint"]
    assert sorted(asked[1].response_format["json_schema"]["schema"]["properties"]) == ["d1", "d2"]
    reused = {e["proposed_title"]: (e["title"], e["asked"]) for e in kinds(g, "reused")}
    assert reused == {NEAR[0]["title"]: (SECTIONS[0]["title"], 1),
                      NEAR[1]["title"]: (SECTIONS[1]["title"], 1),
                      SECTIONS[2]["title"]: (SECTIONS[2]["title"], 0)}
    assert len(g.writes.decisions) == 2
    before = len(fake.history)
    ground(store, llm, sid, 111)  # remembered: no match call
    assert [script.kind(r) for r in fake.history[before:]] == ["propose", "joint"]


def test_a_batched_decision_that_stays_invalid_reuses_each_candidate_asked_about(store):
    sid = store.add_story(generated_story())
    script = ScriptedMemory(sections=SECTIONS)

    def reply(request):
        return '{"d1": "reuse", "d2": ' if script.kind(request) == "match" else script(request)

    llm = make_llm(ScriptedFakeModel(default=reply), store)
    ground(store, llm, sid, 101)
    script.sections = NEAR
    g = ground(store, llm, sid, 105)
    assert {e["proposed_title"]: e["title"] for e in kinds(g, "reused")} == {
        NEAR[0]["title"]: SECTIONS[0]["title"], NEAR[1]["title"]: SECTIONS[1]["title"],
        SECTIONS[2]["title"]: SECTIONS[2]["title"]}
    assert len([f for f in kinds(g, "fallback") if f["step"] == "match"]) == 2
    assert g.writes.decisions == [] and store.match_decisions(sid, "test") == {}


def test_the_proposal_lists_the_acting_characters_own_sections(store):
    """Ada's sections have dropped out of the six used most recently (Ben's): the proposal
    still lists them, so Ada can ask for one again by its title — reused, no match call
    (the state alone reads its short gap with its own prompt)."""
    sid = store.add_story(generated_story())
    script = ScriptedMemory(sections=SECTIONS, decide="new")  # Ben's six stay apart
    fake = ScriptedFakeModel(default=script)
    llm = make_llm(fake, store)
    ground(store, llm, sid, 101)
    for at, topics in ((102, ("debts", "boat", "temper")), (104, ("family", "fears", "hopes"))):
        script.sections = [{"title": f"Ben's {topic}", "type": "state", "subject": "Ben"}
                           for topic in topics]
        ground(store, llm, sid, at, character="Ben")
    script.sections = SECTIONS[:1]
    before = len(fake.history)
    g = ground(store, llm, sid, 107)
    asked = fake.history[before:]
    assert [script.kind(r) for r in asked] == ["propose", "state"]
    prompt = asked[0].messages[-1]["content"]
    recent = prompt[prompt.index("Sections used recently"):prompt.index("Ada acts next.")]
    own = prompt[prompt.index("Ada acts next."):prompt.index("Propose at most")]
    assert "Ada's standing with Ben" not in recent and "Ben's boat" in recent
    for s in (SECTIONS[0], SECTIONS[2]):  # about Ada (not the harbour gate's)
        assert f"- {s['title']} ({s['type']}, about {s['subject']})" in own
    assert "The harbour gate" not in own
    assert [e["title"] for e in kinds(g, "reused")] == [SECTIONS[0]["title"]]


def test_each_proposals_candidates_are_still_asked_one_after_the_other():
    """Round by round: the first candidate of every proposal in one call, the next only
    for a proposal answered "new" — the same pairs as asked one by one, fewer calls."""
    import json
    import re

    from bookmarks.engine.matching import match_all
    from bookmarks.memory import Bookmark

    def bm(n, title, kind="state", subject="Ada"):
        return Bookmark(id=n, story_id=1, space="t", subject=subject, type=kind, title=title,
                        p=10, version_id=n)

    candidates = [bm(1, "Ada's standing with Ben"), bm(2, "Ada's standing at the harbour"),
                  bm(3, "The harbour gate", "concept", "harbour gate")]

    asked = []

    def reply(request):
        text = request.messages[-1]["content"]
        asked.append(re.findall(r'Existing bookmark: "(.+?)"', text))
        if len(asked) == 1:  # the first round: both proposals' first candidates
            return json.dumps({"d1": "new", "d2": "reuse"})
        return json.dumps({"decision": "reuse"})

    fake = ScriptedFakeModel(default=reply)
    known: dict = {}
    state, concept = run_sync(match_all(
        [("Ada's standing with Ben today", "state", "Ada"),
         ("The harbour gate lock", "concept", "harbour gate")], candidates,
        llm=make_llm(fake), known=known, story_id=1, space="t"))
    assert len(fake.history) == 2
    (first, harbour), (second,) = asked
    assert harbour == "The harbour gate" and {first, second} == {
        "Ada's standing with Ben", "Ada's standing at the harbour"}
    assert (state.bookmark.title, state.asked) == (second, 2)
    assert (concept.bookmark.id, concept.asked) == (3, 1)
    assert sorted(known.values()) == ["new", "reuse", "reuse"]

"""NAP with the five-dimension judge and Best@k, MCQ, resumable runs, efficiency."""

from __future__ import annotations

import pytest

from bookmarks.engine.lineage import IndexedLine
from bookmarks.errors import StructuredOutputError
from bookmarks.evaluation.evaluate import (
    best_index,
    efficiency_buckets,
    judge,
    judge_warning,
    run_nap,
    summarize_nap,
)
from bookmarks.evaluation.mcq import parse_choice, run_mcq
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.stories.story import Question
from tests.conftest import make_llm
from tests.engine_helpers import generated_story


def llms_for(store, fake):
    return {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}


def test_judge_scores_each_dimension_in_one_call_when_asked():
    fake = ScriptedFakeModel(['{"emotion": "yes", "intent": "no", "causality": "yes", '
                              '"position": "no", "content": "yes"}'])
    scores = run_sync(judge(make_llm(fake), mode="single", story="S", character="Ada",
                            scene=[IndexedLine("Ben", "Hi.", 1)], reference="Hello.",
                            prediction="Hi there."))
    assert scores == {"emotion": 100, "intent": 0, "causality": 100, "position": 0, "content": 100}
    assert "Real action of Ada: Hello." in fake.history[0].messages[-1]["content"]


def test_judge_asks_each_dimension_independently_by_default():
    fake = ScriptedFakeModel(['{"answer": "yes"}', '{"answer": "no"}', '{"answer": "yes"}',
                              '{"answer": "no"}', '{"answer": "no"}'])
    scores = run_sync(judge(make_llm(fake), story="S", character="Ada",
                            scene=[IndexedLine("Ben", "Hi.", 1)], reference="Hello.",
                            prediction="Hi there."))
    assert scores == {"emotion": 100, "intent": 0, "causality": 100, "position": 0, "content": 0}
    asked = [r.messages[-1]["content"] for r in fake.history]
    assert len(asked) == 5 and all("Answer yes or no" in a for a in asked)
    assert "match the real action in emotion" in asked[0] and "in content" in asked[4]
    assert not any("intent" in a for a in asked[:1])  # one dimension per call


def test_judge_rejects_invalid_verdicts():
    fake = ScriptedFakeModel(['{"emotion": "maybe"}', '{"emotion": "yes"}'])
    with pytest.raises(StructuredOutputError):
        run_sync(judge(make_llm(fake), mode="single", story="S", character="A", scene=[],
                       reference="x", prediction="y"))


def test_nap_defaults_to_every_eligible_action_and_records_its_setup(store):
    sid = store.add_story(generated_story(60))
    fake = ScriptedFakeModel(default=ScriptedMemory())
    llms = llms_for(store, fake)
    run = run_sync(run_nap(store, llms, sid, method="vanilla", characters=["Ada"], span=(20, 40)))
    expected = [i for i in range(20, 41) if i % 2 and i % 5 and i % 37]  # Ada's own actions
    assert sorted(int(r["point"]) for r in store.records(run["id"])) == expected
    params = run["params"]
    assert params["protocol"] == "every eligible action" and params["judge"] == "independent"
    assert params["setup"]["judge"]["model"] == "scripted-fake"
    assert judge_warning(llms) and "judge model is the actor's own" in judge_warning(llms)


def test_best_of_k():
    a = dict.fromkeys(("emotion", "intent", "causality", "position", "content"), 0)
    b = {**a, "emotion": 100}
    c = {**a, "emotion": 100, "intent": 100}
    assert best_index([a, b, c]) == 2 and best_index([b, b]) == 0 and best_index([a]) == 0
    summary = summarize_nap([{"scores": [a, c], "best": 1}, {"scores": [b, a], "best": 0}])
    assert summary["best@1"]["emotion"] == 50 and summary["best@k"]["emotion"] == 100
    assert summary["best@k"]["mean"] == pytest.approx((100 + 50) / 5)


@pytest.mark.parametrize("reply,choice", [
    ("B", "B"), ("B) The key", "B"), ("(c) because", "C"), ("Answer: D", "D"),
    ("The answer is A.", "A"), ("b.", "B"), ("(C)", "C"), ("Option B", "B"),
    ("E", None), ("A or B", None), ("", None), ("Maybe", None),
    ("A lighthouse keeper would know the tide.", None),  # the word "A" is no answer
    ("I think it is C", None),  # no explicit form
    ("It was on the brass hook by the door.", "C"),  # the option's own text
    ("The brass hook by the door, or the pier", None),  # names two options
])
def test_parse_choice(reply, choice):
    options = {"A": "The pier", "B": "In the lamp room", "C": "the brass hook by the door",
               "D": "Nowhere"}
    assert parse_choice(reply, ["A", "B", "C", "D"], options) == choice


def test_nap_run_records_and_best_of_k(store):
    sid = store.add_story(generated_story(200))
    fake = ScriptedFakeModel(default=ScriptedMemory())
    run = run_sync(run_nap(store, llms_for(store, fake), sid, method="bookmarks", points=3, k=2,
                           characters=["Ada"]))
    assert run["status"] == "done" and run["summary"]["items"] == 3 and run["summary"]["k"] == 2
    records = store.records(run["id"])
    assert all(len(r["predictions"]) == 2 and len(r["scores"]) == 2 for r in records)
    assert run["summary"]["best@k"]["mean"] >= run["summary"]["best@1"]["mean"]
    assert store.sync_costs(sid, run["space"])


def test_nap_run_resumes_where_it_stopped(store):
    sid = store.add_story(generated_story(200))
    fake = ScriptedFakeModel(default=ScriptedMemory())
    llms = llms_for(store, fake)

    class Killed(Exception):
        pass

    def stop_after_two(record, n, total):
        if n == 2:
            raise Killed

    with pytest.raises(Killed):
        run_sync(run_nap(store, llms, sid, points=4, characters=["Ada"], on_record=stop_after_two))
    (run,) = store.runs()
    # the point whose record stopped the run, and any already in flight then, are saved
    stopped = len(store.records(run["id"]))
    assert run["status"] == "running" and 2 <= stopped < 4
    seen = []
    done = run_sync(run_nap(store, llms, run_id=run["id"],
                            on_record=lambda r, n, t: seen.append(n)))
    assert seen == list(range(stopped + 1, 5)) and done["summary"]["items"] == 4
    points = [r["point"] for r in store.records(run["id"])]
    assert points == sorted(set(points))
    # the resumed points reused the run's memory instead of starting empty
    rows = store.sync_costs(sid, run["space"])
    assert any(r["p_old"] > 0 for r in rows if r["position"] == points[stopped])


def test_mcq_run_accuracy_and_invalid(store):
    story = generated_story(200)
    story.questions = [
        Question(id="q1", after=50, question="Which gate?", options={"A": "x", "B": "y"},
                 answer="B"),
        Question(id="q2", after=120, question="Who?", options={"A": "x", "B": "y", "C": "z"},
                 answer="C", character="Ben"),
        Question(id="q3", after=150, question="Where?", options={"A": "x", "B": "y"}, answer="B")]
    sid = store.add_story(story)
    fake = ScriptedFakeModel(default=ScriptedMemory())
    replies = iter(["B", "I cannot say", "B"])
    memory = ScriptedMemory()

    def respond(req):
        return next(replies) if memory.kind(req) == "mcq" else memory(req)

    fake.default = respond
    run = run_sync(run_mcq(store, llms_for(store, fake), sid, method="bookmarks"))
    summary = {k: run["summary"][k] for k in ("items", "accuracy", "invalid")}
    assert summary == {"items": 3, "accuracy": pytest.approx(66.67), "invalid": 1}
    q2 = next(r for r in store.records(run["id"]) if r["qid"] == "q2")
    assert q2["character"] == "Ben" and q2["choice"] is None and not q2["correct"]
    prompts = [h.messages[-1]["content"] for h in fake.history]
    assert any("question: Which gate?" in p for p in prompts if "Propose" in p)


def test_efficiency_buckets():
    rows = [{"position": 10, "story_length": 100, "actions_read": 9, "actions_read_wo": 9,
             "calls": 1, "calls_wo": 1, "prompt_tokens": 100, "completion_tokens": 10,
             "prompt_tokens_wo": 100, "completion_tokens_wo": 10},
            {"position": 90, "story_length": 100, "actions_read": 5, "actions_read_wo": 89,
             "calls": 1, "calls_wo": 2, "prompt_tokens": 50, "completion_tokens": 5,
             "prompt_tokens_wo": 100, "completion_tokens_wo": 10}]
    b = efficiency_buckets(rows)
    assert [x["syncs"] for x in b] == [1, 0, 0, 1]
    assert b[3]["tokens"] == 55 and b[3]["tokens_wo"] == 110 and b[3]["actions_read_wo"] == 89


def test_an_actor_without_a_usable_line_is_judged_as_a_stand_in_and_counted(store):
    sid = store.add_story(generated_story(200))
    script = ScriptedMemory()

    def junk_actor(request):
        return "Ben: not mine to say" if script.kind(request) == "act" else script(request)

    fake = ScriptedFakeModel(default=junk_actor)
    run = run_sync(run_nap(store, llms_for(store, fake), sid, points=2, k=2, characters=["Ada"]))
    s = run["summary"]
    assert run["status"] == "done" and s["unusable_predictions"] == 0
    assert s["stand_in_predictions"] == 4 and s["points_with_fallback"] == 2
    for r in store.records(run["id"]):
        assert r["predictions"] == ["[Ada hesitates and says nothing.]"] * 2
        assert all("spoke as 'Ben'" in f["reason"] for f in r["fallbacks"])


def test_capacity_sweep(store):
    from bookmarks.evaluation.evaluate import run_sweep

    sid = store.add_story(generated_story(200))
    fake = ScriptedFakeModel(default=ScriptedMemory(sections=[
        {"title": f"Section {n}", "type": "state", "subject": "Ada"} for n in range(5)]))
    rows = run_sync(run_sweep(store, llms_for(store, fake), sid, methods=("bookmarks", "eta3"),
                              points=2, characters=["Ada"]))
    assert [(r["method"], r["value"]) for r in rows] == [
        ("bookmarks", 2), ("bookmarks", 3), ("bookmarks", 5), ("eta3", 128), ("eta3", 256),
        ("eta3", 512)]
    # a bigger budget synchronizes more sections: more sync tokens
    b = [r["sync_tokens"] for r in rows if r["method"] == "bookmarks"]
    assert b[0] < b[1] < b[2]
    eta3_run = store.run(rows[3]["run"])
    assert eta3_run["params"]["capacity"] == 128


def test_nap_keeps_several_points_in_flight(store):
    """Actor and judge calls of one point overlap with the grounding of the next ones (a
    batching server sees several requests at once); memory is still grounded in order."""
    import asyncio

    sid = store.add_story(generated_story(120))
    fake = ScriptedFakeModel(default=ScriptedMemory())
    active = {"now": 0, "max": 0, "gave_up": False}
    inner = fake.chat
    together: list[asyncio.Event] = []  # made in the run's own loop

    script = ScriptedMemory()

    async def chat(request):
        """Hold each judge question until five requests are in flight at once (no clock
        decides it: a bounded wait, and once a wait ran out nobody waits again and the test
        fails); other requests go straight through, so memory still grounds in order."""
        if not together:
            together.append(asyncio.Event())
        active["now"] += 1
        active["max"] = max(active["max"], active["now"])
        if active["max"] >= 5:
            together[0].set()
        try:
            if not active["gave_up"] and script.kind(request) == "judge_dimension":
                try:
                    await asyncio.wait_for(together[0].wait(), timeout=60)
                except TimeoutError:
                    active["gave_up"] = True
            return await inner(request)
        finally:
            active["now"] -= 1

    fake.chat = chat
    run = run_sync(run_nap(store, llms_for(store, fake), sid, method="bookmarks",
                           characters=["Ada"], span=(20, 60), concurrency=4))
    assert active["max"] >= 5 and not active["gave_up"]  # five requests in flight at once
    points = [r["point"] for r in store.records(run["id"])]
    assert sorted(points) == [i for i in range(21, 61, 2) if i % 5 and i % 37]
    syncs = [r for r in store.sync_costs(sid, run["space"])]
    assert [r["position"] for r in syncs] == sorted(r["position"] for r in syncs)


def test_nap_runs_one_shard_per_character_each_on_its_own_memory(store):
    sid = store.add_story(generated_story(120))
    fake = ScriptedFakeModel(default=ScriptedMemory())
    run = run_sync(run_nap(store, llms_for(store, fake), sid, method="bookmarks",
                           characters=["Ada", "Ben"], span=(20, 80)))
    spaces = {r["space"] for r in store.sync_costs(sid, run["space"])}
    assert spaces == {f"{run['space']}:Ada", f"{run['space']}:Ben"}
    for space in spaces:  # in story order inside each shard
        positions = [r["position"] for r in store.sync_costs(sid, space)]
        assert positions == sorted(positions)
    points = {r["point"] for r in store.records(run["id"])}
    assert points == {a.index for a in store.actions(sid, 20, 80) if a.character in ("Ada", "Ben")}

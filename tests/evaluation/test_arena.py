"""The arena: starts, continuations, blind randomized votes, results and exports."""

from __future__ import annotations

import json
import random

import pytest

from bookmarks.errors import BookmarksError
from bookmarks.evaluation.arena import generate_starts, llm_judge, next_item, results, run_item, vote
from bookmarks.evaluation.export import label_studio_tasks, to_csv, to_jsonl
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from tests.conftest import make_llm
from tests.engine_helpers import generated_story


class ArenaScript(ScriptedMemory):
    def __call__(self, request):
        text = request.messages[-1]["content"]
        if "Invent a new, open-ended scene" in text:
            return json.dumps({"setting": "The harbour at dawn.", "first_line": "You came back."})
        if "Which continuation" in text:
            return json.dumps({"better": "A"})
        return super().__call__(request)


@pytest.fixture
def arena(store):
    sid = store.add_story(generated_story(200))
    fake = ScriptedFakeModel(default=ArenaScript())
    llms = {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}
    starts = run_sync(generate_starts(store, llms["memory"], sid, 3))
    items = [run_sync(run_item(store, llms, s, method_a="bookmarks", method_b="eta3", turns=2))
             for s in starts]
    return store, llms, items


def test_starts_and_items(arena):
    store, _, items = arena
    starts = store.arena_starts()
    assert len(starts) == 3 and sorted(starts[0]["characters"]) == ["Ada", "Ben"]
    assert starts[0]["first_line"] == "You came back." and len(items) == 3
    item = store.arena_item(items[0])
    assert len(store.turns(item["scene_a"])) == 3 and len(store.turns(item["scene_b"])) == 3
    assert store.scene(item["scene_a"]).method == "bookmarks"
    assert store.scene(item["scene_b"]).method == "eta3"


def test_blind_randomized_and_undone(arena):
    store, _, items = arena
    shown = next_item(store, "ann1", rng=random.Random(1))
    page = json.dumps(shown)
    assert "bookmarks" not in page.lower() and "eta" not in page.lower()
    view = store.arena_view(shown["item_id"], "ann1", "?", "?")
    revealed = vote(store, shown["item_id"], "ann1", "left", seconds=3.5)
    assert revealed == {"left": view["left_method"], "right": view["right_method"]}
    with pytest.raises(BookmarksError, match="already voted"):
        vote(store, shown["item_id"], "ann1", "right")
    r = results(store)
    assert r["votes"] == 1
    expected = "win" if view["left_method"] == "bookmarks" else "loss"
    assert r["rates"][expected] == 1.0


def test_sides_vary_and_no_item_twice(arena):
    store, _, items = arena
    seen, lefts = [], set()
    rng = random.Random(3)
    while (shown := next_item(store, "ann2", rng=rng)) is not None:
        seen.append(shown["item_id"])
        lefts.add(store.arena_view(shown["item_id"], "ann2", "?", "?")["left_method"])
        vote(store, shown["item_id"], "ann2", "tie")
    assert sorted(seen) == sorted(items) and len(set(seen)) == len(seen)
    assert lefts == {"bookmarks", "eta3"}


def test_results_with_two_annotators_and_agreement(arena):
    store, _, items = arena
    for ann, choices in (("a", ["tie", "tie", "both_bad"]), ("b", ["tie", "tie", "tie"])):
        for choice in choices:
            shown = next_item(store, ann, rng=random.Random(0))
            vote(store, shown["item_id"], ann, choice)
    r = results(store)
    assert r["votes"] == 6 and r["rates"]["tie"] == pytest.approx(5 / 6)
    assert set(r["per_annotator"]) == {"a", "b"}
    assert r["agreement"]["items"] == 3 and r["agreement"]["gwet_ac1"] is not None
    lo, hi = r["ci95"]["tie"]
    assert lo <= 5 / 6 <= hi


def test_skip_is_not_counted(arena):
    store, _, _ = arena
    shown = next_item(store, "s", rng=random.Random(0))
    vote(store, shown["item_id"], "s", "skip")
    assert results(store)["votes"] == 0
    assert next_item(store, "s")["item_id"] != shown["item_id"]


def test_llm_judge_votes_both_orders(arena):
    store, llms, items = arena
    assert run_sync(llm_judge(store, llms["judge"])) == 6
    r = results(store, source="llm")
    # the judge always says "A": each item's two orders disagree, so each item is a tie
    # (position bias is not counted as a win for either method) and the orders disagree
    assert r["votes"] == 6 and r["items"] == 3 and r["rates"]["tie"] == pytest.approx(1.0)
    assert r["agreement"]["items"] == 3 and r["agreement"]["gwet_ac1"] < 0.5


def test_exports(arena):
    store, _, items = arena
    shown = next_item(store, "e", rng=random.Random(0))
    vote(store, shown["item_id"], "e", "right", rationale='said "no", twice')
    votes = store.judgments()
    csv_text = to_csv(votes)
    assert csv_text.splitlines()[0].startswith("id,item_id,annotator") and '""no""' in csv_text
    assert json.loads(to_jsonl(votes).splitlines()[0])["vote"] == "right"
    tasks = label_studio_tasks(store)
    assert len(tasks) == 3 and set(tasks[0]["data"]) == {"prompt", "answer1", "answer2"}
    assert "bookmarks" not in json.dumps(tasks[0]["data"])


def test_a_failed_continuation_leaves_no_half_item(store):
    from bookmarks.errors import ModelError

    sid = store.add_story(generated_story(200))
    script = ArenaScript()
    fake = ScriptedFakeModel(default=script)
    llms = {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}
    (start,) = run_sync(generate_starts(store, llms["memory"], sid, 1))
    scenes_before = len(store.list_scenes())

    def broken(request):
        if script.kind(request) == "act" and len(store.list_scenes()) > scenes_before + 1:
            raise ModelError("HTTP 401: bad key")
        return script(request)

    fake.default = broken
    with pytest.raises(ModelError):
        run_sync(run_item(store, llms, start, turns=2))
    assert store.arena_items() == [] and len(store.list_scenes()) == scenes_before
    assert store.integrity_ok()


@pytest.mark.parametrize("setting,line,ok", [
    ("A wet night on the quay, the last ferry gone.", "We could swim for it, you know.", True),
    ("Theo Lindqvist", "We could swim for it, you know.", False),  # a name is no setting
    ("A wet night on the quay, the last ferry gone.", '{ "Theo Lindqvist"', False),  # JSON
    ("A wet night on the quay, the last ferry gone.", "Theo.", False),
])
def test_arena_start_must_be_usable_as_written(setting, line, ok):
    from bookmarks.evaluation.arena import StartDraft, check_draft

    draft = StartDraft(setting=setting, first_line=line)
    if ok:
        check_draft(draft, ["Theo Lindqvist", "Theo"])
    else:
        with pytest.raises(ValueError):
            check_draft(draft, ["Theo Lindqvist", "Theo"])

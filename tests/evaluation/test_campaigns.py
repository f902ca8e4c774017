"""Campaigns: storyline-drawn starts (no model), refusals in words, items with progress per
turn, k annotators per item, votes only from the assigned signed-in annotator while open,
progress, agreement with the judge model, exports."""

from __future__ import annotations

import json
import random

import pytest

from bookmarks.errors import BookmarksError
from bookmarks.evaluation import arena, campaigns
from bookmarks.evaluation.export import to_csv
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel
from tests.conftest import make_llm
from tests.engine_helpers import generated_story
from tests.evaluation.test_arena import ArenaScript


def llms_for(store, script):
    fake = ScriptedFakeModel(default=script)
    return fake, {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}


def test_starts_drawn_from_the_storyline_need_no_model(store):
    sid = store.add_story(generated_story(300))
    ids = arena.draw_starts(store, sid, 3)
    starts = store.arena_starts(sid)
    assert len(ids) == 3 and [s["id"] for s in starts] == ids
    actions = {a.index: a for a in store.actions(sid)}
    for s in starts:
        line = actions[s["point"] + 1]  # the scene opens with the story's own next line
        assert (s["first_speaker"], s["first_line"]) == (line.character, line.text)
        assert s["characters"][0] == line.character and len(s["characters"]) >= 2
        assert s["setting"].startswith(f"{line.chapter}.")  # the chapter heading
        narration = [a.text for i, a in actions.items()
                     if s["point"] - 12 < i <= s["point"] and a.character == "narration"]
        assert s["setting"] == f"{line.chapter}. {narration[-1]}"  # and the narration before
    assert len({s["point"] for s in starts}) == 3


def test_a_refused_model_start_is_said_in_words(store):
    class NameOnly(ArenaScript):
        def __call__(self, request):
            if "Invent a new, open-ended scene" in request.messages[-1]["content"] or \
                    "not valid" in request.messages[-1]["content"]:
                return json.dumps({"setting": "Ada", "first_line": "You came back."})
            return super().__call__(request)

    sid = store.add_story(generated_story(200))
    _, llms = llms_for(store, NameOnly())
    refused: list[str] = []
    ids = run_sync(arena.generate_starts(store, llms["memory"], sid, 2, refused=refused))
    assert ids == [] and len(refused) == 2
    assert "the setting 'Ada' is only a name, not a setting" in refused[0]
    assert "StartDraft" not in refused[0] and "from the storyline" in refused[0]
    with pytest.raises(BookmarksError, match="refused twice"):
        run_sync(arena.generate_starts(store, llms["memory"], sid, 1))


def test_items_from_the_storyline_report_progress_per_turn(store):
    sid = store.add_story(generated_story(200))
    fake, llms = llms_for(store, ArenaScript())
    told: list[tuple[str, int, int]] = []
    items, problems = run_sync(arena.make_items(
        store, llms, sid, 3, turns=2, on_progress=lambda t, d, n: told.append((t, d, n))))
    assert len(items) == 3 and problems == []
    assert not any("Invent a new" in p for p in fake.prompts)  # no model-written start
    texts = [t for t, _, _ in told]
    assert "start 1 of 3: Bookmarks, turn 1 of 2" in texts
    assert any(t.startswith("start 3 of 3: 3-way ETA, turn 2 of 2") for t in texts)
    assert told[-1][1:] == (12, 12)


@pytest.fixture
def campaign(store):
    sid = store.add_story(generated_story(200))
    _, llms = llms_for(store, ArenaScript())
    items, _ = run_sync(arena.make_items(store, llms, sid, 3, turns=1))
    for name in ("ann", "bea", "cal"):
        store.add_user(name, "annotator", "password-" + name)
    cid = campaigns.create(store, "pilot", items, ["ann", "bea", "cal"], k=2, seed=1,
                           created_by="owner")
    return store, llms, cid, items


def test_each_item_goes_to_k_annotators_balanced(campaign):
    store, _, cid, items = campaign
    rows = store.assignments(cid)
    per_item = {i: {r["annotator"] for r in rows if r["item_id"] == i} for i in items}
    assert all(len(v) == 2 for v in per_item.values())
    loads = sorted(sum(r["annotator"] == a for r in rows) for a in ("ann", "bea", "cal"))
    assert loads == [2, 2, 2]
    with pytest.raises(BookmarksError, match="not an annotator"):
        campaigns.assign(store, cid, ["nobody"])


def test_votes_only_from_the_assigned_annotator_and_not_when_closed(campaign):
    store, _, cid, items = campaign
    shown = campaigns.next_item(store, cid, "ann", rng=random.Random(0))
    assert "bookmarks" not in json.dumps(shown).lower()
    mine = shown["item_id"]
    # bob is not a user of this campaign; bea has not been shown ann's item or it is not hers
    with pytest.raises(BookmarksError):
        campaigns.vote(store, cid, mine, "bob", "left")
    not_ann = next(i for i in items if not store.is_assigned(cid, "ann", i))
    with pytest.raises(BookmarksError, match="not one the campaign gave you"):
        campaigns.vote(store, cid, not_ann, "ann", "left")
    holder = next(a for a in ("bea", "cal") if store.is_assigned(cid, a, mine))
    with pytest.raises(BookmarksError, match="not shown"):  # ann's view is not holder's
        campaigns.vote(store, cid, mine, holder, "left")
    campaigns.vote(store, cid, mine, "ann", "left", seconds=4.0)
    (row,) = store.judgments()
    assert row["annotator"] == "ann" and row["campaign_id"] == cid
    assert store.shown_view(mine, holder) is None  # a refused vote assigned no sides
    mine_only = campaigns.progress(store, cid, "ann")
    assert [r["annotator"] for r in mine_only] == ["ann"] and mine_only[0]["voted"] == 1
    store.set_campaign_status(cid, "closed")
    with pytest.raises(BookmarksError, match="closed"):
        campaigns.next_item(store, cid, "ann")
    with pytest.raises(BookmarksError, match="closed"):
        campaigns.vote(store, cid, mine, "ann", "right")


def test_agreement_with_the_judge_and_export(campaign):
    store, llms, cid, items = campaign
    for who in ("ann", "bea", "cal"):
        while (shown := campaigns.next_item(store, cid, who, rng=random.Random(2))) is not None:
            campaigns.vote(store, cid, shown["item_id"], who, "tie", rationale="even", seconds=2)
    progress = campaigns.progress(store, cid)
    assert [(r["annotator"], r["voted"], r["left"]) for r in progress] == \
        [("ann", 2, 0), ("bea", 2, 0), ("cal", 2, 0)]
    ag = campaigns.agreement(store, cid)
    assert ag["people"]["items"] == 3 and ag["people"]["krippendorff_alpha"] == 1.0
    assert ag["judge_votes"] == 0
    assert run_sync(campaigns.judge(store, cid, llms["judge"])) == 6
    ag = campaigns.agreement(store, cid)
    # the judge always says "A": its two orders disagree, so it counts as a tie per item
    assert ag["judge_votes"] == 3 and ag["agree_with_judge"] == {"ann": 1.0, "bea": 1.0,
                                                                  "cal": 1.0}
    assert ag["people_and_judge"]["items"] == 3
    rows = campaigns.export_rows(store, cid)
    assert len(rows) == 6 + 6
    human = next(r for r in rows if r["source"] == "human")
    assert {"annotator", "item", "left", "right", "choice", "seconds"} <= set(human)
    assert human["choice"] == "tie" and human["seconds"] == 2
    assert to_csv(rows).splitlines()[0].startswith("campaign,annotator,source,item")

"""Annotation campaigns over arena items: each item given to k annotators (balanced), a
per-annotator order (randomized or as created), votes accepted only from an assigned,
signed-in annotator while the campaign is open; progress per annotator; agreement (Krippendorff's α,
Gwet's AC1) between people and with the judge model; exports (CSV/JSONL).

The annotator passed in here is always the signed-in user (the UI never asks for a name).
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict

from bookmarks.engine.methods import METHODS
from bookmarks.errors import BookmarksError
from bookmarks.evaluation import arena
from bookmarks.evaluation.stats import gwet_ac1, krippendorff_alpha_nominal
from bookmarks.models.llm import LLM
from bookmarks.store import Store

JUDGE = "judge model"  # the judge's two orders, combined, as one more annotator


def create(store: Store, name: str, item_ids: list[int], annotators: list[str], *, k: int = 2,
           randomize: bool = True, params: dict | None = None, created_by: str = "",
           seed: int | None = None) -> int:
    """A campaign over these items, each given to k of the annotators."""
    item_ids = list(dict.fromkeys(item_ids))
    for i in item_ids:
        store.arena_item(i)  # exists, or NotFoundError in words
    if k < 1:
        raise BookmarksError("Each item needs at least one annotator (k ≥ 1).")
    cid = store.create_campaign(name, item_ids, k=k, randomize=randomize,
                                params=params or {}, created_by=created_by)
    if annotators:
        assign(store, cid, annotators, seed=seed)
    return cid


def assign(store: Store, campaign_id: int, annotators: list[str], *,
           seed: int | None = None) -> dict[str, int]:
    """Give each item still short of k annotators to the least loaded of these (existing
    assignments stay); each annotator's new items go after their others, shuffled when the
    campaign randomizes. → items newly assigned per annotator."""
    campaign = store.campaign(campaign_id)
    if campaign["status"] != "open":
        raise BookmarksError("This campaign is closed: open it again to assign annotators.")
    people = list(dict.fromkeys(a.strip() for a in annotators if a and a.strip()))
    for a in people:
        user = store.user(a)
        if user is None or user.get("role") not in ("annotator", "owner"):
            raise BookmarksError(f"{a!r} is not an annotator (add one with: bookmarks users add "
                                 f"{a} --role annotator).")
    if not people:
        raise BookmarksError("Choose at least one annotator.")
    k = campaign["k"]
    existing = store.assignments(campaign_id)
    holders: dict[int, set[str]] = defaultdict(set)
    load: dict[str, int] = defaultdict(int)
    last: dict[str, int] = defaultdict(lambda: -1)
    for row in existing:
        holders[row["item_id"]].add(row["annotator"])
        load[row["annotator"]] += 1
        last[row["annotator"]] = max(last[row["annotator"]], row["position"])
    rng = random.Random(seed if seed is not None else random.SystemRandom().random())
    tie = {a: rng.random() for a in people}
    new: dict[str, list[int]] = defaultdict(list)
    for item in store.campaign_items(campaign_id):
        for _ in range(k - len(holders[item])):
            free = [a for a in people if a not in holders[item]]
            if not free:
                break
            who = min(free, key=lambda a: (load[a], tie[a]))
            holders[item].add(who)
            load[who] += 1
            new[who].append(item)
    rows = []
    for who, items in new.items():
        if campaign["randomize"]:
            rng.shuffle(items)
        rows += [(who, item, last[who] + 1 + n) for n, item in enumerate(items)]
    store.add_assignments(campaign_id, rows)
    return {who: len(items) for who, items in new.items()}


def _open_for(store: Store, campaign_id: int, annotator: str) -> dict:
    campaign = store.campaign(campaign_id)
    if campaign["status"] != "open":
        raise BookmarksError(f"The campaign {campaign['name']!r} is closed: it takes no votes.")
    if not store.assignments(campaign_id, annotator):
        raise BookmarksError(f"The campaign {campaign['name']!r} has no work for {annotator}.")
    return campaign


def next_item(store: Store, campaign_id: int, annotator: str,
              rng: random.Random | None = None) -> dict | None:
    """This annotator's next item in their order (None: all done). Names no method."""
    _open_for(store, campaign_id, annotator)
    mine = store.assignments(campaign_id, annotator)
    done = store.judged_items(annotator)
    pending = [a["item_id"] for a in mine if a["item_id"] not in done]
    if not pending:
        return None
    progress = {"done": len(mine) - len(pending), "total": len(mine)}
    return arena.show(store, store.arena_item(pending[0]), annotator, progress, rng)


def vote(store: Store, campaign_id: int, item_id: int, annotator: str, choice: str, *,
         rationale: str = "", seconds: float | None = None) -> dict:
    """A vote from the signed-in annotator on an item the campaign gave them, while open."""
    _open_for(store, campaign_id, annotator)
    if not store.is_assigned(campaign_id, annotator, item_id):
        raise BookmarksError("This item is not one the campaign gave you.")
    return arena.vote(store, item_id, annotator, choice, rationale=rationale, seconds=seconds,
                      campaign_id=campaign_id)


def progress(store: Store, campaign_id: int, annotator: str | None = None) -> list[dict]:
    """Per annotator (or only this one): assigned, voted, skipped, left, median seconds."""
    votes = {(j["annotator"], j["item_id"]): j for j in store.campaign_judgments(campaign_id)}
    per: dict[str, list[dict]] = defaultdict(list)
    for a in store.assignments(campaign_id, annotator):
        per[a["annotator"]].append(a)
    rows = []
    for who, mine in sorted(per.items()):
        cast = [votes[(who, a["item_id"])] for a in mine if (who, a["item_id"]) in votes]
        secs = [j["seconds"] for j in cast if j["seconds"] is not None]
        rows.append({"annotator": who, "assigned": len(mine),
                     "voted": sum(j["vote"] != "skip" for j in cast),
                     "skipped": sum(j["vote"] == "skip" for j in cast),
                     "left": len(mine) - len(cast),
                     "median_seconds": round(statistics.median(secs), 1) if secs else None})
    return rows


def _outcomes(store: Store, campaign_id: int) -> tuple[dict[int, dict[str, str]], dict]:
    """Per item: each rater's outcome from method A's side (the judge's two orders combined:
    the same verdict both ways stands, a disagreement is a tie)."""
    items = {i: store.arena_item(i) for i in store.campaign_items(campaign_id)}
    by_item: dict[int, dict[str, str]] = defaultdict(dict)
    judge: dict[int, list[str]] = defaultdict(list)
    for j in store.campaign_judgments(campaign_id):
        if j["vote"] == "skip" or j["item_id"] not in items:
            continue
        outcome = arena.outcome_for(j, items[j["item_id"]]["method_a"])
        if j["source"] == "llm":
            judge[j["item_id"]].append(outcome)
        else:
            by_item[j["item_id"]][j["annotator"]] = outcome
    for item, both in judge.items():
        by_item[item][JUDGE] = both[0] if len(set(both)) == 1 else "tie"
    return by_item, items


def agreement(store: Store, campaign_id: int) -> dict:
    """α and AC1 among people, and with the judge model counted as one more annotator;
    per person, the share of shared items where they and the judge agree."""
    by_item, _ = _outcomes(store, campaign_id)

    def stats(units: dict[int, list[str]]) -> dict:
        shared = {i: v for i, v in units.items() if len(v) >= 2}
        return {"items": len(shared), "krippendorff_alpha": krippendorff_alpha_nominal(shared),
                "gwet_ac1": gwet_ac1(shared, arena.OUTCOMES)}

    people = {i: [o for who, o in r.items() if who != JUDGE] for i, r in by_item.items()}
    with_judge = {i: list(r.values()) for i, r in by_item.items()}
    same: dict[str, list[bool]] = defaultdict(list)
    for r in by_item.values():
        if JUDGE in r:
            for who, o in r.items():
                if who != JUDGE:
                    same[who].append(o == r[JUDGE])
    return {"people": stats(people), "people_and_judge": stats(with_judge),
            "judge_votes": sum(JUDGE in r for r in by_item.values()),
            "agree_with_judge": {w: sum(v) / len(v) for w, v in sorted(same.items())}}


async def judge(store: Store, campaign_id: int, judge_llm: LLM) -> int:
    """The judge model votes on every item of the campaign in both orders."""
    items = store.campaign_items(campaign_id)
    return await arena.llm_judge(store, judge_llm, item_ids=items) if items else 0


def export_rows(store: Store, campaign_id: int) -> list[dict]:
    """One row per vote: annotator, item, story point, the sides shown, the choice, the
    method it favours, rationale and time taken."""
    campaign = store.campaign(campaign_id)
    starts = {s["id"]: s for s in store.arena_starts()}
    rows = []
    for j in store.campaign_judgments(campaign_id):
        item = store.arena_item(j["item_id"])
        start = starts.get(item["start_id"], {})
        winner = {"left": j["left_method"], "right": j["right_method"]}.get(j["vote"], "")
        rows.append({"campaign": campaign["name"], "annotator": j["annotator"],
                     "source": j["source"], "item": j["item_id"],
                     "story_id": start.get("story_id"), "point": start.get("point"),
                     "left": j["left_method"], "right": j["right_method"], "choice": j["vote"],
                     "preferred": METHODS.get(winner, winner), "rationale": j["rationale"],
                     "seconds": j["seconds"], "voted_at": j["created_at"]})
    return rows

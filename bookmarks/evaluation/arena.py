"""The open-domain arena: shared starting scenes continued by two methods, blind A/B
votes by people (or an LLM judge in both orders), and win/tie/loss results.

Sides are randomized per item and annotator and stored before the item is shown; the
texts given to the page never name the methods; a vote is mapped back to methods through
the stored sides. Votes are append-only; an annotator votes once per item.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from bookmarks.engine.methods import METHODS
from bookmarks.errors import BookmarksError, NoUsableLineError, StructuredOutputError
from bookmarks.evaluation.starts import draw_starts
from bookmarks.evaluation.stats import clustered_bootstrap_ci, gwet_ac1, krippendorff_alpha_nominal, rates
from bookmarks.models.llm import LLM
from bookmarks.scenes.play import add_user_turn, generate_turn, round_robin
from bookmarks.store import Store

VOTES = ("left", "right", "tie", "both_bad")
OUTCOMES = ("win", "tie", "loss", "both_bad")


class StartDraft(BaseModel):
    setting: str = Field(min_length=1, max_length=600)
    first_line: str = Field(min_length=1, max_length=400)


def check_draft(draft: StartDraft, names: list[str]) -> None:
    """A start must be usable as written: a setting that describes a place or moment (not
    a name, not a fragment) and a first line that is a line (no JSON, no bare name)."""
    folded = {n.casefold() for n in names}
    for field, text, words in (("setting", draft.setting, 3), ("first_line", draft.first_line, 2)):
        t = text.strip()
        if any(ch in t for ch in "{}") or t.startswith(('"', "[")) and t.endswith(('"', "]")) \
                and len(t.split()) < words:
            raise ValueError(f"{field}: write plain sentences, not JSON")
        what = field.replace("_", " ")
        if t.strip(" .:").casefold() in folded:
            raise ValueError(f"{field}: {t.strip()!r} is only a name, not a {what}")
        if len(t.split()) < words:
            raise ValueError(f"{field}: {t.strip()!r} is too short for a {what} (at least "
                             f"{words} words)")


def _active_pair(store: Store, story_id: int, point: int) -> list[str]:
    """The two major characters with the most actions in the 80 before `point`."""
    cast = {c.name for c in store.characters(story_id) if c.major} or \
        {c.name for c in store.characters(story_id)}
    counts: dict[str, int] = defaultdict(int)
    for a in store.actions(story_id, max(1, point - 80), point):
        if a.character in cast:
            counts[a.character] += 1
    ranked = sorted(cast, key=lambda c: (-counts[c], c))
    if len(ranked) < 2:
        raise BookmarksError("The arena needs a story with at least two characters.")
    return ranked[:2]


async def generate_starts(store: Store, memory: LLM, story_id: int, n: int,
                          points: list[int] | None = None, *, source: str = "model",
                          refused: list[str] | None = None,
                          on_start: Callable[[int, int], None] | None = None) -> list[int]:
    """N starting scenes at evenly spread (or given) story points: drawn from the storyline
    (`source="storyline"`, no model call) or written by the memory model. A model-written
    start that is refused twice is told in words: appended to `refused` (the others are
    still made) or, without that list, raised. `on_start(k, n)` is told before each one."""
    if source == "storyline":
        return draw_starts(store, story_id, n, points)
    story = store.story(story_id)
    if points is None:
        step = story.n_actions / (n + 1)
        points = [max(10, round(step * (k + 1))) for k in range(n)]
    ids = []
    names = [k for c in store.characters(story_id) for k in c.keys()]
    for k, point in enumerate(points[:n], start=1):
        if on_start:
            on_start(k - 1, min(n, len(points)))
        pair = _active_pair(store, story_id, point)
        recent = store.actions(story_id, max(1, point - 10), point)
        context = "\n".join(f"{a.character}: {a.text}" for a in recent)
        problems: list[str] = []

        def check(d: StartDraft, names: list[str] = names, problems: list[str] = problems) -> None:
            try:
                check_draft(d, names)
            except ValueError as exc:
                problems.append(str(exc))
                raise

        try:
            draft = await memory.structured(
                [{"role": "user", "content":
                  f'Story: "{story.title}". The story so far ends with:\n{context}\n\n'
                  f"Invent a new, open-ended scene between {pair[0]} and {pair[1]} that could "
                  f"happen next: a one-sentence setting, and {pair[0]}'s first line of dialogue."}],
                StartDraft, purpose="arena:start", max_tokens=200, check=check)  # re-asked once
        except StructuredOutputError as exc:
            why = refusal_words(problems[-1]) if problems else \
                "its reply was not the setting and first line asked for"
            words = (f"Start {k} of {min(n, len(points))} (after story action {point}) was not "
                     f"made: the memory model's scene was refused twice — {why}. Draw the starts "
                     "from the storyline instead, or configure a more capable memory model.")
            if refused is None:
                raise BookmarksError(words) from exc
            refused.append(words)
            continue
        ids.append(store.add_arena_start(story_id, point, pair, draft.setting.strip(),
                                         pair[0], draft.first_line.strip()))
    return ids


def refusal_words(problem: str) -> str:
    """'setting: …' (the check's words, as the model was told) → a sentence for people."""
    field, _, why = problem.partition(": ")
    label = {"setting": "the setting", "first_line": "the first line"}.get(field)
    return f"{label} {why}" if label and why else problem


async def run_item(store: Store, llms: dict[str, LLM], start_id: int, *,
                   method_a: str = "bookmarks", method_b: str = "eta3", turns: int = 10,
                   budget: int = 3, on_turn: Callable[[str, int, int], None] | None = None) -> int:
    """Continue one start with both methods (same models, same settings) → an item.
    `on_turn(method, k, turns)` is told before each turn (for progress bars)."""
    start = next((s for s in store.arena_starts() if s["id"] == start_id), None)
    if start is None:
        raise BookmarksError(f"There is no arena start with id {start_id}.")
    scenes: list[int] = []
    try:
        for method in (method_a, method_b):
            if method not in METHODS:
                raise BookmarksError(f"Unknown method {method!r}.")
            scene = store.create_scene(start["story_id"], start_point=start["point"],
                                       cast=start["characters"], setting=start["setting"],
                                       method=method, title=f"arena start {start_id} · {method}",
                                       settings={"budget": budget, "arena": start_id})
            scenes.append(scene.id)
            add_user_turn(store, scene.id, start["first_speaker"], start["first_line"])
            for k in range(turns):
                if on_turn:
                    on_turn(method, k, turns)
                who = round_robin(store, store.scene(scene.id))
                await _turn_with_retries(store, llms, scene.id, who, method, budget)
    except BaseException:
        for scene_id in scenes:  # no half-made item is left behind
            store.delete_scene(scene_id)
        raise
    return store.add_arena_item(start_id, method_a, method_b, scenes[0], scenes[1], turns)


async def make_items(store: Store, llms: dict[str, LLM], story_id: int, n: int, *,
                     turns: int, method_a: str = "bookmarks", method_b: str = "eta3",
                     source: str = "storyline", budget: int = 3,
                     on_progress: Callable[[str, int, int], None] | None = None
                     ) -> tuple[list[int], list[str]]:
    """N starts (drawn from the storyline, or model-written) each continued by both methods
    → (item ids, what went wrong, in words). `on_progress(text, done, total)` is told per
    start and per turn; a start that fails is reported and the others still run."""
    if method_a == method_b:
        raise BookmarksError("Choose two different methods.")
    problems: list[str] = []
    starts = await generate_starts(store, llms["memory"], story_id, n, source=source,
                                   refused=problems)
    steps = max(1, len(starts) * 2 * turns)
    items: list[int] = []
    for k, start_id in enumerate(starts):
        where = f"start {k + 1} of {len(starts)}"

        def on_turn(method: str, t: int, total: int, k: int = k, where: str = where) -> None:
            if on_progress:
                done = (k * 2 + (method == method_b)) * total + t
                on_progress(f"{where}: {METHODS.get(method, method)}, turn {t + 1} of {total}",
                            done, steps)

        try:
            items.append(await run_item(store, llms, start_id, method_a=method_a,
                                        method_b=method_b, turns=turns, budget=budget,
                                        on_turn=on_turn))
        except BookmarksError as exc:
            problems.append(f"{where.capitalize()} gave no item: {exc}")
        if on_progress:
            on_progress(f"{where}: done", (k + 1) * 2 * turns, steps)
    return items, problems


async def _turn_with_retries(store: Store, llms: dict[str, LLM], scene_id: int, who: str,
                             method: str, budget: int, tries: int = 3) -> None:
    """A weak actor sometimes gives no usable line: sample the turn again (bounded)."""
    for attempt in range(tries):
        try:
            await generate_turn(store, llms, scene_id, who, method=method, budget=budget,
                                stand_in=False)  # an annotator never judges a stand-in
            return
        except NoUsableLineError:
            if attempt == tries - 1:
                raise


def _transcript(store: Store, scene_id: int) -> list[dict]:
    turns = store.turns(scene_id)[1:]  # the shared first line is shown once, above
    return [{"character": t.character, "text": t.text} for t in turns]


def next_item(store: Store, annotator: str, rng: random.Random | None = None) -> dict | None:
    """The next item this annotator has not voted on, sides randomized and stored. The
    returned dict names no method."""
    annotator = annotator.strip()
    if not annotator:
        raise ValueError("Sign in (or give an annotator name) first.")
    done = store.judged_items(annotator)
    items = store.arena_items()
    pending = [i for i in items if i["id"] not in done]
    if not pending:
        return None
    return show(store, pending[0], annotator, {"done": len(done), "total": len(items)}, rng)


def show(store: Store, item: dict, annotator: str, progress: dict,
         rng: random.Random | None = None) -> dict:
    """An item as one annotator sees it: sides randomized on first showing and stored."""
    rng = rng or random.SystemRandom()
    left, right = (item["method_a"], item["method_b"]) if rng.random() < 0.5 else \
        (item["method_b"], item["method_a"])
    view = store.arena_view(item["id"], annotator, left, right)
    scene_of = {item["method_a"]: item["scene_a"], item["method_b"]: item["scene_b"]}
    start = next(s for s in store.arena_starts() if s["id"] == item["start_id"])
    story = store.story(start["story_id"])
    counts = store.action_counts(start["story_id"])
    return {"item_id": item["id"], "setting": start["setting"],
            "first_line": {"character": start["first_speaker"], "text": start["first_line"]},
            # spoiler-safe context: who the characters are and the lines just before the start
            "context": {"story": story.title, "point": start["point"],
                        "characters": [(c.name, counts.get(c.name, 0))
                                       for c in store.characters(start["story_id"])
                                       if c.name in start["characters"] or c.major],
                        "before": [(a.character, a.text) for a in store.actions(
                            start["story_id"], max(1, start["point"] - 7), start["point"])]},
            "left": _transcript(store, scene_of[view["left_method"]]),
            "right": _transcript(store, scene_of[view["right_method"]]),
            "progress": progress, "shown_at": time.time()}


def vote(store: Store, item_id: int, annotator: str, choice: str, *, rationale: str = "",
         seconds: float | None = None, source: str = "human",
         campaign_id: int | None = None) -> dict:
    """Record a vote (left | right | tie | both_bad | skip) and reveal the methods."""
    if choice not in (*VOTES, "skip"):
        raise ValueError(f"A vote is one of {', '.join(VOTES)} or skip.")
    view = store.shown_view(item_id, annotator)  # read only: a vote never assigns sides
    if view is None:
        raise BookmarksError("This item was not shown to this annotator.")
    added = store.add_judgment({"item_id": item_id, "annotator": annotator,
                                "left_method": view["left_method"],
                                "right_method": view["right_method"], "vote": choice,
                                "rationale": rationale.strip()[:2000], "seconds": seconds,
                                "source": source, "campaign_id": campaign_id})
    if not added:
        raise BookmarksError("You already voted on this item.")
    return {"left": view["left_method"], "right": view["right_method"]}


def outcome_for(j: dict, method: str) -> str | None:
    """A vote seen from `method`'s side: win, tie, loss or both_bad (None: not in it)."""
    if j["vote"] in ("tie", "both_bad"):
        return j["vote"]
    winner = j["left_method"] if j["vote"] == "left" else j["right_method"]
    if method not in (j["left_method"], j["right_method"]):
        return None
    return "win" if winner == method else "loss"


def results(store: Store, method_x: str = "bookmarks", method_y: str = "eta3",
            source: str | None = "human") -> dict:
    """Win/tie/loss of `method_x` against `method_y`. Intervals resample items, not votes
    (votes on one item are not independent). The LLM judge's two orders on an item are
    combined into one outcome: the same verdict both ways stands, a disagreement is a tie."""
    votes = [j for j in store.judgments(source) if j["vote"] != "skip"
             and {j["left_method"], j["right_method"]} == {method_x, method_y}]
    raw = [outcome_for(j, method_x) for j in votes]
    per: dict[str, list[str]] = defaultdict(list)
    units: dict[int, list[str]] = defaultdict(list)
    for j, o in zip(votes, raw, strict=True):
        per[j["annotator"]].append(o)
        units[j["item_id"]].append(o)
    shared = {i: v for i, v in units.items() if len(v) >= 2}
    agreement = {"items": len(shared), "krippendorff_alpha": krippendorff_alpha_nominal(shared),
                 "gwet_ac1": gwet_ac1(shared, OUTCOMES)}
    if source == "llm":  # one outcome per item from its two orders
        units = defaultdict(list, {i: [v[0] if len(set(v)) == 1 else "tie"]
                                   for i, v in units.items()})
    outcomes = [o for v in units.values() for o in v]
    summary = {"votes": len(votes), "items": len(units), "rates": rates(outcomes, OUTCOMES),
               "ci95": {c: clustered_bootstrap_ci(units, c) for c in OUTCOMES}}
    summary["per_annotator"] = {a: {"votes": len(v), **rates(v, OUTCOMES)} for a, v in per.items()}
    summary["agreement"] = agreement  # between annotators (or the judge's two orders)
    return summary


class Verdict(BaseModel):
    better: Literal["A", "B", "tie", "both_bad"]


async def llm_judge(store: Store, judge: LLM, item_ids: list[int] | None = None) -> int:
    """The judge model votes on each item in both orders (annotators llm:ab and llm:ba)."""
    count = 0
    for item in store.arena_items():
        if item_ids and item["id"] not in item_ids:
            continue
        start = next(s for s in store.arena_starts() if s["id"] == item["start_id"])
        texts = {item["method_a"]: _transcript(store, item["scene_a"]),
                 item["method_b"]: _transcript(store, item["scene_b"])}
        for name, (left, right) in (("llm:ab", (item["method_a"], item["method_b"])),
                                    ("llm:ba", (item["method_b"], item["method_a"]))):
            if item["id"] in store.judged_items(name):
                continue
            show = {k: "\n".join(f"{t['character']}: {t['text']}" for t in texts[m])
                    for k, m in (("A", left), ("B", right))}
            verdict = await judge.structured(
                [{"role": "user", "content":
                  f"Setting: {start['setting']}\n{start['first_speaker']}: {start['first_line']}"
                  f"\n\nContinuation A:\n{show['A']}\n\nContinuation B:\n{show['B']}\n\n"
                  "Which continuation keeps the characters more faithful to the story and is "
                  "the better scene? Answer A, B, tie, or both_bad."}],
                Verdict, purpose="judge:arena", max_tokens=20)
            choice = {"A": "left", "B": "right"}.get(verdict.better, verdict.better)
            store.arena_view(item["id"], name, left, right)
            vote(store, item["id"], name, choice, source="llm")
            count += 1
    return count

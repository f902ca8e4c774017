"""Walk a story: ground and predict at N evenly spread points, in story order, with memory
starting empty (a fresh memory space), reporting what the memory did at each point —
including where it degraded instead of failing (fallbacks) and which lines the actor had
to be asked again for (re-asked lines)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bookmarks.engine.actor import Line, act, fallback_event
from bookmarks.engine.ground import chosen_characters, ground_at
from bookmarks.engine.lineage import Lineage
from bookmarks.errors import BookmarksError, ModelError
from bookmarks.memory import resolve_refs
from bookmarks.models.llm import LLM
from bookmarks.store import Store
from bookmarks.stories.story import NARRATION, Action


@dataclass
class WalkSummary:
    method: str
    space: str
    points: int = 0
    reused: int = 0
    initialized: int = 0
    actions_read: int = 0
    actions_read_without_reuse: int = 0
    tokens: float = 0
    tokens_without_reuse: float = 0
    sync_calls: int = 0
    sync_calls_without_reuse: float = 0
    memory_calls: int = 0
    memory_tokens: int = 0
    seconds: float = 0
    errors: list[str] = field(default_factory=list)
    # degraded, not failed: points whose grounding used a fallback (and fallbacks by step:
    # propose, match, sync, select), predictions whose line was re-asked, actor tries
    points_with_fallback: int = 0
    fallbacks: dict[str, int] = field(default_factory=dict)
    reasked_lines: int = 0
    actor_tries: int = 0
    # how blocks were read for several bookmarks: syncs per mode (joint, prefix, single,
    # separate; none: nothing to read); see engine/joint_sync.py
    sync_modes: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["summary"] = True
        d["tokens_saved_ratio"] = round(self.tokens_without_reuse / self.tokens, 2) if self.tokens else None
        attempted = self.points + len(self.errors)
        d["failed"] = len(self.errors)
        d["fallback_share"] = round(self.points_with_fallback / self.points, 3) if self.points else None
        predicted = self.points if self.actor_tries else 0
        d["reasked_share"] = round(self.reasked_lines / predicted, 3) if predicted else None
        d["attempted"] = attempted
        return d




def eligible_points(store: Store, story_id: int, characters: list[str] | None,
                    window: int = 10) -> list[Action]:
    names = set(chosen_characters(store, story_id, characters))
    return [a for a in store.actions(story_id) if a.character in names and a.index > window]


def spread(items: list, n: int) -> list:
    if n <= 0 or n >= len(items):
        return list(items)
    return [items[round(k * (len(items) - 1) / (n - 1))] if n > 1 else items[-1] for k in range(n)]


async def walk(store: Store, llms: dict[str, LLM], story_id: int, *, method: str,
               characters: list[str] | None = None, points: int = 10, budget: int = 3,
               predict: bool = True, on_point: Callable[[dict], None] | None = None,
               at: list[int] | None = None, use_cache: bool = True,
               space: str | None = None) -> WalkSummary:
    """`at`: walk exactly the actions at these story points instead of N spread over the
    eligible ones. `use_cache=False` asks the models every time (cost figures then count
    every call at its real cost, as an efficiency comparison needs). `space`: go on with
    the memory of an earlier walk (its summary's `space`) instead of an empty one — a walk
    in several parts, in story order."""
    story = store.story(story_id)
    if at:
        by_index = {a.index: a for a in store.actions(story_id)}
        missing = [i for i in at if i not in by_index or by_index[i].character == NARRATION]
        if missing:
            raise BookmarksError(f"No character's action at story point(s) "
                                 f"{', '.join(map(str, missing))} (the story has "
                                 f"{story.n_actions} actions; narration cannot be predicted).")
        chosen = [by_index[i] for i in sorted(set(at))]
    else:
        chosen = spread(eligible_points(store, story_id, characters), points)
    if not use_cache:
        llms = {role: replace(llm, cache_get=None, cache_put=None) for role, llm in llms.items()}
    if not chosen:
        raise BookmarksError("No eligible story points: choose other characters or a longer story.")
    space = space or f"walk-{method}-{uuid.uuid4().hex[:8]}"
    lineage = Lineage.of(store, story.trunk_id)
    summary = WalkSummary(method=method, space=space)
    started = time.perf_counter()
    cast = store.characters(story_id)
    for action in chosen:
        t0 = time.perf_counter()
        try:
            record = await _point(store, llms, story, lineage, cast, action, method=method,
                                  budget=budget, space=space, predict=predict)
        except ModelError as exc:  # the point fails cleanly (nothing committed); go on
            record = {"point": action.index, "character": action.character, "error": str(exc)}
            summary.errors.append(f"#{action.index}: {exc}")
            if on_point:
                on_point(record)
            continue
        record["seconds"] = round(time.perf_counter() - t0, 2)
        _accumulate(summary, record)
        if on_point:
            on_point(record)
    summary.seconds = round(time.perf_counter() - started, 2)
    return summary


async def _point(store: Store, llms: dict[str, LLM], story, lineage: Lineage, cast, action: Action,
                 *, method: str, budget: int, space: str, predict: bool) -> dict:
    grounding, scene = await ground_at(store, llms["memory"], story_id=story.id, lineage=lineage,
                                       position=action.index, character=action.character,
                                       method=method, budget=budget, space=space)
    prediction, acted = None, None
    if predict:
        aliases = next((c.aliases for c in cast if c.name == action.character), [])
        acted = await act(llms["actor"], story_title=story.title, character=action.character,
                          scene=[Line(x.character, x.text) for x in scene],
                          grounding=grounding.text, aliases=aliases,
                          others=[c.name for c in cast if c.name != action.character])
        prediction = acted.text
    store.commit_memory(grounding.writes)
    record = _record(action, resolve_refs(grounding.events), grounding.usage, prediction)
    if acted is not None:
        if acted.fallback:  # no try gave a line: a stand-in, recorded as a fallback
            record["fallbacks"].append({k: v for k, v in fallback_event(acted).items()
                                        if k != "kind"})
        record["actor_tries"] = acted.tries
        record["rejected"] = [{"reply": raw[:200], "reason": why} for raw, why in acted.rejected]
    return record


def _record(action: Action, events: list[dict], usage: dict, prediction: str | None) -> dict:
    syncs = [e for e in events if e["kind"] == "synchronized"]
    return {
        "fallbacks": [{"step": e["step"], "title": e.get("title", ""), "outcome": e["outcome"],
                       "reason": e["reason"]} for e in events if e["kind"] == "fallback"],
        "point": action.index, "character": action.character,
        "proposed": [f"{e['title']} [{e['type']}]" for e in events if e["kind"] == "proposed"],
        "reused": [{"title": e["title"], "from_p": e["from_p"]} for e in events if e["kind"] == "reused"],
        "initialized": [e["title"] for e in events if e["kind"] == "initialized"],
        "syncs": [{"title": e["title"], "p_old": e["p_old"], "p_new": e["p_new"],
                   "actions_read": e["actions_read"], "calls": e["calls"],
                   "tokens": e["prompt_tokens"] + e["completion_tokens"],
                   "actions_read_wo": e["actions_read_wo"], "calls_wo": e["calls_wo"],
                   "tokens_wo": round(e["tokens_wo"]), "stalled": e.get("stalled", ""),
                   "mode": e.get("mode", "separate")}
                  for e in syncs],
        "memory_calls": usage.get("calls", 0),
        "memory_tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
        "prediction": prediction, "actual": action.text,
    }


def _accumulate(summary: WalkSummary, record: dict) -> None:
    summary.points += 1
    summary.reused += len(record["reused"])
    summary.initialized += len(record["initialized"])
    summary.memory_calls += record["memory_calls"]
    summary.memory_tokens += record["memory_tokens"]
    summary.points_with_fallback += bool(record["fallbacks"])
    for f in record["fallbacks"]:
        summary.fallbacks[f["step"]] = summary.fallbacks.get(f["step"], 0) + 1
    summary.actor_tries += record.get("actor_tries", 0)
    summary.reasked_lines += record.get("actor_tries", 1) > 1
    for s in record["syncs"]:
        summary.actions_read += s["actions_read"]
        summary.actions_read_without_reuse += s["actions_read_wo"]
        summary.tokens += s["tokens"]
        summary.tokens_without_reuse += s["tokens_wo"]
        summary.sync_calls += s["calls"]
        summary.sync_calls_without_reuse += s["calls_wo"]
        mode = s.get("mode", "separate")
        summary.sync_modes[mode] = summary.sync_modes.get(mode, 0) + 1


def format_record(r: dict) -> str:
    if "error" in r:
        return f"#{r['point']} {r['character']}: failed — {r['error']}"
    lines = [f"#{r['point']} {r['character']} ({r['seconds']} s, {r['memory_calls']} memory calls, "
             f"{r['memory_tokens']} tokens)"]
    lines += [f"  proposed    {p}" for p in r["proposed"]]
    lines += [f"  reused      {x['title']} (from p={x['from_p']})" for x in r["reused"]]
    lines += [f"  initialized {t}" for t in r["initialized"]]
    lines += [f"  sync        {s['title']}: p {s['p_old']}→{s['p_new']}, read {s['actions_read']} "
              f"(without reuse {s['actions_read_wo']}), {s['calls']} calls, {s['tokens']} tokens "
              f"(without reuse ≈{s['tokens_wo']}), read {s.get('mode', 'separate')}"
              for s in r["syncs"]]
    lines += [f"  fallback    {f['step']}: {f['outcome']} ({f['reason'][:120]})"
              for f in r.get("fallbacks", [])]
    lines += [f"  re-asked    {x['reason']}: {x['reply'][:100]!r}" for x in r.get("rejected", [])]
    if r["prediction"] is not None:
        lines.append(f"  predicted   {r['prediction'][:160]}")
        lines.append(f"  actual      {r['actual'][:160]}")
    return "\n".join(lines)

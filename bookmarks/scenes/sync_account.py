"""What each synchronization of a turn cost, told as the call log and the sync-cost
records have it, for the memory panel and the cost meter.

A `synchronized` event counts the calls and tokens its own model calls used. Two cases
made that untrue on the page:

- The reply cache served its calls (the same prompts were asked before: a second scene at
  the same point, a fork, a line undone and played again). It spent nothing now, yet the
  work has a cost: that of the first identical synchronization (same bookmark, same
  checkpoints p_old → p_new), kept in the sync-cost records. It is shown as the
  original cost, "from cache"; a synchronization from p = 0 counts it as its cost without
  reuse.
- It read nothing (the bookmark was already up to date: reuse at its best, e.g. a
  regenerated line), so there was no call to measure a rate from, and its cost without
  reuse came out 0. It is then what reading its actions without reuse costs at the rate the
  story's sync-cost records show for its type: tokens spent per action read.
"""

from __future__ import annotations

from bookmarks.store import Store


def account(store: Store, story_id: int, syncs: list[dict]) -> list[dict]:
    """The `synchronized` events with true figures added: `tokens` (spent now),
    `cached` (None, or the first identical synchronization's calls, tokens and turn),
    `work_tokens` (what the work costs: the original when served from cache),
    `tokens_wo` (without reuse, filled in from the call log where it was missing) and
    `saved` (by reuse: without reuse, less the work)."""
    if not syncs:
        return []
    rows = store.sync_costs(story_id)
    rates: dict[str, float] = {}
    out = []
    for event in syncs:
        e = dict(event)
        spent = e.get("prompt_tokens", 0) + e.get("completion_tokens", 0)
        e["tokens"], e["cached"] = spent, None
        if e.get("actions_read", 0) > 0:
            first = next((r for r in rows if r["bookmark_id"] == e.get("bookmark")
                          and r["p_old"] == e["p_old"] and r["p_new"] == e["p_new"]
                          and r["calls"] > e.get("calls", 0)), None)
            if first is not None:
                e["cached"] = {"calls": first["calls"], "turn_id": first["turn_id"],
                               "tokens": first["prompt_tokens"] + first["completion_tokens"]}
        work = e["cached"]["tokens"] if e["cached"] else spent
        without = float(e.get("tokens_wo") or 0)
        if e["cached"] and e["p_old"] == 0:
            without = max(without, work)
        elif not without and e.get("actions_read_wo"):
            kind = e.get("type", "")
            if kind not in rates:
                rates[kind] = per_action(rows, kind)
            without = e["actions_read_wo"] * rates[kind]
        e["work_tokens"], e["tokens_wo"] = work, without
        e["saved"] = max(0.0, without - work)
        out.append(e)
    return out


def per_action(rows: list[dict], kind: str) -> float:
    """Tokens spent per action read by synchronizations of this type that asked the model
    (the story's sync-cost records; 0 when there are none yet)."""
    asked = [r for r in rows if r["type"] == kind and r["calls"] and r["actions_read"]]
    read = sum(r["actions_read"] for r in asked)
    return sum(r["prompt_tokens"] + r["completion_tokens"] for r in asked) / read if read else 0.0

"""A long story end to end: walk N points spread over a long play with Bookmarks from an
empty memory, with the configured model (the embedded one unless a server is set), and
print what each prediction cost and whether any failed or outgrew the model's context.

    python benchmarks/long_story.py [--points 12] [--noreuse-points 3] [--story PATH]

Per point: seconds, memory calls and tokens, actions read (and without reuse), stalled
syncs. Then: failed points, HTTP 400 answers, the largest prompt sent (in the server's own
token count) against the context window, and — with `--noreuse-points N` — the measured
cost of the "without reuse" ablation at the last N points next to the estimate the reuse
walk made for the same points. Calls are never served from the cache (real costs).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from bookmarks.config import load_settings
from bookmarks.evaluation.walk import eligible_points, spread, walk
from bookmarks.services import BUNDLED_STORIES, Services


def show(r: dict) -> None:
    if "error" in r:
        print(f"  #{r['point']:>5} {r['character']:<16} FAILED: {r['error'][:200]}", flush=True)
        return
    stalls = sum(1 for s in r["syncs"] if s.get("stalled"))
    read = sum(s["actions_read"] for s in r["syncs"])
    read_wo = sum(s["actions_read_wo"] for s in r["syncs"])
    print(f"  #{r['point']:>5} {r['character']:<16} {r['seconds']:>7.1f} s {r['memory_calls']:>4} calls "
          f"{r['memory_tokens']:>7} tok  read {read:>5} (w/o reuse {read_wo:>5})  "
          f"{len(r['reused'])} reused {len(r['initialized'])} new {stalls} stalled", flush=True)


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({**os.environ, "BOOKMARKS_DATA_DIR": tmp})
        services = Services.open(settings)
        store = services.store
        story_id = services.import_file(Path(args.story))
        story = store.story(story_id)
        memory = services.llms["memory"]
        print(f"{story.title}: {story.n_actions} actions; memory model {memory.model.name}, "
              f"context {memory.config.context_tokens} tokens; {args.points} points, K={args.budget}")
        points = [a.index for a in spread(eligible_points(store, story_id, args.character),
                                          args.points)]
        started = time.perf_counter()
        reuse = await walk(store, services.llms, story_id, method="bookmarks", at=points,
                           budget=args.budget, predict=not args.no_predict, use_cache=False,
                           on_point=show)
        wall = time.perf_counter() - started
        calls = store.db.execute("SELECT COUNT(*), SUM(ok = 0), SUM(error LIKE '%HTTP 400%'), "
                                 "MAX(prompt_tokens) FROM llm_calls").fetchone()
        d = reuse.as_dict()
        n = max(1, d["points"])
        print(f"\nBookmarks: {d['points']}/{len(points)} points, {len(d['errors'])} failed; "
              f"{wall:.0f} s ({wall / n:.0f} s per prediction); memory calls {d['memory_calls']} "
              f"({d['memory_calls'] / n:.1f} per prediction); model calls in all {calls[0]}, "
              f"{calls[1] or 0} failed, {calls[2] or 0} answered HTTP 400; largest prompt "
              f"{calls[3]} tokens of {memory.config.context_tokens}")
        print(f"actions read {d['actions_read']} vs {d['actions_read_without_reuse']} without reuse "
              f"({d['actions_read_without_reuse'] / max(1, d['actions_read']):.1f}x); sync tokens "
              f"{d['tokens']:.0f} vs ≈{d['tokens_without_reuse']:.0f} estimated without reuse; "
              f"sync calls {d['sync_calls']} vs ≈{d['sync_calls_without_reuse']:.0f}")
        if args.noreuse_points:
            last = points[-args.noreuse_points:]
            rows = [r for r in store.sync_costs(story_id, reuse.space) if r["position"] in last]
            est = sum(r["prompt_tokens_wo"] + r["completion_tokens_wo"] for r in rows)
            est_calls = sum(r["calls_wo"] for r in rows)
            ablation = await walk(store, services.llms, story_id, method="bookmarks-noreuse",
                                  at=last, budget=args.budget, predict=False, use_cache=False,
                                  on_point=show)
            a = ablation.as_dict()
            print(f"without reuse, measured at points {last}: sync tokens {a['tokens']:.0f} in "
                  f"{a['sync_calls']} calls, vs the reuse walk's estimate ≈{est:.0f} tokens in "
                  f"≈{est_calls:.0f} calls (measured/estimated {a['tokens'] / max(1, est):.2f}); "
                  f"{len(a['errors'])} failed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--story", default=str(BUNDLED_STORIES / "the_long_winter_at_harrowgate.txt"))
    parser.add_argument("--points", type=int, default=12)
    parser.add_argument("--budget", type=int, default=3)
    parser.add_argument("--character", action="append", default=None)
    parser.add_argument("--no-predict", action="store_true", help="ground only")
    parser.add_argument("--noreuse-points", type=int, default=0, metavar="N")
    asyncio.run(main(parser.parse_args()))

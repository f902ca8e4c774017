"""Degrade, never fail: walk every method (Bookmarks, the ablations, the baselines) over the
same consecutive points of a long story with the configured model (the embedded one
unless a server is set), memory starting empty, and count per method the failed
predictions, the points whose grounding fell back (invalid model output: proposal,
match decision, synchronization, 3-way ETA selection) and the lines the actor had to be
asked again for (its reply was the app's own words, another speaker, empty, …).

    python benchmarks/degrade_walk.py [--points 6] [--start 200] [--methods a,b]
                                      [--character NAME] [--budget 3] [--out FILE.json]

Points: the first `--points` consecutive speeches of the chosen (default: major)
characters from action `--start` on. Methods run one after another, each on a fresh
memory space; calls are never served from the cache (each method pays its own way).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from bookmarks.config import load_settings
from bookmarks.engine.methods import METHODS
from bookmarks.evaluation.walk import eligible_points, walk
from bookmarks.services import BUNDLED_STORIES, Services


def show(r: dict) -> None:
    if "error" in r:
        print(f"  #{r['point']:>5} {r['character']:<16} FAILED: {r['error'][:200]}", flush=True)
        return
    steps = ",".join(f["step"] for f in r["fallbacks"]) or "-"
    print(f"  #{r['point']:>5} {r['character']:<16} {r['seconds']:>6.1f} s {r['memory_calls']:>3} "
          f"memory calls  fallbacks: {steps:<18} actor tries {r.get('actor_tries', '-')}"
          f"  → {(r['prediction'] or '')[:70]!r}", flush=True)
    for x in r.get("rejected", []):
        print(f"          re-asked: {x['reason'][:70]} ← {x['reply'][:60]!r}", flush=True)


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({**os.environ, "BOOKMARKS_DATA_DIR": tmp})
        services = Services.open(settings)
        store = services.store
        story_id = services.import_file(Path(args.story))
        story = store.story(story_id)
        points = [a.index for a in eligible_points(store, story_id, args.character)
                  if a.index >= args.start][: args.points]
        methods = args.methods.split(",") if args.methods else list(METHODS)
        print(f"{story.title}: {story.n_actions} actions; actor {services.llms['actor'].model.name}, "
              f"memory {services.llms['memory'].model.name}; points {points}; K={args.budget}",
              flush=True)
        rows = []
        for method in methods:
            print(f"\n{method}", flush=True)
            started = time.perf_counter()
            summary = await walk(store, services.llms, story_id, method=method, at=points,
                                 budget=args.budget, use_cache=False, on_point=show)
            d = summary.as_dict()
            wall = time.perf_counter() - started
            row = {"method": method, "points": len(points), "completed": d["points"],
                   "failed": d["failed"], "points_with_fallback": d["points_with_fallback"],
                   "fallback_share": d["fallback_share"], "fallbacks_by_step": d["fallbacks"],
                   "reasked_lines": d["reasked_lines"], "reasked_share": d["reasked_share"],
                   "actor_tries": d["actor_tries"], "memory_calls": d["memory_calls"],
                   "seconds": round(wall, 1), "errors": d["errors"]}
            rows.append(row)
            print(f"{method}: {row['completed']}/{len(points)} predictions, {row['failed']} failed; "
                  f"fallbacks at {row['points_with_fallback']} points {row['fallbacks_by_step']}; "
                  f"re-asked lines {row['reasked_lines']}; {wall:.0f} s", flush=True)
        print("\nmethod                  points failed fallback-share re-asked-share  seconds")
        for r in rows:
            print(f"{r['method']:<24}{r['points']:>6}{r['failed']:>7}{r['fallback_share'] or 0:>15.2f}"
                  f"{r['reasked_share'] or 0:>15.2f}{r['seconds']:>9.0f}")
        if args.out:
            Path(args.out).write_text(json.dumps({"story": story.title, "points": points,
                                                  "budget": args.budget, "rows": rows}, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--story", default=str(BUNDLED_STORIES / "the_long_winter_at_harrowgate.txt"))
    parser.add_argument("--points", type=int, default=6)
    parser.add_argument("--start", type=int, default=200)
    parser.add_argument("--methods", default="", help="comma-separated (default: every method)")
    parser.add_argument("--character", action="append", default=None)
    parser.add_argument("--budget", type=int, default=3)
    parser.add_argument("--out", default="")
    asyncio.run(main(parser.parse_args()))

"""Scale: generated stories of 10,000 and 50,000 actions — import time and peak memory,
engine time per turn on a scripted instant model, and the cost of one storyline page
(the Library shows 50 rows a page, never the whole story).

Each size runs in its own process so peak memory (max RSS) is its own.

    python benchmarks/scale.py [--sizes 10000 50000] [--turns 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def one(n: int, turns: int) -> dict:
    from engine_overhead import run_walk
    from synthetic import synthetic_story

    from bookmarks.store import Store
    from bookmarks.stories.importers import load_story

    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        story = synthetic_story(n)
        path.write_text("".join(json.dumps({"character": a.character, "text": a.text,
                                            "chapter": a.chapter}) + "\n" for a in story.actions))
        del story
        t0 = time.perf_counter()
        parsed = load_story(path, max_bytes=200 * 1024 * 1024)
        t1 = time.perf_counter()
        store = Store(Path(tmp) / "bench.db")
        story_id = store.add_story(parsed)
        t2 = time.perf_counter()
        peak_import = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        del parsed
        pages = []
        for page_start in (1, n // 2, n - 49):
            s0 = time.perf_counter()
            rows = store.actions(story_id, page_start, page_start + 49)
            store.action_counts(story_id)
            store.chapters(story_id)
            pages.append((time.perf_counter() - s0) * 1000)
            assert len(rows) == 50
        per_turn, wall, model_s = asyncio.run(run_walk(store, story_id, turns, False))
    return {"actions": n, "file_mb": round(path.stat().st_size / 1e6, 1) if path.exists() else None,
            "parse_s": round(t1 - t0, 2), "store_s": round(t2 - t1, 2),
            "peak_rss_mb": round(peak_import / 1024, 1),
            "rss_growth_mb": round((peak_import - base_rss) / 1024, 1),
            "page_ms": [round(p, 1) for p in pages],
            "turn_ms_mean": round(sum(per_turn) / len(per_turn), 1),
            "turn_ms_p95": round(sorted(per_turn)[int(0.95 * (len(per_turn) - 1))], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.turns)))
        return
    results = []
    for n in args.sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(n), "--turns", str(args.turns)],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"{n:>6} actions: parse {r['parse_s']} s + store {r['store_s']} s; peak RSS "
              f"{r['peak_rss_mb']} MB (+{r['rss_growth_mb']} MB); a 50-row storyline page "
              f"{'/'.join(map(str, r['page_ms']))} ms (first/middle/last); engine per turn "
              f"{r['turn_ms_mean']} ms mean, {r['turn_ms_p95']} ms p95 ({args.turns} turns, "
              "instant model)")
    if len(results) > 1:
        a, b = results[0], results[-1]
        print(f"ratio {b['actions']}/{a['actions']} actions: import time "
              f"{(b['parse_s'] + b['store_s']) / max(0.01, a['parse_s'] + a['store_s']):.1f}x, "
              f"engine time per turn {b['turn_ms_mean'] / max(0.1, a['turn_ms_mean']):.2f}x")


if __name__ == "__main__":
    main()

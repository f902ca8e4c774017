"""Sync cost with reuse vs. without, by progress bucket (the paper's efficiency figure).

Walks a story with Bookmarks from empty memory (default: the bundled mystery, the
configured model — the embedded one unless a server is set), then groups every
synchronization by how far into the story it happened and prints actual sync tokens
against the counterfactual without reuse (each section synchronized from p = 0). Calls are
never served from the cache, so every figure is a real cost.

    python benchmarks/reuse_savings.py [--points 8] [--character "Ada Penrose"] [--predict]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from bookmarks.config import load_settings
from bookmarks.evaluation.walk import walk
from bookmarks.services import BUNDLED_STORIES, Services


def buckets(rows: list[dict], n: int = 4) -> list[tuple[str, dict]]:
    out = []
    for b in range(n):
        lo, hi = b / n, (b + 1) / n
        sel = [r for r in rows if lo < r["position"] / r["story_length"] <= hi]
        agg = {k: sum(r[k] for r in sel) for k in ("actions_read", "actions_read_wo", "calls",
                                                   "calls_wo")}
        agg["tokens"] = sum(r["prompt_tokens"] + r["completion_tokens"] for r in sel)
        agg["tokens_wo"] = sum(r["prompt_tokens_wo"] + r["completion_tokens_wo"] for r in sel)
        agg["output"] = sum(r["completion_tokens"] for r in sel)
        agg["output_wo"] = sum(r["completion_tokens_wo"] for r in sel)
        agg["syncs"] = len(sel)
        out.append((f"{int(lo * 100)}–{int(hi * 100)}%", agg))
    return out


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b else "n/a"


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({**__import__("os").environ, "BOOKMARKS_DATA_DIR": tmp})
        services = Services.open(settings)
        story_id = services.import_file(Path(args.story))
        summary = await walk(services.store, services.llms, story_id, method="bookmarks",
                             characters=args.character, points=args.points, budget=args.budget,
                             predict=args.predict, use_cache=False,
                             on_point=lambda r: print(f"  point {r['point']}: "
                                                      f"{len(r['reused'])} reused, "
                                                      f"{len(r['initialized'])} initialized, "
                                                      f"{r['seconds']} s", flush=True))
        rows = services.store.sync_costs(story_id, summary.space)
        print(f"\nmodel: {services.llms['memory'].model.name}; {summary.points} points, "
              f"{len(rows)} synchronizations, {summary.reused} reused, "
              f"{summary.initialized} initialized, {summary.seconds} s")
        print(f"{'progress':>9} {'syncs':>5} {'read':>6} {'read w/o':>8} {'tokens':>8} "
              f"{'tok w/o':>8} {'ratio':>6} {'output':>7} {'out w/o':>8} {'ratio':>6}")
        for label, a in buckets(rows):
            print(f"{label:>9} {a['syncs']:>5} {a['actions_read']:>6} {a['actions_read_wo']:>8} "
                  f"{a['tokens']:>8.0f} {a['tokens_wo']:>8.0f} {ratio(a['tokens_wo'], a['tokens']):>6} "
                  f"{a['output']:>7.0f} {a['output_wo']:>8.0f} {ratio(a['output_wo'], a['output']):>6}")
        total_t = sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows)
        total_wo = sum(r["prompt_tokens_wo"] + r["completion_tokens_wo"] for r in rows)
        print(f"all: sync tokens {total_t} vs ≈{total_wo:.0f} without reuse "
              f"({ratio(total_wo, total_t)})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--story", default=str(BUNDLED_STORIES / "saltmarsh_lighthouse.jsonl"))
    parser.add_argument("--points", type=int, default=8)
    parser.add_argument("--budget", type=int, default=3)
    parser.add_argument("--character", action="append", default=None)
    parser.add_argument("--predict", action="store_true", help="also run the actor")
    asyncio.run(main(parser.parse_args()))

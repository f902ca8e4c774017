"""Engine overhead per turn, excluding model time, on a generated story.

Imports a generated N-action story (default 10,000), then runs T predictions (default
200) evenly spread over it with Bookmarks on a scripted instant model, and reports the
import time and milliseconds per turn spent outside the model — once with reuse (one
memory space for the whole walk) and once without (a fresh space at every point), in
the same run.

    python benchmarks/engine_overhead.py [--actions 10000] [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import rotating_sections, synthetic_story  # noqa: E402

from bookmarks.config import RoleConfig  # noqa: E402
from bookmarks.evaluation.walk import walk  # noqa: E402
from bookmarks.models.llm import LLM
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory  # noqa: E402
from bookmarks.store import Store  # noqa: E402


class TimedFake(ScriptedFakeModel):
    """The scripted model, timing itself so model time can be excluded."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.seconds = 0.0

    async def chat(self, request):
        t0 = time.perf_counter()
        try:
            return await super().chat(request)
        finally:
            self.seconds += time.perf_counter() - t0


async def run_walk(store, story_id, turns, fresh_each_point):
    fake = TimedFake(default=ScriptedMemory(sections=rotating_sections))
    llms = {r: LLM(model=fake, config=RoleConfig(role=r), log=store.log_call)
            for r in ("actor", "memory")}
    per_turn = []
    last = [time.perf_counter(), 0.0]

    def on_point(_record):
        now = time.perf_counter()
        model = fake.seconds - last[1]
        per_turn.append((now - last[0] - model) * 1000)
        last[0], last[1] = now, fake.seconds

    started = time.perf_counter()
    # without reuse: the paper's ablation, every point starts from an empty memory
    method = "bookmarks-noreuse" if fresh_each_point else "bookmarks"
    await walk(store, llms, story_id, method=method, points=turns, on_point=on_point)
    return per_turn, time.perf_counter() - started, fake.seconds


def report(label, per_turn, total, model_s):
    per_turn = sorted(per_turn)
    p95 = per_turn[int(0.95 * (len(per_turn) - 1))]
    print(f"{label}: {len(per_turn)} turns, engine overhead per turn: mean "
          f"{statistics.mean(per_turn):.1f} ms, median {statistics.median(per_turn):.1f} ms, "
          f"p95 {p95:.1f} ms (wall {total:.1f} s, model {model_s:.2f} s)")
    return statistics.mean(per_turn)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        story = synthetic_story(args.actions)
        t1 = time.perf_counter()
        store = Store(Path(tmp) / "bench.db")
        story_id = store.add_story(story)
        t2 = time.perf_counter()
        print(f"story: {args.actions} actions; generate+validate {t1 - t0:.2f} s, "
              f"import into SQLite {t2 - t1:.2f} s")
        reuse = report("with reuse   ", *asyncio.run(run_walk(store, story_id, args.turns, False))[:3])
        fresh = report("without reuse", *asyncio.run(run_walk(store, story_id, args.turns, True))[:3])
        print(f"ratio (without / with reuse) of engine time per turn: {fresh / reuse:.2f}x")


if __name__ == "__main__":
    main()

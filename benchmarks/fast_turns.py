"""Time from Next to a line, for a scene late in a long story: cold, with background
synchronization (a pause between turns, as a writer reads), and with prepared memory.

For each mode, a fresh database, the long bundled play, a Bookmarks scene started at
`--start` (default 1,200 of 1,412 actions) and `--turns` turns of round-robin speakers.
Per turn it measures the time from pressing Next to the first streamed token of the line
and to the committed turn, and the model calls made in that interval (the critical path).

    python benchmarks/fast_turns.py                       # scripted server, 0.5 s per call
    python benchmarks/fast_turns.py --model configured --turns 3 --pause 300

`--model scripted` serves a scripted OpenAI-compatible model over real HTTP that answers
each call after `--latency` seconds (like a remote API); `configured` uses the app's
settings (the embedded model unless a server is set). Modes:
- cold: no background work, no prepared memory — every turn grounds itself;
- background: after each turn the next speaker's memory is prepared while the benchmark
  waits `--pause` seconds (a writer reading), then Next;
- prepared: `bookmarks prepare` first (checkpoints every `--every` actions, not timed
  here), then as "background".
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bookmarks.config import load_settings
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedMemory
from bookmarks.scenes.play import generate_turn, round_robin
from bookmarks.scenes.prepare import plan, prepare
from bookmarks.services import BUNDLED_STORIES, Services

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.fake_server import scripted_server  # noqa: E402  (a test double, by design)

MODES = ("cold", "background", "prepared")


class SlowScripted(ScriptedMemory):
    """Scripted replies after a fixed latency (test double standing in for a remote API)."""

    def __init__(self, latency: float):
        super().__init__(sections=[
            {"title": "Maren Voss's debt to Silas Grint", "type": "state", "subject": "Maren Voss"},
            {"title": "The parish ledger", "type": "concept", "subject": "ledger"},
            {"title": "How Tobias Crane answers", "type": "behavioral", "subject": "Tobias Crane"}])
        self.latency = latency

    def __call__(self, request):
        time.sleep(self.latency)
        return super().__call__(request)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run_mode(mode: str, args: argparse.Namespace, env: dict) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({**env, "BOOKMARKS_DATA_DIR": tmp})
        services = Services.open(settings)
        store = services.store
        story_id = services.import_file(BUNDLED_STORIES / "the_long_winter_at_harrowgate.txt")
        if mode == "prepared":
            the_plan = plan(store, story_id, characters=["Maren Voss", "Tobias Crane"],
                            every=args.every)
            the_plan.points = [p for p in the_plan.points if p <= args.start]
            await prepare(store, services.llms["memory"], the_plan)
        scene = store.create_scene(story_id, start_point=args.start,
                                   cast=["Maren Voss", "Tobias Crane"], method="bookmarks",
                                   settings={"budget": 3, "order": "round robin"})
        pre = services.prefetcher if mode != "cold" else None
        first, done, calls = [], [], []
        for k in range(args.turns):
            who = round_robin(store, store.scene(scene.id))
            if pre is not None:
                pre.schedule(scene.id, who)
                await asyncio.sleep(args.pause)  # the writer reads the last line
            n_before = store.db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0]
            started = time.perf_counter()
            seen: list[float] = []

            def on_text(_text: str, seen: list[float] = seen) -> None:
                if not seen:
                    seen.append(time.perf_counter())

            prepared = await pre.take(scene.id, pre.step_for(scene.id, who)) if pre else None
            await generate_turn(store, services.llms, scene.id, who, on_text=on_text,
                                prepared=prepared)
            ended = time.perf_counter()
            n_after = store.db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0]
            first.append((seen[0] if seen else ended) - started)
            done.append(ended - started)
            calls.append(n_after - n_before)
            print(f"  {mode:<10} turn {k + 1}: first token {first[-1]:6.2f} s, committed "
                  f"{done[-1]:6.2f} s, {calls[-1]} calls on the critical path"
                  f"{' (prepared)' if prepared else ''}", flush=True)
        if pre is not None:
            pre.close()
        store.close()
        return {"mode": mode, "first": first, "done": done, "calls": calls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("scripted", "configured"), default="scripted")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--pause", type=float, default=None,
                        help="seconds between turns (default: 12 × latency, scripted)")
    parser.add_argument("--start", type=int, default=1200)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args()
    args.pause = args.pause if args.pause is not None else 12 * args.latency
    with ExitStack() as stack:
        env = dict(os.environ)
        if args.model == "scripted":
            url = stack.enter_context(scripted_server(SlowScripted(args.latency)))
            env.update(BOOKMARKS_BASE_URL=url, BOOKMARKS_API_KEY="scripted",
                       BOOKMARKS_MODEL="scripted")
            print(f"scripted OpenAI-compatible server, {args.latency} s per call; ", end="")
        print(f"scene at action {args.start} of the long play, {args.turns} turns, pause "
              f"{args.pause} s between turns (background, prepared)")
        results = [run_sync(run_mode(m, args, env)) for m in args.modes.split(",")]
    print(f"\n{'mode':<11} {'first token p50':>15} {'p95':>7} {'committed p50':>14} {'p95':>7} "
          f"{'calls/turn':>10}")
    for r in results:
        print(f"{r['mode']:<11} {statistics.median(r['first']):>13.2f} s {pct(r['first'], .95):>5.2f} s"
              f" {statistics.median(r['done']):>12.2f} s {pct(r['done'], .95):>5.2f} s "
              f"{statistics.mean(r['calls']):>10.1f}")


if __name__ == "__main__":
    main()

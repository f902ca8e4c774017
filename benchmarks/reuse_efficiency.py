"""The paper's efficiency measured the paper's way: NAP over every eligible action of a
range, `bookmarks` against `bookmarks-noreuse`, the reply cache off, memory work by
progress bucket — and the cost of each prediction at adjacent points.

    python benchmarks/reuse_efficiency.py [--story long|mystery|PATH] [--range 11:700]
        [--characters "Maren Voss"] [--embedded] [--judge single|independent]

By default a scripted OpenAI-compatible server on 127.0.0.1 answers (remote-like: it
charges nothing but the tokens; `--latency` adds a fixed delay per call), with each
character's sections kept from point to point and a new one every 300 actions, as a
capable model proposes; `--embedded` uses the configured memory and actor models instead
(keep the range small: every prediction is real work).

Printed: prompt and output tokens of memory work (proposal, matching, synchronization)
and of synchronization alone, per progress bucket (action index / story length) and in
all, for both methods, with the ratio without reuse / with reuse (the paper's figure:
8.1–32.6× output tokens); then per prediction after each character's first: model calls
(memory + actor; the judge apart) and seconds — from the run's records, and on the
scripted server from the requests it received, by kind (propose, match, joint or single
sync, act), the first predictions' calls taken off.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from bookmarks.config import load_settings
from bookmarks.evaluation.evaluate import run_nap
from bookmarks.services import BUNDLED_STORIES, Services

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.prepare_throughput import RemoteLike  # noqa: E402
from tests.fake_server import scripted_server  # noqa: E402  (a test double, by design)

STORIES = {"long": BUNDLED_STORIES / "the_long_winter_at_harrowgate.txt",
           "mystery": BUNDLED_STORIES / "saltmarsh_lighthouse.jsonl"}
BUCKETS = 4


class Counting(RemoteLike):
    """The scripted remote-like server, counting the requests it receives by kind."""

    def __init__(self, *args):
        super().__init__(*args)
        self.asked: Counter = Counter()

    def __call__(self, request) -> str:
        self.asked[self.kind(request)] += 1
        return super().__call__(request)


def bucket_of(index: int, length: int) -> int:
    return min(BUCKETS - 1, max(0, (index - 1) * BUCKETS // max(1, length)))


async def one(env: dict, path: Path, method: str, span, characters, judge: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        services = Services.open(load_settings({**env, "BOOKMARKS_DATA_DIR": tmp}))
        store = services.store
        sid = services.import_file(path)
        length = store.story(sid).n_actions
        llms = services.llms
        kw = {}
        if "use_cache" in inspect.signature(run_nap).parameters:
            kw["use_cache"] = False
        else:  # as `bookmarks walk --no-cache` does
            llms = {role: replace(llm, cache_get=None, cache_put=None) for role, llm in llms.items()}
        stamps: dict[int, float] = {}
        t0 = time.perf_counter()
        run = await run_nap(store, llms, sid, method=method, span=span, characters=characters,
                            judge_mode=judge, concurrency=1,
                            on_record=lambda r, *_: stamps.__setitem__(r["point"],
                                                                       time.perf_counter()),
                            **kw)
        wall = time.perf_counter() - t0
        records = sorted(store.records(run["id"]), key=lambda r: r["point"])
        costs = store.sync_costs(sid, run["space"])
        out = {"method": method, "wall": wall, "length": length, "points": len(records),
               "memory": [[0, 0] for _ in range(BUCKETS)], "sync": [[0, 0] for _ in range(BUCKETS)],
               "after_first": [], "modes": {}, "first_calls": 0}
        first_seen: set[str] = set()
        previous = t0
        for r in records:
            u = r.get("memory_usage") or {}
            b = bucket_of(r["point"], length)
            out["memory"][b][0] += u.get("prompt_tokens", 0)
            out["memory"][b][1] += u.get("completion_tokens", 0)
            seconds = stamps.get(r["point"], previous) - previous
            previous = stamps.get(r["point"], previous)
            calls = u.get("calls", 0) + sum(r.get("actor_tries") or [1])
            if r["character"] in first_seen:
                out["after_first"].append((calls, seconds))
            else:
                out["first_calls"] += calls
            first_seen.add(r["character"])
        for c in costs:
            b = bucket_of(c["position"], c["story_length"])
            out["sync"][b][0] += c["prompt_tokens"]
            out["sync"][b][1] += c["completion_tokens"]
        out["sync_calls"] = sum(c["calls"] for c in costs)
        store.close()
        return out


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b else "n/a"


def report(name: str, reuse: dict, fresh: dict, key: str) -> None:
    print(f"\n{name}: tokens without reuse / with reuse, by progress")
    print(f"{'progress':>9} {'prompt':>9} {'prompt w/o':>11} {'ratio':>7} {'output':>8} "
          f"{'output w/o':>11} {'ratio':>7}")
    rows = list(zip(reuse[key], fresh[key], strict=True)) + [
        ([sum(x[0] for x in reuse[key]), sum(x[1] for x in reuse[key])],
         [sum(x[0] for x in fresh[key]), sum(x[1] for x in fresh[key])])]
    for n, (a, b) in enumerate(rows):
        label = f"{n * 100 // BUCKETS}-{(n + 1) * 100 // BUCKETS}%" if n < BUCKETS else "all"
        print(f"{label:>9} {a[0]:>9} {b[0]:>11} {ratio(b[0], a[0]):>7} {a[1]:>8} {b[1]:>11} "
              f"{ratio(b[1], a[1]):>7}")


async def main(args: argparse.Namespace) -> None:
    path = STORIES.get(args.story, Path(args.story))
    span = tuple(int(x) for x in args.range.split(":")) if args.range else None
    env = dict(os.environ)
    context = server = None
    if not args.embedded:
        server = Counting(args.latency, 1e9, 1e9)
        context = scripted_server(server)
        env.update({"BOOKMARKS_BASE_URL": context.__enter__(), "BOOKMARKS_API_KEY": "scripted",
                    "BOOKMARKS_MODEL": "scripted"})
    try:
        results = {}
        for method in ("bookmarks", "bookmarks-noreuse"):
            print(f"running {method} on {path.name} {args.range or '(whole story)'} …", flush=True)
            if server is not None:
                server.asked.clear()
            results[method] = await one(env, path, method, span, args.characters, args.judge)
            r = results[method]
            r["asked"] = Counter(server.asked) if server is not None else None
            print(f"  {r['points']} predictions in {r['wall']:.1f} s", flush=True)
    finally:
        if context is not None:
            context.__exit__(None, None, None)
    reuse, fresh = results["bookmarks"], results["bookmarks-noreuse"]
    report("memory work (proposal, matching, synchronization)", reuse, fresh, "memory")
    report("synchronization", reuse, fresh, "sync")
    after = reuse["after_first"]
    if after:
        calls = sum(c for c, _ in after) / len(after)
        seconds = sum(s for _, s in after) / len(after)
        print(f"\nper prediction after each character's first ({len(after)} predictions, "
              f"bookmarks): {calls:.2f} model calls (memory + actor), {seconds:.2f} s "
              "(grounding, prediction and judging)")
        asked = reuse["asked"]
        if asked:  # what the server received, the judge apart, the first predictions off
            kinds = {k: v for k, v in sorted(asked.items()) if k not in ("judge",
                                                                       "judge_dimension")}
            served = (sum(kinds.values()) - reuse["first_calls"]) / len(after)
            print(f"  on the server: {served:.2f} requests per prediction after the first; "
                  f"all {reuse['points']} predictions by kind: "
                  + ", ".join(f"{k} {v / reuse['points']:.3f}" for k, v in kinds.items()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--story", default="long")
    parser.add_argument("--range", default="")
    parser.add_argument("--characters", action="append", default=None)
    parser.add_argument("--embedded", action="store_true")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--judge", default="single", choices=("single", "independent"))
    asyncio.run(main(parser.parse_args()))

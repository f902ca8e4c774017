"""NAP throughput: the same run at concurrency 1, 4 and 16 against a scripted
OpenAI-compatible server answering each call after a fixed latency (like a batching
server or a hosted API), measured in one run; the results must be identical.

    python benchmarks/nap_throughput.py [--latency 0.5] [--method vanilla] [--range 11:120]

Memory is grounded point after point in story order (reuse depends on it); the actor and
the five judge calls of up to N points run while the next points are grounded.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from bookmarks.config import load_settings
from bookmarks.evaluation.evaluate import run_nap
from bookmarks.models.testing import ScriptedMemory
from bookmarks.services import BUNDLED_STORIES, Services

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.fake_server import scripted_server  # noqa: E402  (a test double, by design)


class Slow(ScriptedMemory):
    """Deterministic scripted replies after a fixed latency (test double)."""

    def __init__(self, latency: float):
        super().__init__(sections=[{"title": "Ada Penrose's suspicions", "type": "state",
                                    "subject": "Ada Penrose"}])
        self.latency = latency

    def __call__(self, request):
        time.sleep(self.latency)
        kind = self.kind(request)
        text = request.messages[-1]["content"]
        digest = int(hashlib.sha256(text.encode()).hexdigest(), 16)
        if kind == "act":  # a function of the prompt alone, whatever the order of calls
            return f"I will see to it myself, number {digest % 97}."
        if kind == "judge_dimension":
            return json.dumps({"answer": "yes" if digest % 3 == 0 else "no"})
        return super().__call__(request)


async def one(env: dict, method: str, span: tuple[int, int], concurrency: int) -> tuple[float, list]:
    with tempfile.TemporaryDirectory() as tmp:
        services = Services.open(load_settings({**env, "BOOKMARKS_DATA_DIR": tmp}))
        for llm in services.llms.values():
            llm.cache_get = llm.cache_put = None
        story_id = services.import_file(BUNDLED_STORIES / "saltmarsh_lighthouse.jsonl")
        t0 = time.perf_counter()
        run = await run_nap(services.store, services.llms, story_id, method=method,
                            characters=["Ada Penrose"], span=span, concurrency=concurrency)
        wall = time.perf_counter() - t0
        records = sorted((r["point"], r["scores"][0]["emotion"], r["scores"][0]["intent"])
                         for r in services.store.records(run["id"]))
        services.store.close()
        return wall, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--method", default="vanilla")
    parser.add_argument("--range", default="11:120")
    parser.add_argument("--levels", default="1,4,16")
    args = parser.parse_args()
    span = tuple(int(x) for x in args.range.split(":"))
    with scripted_server(Slow(args.latency)) as url:
        env = {**os.environ, "BOOKMARKS_BASE_URL": url, "BOOKMARKS_API_KEY": "k",
               "BOOKMARKS_MODEL": "scripted"}
        results = {}
        for level in (int(x) for x in args.levels.split(",")):
            wall, records = asyncio.run(one(env, args.method, span, level))
            results[level] = (wall, records)
            print(f"concurrency {level:>2}: {wall:6.1f} s for {len(records)} actions", flush=True)
    base_wall, base_records = results[min(results)]
    for level, (wall, records) in sorted(results.items()):
        same = "identical results" if records == base_records else "RESULTS DIFFER"
        print(f"concurrency {level:>2}: speed-up {base_wall / wall:.2f}x ({same})")


if __name__ == "__main__":
    main()

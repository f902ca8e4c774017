"""Turn wall time with concurrent vs sequential synchronization, same model, same run.

Grounds one prediction with three fresh sections (a concept, a state and a behavioral
bookmark, so all three synchronize from p = 0) twice — synchronizations run
concurrently (up to 4) and then one at a time — each time in a fresh memory space.
By default the configured model (embedded unless a server is set); `--latency S` uses a
scripted model that answers after S seconds instead, like a remote API.

    python benchmarks/parallel_sync.py [--position 120] [--latency 0.3] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bookmarks.config import RoleConfig, load_settings
from bookmarks.engine.grounding import GroundRequest
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.method_bookmarks import BookmarksGrounder, BookmarksOptions
from bookmarks.models.llm import LLM
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.services import BUNDLED_STORIES, Services

SECTIONS = [
    {"title": "The brass key", "type": "concept", "subject": "brass key"},
    {"title": "Ada Penrose's suspicions", "type": "state", "subject": "Ada Penrose"},
    {"title": "Ada Penrose's way of counting", "type": "behavioral", "subject": "Ada Penrose"},
]



async def one(services: Services, story_id: int, position: int, concurrency: int, run: int,
              memory: LLM) -> float:
    story = services.store.story(story_id)
    lineage = Lineage.of(services.store, story.trunk_id)
    grounder = BookmarksGrounder(services.store, memory,
                                 BookmarksOptions(concurrency=concurrency))

    async def propose(req, existing, cast, llm, events):
        from bookmarks.engine.method_bookmarks import Section
        return [Section(**s) for s in SECTIONS]

    grounder._propose = propose  # the same three sections every time, no model variance
    req = GroundRequest(story_id=story_id, story_title=story.title, lineage=lineage,
                        position=position, character="Ada Penrose",
                        scene=lineage.lines(services.store, position - 10, position - 1),
                        cast=[c.name for c in services.store.characters(story_id)],
                        space=f"parallel-{concurrency}-{run}")
    t0 = time.perf_counter()
    g = await grounder.ground(req)
    assert len([e for e in g.events if e["kind"] == "synchronized"]) == 3
    return time.perf_counter() - t0


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({**__import__("os").environ, "BOOKMARKS_DATA_DIR": tmp})
        services = Services.open(settings)
        story_id = services.import_file(Path(BUNDLED_STORIES / "saltmarsh_lighthouse.jsonl"))
        memory = services.llms["memory"]
        if args.latency:
            fake = ScriptedFakeModel(default=ScriptedMemory(), delay=args.latency)
            memory = LLM(model=fake, config=RoleConfig(role="memory"))
        memory.cache_get = memory.cache_put = None  # measure real calls every time
        times = {4: [], 1: []}
        for run in range(args.repeat):
            for c in (4, 1):
                times[c].append(await one(services, story_id, args.position, c, run, memory))
        conc, seq = min(times[4]), min(times[1])
        print(f"model: {memory.model.name}; position {args.position}; 3 fresh syncs; best of "
              f"{args.repeat}")
        print(f"concurrent (4): {conc:.2f} s   sequential (1): {seq:.2f} s   "
              f"speed-up {seq / conc:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--position", type=int, default=120)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=2)
    asyncio.run(main(parser.parse_args()))

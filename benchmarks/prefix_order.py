"""Prompt order and prefix reuse: two fresh state bookmarks synchronized together over the
same actions, with the state prompt's block of actions placed after the section text (the
old layout, kept here as the baseline) and before it (the current layout).

On a server that keeps the last prompt's cache (the embedded llama.cpp server), the second
bookmark's call for a block then reuses the first one's processed block. Prints wall time,
calls and prompt tokens for both layouts, measured in one run, and their ratio.

    python benchmarks/prefix_order.py [--actions 256] [--repeat 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from dataclasses import replace

from bookmarks.config import load_settings
from bookmarks.engine import prompts, sync
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.sync import CostModel, sync_state
from bookmarks.memory import Bookmark
from bookmarks.services import BUNDLED_STORIES, Services

CURRENT = (prompts.state, prompts.first_state)


def old_state(*, story, title, subject, node, node_range, block):
    """The layout before 2026-11-30: section and current state first, the block after."""
    user = (
        f'Story: "{story}". Section: "{title}" - the evolving state of {subject}.\n'
        f"Current state ({node_range}): {node or '(nothing recorded yet)'}\n\n"
        f"New actions:\n{prompts.lines_block(block)}\n\n"
        "Decide how the state changes after these actions:\n"
        '- "unchanged": nothing relevant to this section happened;\n'
        '- "refine": still the same state, but the new actions add detail (give the full '
        "rewritten state);\n"
        '- "append": the state changed (give the new state, mentioning what changed).\n'
        "Reply with the decision and the state text (at most 60 words; empty if unchanged)."
    )
    return [{"role": "system", "content": prompts.MEMORY_SYSTEM}, {"role": "user", "content": user}]


def old_first_state(*, story, title, subject, block):
    user = (
        f'Story: "{story}". Section: "{title}" - the evolving state of {subject}.\n'
        "Nothing is recorded for this section yet.\n\n"
        f"Actions:\n{prompts.lines_block(block)}\n\n"
        f"Describe the state of {subject} for this section as these actions leave it, in at "
        "most 60 words. If they say nothing about it, say briefly what is known so far (for "
        f"example that {subject} has not appeared yet)."
    )
    return [{"role": "system", "content": prompts.MEMORY_SYSTEM}, {"role": "user", "content": user}]


async def run(services: Services, story_id: int, n: int, layout: str) -> tuple[float, int, int]:
    sync.prompts.state, sync.prompts.first_state = (old_state, old_first_state) \
        if layout == "old" else CURRENT
    store = services.store
    story = store.story(story_id)
    lines = Lineage.of(store, story.trunk_id).lines(store, 1, n)
    memory = replace(services.llms["memory"], cache_get=None, cache_put=None)
    sections = [("Maren Voss's debts", "Maren Voss"), ("Tobias Crane's bridge", "Tobias Crane")]
    llms = [memory.metered() for _ in sections]
    t0 = time.perf_counter()
    await asyncio.gather(*(
        sync_state(Bookmark(id=None, story_id=story_id, space="bench", subject=subject,
                            type="state", title=title), lines, llm=llm, story=story.title,
                   p_new=n, costs=CostModel())
        for (title, subject), llm in zip(sections, llms, strict=True)))
    wall = time.perf_counter() - t0
    return wall, sum(x.usage["calls"] for x in llms), sum(x.usage["prompt_tokens"] for x in llms)


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        services = Services.open(load_settings({**os.environ, "BOOKMARKS_DATA_DIR": tmp}))
        story_id = services.import_file(BUNDLED_STORIES / "the_long_winter_at_harrowgate.txt")
        print(f"two fresh state bookmarks over actions 1–{args.actions}, synchronized together; "
              f"memory model {services.llms['memory'].model.name}")
        results = {}
        for _ in range(args.repeat):
            for layout in ("old", "new"):
                wall, calls, tokens = await run(services, story_id, args.actions, layout)
                results.setdefault(layout, []).append(wall)
                print(f"  {layout} layout: {wall:.1f} s, {calls} calls, {tokens} prompt tokens",
                      flush=True)
        old, new = min(results["old"]), min(results["new"])
        print(f"block first vs section first: {new:.1f} s vs {old:.1f} s ({old / new:.2f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=1)
    asyncio.run(main(parser.parse_args()))

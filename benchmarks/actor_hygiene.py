"""Share of usable actor replies before and after reply hygiene, on the configured model.

For N prompts drawn from the bundled stories (a character's real turn, with the 10
preceding actions as the scene), ask the actor model once and count:
- usable as given: the raw reply is already one clean line of the right character;
- usable after cleaning: `clean_reply` salvages one line from that single reply;
- usable after hygiene: `act` (cleaning + up to 4 re-asks) returns a line.

    python benchmarks/actor_hygiene.py [--n 24]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from bookmarks.config import load_settings
from bookmarks.engine.actor import Line, act, actor_messages, clean_reply, is_clean
from bookmarks.errors import ModelError
from bookmarks.models.backends import build_llms
from bookmarks.services import bundled_story_files
from bookmarks.stories.importers import load_story


def prompts(n: int, seed: int = 7):
    rng = random.Random(seed)
    cases = []
    for path in bundled_story_files():
        story = load_story(path)
        names = [c.name for c in story.characters]
        for a in story.actions[10:]:
            if a.character in names:
                scene = [Line(x.character, x.text) for x in story.actions[a.index - 11:a.index - 1]]
                others = [m for m in names if m != a.character]
                aliases = story.character(a.character).aliases
                cases.append((story.title, a.character, aliases, others, scene))
    rng.shuffle(cases)
    return cases[:n]


async def main(n: int) -> None:
    settings = load_settings()
    actor = build_llms(settings, None)["actor"]
    raw_ok = cleaned_ok = final_ok = 0
    tries = []
    started = time.perf_counter()
    for title, who, aliases, others, scene in prompts(n):
        msgs = actor_messages(story_title=title, character=who, scene=scene)
        reply = (await actor.text(msgs, purpose="bench", cache=False)).text
        kw = {"aliases": aliases, "others": others, "scene": scene}
        raw_ok += is_clean(reply, who, **kw)
        cleaned_ok += clean_reply(reply, who, **kw)[0] is not None
        try:
            result = await act(actor, story_title=title, character=who, scene=scene,
                               aliases=aliases, others=others)
            final_ok += 1
            tries.append(result.tries)
        except ModelError:
            pass
    secs = time.perf_counter() - started
    print(f"model: {actor.model.name}; prompts: {n}")
    print(f"usable as given:             {raw_ok}/{n} = {100 * raw_ok / n:.0f}%")
    print(f"usable after cleaning:       {cleaned_ok}/{n} = {100 * cleaned_ok / n:.0f}%")
    print(f"usable after hygiene+re-ask: {final_ok}/{n} = {100 * final_ok / n:.0f}%"
          f" (mean tries {sum(tries) / max(1, len(tries)):.2f})")
    print(f"wall time: {secs:.1f} s, model calls: {actor.usage['calls']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=24)
    asyncio.run(main(parser.parse_args().n))

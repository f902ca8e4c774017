"""A generated story of any length for benchmarks (names, places and objects recur)."""

from __future__ import annotations

import random

from bookmarks.stories.story import Action, Character, Story

CAST = ["Ada Penrose", "Silas Carne", "Morwenna Hale", "Jory Trevail", "Edwin Loveday",
        "Nell Tregarthen"]
THINGS = ["the brass key", "the logbook", "the lamp room", "the boathouse", "the tide table",
          "the green oilskin", "the causeway", "the red flare"]
VERBS = ["mentions", "asks about", "hides", "finds", "argues over", "remembers", "checks",
         "counts the steps to"]


def synthetic_story(n: int, seed: int = 1) -> Story:
    rng = random.Random(seed)
    actions = []
    for i in range(1, n + 1):
        who = "narration" if rng.random() < 0.2 else rng.choice(CAST)
        thing = rng.choice(THINGS)
        if who == "narration":
            text = f"The wind rises over {thing} as the tide turns ({i})."
        else:
            other = rng.choice([c for c in CAST if c != who]).split()[0]
            text = f"{other}, I {rng.choice(VERBS).split()[0]} {thing} again, as I said at {i}."
        actions.append(Action(index=i, character=who, text=text, chapter=f"Chapter {1 + i // 500}"))
    cast = [Character(name=c, aliases=[c.split()[0]], major=k < 4) for k, c in enumerate(CAST)]
    return Story(title=f"Synthetic {n}", characters=cast, actions=actions)


def rotating_sections(request) -> list[dict]:
    """Proposals a model might make: the acting character's goal, habits, a recurring thing."""
    text = request.messages[-1]["content"]
    who = next((c for c in CAST if f"{c} acts next" in text), CAST[0])
    return [{"title": f"{who}'s current goal", "type": "state", "subject": who},
            {"title": f"{who}'s way of speaking", "type": "behavioral", "subject": who},
            {"title": "The brass key", "type": "concept", "subject": "brass key"}]

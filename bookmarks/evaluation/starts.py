"""Arena starts drawn from the storyline itself, so a campaign never depends on a model
writing a valid setting: at a point in the story, the next line a character speaks opens
the scene; the cast is that speaker and the characters present there (see store presence);
the setting comes from the chapter or scene heading and the narration just before."""

from __future__ import annotations

from collections import Counter

from bookmarks.errors import BookmarksError
from bookmarks.store import Store
from bookmarks.stories.story import PSEUDO_CHARACTERS, Action

MAX_CAST = 3  # the speaker and up to two others present
LOOK_BACK = 12  # lines before the start searched for narration (the setting)


def _present(presence: dict[str, list[tuple[int, int]]], index: int) -> set[str]:
    return {name for name, runs in presence.items() if any(a <= index <= b for a, b in runs)}


def _setting(chapter: str | None, before: list[Action], cast: list[str]) -> str:
    parts = [chapter.strip().rstrip(".") + "."] if chapter and chapter.strip() else []
    narration = [a.text.strip().strip("[]() ") for a in before if a.character in PSEUDO_CHARACTERS]
    if narration and narration[-1]:
        parts.append(narration[-1].rstrip(".") + ".")
    else:
        who = ", ".join(cast[:-1]) + f" and {cast[-1]}" if len(cast) > 1 else cast[0]
        parts.append(f"{who} are together at this point of the story.")
    text = " ".join(parts)
    if len(text) > 600:
        cut = text[:600]
        text = cut[: cut.rfind(". ") + 1] if ". " in cut else cut.rstrip() + "…"
    return text


def draw_starts(store: Store, story_id: int, n: int, points: list[int] | None = None) -> list[int]:
    """Up to N starts at evenly spread (or given) story points, from the storyline alone
    (no model call). Each start begins after the action before its first line."""
    story = store.story(story_id)
    actions = store.actions(story_id)
    if not actions:
        raise BookmarksError("This story has no lines to draw arena starts from.")
    presence = store.presence(story_id)
    majors = {c.name for c in store.characters(story_id) if c.major}
    if points is None:
        step = story.n_actions / (n + 1)
        points = [max(2, round(step * (k + 1))) for k in range(n)]
    ids: list[int] = []
    used: set[int] = set()
    for point in points[:n]:
        found = _first_line_at(actions, presence, majors, max(point, 2), used)
        if found is None:
            continue
        index, cast = found
        used.add(index)
        line = actions[index - 1]
        before = actions[max(0, index - 1 - LOOK_BACK): index - 1]
        ids.append(store.add_arena_start(story_id, index - 1, cast,
                                         _setting(line.chapter, before, cast), line.character,
                                         line.text.strip()))
    if not ids:
        raise BookmarksError("No starting scene could be drawn from this story: no point has a "
                             "speaking character with another character present.")
    return ids


def _first_line_at(actions: list[Action], presence: dict, majors: set[str], point: int,
                   used: set[int]) -> tuple[int, list[str]] | None:
    """The first line at or after `point` spoken by a character with someone else present
    (majors preferred), and the cast: speaker first, then the others most active lately."""
    for index in range(point, len(actions) + 1):
        line = actions[index - 1]
        if index in used or line.character in PSEUDO_CHARACTERS or \
                (majors and line.character not in majors):
            continue
        recent = Counter(a.character for a in actions[max(0, index - 81): index - 1]
                         if a.character not in PSEUDO_CHARACTERS)
        here = _present(presence, index) | {a.character for a in actions[max(0, index - 6):
                                                                         index - 1]
                                            if a.character not in PSEUDO_CHARACTERS}
        others = sorted(here - {line.character} - PSEUDO_CHARACTERS,
                        key=lambda c: (c not in majors, -recent[c], c))
        if others:
            return index, [line.character, *others[: MAX_CAST - 1]]
    return None

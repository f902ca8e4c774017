"""A whole story out, in files the importers read back: JSONL (lossless) or Fountain.

`export_story(story, fmt, stem)` returns the files to write, by name:

- `STEM.jsonl` (or `STEM.fountain`): the storyline. JSONL lines are
  `{"character", "text", "chapter", "present", "check"}`: every action, its speaker, its
  text with its line breaks, its chapter, who could perceive it — the story's presence as
  stored, the writer's corrections included (an empty list: nobody) — and, for a line the
  import's rules were less sure of, why to check its speaker. Fountain carries the
  storyline as a screenplay (see fountain.py: line breaks kept, spaces inside a line
  collapsed; title, author and aliases on its title page) but not presence, which is
  derived again when it is read, nor the lines to check.
- `STEM.meta.json`: title, author, description, the format, and the cast (names,
  aliases, major characters) — the sidecar `load_story` reads next to a story file.
- `STEM.questions.jsonl` when the story has multiple-choice questions.
- `STEM.source.txt` (JSONL only) when the import kept the text of the file the story was
  read from: each JSONL line then says where its action starts there (`"line"`), so the
  Library still shows a line where it stands in that file (see source_view.py).

Read back with `load_story(STEM.jsonl)` (or `bookmarks import STEM.jsonl`), the story has
the same actions, speakers, texts, chapters, cast, author, questions and presence.
What JSONL cannot carry: a speaker marked absent from their own line (a speaker always
perceives what they say), and the source format (it becomes "jsonl").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from bookmarks.stories.fountain import to_fountain
from bookmarks.stories.story import Action, Character, Question, Story

STORY_FORMATS = ("jsonl", "fountain")
SUFFIXES = {"jsonl": ".jsonl", "fountain": ".fountain"}


def whole_story(*, title: str, author: str = "", description: str = "", source_format: str = "jsonl",
                characters: Sequence[Character], actions: Sequence[Action],
                presence: Mapping[str, Iterable[tuple[int, int]]] | None = None,
                questions: Sequence[Question] = (), source: str | None = None) -> Story:
    """A Story from what the store holds of it; `presence` (per character, the runs of
    actions they could perceive) becomes each action's `present` list, in cast order;
    `source` is the text of the file it was read from, where it was kept."""
    actions = list(actions)
    if presence is not None:
        order = {c.name: k for k, c in enumerate(characters)}
        seen: dict[int, set[str]] = {a.index: set() for a in actions}
        for name, runs in presence.items():
            for first, last in runs:
                for index in range(first, last + 1):
                    if index in seen:
                        seen[index].add(name)
        actions = [a.model_copy(update={"present": sorted(seen[a.index],
                                                          key=lambda n: (order.get(n, 1 << 30), n))})
                   for a in actions]
    return Story(title=title, author=author, description=description, source_format=source_format,
                 characters=list(characters), actions=actions, questions=list(questions),
                 source=source)


def _line(obj: dict) -> str:
    # U+2028/U+2029/U+0085 end a line for str.splitlines: never raw inside a JSONL line
    text = json.dumps(obj, ensure_ascii=False)
    for ch in ("\u2028", "\u2029", "\x85"):
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    return text + "\n"


def story_jsonl(story: Story) -> str:
    out = []
    for a in story.actions:
        row: dict = {"character": a.character, "text": a.text}
        if a.chapter is not None:
            row["chapter"] = a.chapter
        if a.present is not None:
            row["present"] = list(a.present)
        if a.check is not None:
            row["check"] = a.check
        if story.source is not None and a.line is not None:
            row["line"] = a.line  # where it starts in STEM.source.txt
        out.append(_line(row))
    return "".join(out)


def story_fountain(story: Story) -> str:
    return to_fountain(story.title, story.actions, author=story.author,
                       characters=story.characters)


def story_meta(story: Story, fmt: str) -> str:
    meta = {"title": story.title, "author": story.author, "description": story.description,
            "format": fmt,
            "characters": [{"name": c.name, "aliases": list(c.aliases), "major": c.major}
                           for c in story.characters]}
    return json.dumps(meta, ensure_ascii=False, indent=2) + "\n"


def story_questions(questions: Sequence[Question]) -> str:
    return "".join(_line(q.model_dump(mode="json")) for q in questions)


def file_stem(title: str) -> str:
    """A file name from a title: letters, digits, `-` and `_` only (the importers read a
    sidecar by the name up to the first dot)."""
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in title.strip().lower())
    stem = "_".join(part for part in stem.split("_") if part)
    return stem[:80] or "story"


def export_story(story: Story, fmt: str, stem: str | None = None) -> dict[str, str]:
    """The files of a story exported as `fmt` ("jsonl" or "fountain"), by file name: the
    storyline, its `.meta.json`, when it has questions its `.questions.jsonl` and, in JSONL,
    when the import kept the text of the file it was read from, that text (`.source.txt`)."""
    if fmt not in STORY_FORMATS:
        raise ValueError(f"A story is exported as {' or '.join(STORY_FORMATS)}, not {fmt!r}.")
    stem = stem or file_stem(story.title)
    body = story_jsonl(story) if fmt == "jsonl" else story_fountain(story)
    files = {f"{stem}{SUFFIXES[fmt]}": body, f"{stem}.meta.json": story_meta(story, fmt)}
    if story.questions:
        files[f"{stem}.questions.jsonl"] = story_questions(story.questions)
    if fmt == "jsonl" and story.source is not None:  # (a Fountain file is its own source)
        files[f"{stem}.source.txt"] = story.source + "\n"
    return files

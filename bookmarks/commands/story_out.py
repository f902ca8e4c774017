"""`bookmarks export --story ID --format jsonl|fountain [--out FILE]`: a whole story out,
in files `bookmarks import` reads back (see stories/story_export.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from bookmarks.errors import BookmarksError
from bookmarks.store import Store
from bookmarks.stories.story_export import SUFFIXES, export_story, file_stem


def write_story(store: Store, story_id: int, fmt: str, out: str | Path) -> list[Path]:
    """Write the story to `out` (a file, or a folder to name it in) with its sidecar files
    next to it (`STEM.meta.json`, `STEM.questions.jsonl`, `STEM.source.txt`, STEM being
    the name up to its first dot, as the importer reads them); returns the paths written."""
    story = store.stored_story(story_id)
    out = Path(out)
    if out.is_dir():
        out = out / f"{file_stem(story.title)}{SUFFIXES[fmt]}"
    stem = out.name.split(".")[0]
    if not stem:
        raise BookmarksError(f"{out}: give the file a name before its first dot "
                             f"(e.g. story{SUFFIXES[fmt]}).")
    if not out.parent.is_dir():
        raise BookmarksError(f"{out}: there is no folder {out.parent}.")
    files = export_story(story, fmt, stem)
    main = f"{stem}{SUFFIXES[fmt]}"
    written = []
    for name, text in files.items():
        path = out if name == main else out.with_name(name)
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise BookmarksError(f"{path}: cannot be written ({exc.strerror or exc}).") from None
        written.append(path)
    return written


def print_story(store: Store, story_id: int, fmt: str) -> None:
    """The storyline on stdout; the sidecars cannot come along, so say how to get them."""
    story = store.stored_story(story_id)
    files = export_story(story, fmt, "story")
    sys.stdout.write(files[f"story{SUFFIXES[fmt]}"])
    print("note: the title, author, cast and aliases (and questions, and the text of the file "
          "the story was read from) go in a .meta.json (and .questions.jsonl, .source.txt) file "
          "next to the story; give --out FILE to write them too.", file=sys.stderr)

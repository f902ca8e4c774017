"""A story uploaded together with its sidecar files.

`load_story` reads a story's sidecars (`NAME.meta.json`, `NAME.questions.jsonl`,
`NAME.source.txt`) from the folder the story file is in. A browser upload puts every file
in a folder of its own, so the Library's upload takes several files at once and this
module puts them side by side: the story file is the one that is not a sidecar, and every
other file must be one of its sidecars (named by the story file's name up to its first
dot: `importers.sidecars`). Anything else is refused with a message that
names the file, so a writer who re-uploads an export's files gets the title, cast,
questions and file text back, and nothing is silently dropped.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

from bookmarks.errors import StoryFormatError
from bookmarks.stories.importers import SIDECAR_ENDS, sidecars

KEPT_S = 24 * 3600  # a gathered upload older than this is removed when another is gathered
UPLOAD = "the upload"  # where a message says the problem lies, when it is no one file


def _end(path: Path) -> str:
    return path.name.split(".", 1)[1] if "." in path.name else ""  # as `sidecars` names them


def story_and_sidecars(paths: list[str | Path]) -> tuple[Path, list[Path]]:
    """The story file among `paths` and its sidecars; a `StoryFormatError` naming the file
    when the set is not one story with its sidecars."""
    files = [Path(p) for p in paths]
    if not files:
        raise StoryFormatError("no file was uploaded.", file=UPLOAD)
    names = [p.name for p in files]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise StoryFormatError("the same file name was uploaded twice.", file=twice[0])
    stories = [p for p in files if _end(p) not in SIDECAR_ENDS]
    if not stories:  # a prose file may itself be called NAME.source.txt
        stories = [p for p in files if _end(p) == "source.txt"]
    if not stories:
        raise StoryFormatError(
            f"no story file among {', '.join(names)}: a .meta.json or .questions.jsonl goes "
            "with the story file it belongs to; upload them together.", file=UPLOAD)
    if len(stories) != 1:
        shown = ", ".join(p.name for p in stories)
        raise StoryFormatError(
            f"these are each a story file: {shown}. Upload one story at a time, with its "
            f"sidecar files ({', '.join(SIDECAR_ENDS)}) if it has them.", file=UPLOAD)
    story = stories[0]
    rest = [p for p in files if p is not story]
    own = [p.name for p in sidecars(story)]
    for p in rest:
        if p.name not in own:
            wanted = f"{', '.join(own[:-1])} or {own[-1]}"
            raise StoryFormatError(
                f"not a sidecar of {story.name}: uploaded with a story, a file must be named "
                f"{wanted}.", file=p.name)
    return story, rest


def gather(paths: list[str | Path], into: Path) -> Path:
    """The story file to read, with its uploaded sidecars beside it.

    One file is read where it is. Several are linked (or, where links are refused, copied)
    into a folder under `into` named by the uploaded files, so the same upload maps to the
    same folder and the story is parsed once for its preview, suggestions and import."""
    story, rest = story_and_sidecars(paths)
    if not rest:
        return story
    key = hashlib.sha256("\n".join(sorted(str(Path(p).resolve()) for p in paths))
                         .encode()).hexdigest()[:20]
    folder = into / key
    _prune(into, keep=folder)
    folder.mkdir(parents=True, exist_ok=True)
    for p in (story, *rest):
        link = folder / p.name
        if link.exists():
            continue
        try:
            os.symlink(p.resolve(), link)
        except OSError:
            shutil.copyfile(p, link)
    return folder / story.name


def _prune(into: Path, keep: Path) -> None:
    """Remove gathered uploads older than `KEPT_S` (their files are the browser's uploads,
    which the web server removes in its own time)."""
    if not into.is_dir():
        return
    old = time.time() - KEPT_S
    for folder in into.iterdir():
        try:
            if folder != keep and folder.is_dir() and folder.stat().st_mtime < old:
                shutil.rmtree(folder)
        except OSError:
            pass  # another request is removing or using it: left for the next time

"""A story file read once for the Library's preview, its import and its speaker suggestions.

The Library parses an upload to preview it, again to import it, and again to suggest
speakers; a novel of 15,000 actions takes about 20 s to parse on a small machine. `LastRead`
keeps the last few stories read, keyed by the file's path, size and modification time (and
those of its sidecar meta, questions and source files), the format asked for and the size
limit, and hands out a deep copy, so that nobody's change to one reaches the next caller. A
file that fails to parse is not kept: reading it again says why again. A title given for
the import is applied to the copy (a given title replaces whatever the file says, as in
`parse_story`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from bookmarks.stories.importers import DEFAULT_MAX_BYTES, _title, load_story, sidecars
from bookmarks.stories.story import Story

KEPT = 2  # the upload being previewed and the one before it


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


class LastRead:
    def __init__(self, keep: int = KEPT):
        self.keep = keep
        self._stories: OrderedDict[tuple, Story] = OrderedDict()
        self._lock = threading.Lock()
        self.parsed = 0  # files parsed (not served from what was kept)

    def load(self, path: str | Path, *, fmt: str | None = None, title: str | None = None,
             max_bytes: int = DEFAULT_MAX_BYTES) -> Story:
        path = Path(path)
        key = (str(path.resolve()), _stat(path), *(_stat(p) for p in sidecars(path)), fmt, max_bytes)
        with self._lock:
            story = self._stories.get(key)
            if story is not None:
                self._stories.move_to_end(key)
        if story is None:  # (a missing file is never kept: load_story says so)
            story = load_story(path, fmt=fmt, max_bytes=max_bytes)  # raises on a bad file
            with self._lock:
                self.parsed += 1
                self._stories[key] = story
                while len(self._stories) > self.keep:
                    self._stories.popitem(last=False)
        copy = story.model_copy(deep=True)
        if title and title.strip():
            copy.title = _title(title, None, path.name)
        return copy

"""The application's services in one place: settings, the store, a model per role.

The UI, the CLI and the benchmarks build one `Services` and call into the engine
through it; nothing here knows about Gradio.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from bookmarks.config import Settings, apply_saved, load_settings
from bookmarks.errors import BookmarksError
from bookmarks.models.backends import build_llms
from bookmarks.models.llm import LLM
from bookmarks.scenes.background import Prefetcher
from bookmarks.store import Store
from bookmarks.stories.importers import load_story, parse_story
from bookmarks.stories.read_once import LastRead

log = logging.getLogger(__name__)
BUNDLED_STORIES = Path(os.environ.get("BOOKMARKS_STORIES")
                       or Path(__file__).resolve().parent.parent / "stories")
BUNDLED_SUFFIXES = (".jsonl", ".txt", ".json", ".md", ".fountain")


@dataclass
class Services:
    settings: Settings
    store: Store
    llms: dict[str, LLM]
    env_settings: Settings | None = None  # before the UI's saved settings were applied
    _prefetcher: Prefetcher | None = None
    reader: LastRead = field(default_factory=LastRead)  # an upload parsed once for preview and import

    def __post_init__(self) -> None:
        self.env_settings = self.env_settings or self.settings

    @property
    def prefetcher(self) -> Prefetcher:
        """Background synchronization for Play (started on first use)."""
        if self._prefetcher is None:
            self._prefetcher = Prefetcher(self.store, self.llms, settings=lambda: self.settings)
        return self._prefetcher

    @classmethod
    def open(cls, settings: Settings | None = None, *, llms: dict[str, LLM] | None = None
             ) -> Services:
        env_settings = settings or load_settings()
        store = Store(env_settings.db_path)
        if again := store.refresh_presence():  # stories stored under older presence rules
            log.info("who is present read again under the current rules: %s",
                     ", ".join(f"story {k} ({len(v)} characters changed)" for k, v in again.items()))
        settings = apply_saved(env_settings, store.get_setting("roles", {}),
                               store.get_setting("engine", {}))
        return cls(settings=settings, store=store, llms=llms or build_llms(settings, store),
                   env_settings=env_settings)

    def import_file(self, path: str | Path, *, fmt: str | None = None,
                    title: str | None = None) -> int:
        story = self.reader.load(path, fmt=fmt, title=title, max_bytes=self.settings.max_upload_bytes)
        return self.store.add_story(story)

    def import_bytes(self, data: bytes, filename: str, *, fmt: str | None = None,
                     title: str | None = None) -> int:
        story = parse_story(data, filename, fmt=fmt, title=title,
                            max_bytes=self.settings.max_upload_bytes)
        return self.store.add_story(story)

    def import_again(self, story_id: int) -> tuple[int | None, str]:
        """The file a story was read from (the text the import kept) read again with the
        current import rules, as a new story: this one, its scenes and its corrections stay
        as they are. (new story id, what changed), or (None, why not) when it reads the same
        or there is no file to read."""
        info = self.store.story(story_id)
        text = self.store.source(story_id)
        if info.source_format in ("jsonl", "reference") or text is None:
            raise BookmarksError(f"Story {story_id} ({info.title!r}) keeps no file of its own to "
                                 "read again: its storyline is the JSON it was imported from (or it "
                                 "was imported before the app kept files). Import the file itself.")
        story = parse_story(text.encode("utf-8"), f"{info.title}.txt", fmt=info.source_format,
                            title=info.title, max_bytes=self.settings.max_upload_bytes)
        before = self.store.actions(story_id)
        if [(a.character, a.text, a.chapter) for a in before] == \
                [(a.character, a.text, a.chapter) for a in story.actions]:
            return None, (f"The current rules read story {story_id} ({info.title!r}) as it is "
                          "stored: nothing to import again.")
        speakers = {a.character for a in story.actions} - {"narration"}
        new_id = self.store.add_story(story)
        checks = sum(1 for a in story.actions if a.check)
        return new_id, (f"Read again as story {new_id}: {len(story.actions)} actions (were "
                        f"{len(before)}), {len(speakers)} speakers, {checks} lines to check. Story "
                        f"{story_id}, its scenes and your corrections stay as they were; "
                        "corrections are not carried over.")

    def ensure_bundled(self, folder: Path = BUNDLED_STORIES) -> list[int]:
        """Import each bundled story whose title is not in the database yet."""
        ids = []
        for path in bundled_story_files(folder):
            story = load_story(path)
            if self.store.find_story(story.title) is None:
                ids.append(self.store.add_story(story))
        return ids


def bundled_story_files(folder: Path = BUNDLED_STORIES) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.suffix in BUNDLED_SUFFIXES and p.name.count(".") == 1
                  and p.name.lower() != "readme.md")

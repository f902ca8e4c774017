"""The SQLite store: the only package that reads or writes the database.

One file, WAL mode, schema from `migrations.py` beside this file. A single connection shared by
all threads (Gradio workers, the async engine) behind a re-entrant lock; every multi-row
write happens inside `transaction()` so it commits whole or not at all. The `Store` is
assembled from one part per noun (stories, scenes, memory, evaluation, calls, users,
campaigns).

May import: `bookmarks.stories` (story types, presence), `bookmarks.errors`,
`bookmarks.memory` and this package.
"""

from __future__ import annotations

from bookmarks.store.base import SceneInfo, StoreBase, StoryInfo, Turn, now
from bookmarks.store.calls import CallsStore
from bookmarks.store.campaigns import CampaignsStore
from bookmarks.store.evaluation import EvaluationStore
from bookmarks.store.memory_rows import MemoryStore
from bookmarks.store.scenes import ScenesStore
from bookmarks.store.stories import StoriesStore
from bookmarks.store.users import UsersStore

__all__ = ["SceneInfo", "Store", "StoryInfo", "Turn", "now"]


class Store(StoriesStore, ScenesStore, MemoryStore, EvaluationStore, CallsStore, UsersStore,
            CampaignsStore, StoreBase):
    """The application's database."""

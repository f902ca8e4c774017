"""The SQLite store: the only package that reads or writes the database.

One file, WAL mode, schema from `bookmarks/migrations.py`. A single connection shared by
all threads (Gradio workers, the async engine) behind a re-entrant lock; every multi-row
write happens inside `transaction()` so it commits whole or not at all. The `Store` is
assembled from one part per noun (stories, scenes, memory, evaluation, calls).
"""

from __future__ import annotations

from .base import SceneInfo, StoreBase, StoryInfo, Turn, now
from .calls import CallsStore
from .evaluation import EvaluationStore
from .memory_rows import MemoryStore
from .scenes import ScenesStore
from .stories import StoriesStore

__all__ = ["SceneInfo", "Store", "StoryInfo", "Turn", "now"]


class Store(StoriesStore, ScenesStore, MemoryStore, EvaluationStore, CallsStore, StoreBase):
    """The application's database."""

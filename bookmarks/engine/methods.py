"""Grounding methods by name: bookmarks, vanilla, ricl, eta, eta3."""

from __future__ import annotations

from bookmarks.engine.grounding import Grounder
from bookmarks.engine.method_baselines import ETA3Grounder, ETAGrounder, RICLGrounder, VanillaGrounder
from bookmarks.engine.method_bookmarks import BookmarksGrounder, BookmarksOptions, NoReuseGrounder
from bookmarks.errors import BookmarksError
from bookmarks.models.llm import LLM
from bookmarks.store import Store

METHODS = {"bookmarks": "Bookmarks", "vanilla": "Vanilla", "ricl": "RICL", "eta": "ETA",
           "eta3": "3-way ETA", "bookmarks-noreuse": "Bookmarks without reuse (ablation)",
           "bookmarks-noconcept": "Bookmarks without concept (ablation)",
           "bookmarks-nostate": "Bookmarks without state (ablation)",
           "bookmarks-nobehavioral": "Bookmarks without behavioral (ablation)"}


class UnknownMethodError(BookmarksError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def make_grounder(name: str, store: Store, memory: LLM, *, budget: int = 3,
                  options: BookmarksOptions | None = None, capacity: int | None = None) -> Grounder:
    """`capacity`: ETA's profile size in tokens (3-way ETA: per section)."""
    key = name.strip().lower().replace("-", "").replace(" ", "").replace("3wayeta", "eta3")
    if key.startswith("bookmarks"):
        opts = options or BookmarksOptions()
        opts.budget = budget
        ablated = key.removeprefix("bookmarksno")
        if ablated in ("concept", "state", "behavioral"):
            opts.exclude_types = (ablated,)
        elif key not in ("bookmarks", "bookmarksnoreuse"):
            raise UnknownMethodError(f"Unknown grounding method {name!r}; choose one of "
                                     f"{', '.join(METHODS)}.")
        cls = NoReuseGrounder if key == "bookmarksnoreuse" else BookmarksGrounder
        return cls(store, memory, opts)
    classes = {"vanilla": VanillaGrounder, "ricl": RICLGrounder, "eta": ETAGrounder,
               "eta3": ETA3Grounder}
    if key not in classes:
        raise UnknownMethodError(f"Unknown grounding method {name!r}; choose one of "
                                 f"{', '.join(METHODS)}.")
    if capacity and key in ("eta", "eta3"):
        return classes[key](store, memory, capacity=capacity)
    return classes[key](store, memory)

"""The storyline a branch sees: the trunk up to a fork point, then each branch's own turns.

A scene started at story point p is a branch of the trunk with fork point p; a fork of a
scene at turn k is a branch of that scene's branch with fork point k. `Lineage` answers
two questions: which actions lie at indices lo..hi on this branch, and which bookmark
versions are visible here (a version written on an ancestor is visible only if its sync
point is not past the point where this lineage left that ancestor).
"""

from __future__ import annotations

from dataclasses import dataclass

from bookmarks.engine.actor import Line
from bookmarks.store import Store

INF = 1 << 62


@dataclass(frozen=True)
class IndexedLine(Line):
    index: int = 0


@dataclass(frozen=True)
class Lineage:
    story_id: int
    branch_id: int
    trunk_id: int
    cutoffs: dict[int, int]  # branch id → last index of that branch on this lineage
    segments: tuple[tuple[int, int, int], ...]  # (branch id, first index, last index)

    @classmethod
    def of(cls, store: Store, branch_id: int) -> Lineage:
        chain = store.branch_chain(branch_id)  # this branch first, the trunk last
        cutoffs: dict[int, int] = {}
        limit = INF
        for b in chain:
            cutoffs[b["id"]] = limit
            limit = b["fork_point"]
        segments = []
        for k, b in enumerate(reversed(chain)):
            first = b["fork_point"] + 1 if k else 1
            segments.append((b["id"], first, cutoffs[b["id"]]))
        trunk = chain[-1]
        return cls(story_id=trunk["story_id"], branch_id=branch_id, trunk_id=trunk["id"],
                   cutoffs=cutoffs, segments=tuple(segments))

    def sees(self, branch_id: int, p: int) -> bool:
        """Is a version written on `branch_id` at sync point p visible on this lineage?"""
        return branch_id in self.cutoffs and p <= self.cutoffs[branch_id]

    def lines(self, store: Store, lo: int, hi: int) -> list[IndexedLine]:
        """Actions with lo ≤ index ≤ hi on this lineage, in order."""
        out: list[IndexedLine] = []
        if hi < lo:
            return out
        for branch_id, first, last in self.segments:
            a, b = max(lo, first), min(hi, last)
            if a > b:
                continue
            if branch_id == self.trunk_id:
                out.extend(IndexedLine(character, text, idx)
                           for idx, character, text in store.action_tuples(self.story_id, a, b))
            else:
                out.extend(IndexedLine(t.character, t.text, t.idx)
                           for t in store.branch_turns(branch_id, a, b))
        return out

    def count_by(self, store: Store, names: list[str], hi: int) -> int:
        """How many actions of these characters lie at indices 1..hi on this lineage."""
        total = 0
        for branch_id, first, last in self.segments:
            b = min(hi, last)
            if first > b or not names:
                continue
            if branch_id == self.trunk_id:
                total += store.count_actions_by(self.story_id, names, first, b)
            else:
                total += store.count_turns_by(branch_id, names, first, b)
        return total

    def length(self, store: Store) -> int:
        """The index of the last action on this lineage."""
        branch_id, first, last = self.segments[-1]
        if branch_id == self.trunk_id:
            return min(last, store.story(self.story_id).n_actions)
        top = store.last_turn_index(branch_id)
        return top if top is not None else first - 1

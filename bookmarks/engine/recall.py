"""Which bookmarks exist at story point i on a branch, each at its latest visible version."""

from __future__ import annotations

from bookmarks.engine.lineage import Lineage
from bookmarks.memory import Bookmark, empty_content, parse_content
from bookmarks.store import SceneInfo, Store


def visible_bookmarks(store: Store, story_id: int, space: str, lineage: Lineage,
                      max_p: int, types: tuple[str, ...] | None = None) -> list[Bookmark]:
    """Bookmarks with a version visible on this lineage at p ≤ max_p (latest one each).

    Among versions, the highest p wins; at equal p the branch nearest this one, then the
    newest row (a user's edit at the same point). Bookmarks without such a version (made
    later in the story, or on another branch) are not returned: not even their titles may
    reach a prompt here."""
    rows = [r for r in store.bookmarks(story_id, space) if types is None or r["type"] in types]
    if not rows:
        return []
    depth = {b: n for n, b in enumerate(lineage.cutoffs)}
    best: dict[int, dict] = {}
    for v in store.versions([r["id"] for r in rows], list(lineage.cutoffs), max_p):
        if not lineage.sees(v["branch_id"], v["p"]):
            continue
        cur = best.get(v["bookmark_id"])
        rank = (v["p"], -depth[v["branch_id"]], v["id"])
        if cur is None or rank > (cur["p"], -depth[cur["branch_id"]], cur["id"]):
            best[v["bookmark_id"]] = v
    flags = scoped_flags(store, list(best), lineage)
    out = []
    for r in rows:
        v = best.get(r["id"])
        if v is None:
            continue
        pinned, activation = flags.get(r["id"], (bool(r["pinned"]), r.get("activation") or ""))
        out.append(Bookmark(id=r["id"], story_id=story_id, space=space, subject=r["subject"],
                            type=r["type"], title=r["title"], pinned=pinned,
                            p=v["p"], content=parse_content(r["type"], v["content"]),
                            version_id=v["id"], activation=activation))
    return out


def scoped_flags(store: Store, bookmark_ids: list[int],
                 lineage: Lineage) -> dict[int, tuple[bool, str]]:
    """(pinned, activation) of bookmarks as this lineage sees them: a pin or a card's
    activation belongs to the branch that set it (a scene and its forks; the trunk for a
    story-wide choice), the nearest branch deciding. Bookmarks nobody flagged: absent."""
    depth = {b: n for n, b in enumerate(lineage.cutoffs)}  # this branch first, trunk last
    found: dict[int, list] = {}
    for o in sorted(store.overrides(bookmark_ids, list(lineage.cutoffs)),
                    key=lambda o: -depth[o["branch_id"]]):  # trunk first, nearest last
        cur = found.setdefault(o["bookmark_id"], [False, ""])
        if o["pinned"] is not None:
            cur[0] = bool(o["pinned"])
        if o["activation"] is not None:
            cur[1] = o["activation"]
    return {k: (v[0], v[1]) for k, v in found.items()}


def new_bookmark(story_id: int, space: str, subject: str, kind: str, title: str,
                 store: Store | None = None) -> Bookmark:
    """A bookmark to initialize, empty at p = 0. With `store`, a bookmark of the same
    identity (space, type, subject, title, compared normalized: see `identity_key`) that
    exists but is not visible here (made later in the story or on another branch) lends its
    id, so a section keeps one identity everywhere; nothing of its content is used. Without
    one, the store creates it when the step commits — idempotently, so two steps that
    initialize the same section at once share one row."""
    bm = Bookmark(id=None, story_id=story_id, space=space, subject=subject, type=kind,
                  title=title, p=0, content=empty_content(kind))
    if store is not None:
        bm.id = store.bookmark_id(story_id, space, kind, subject, title)
    return bm


def memory_spaces(scene: SceneInfo) -> dict[str, str]:
    """The memories a scene grounds on: the shared one, or (witnessed knowledge) one per
    knower in its cast. Maps space → knower ("" for the shared memory)."""
    if scene.settings.get("knowledge") == "witnessed":
        return {f"story@{c}": c for c in scene.cast}
    return {"story": ""}

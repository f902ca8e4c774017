"""Annotation campaigns: a set of arena items, the annotators each item is given to (in a
per-annotator order), open or closed. Votes stay in `judgments` (one per annotator and
item), tagged with the campaign they were cast in."""

from __future__ import annotations

import json

from bookmarks.errors import BookmarksError, NotFoundError
from bookmarks.store.base import StoreBase, now


class CampaignsStore(StoreBase):
    def create_campaign(self, name: str, item_ids: list[int], *, k: int, randomize: bool,
                        params: dict, created_by: str) -> int:
        if not name.strip():
            raise BookmarksError("Give the campaign a name.")
        if not item_ids:
            raise BookmarksError("A campaign needs at least one arena item.")
        with self.transaction() as db:
            cid = db["campaigns"].insert(
                {"name": name.strip()[:200], "status": "open", "k": k, "randomize": int(randomize),
                 "params": json.dumps(params), "created_by": created_by, "created_at": now(),
                 "closed_at": None}).last_pk
            db["campaign_items"].insert_all(
                {"campaign_id": cid, "item_id": i, "position": n} for n, i in enumerate(item_ids))
        return cid

    def campaign(self, campaign_id: int) -> dict:
        row = self._one("SELECT * FROM campaigns WHERE id = ?", [campaign_id])
        if row is None:
            raise NotFoundError(f"There is no campaign with id {campaign_id}.")
        row["params"] = json.loads(row["params"] or "{}")
        return row

    def campaigns(self) -> list[dict]:
        return [self.campaign(r["id"]) for r in self._rows("SELECT id FROM campaigns ORDER BY id")]

    def set_campaign_status(self, campaign_id: int, status: str) -> None:
        self.campaign(campaign_id)
        with self.transaction() as db:
            db["campaigns"].update(campaign_id, {
                "status": status, "closed_at": now() if status == "closed" else None})

    def campaign_items(self, campaign_id: int) -> list[int]:
        return [r["item_id"] for r in self._rows(
            "SELECT item_id FROM campaign_items WHERE campaign_id = ? ORDER BY position",
            [campaign_id])]

    def add_assignments(self, campaign_id: int, rows: list[tuple[str, int, int]]) -> None:
        """(annotator, item, position) rows; an existing assignment is kept as it is."""
        with self.transaction() as db:
            db["campaign_assignments"].insert_all(
                ({"campaign_id": campaign_id, "annotator": a, "item_id": i, "position": p}
                 for a, i, p in rows), ignore=True)

    def assignments(self, campaign_id: int, annotator: str | None = None) -> list[dict]:
        """Assignments in each annotator's order."""
        where, params = "WHERE campaign_id = ?", [campaign_id]
        if annotator is not None:
            where, params = where + " AND annotator = ?", [*params, annotator]
        return self._rows(f"SELECT annotator, item_id, position FROM campaign_assignments {where} "
                          "ORDER BY annotator, position", params)

    def annotator_campaigns(self, annotator: str) -> list[dict]:
        """The campaigns that give this annotator work (open and closed)."""
        return [self.campaign(r["campaign_id"]) for r in self._rows(
            "SELECT DISTINCT campaign_id FROM campaign_assignments WHERE annotator = ? "
            "ORDER BY campaign_id", [annotator])]

    def is_assigned(self, campaign_id: int, annotator: str, item_id: int) -> bool:
        return self._one("SELECT 1 AS x FROM campaign_assignments WHERE campaign_id = ? AND "
                         "annotator = ? AND item_id = ?", [campaign_id, annotator, item_id]) \
            is not None

    def campaign_judgments(self, campaign_id: int) -> list[dict]:
        """Votes on the campaign's items by those it assigned them to, wherever cast, and
        the judge model's votes on its items."""
        return self._rows(
            "SELECT j.* FROM judgments j JOIN campaign_items ci ON ci.item_id = j.item_id "
            "AND ci.campaign_id = ? WHERE j.source = 'llm' OR EXISTS (SELECT 1 FROM "
            "campaign_assignments a WHERE a.campaign_id = ci.campaign_id AND "
            "a.item_id = j.item_id AND a.annotator = j.annotator) ORDER BY j.id", [campaign_id])

    def shown_view(self, item_id: int, annotator: str) -> dict | None:
        """The sides this annotator was shown for this item, if it was shown to them."""
        return self._one("SELECT * FROM arena_views WHERE item_id = ? AND annotator = ?",
                         [item_id, annotator])

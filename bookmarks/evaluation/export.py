"""Exports: evaluation records and votes as CSV or JSONL, arena items as a Label Studio
pairwise task file."""

from __future__ import annotations

import csv
import io
import json

from bookmarks.evaluation.arena import _transcript
from bookmarks.store import Store


def to_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def to_csv(rows: list[dict]) -> str:
    if not rows:
        return ""
    columns: list[str] = []
    for r in rows:
        columns += [k for k in r if k not in columns]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    for r in rows:
        writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v
                         for k, v in r.items()})
    return out.getvalue()


def run_rows(store: Store, run_id: int) -> list[dict]:
    run = store.run(run_id)
    return [{"run_id": run_id, "kind": run["kind"], "method": run["method"], **r}
            for r in store.records(run_id)]


def label_studio_tasks(store: Store) -> list[dict]:
    """One pairwise task per arena item (Label Studio's pairwise comparison template reads
    `data.prompt`, `data.answer1`, `data.answer2`); methods only in `meta`."""
    starts = {s["id"]: s for s in store.arena_starts()}
    tasks = []
    for item in store.arena_items():
        start = starts[item["start_id"]]

        def text(scene_id: int) -> str:
            return "\n".join(f"{t['character']}: {t['text']}" for t in _transcript(store, scene_id))

        tasks.append({
            "data": {"prompt": f"{start['setting']}\n{start['first_speaker']}: {start['first_line']}",
                     "answer1": text(item["scene_a"]), "answer2": text(item["scene_b"])},
            "meta": {"item_id": item["id"], "answer1_method": item["method_a"],
                     "answer2_method": item["method_b"]}})
    return tasks

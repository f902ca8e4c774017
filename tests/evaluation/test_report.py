"""Reporting: paired comparison of two runs, the Table 2 layout in three formats, and the
ablation methods (without reuse, without each bookmark type) as runnable methods."""

from __future__ import annotations

import pytest

from bookmarks.errors import BookmarksError
from bookmarks.evaluation.evaluate import run_nap
from bookmarks.evaluation.mcq import run_mcq
from bookmarks.evaluation.report import compare, format_compare, format_table, table
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from tests.conftest import make_llm
from tests.engine_helpers import generated_story, ground, kinds


def llms_for(store, fake):
    return {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}


@pytest.fixture
def two_runs(store):
    sid = store.add_story(generated_story(80))
    runs = []
    for method in ("bookmarks", "vanilla"):
        fake = ScriptedFakeModel(default=ScriptedMemory())
        runs.append(run_sync(run_nap(store, llms_for(store, fake), sid, method=method,
                                     characters=["Ada"], span=(20, 60))))
    return store, sid, runs


def test_compare_pairs_items_and_reports_interval_and_p(two_runs):
    store, _, (a, b) = two_runs
    result = compare(store, a["id"], b["id"])
    assert result["items"] == len(store.records(a["id"])) and result["only_a"] == 0
    col = result["columns"]["mean"]
    assert col["ci"][0] <= col["diff"] <= col["ci"][1] and 0 <= col["p"] <= 1
    text = format_compare(result)
    assert "Bookmarks (run" in text and "95% CI" in text and "p = " in text


def test_table_in_three_formats(two_runs):
    store, _, (a, b) = two_runs
    rows = table(store, [a["id"], b["id"]])
    md = format_table(rows, "markdown")
    assert md.splitlines()[0].startswith("| Method | Emotion |") and "Vanilla" in md
    assert "[" in md.splitlines()[2]  # intervals shown
    csv_text = format_table(rows, "csv")
    assert csv_text.splitlines()[0].startswith("method,run,items,k,judge,emotion,emotion_lo")
    tex = format_table(rows, "latex")
    assert "\\begin{tabular}" in tex and "\\bottomrule" in tex
    with pytest.raises(BookmarksError):
        format_table(rows, "html")


@pytest.mark.parametrize("ablated", ["concept", "state", "behavioral"])
def test_without_a_type_never_uses_it(store, ablated):
    sid = store.add_story(generated_story(200))
    sections = [{"title": "Harbour gate", "type": "concept", "subject": "harbour gate"},
                {"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
                {"title": "Ada's habits of speech", "type": "behavioral", "subject": "Ada"}]
    script = ScriptedMemory(sections=sections)
    fake = ScriptedFakeModel(default=script)
    g = ground(store, make_llm(fake, store), sid, 150, method=f"bookmarks-no{ablated}")
    used = {e["type"] for e in kinds(g, "synchronized")}
    assert ablated not in used and len(used) == 2
    (propose,) = [p for p, r in zip(fake.prompts, fake.history, strict=True)
                  if script.kind(r) == "propose"]
    assert f"- {ablated}:" not in propose


def test_mcq_runs_compare_by_question(store):
    from pathlib import Path

    from bookmarks.stories.importers import load_story

    root = Path(__file__).resolve().parent.parent.parent / "stories"
    sid = store.add_story(load_story(root / "saltmarsh_lighthouse.jsonl"))
    ids = []
    for method in ("vanilla", "ricl"):
        fake = ScriptedFakeModel(default=ScriptedMemory())
        ids.append(run_sync(run_mcq(store, llms_for(store, fake), sid, method=method,
                                    limit=6))["id"])
    result = compare(store, *ids)
    assert result["kind"] == "mcq" and result["items"] == 6
    assert set(result["columns"]) == {"accuracy"}

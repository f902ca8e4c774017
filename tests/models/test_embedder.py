"""The optional embedder role: RICL ranks past scenes by embedding similarity through an
OpenAI-compatible /v1/embeddings endpoint (real HTTP to a scripted server), BM25 otherwise,
and says which."""

from __future__ import annotations

from bookmarks.config import load_settings
from bookmarks.engine.ground import ground_at
from bookmarks.engine.lineage import Lineage
from bookmarks.models.backends import build_llms
from bookmarks.models.llm import run_sync
from bookmarks.store import Store
from tests.engine_helpers import generated_story
from tests.fake_server import scripted_server


def test_ricl_ranks_by_embeddings_when_an_embedder_is_configured(tmp_path):
    store = Store(tmp_path / "b.db")
    sid = store.add_story(generated_story(200))
    lineage = Lineage.of(store, store.story(sid).trunk_id)
    with scripted_server() as url:
        for embedder, expected in ((None, "bm25"), (url, "embeddings")):
            env = {"BOOKMARKS_DATA_DIR": str(tmp_path), "BOOKMARKS_BASE_URL": url,
                   "BOOKMARKS_API_KEY": "k"}
            if embedder:
                env.update(BOOKMARKS_EMBEDDER_BASE_URL=embedder, BOOKMARKS_EMBEDDER_MODEL="bow")
            llms = build_llms(load_settings(env), store)
            g, _ = run_sync(ground_at(store, llms["memory"], story_id=sid, lineage=lineage,
                                      position=181, character="Ada", method="ricl"))
            (retrieved,) = [e for e in g.events if e["kind"] == "retrieved"]
            assert retrieved["by"] == expected and retrieved["count"] == 8
            assert "Line" in g.text
    calls = [r for r in store.db["llm_calls"].rows if r["purpose"] == "ricl:embed"]
    assert calls and all(r["ok"] for r in calls)
    store.close()

"""200+ turns against a fault-injecting server over real HTTP: each turn completes or
fails with a clear error, the database never holds half a turn or a half-advanced
checkpoint, and a retry after the fault succeeds."""

from __future__ import annotations

import pytest

from bookmarks.config import RoleConfig
from bookmarks.errors import BookmarksError
from bookmarks.models.llm import LLM, run_sync
from bookmarks.models.transport import OpenAIChatModel
from bookmarks.scenes.play import generate_turn, round_robin
from tests.engine_helpers import generated_story
from tests.fault_server import FaultPlan, fault_server

METHODS = ("bookmarks", "ricl", "eta", "eta3", "vanilla")
TABLES = ("turns", "turn_events", "bookmarks", "bookmark_versions", "sync_costs")


def counts(store):
    return {t: store.db[t].count for t in TABLES}


def make_llms(url, store):
    model = OpenAIChatModel(model="faulty", base_url=url, api_key="k", timeout=0.3,
                            structured_mode="json_schema")
    return {r: LLM(model=model, config=RoleConfig(role=r, temperature=0.0 if r != "actor" else 0.7),
                   log=store.log_call, cache_get=None, cache_put=None, retries=2, backoff=0.01)
            for r in ("actor", "memory", "judge")}


def test_turns_survive_injected_faults(store):
    sid = store.add_story(generated_story(300))
    plan = FaultPlan(seed=11, rate=0.3)
    scenes = [store.create_scene(sid, start_point=100 + 40 * k, cast=["Ada", "Ben"], method=m)
              for k, m in enumerate(METHODS)]
    completed = failed = recovered = 0
    errors: set[str] = set()
    with fault_server(plan) as url:
        llms = make_llms(url, store)
        for n in range(210):
            scene = scenes[n % len(scenes)]
            who = round_robin(store, store.scene(scene.id))
            before = counts(store)
            try:
                turn = run_sync(generate_turn(store, llms, scene.id, who))
            except BookmarksError as exc:
                failed += 1
                errors.add(type(exc).__name__)
                assert str(exc) and "Traceback" not in str(exc)
                assert counts(store) == before  # nothing of the failed turn remains
                plan.enabled = False  # the fault clears: the same turn now succeeds
                run_sync(generate_turn(store, llms, scene.id, who))
                plan.enabled = True
                recovered += 1
                continue
            completed += 1
            after = counts(store)
            assert after["turns"] == before["turns"] + 1
            new_versions = after["bookmark_versions"] - before["bookmark_versions"]
            rows = store._rows("SELECT turn_id FROM bookmark_versions ORDER BY id DESC LIMIT ?",
                               [new_versions]) if new_versions else []
            assert all(r["turn_id"] == turn.id for r in rows)
    assert completed + failed == 210 and recovered == failed
    assert completed > 100 and failed > 0, (completed, failed, plan.counts)
    assert set(plan.counts) >= {"ok", "timeout", "429", "500", "drop", "malformed", "schema",
                                "truncated"}
    assert store.integrity_ok()
    # every turn on a scene's branch is contiguous: no gaps, no duplicates
    for scene in scenes:
        idx = [t.idx for t in store.turns(scene.id)]
        assert idx == list(range(scene.start_point + 1, scene.start_point + 1 + len(idx)))
    print(f"\n{completed} turns completed, {failed} failed cleanly ({sorted(errors)}), "
          f"{recovered} retried successfully; faults injected: {dict(plan.counts)}")


@pytest.mark.parametrize("fault", ["malformed", "drop", "500"])
def test_each_transient_fault_is_retried(store, fault):
    sid = store.add_story(generated_story(120))
    scene = store.create_scene(sid, start_point=100, cast=["Ada", "Ben"], method="vanilla")

    class Once(FaultPlan):
        def draw(self):
            self.counts[fault if not self.counts else "ok"] += 1
            return fault if sum(self.counts.values()) == 1 else "ok"

    with fault_server(Once(0)) as url:
        turn = run_sync(generate_turn(store, make_llms(url, store), scene.id, "Ada"))
    assert turn.idx == 101
    calls = store.calls()
    assert [c["ok"] for c in reversed(calls)][:2] == [0, 1]


def test_model_server_goes_away_and_comes_back(store):
    """The server stops: the turn fails with a clear message; it comes back on the same
    address: the next turn works, without restarting anything."""
    import threading
    from http.server import ThreadingHTTPServer

    from bookmarks.errors import ModelError
    from bookmarks.models.testing import ScriptedMemory
    from tests.fake_server import make_handler

    sid = store.add_story(generated_story(150))
    scene = store.create_scene(sid, start_point=120, cast=["Ada", "Ben"], method="bookmarks")

    def serve(port: int = 0) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(ScriptedMemory()))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    server = serve()
    port = server.server_port
    llms = make_llms(f"http://127.0.0.1:{port}/v1", store)
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    server.shutdown()
    server.server_close()
    with pytest.raises(ModelError, match=f"127.0.0.1:{port}.*did not answer"):
        run_sync(generate_turn(store, llms, scene.id, "Ben"))
    assert len(store.turns(scene.id)) == 1
    server = serve(port)
    try:
        assert run_sync(generate_turn(store, llms, scene.id, "Ben")).idx == 122
    finally:
        server.shutdown()
        server.server_close()

"""Integration: the real embedded llama.cpp server over real HTTP via the openai client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import openai
import pytest
from pydantic import BaseModel, Field

from bookmarks.config import RoleConfig
from bookmarks.engine.actor import Line, act
from bookmarks.models.backends import EmbeddedChatModel
from bookmarks.models.embedded import MODEL_ALIAS, EmbeddedServer
from bookmarks.models.llm import LLM, run_sync
from bookmarks.scenes.play import generate_turn
from bookmarks.stories.importers import load_story
from tests.conftest import STORIES

pytestmark = pytest.mark.embedded


class Section(BaseModel):
    title: str = Field(min_length=1)
    type: str


@pytest.fixture(scope="module")
def server():
    srv = EmbeddedServer(threads=2, n_ctx=4096)
    srv.ensure_started(timeout=120)
    yield srv
    srv.stop()
    assert not srv.alive()


def test_schema_valid_json_through_openai_client(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    resp = client.chat.completions.create(
        model=MODEL_ALIAS, temperature=0, max_tokens=60,
        messages=[{"role": "user", "content": "Name one memory section a detective needs, "
                                              "as JSON with a title and a type."}],
        response_format={"type": "json_object", "schema": Section.model_json_schema()})
    section = Section.model_validate_json(resp.choices[0].message.content)
    assert section.title and resp.usage.prompt_tokens > 0


def test_structured_and_roleplay_through_llm(server, store):
    model = EmbeddedChatModel(server)
    memory = LLM(model=model, config=RoleConfig(role="memory", max_tokens=80),
                 log=store.log_call, cache_get=store.cache_get, cache_put=store.cache_put)
    value = run_sync(memory.structured(
        [{"role": "user", "content": "Propose a section title about the lighthouse keeper."}],
        Section, purpose="propose"))
    assert isinstance(value, Section)
    actor = LLM(model=model, config=RoleConfig(role="actor", temperature=0.8, max_tokens=80),
                log=store.log_call)
    result = run_sync(act(actor, story_title="The Night Ferry", character="Isolde Marsh",
                          scene=[Line("Theo Lindqvist", "Is the engine going to start again?")],
                          others=["Theo Lindqvist", "Wren Adeyemi"], max_tries=6))
    assert result.text and ":" not in result.text[:20]
    calls = store.calls()
    assert calls and all(c["model"] == MODEL_ALIAS for c in calls)
    assert any(c["completion_tokens"] > 0 for c in calls)


def test_a_turn_is_generated_and_stored(server, store):
    story = load_story(STORIES / "the_night_ferry.txt")
    sid = store.add_story(story)
    scene = store.create_scene(sid, start_point=20, cast=["Isolde Marsh", "Barnaby Pike"])
    actor = LLM(model=EmbeddedChatModel(server),
                config=RoleConfig(role="actor", temperature=0.8, max_tokens=80), log=store.log_call)
    turn = run_sync(generate_turn(store, {"actor": actor, "memory": actor}, scene.id, "Barnaby Pike"))
    assert turn.idx == 21 and turn.character == "Barnaby Pike" and turn.source == "model"
    assert store.turns(scene.id)[0].text == turn.text
    kinds = [e["kind"] for e in store.turn_events(turn.id)]
    assert kinds == ["grounded", "acted", "usage"]


def test_embedded_server_restarts_after_dying():
    import signal

    srv = EmbeddedServer(threads=2, n_ctx=2048)
    model = EmbeddedChatModel(srv)
    llm = LLM(model=model, config=RoleConfig(role="actor", max_tokens=8))
    try:
        run_sync(llm.text([{"role": "user", "content": "Say hi."}], purpose="t", cache=False))
        first_pid = srv.proc.pid
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()
        reply = run_sync(llm.text([{"role": "user", "content": "Say hi."}], purpose="t",
                                  cache=False))
        assert srv.alive() and srv.proc.pid != first_pid and reply.completion_tokens > 0
    finally:
        srv.stop()


def test_actor_reply_streams_from_the_embedded_server(server):
    seen: list[str] = []
    actor = LLM(model=EmbeddedChatModel(server),
                config=RoleConfig(role="actor", temperature=0.8, max_tokens=40))
    result = run_sync(act(actor, story_title="The Night Ferry", character="Isolde Marsh",
                          scene=[Line("Theo Lindqvist", "Will the engine start?")],
                          others=["Theo Lindqvist"], max_tries=6, on_text=seen.append))
    assert len(seen) >= 2 and result.text


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead too
        return open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, seconds: float = 90.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.2)
    return False


OWNER = """
import sys, time
from bookmarks.models.embedded import EmbeddedServer, stop_on_signals
stop_on_signals()
server = EmbeddedServer()
server.ensure_started()
print(server.proc.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_embedded_server_dies_with_its_owner(how):
    """SIGTERM runs the exit handlers; SIGKILL leaves none to run, so the child's own
    watchdog ends it. Either way no orphan llama.cpp server is left behind."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        child = int(owner.stdout.readline().strip() or 0)
        assert child and _alive(child), owner.stderr.read()[-2000:]
        owner.send_signal(how)
        owner.wait(timeout=120)
        assert _wait_gone(child), "the embedded server outlived its owner"
    finally:
        if owner.poll() is None:
            owner.kill()

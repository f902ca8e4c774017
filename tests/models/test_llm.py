"""Model access on the scripted fake: structured output, retries, cache, logging."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from bookmarks.errors import ModelError, StructuredOutputError
from bookmarks.models.llm import run_sync
from bookmarks.models.structured import extract_json
from bookmarks.models.testing import ScriptedFakeModel
from bookmarks.models.transport import FormatRejectedError, TransientModelError
from tests.conftest import make_llm


class Verdict(BaseModel):
    decision: str
    score: int


MSGS = [{"role": "system", "content": "judge"}, {"role": "user", "content": "decide"}]


def test_structured_valid_first_time(store):
    fake = ScriptedFakeModel(['{"decision": "reuse", "score": 3}'])
    llm = make_llm(fake, store)
    value = run_sync(llm.structured(MSGS, Verdict, purpose="match"))
    assert value == Verdict(decision="reuse", score=3)
    rf = fake.history[0].response_format
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "Verdict"
    assert "title" not in rf["json_schema"]["schema"]["properties"]["decision"]


def test_structured_repairs_once_then_succeeds(store):
    fake = ScriptedFakeModel(['{"decision": "reuse"}', 'Sure! ```json\n{"decision": "new", "score": 1}\n```'])
    value = run_sync(make_llm(fake, store).structured(MSGS, Verdict, purpose="match"))
    assert value.decision == "new"
    repair = fake.history[1].messages
    assert repair[-2]["role"] == "assistant" and "score" in repair[-1]["content"]


def test_structured_fails_clearly_after_repair_and_is_not_cached(store):
    fake = ScriptedFakeModel(["not json", '{"decision": 5}'])
    llm = make_llm(fake, store)
    with pytest.raises(StructuredOutputError, match="Verdict"):
        run_sync(llm.structured(MSGS, Verdict, purpose="match"))
    assert store._one("SELECT COUNT(*) AS n FROM llm_cache")["n"] == 0
    # a later good reply is used and cached; the same question then needs no call
    fake.enqueue('{"decision": "reuse", "score": 2}')
    assert run_sync(llm.structured(MSGS, Verdict, purpose="match")).score == 2
    assert store._one("SELECT COUNT(*) AS n FROM llm_cache")["n"] == 1
    calls = len(fake.history)
    assert run_sync(llm.structured(MSGS, Verdict, purpose="match")).score == 2
    assert len(fake.history) == calls


def test_check_callback_triggers_repair(store):
    fake = ScriptedFakeModel(['{"decision": "maybe", "score": 1}', '{"decision": "new", "score": 1}'])

    def check(v: Verdict) -> None:
        if v.decision not in ("reuse", "new"):
            raise ValueError("decision must be reuse or new")

    value = run_sync(make_llm(fake, store).structured(MSGS, Verdict, purpose="m", check=check))
    assert value.decision == "new"
    assert "reuse or new" in fake.history[1].messages[-1]["content"]


def test_format_rejected_steps_down_to_json_object_then_prompt(store):
    fake = ScriptedFakeModel([FormatRejectedError("500"), FormatRejectedError("500"),
                              '{"decision": "new", "score": 0}'], structured_mode="auto")
    run_sync(make_llm(fake, store).structured(MSGS, Verdict, purpose="m"))
    kinds = [r.response_format and r.response_format["type"] for r in fake.history]
    assert kinds == ["json_schema", "json_object", None]
    assert fake.structured_mode == "prompt"
    assert "JSON schema" in fake.history[-1].messages[-1]["content"]


def test_transient_errors_are_retried_with_backoff(store):
    fake = ScriptedFakeModel([TransientModelError("HTTP 429"), TransientModelError("timeout"), "hello"])
    delays = []

    async def sleep(d):
        delays.append(d)

    llm = make_llm(fake, store)
    llm.sleep = sleep
    assert run_sync(llm.text(MSGS, purpose="act")).text == "hello"
    assert len(fake.history) == 3 and len(delays) == 2 and delays[1] > delays[0] * 0.6
    rows = store._rows("SELECT ok, error FROM llm_calls ORDER BY id")
    assert [r["ok"] for r in rows] == [0, 0, 1] and "429" in rows[0]["error"]


def test_client_errors_are_not_retried(store):
    fake = ScriptedFakeModel([ModelError("HTTP 401 bad key"), "never"])
    with pytest.raises(ModelError, match="401"):
        run_sync(make_llm(fake, store).text(MSGS, purpose="act"))
    assert len(fake.history) == 1


def test_retries_give_up_with_clear_message(store):
    fake = ScriptedFakeModel(default=TransientModelError("connection refused"))
    with pytest.raises(TransientModelError, match="Gave up after 4 attempts"):
        run_sync(make_llm(fake, store).text(MSGS, purpose="act"))


def test_calls_are_logged_with_tokens_and_purpose(store):
    fake = ScriptedFakeModel(["a reply of some length"])
    run_sync(make_llm(fake, store, role="actor").text(MSGS, purpose="act", scene_id=7))
    (row,) = store.calls()
    assert row["role"] == "actor" and row["purpose"] == "act" and row["scene_id"] == 7
    assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0 and row["ok"] == 1
    assert row["model"] == "scripted-fake" and row["latency_ms"] >= 0


def test_sampled_text_is_not_cached_but_deterministic_is(store):
    fake = ScriptedFakeModel(["one", "two", "three"])
    llm = make_llm(fake, store)
    assert run_sync(llm.text(MSGS, purpose="x", temperature=0.8)).text == "one"
    assert run_sync(llm.text(MSGS, purpose="x", temperature=0.8)).text == "two"
    assert run_sync(llm.text(MSGS, purpose="x", temperature=0)).text == "three"
    assert run_sync(llm.text(MSGS, purpose="x", temperature=0)).text == "three"
    assert len(fake.history) == 3


def test_async_calls_run_concurrently():
    fake = ScriptedFakeModel(default="ok", delay=0.2)
    llm = make_llm(fake)

    async def three():
        return await asyncio.gather(*(llm.text(MSGS, purpose=f"p{i}", cache=False) for i in range(3)))

    import time
    t0 = time.perf_counter()
    run_sync(three())
    assert time.perf_counter() - t0 < 0.5


def test_run_sync_inside_running_loop():
    async def outer():
        async def inner():
            return 42
        return run_sync(inner())

    assert asyncio.run(outer()) == 42


@pytest.mark.parametrize("text,expected", [
    ('{"a": 1}', '{"a": 1}'),
    ('noise {"a": "}"} trailing', '{"a": "}"}'),
    ('```json\n{"a": [1, {"b": 2}]}\n```', '{"a": [1, {"b": 2}]}'),
    ('{"a": "say \\"hi\\" {"}', '{"a": "say \\"hi\\" {"}'),
])
def test_extract_json(text, expected):
    assert extract_json(text) == expected


def test_json_object_schema_has_no_length_bounds():
    from pydantic import Field

    from bookmarks.models.structured import response_format_for

    class Long(BaseModel):
        text: str = Field(max_length=2000)
        items: list[int] = Field(max_length=16)

    rf = response_format_for("json_object", Long)
    assert "maxLength" not in str(rf) and "maxItems" not in str(rf)
    assert "maxLength" in str(response_format_for("json_schema", Long))


def test_raw_newlines_inside_json_strings_are_accepted():
    from bookmarks.models.structured import parse_structured

    value = parse_structured('{"decision": "reuse", "score": 1, "x": "a\nb"}', Verdict)
    assert value.decision == "reuse"
    with pytest.raises(ValueError, match="score"):
        parse_structured('{"decision": "reuse\n"}', Verdict)


def test_streaming_over_http_and_fallback_when_the_server_does_not_stream():
    from bookmarks.config import RoleConfig
    from bookmarks.models.llm import LLM
    from bookmarks.models.transport import OpenAIChatModel
    from tests.fake_server import scripted_server

    seen: list[str] = []
    with scripted_server(lambda req: "A line long enough to arrive in several pieces.") as url:
        llm = LLM(model=OpenAIChatModel(model="m", base_url=url, api_key="k"),
                  config=RoleConfig(role="actor"))
        reply = run_sync(llm.text(MSGS, purpose="act", on_text=seen.append, cache=False))
    assert reply.text == "A line long enough to arrive in several pieces."
    assert len(seen) >= 3 and seen[-1] == reply.text and reply.completion_tokens > 0

    with scripted_server(lambda req: "plain", streams=False) as url:  # ignores `stream`
        llm = LLM(model=OpenAIChatModel(model="m", base_url=url, api_key="k"),
                  config=RoleConfig(role="actor"))
        assert run_sync(llm.text(MSGS, purpose="act", on_text=seen.append)).text == "plain"

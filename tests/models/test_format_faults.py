"""Server errors are classified: a 5xx, a timeout or a lost connection is retried with
back-off and never changes how structured output is asked for; only a definite refusal of
the response format (HTTP 400/422 naming it) steps down json_schema → json_object →
prompt, for that server only, once, and is reported once."""

from __future__ import annotations

import asyncio
import json
import logging
import threading

import pytest
from pydantic import BaseModel

from bookmarks.config import RoleConfig
from bookmarks.errors import ModelError
from bookmarks.models.llm import LLM, run_sync
from bookmarks.models.testing import ScriptedFakeModel
from bookmarks.models.transport import (
    FormatRejectedError,
    OpenAIChatModel,
    RequestRefusedError,
    TransientModelError,
    classify_status,
)
from tests.conftest import make_llm
from tests.fake_server import completion, make_handler, serving


class Verdict(BaseModel):
    decision: str


MSGS = [{"role": "user", "content": "decide"}]
GOOD = '{"decision": "reuse"}'


async def _no_sleep(_: float) -> None:
    return None


def http_llm(url: str, **kw) -> LLM:
    model = OpenAIChatModel(model="m", base_url=url, api_key="k", timeout=5,
                            structured_mode="json_schema")
    return LLM(model=model, config=RoleConfig(role="memory"), sleep=_no_sleep, **kw)


def scripted_http(answers: list[tuple[int, str]]):
    """A server answering each POST with the next (status, message); 200 → a good reply.
    Records the response format of every request."""
    seen: list[dict | None] = []
    lock = threading.Lock()
    base = make_handler(lambda req: GOOD)

    class Handler(base):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with lock:
                seen.append(body.get("response_format"))
                status, message = answers.pop(0) if answers else (200, "")
            if status == 200:
                return self._send(200, completion(body, GOOD))
            return self._send(status, {"error": {"message": message}})

    return Handler, seen


def test_http_500s_are_retried_and_never_change_the_structured_mode():
    handler, seen = scripted_http([(500, "internal error: schema worker crashed")] * 3)
    with serving(handler) as url:
        llm = http_llm(url)
        assert run_sync(llm.structured(MSGS, Verdict, purpose="match")).decision == "reuse"
    assert len(seen) == 4  # three 500s, retried with back-off, then the answer
    assert all(rf and rf["type"] == "json_schema" for rf in seen)
    assert llm.model.structured_mode == "json_schema"


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429])
def test_server_errors_are_transient_whatever_they_say(status):
    err = classify_status(status, "response_format json_schema failed", formatted=True)
    assert isinstance(err, TransientModelError)


def test_only_a_400_or_422_naming_the_format_is_a_format_refusal():
    assert isinstance(classify_status(400, "response_format json_schema is not supported",
                                      formatted=True), FormatRejectedError)
    assert isinstance(classify_status(422, "Invalid schema", formatted=True), FormatRejectedError)
    # the same words on a request without a response format, or another 4xx: refused as is
    assert isinstance(classify_status(400, "response_format", formatted=False), RequestRefusedError)
    other = classify_status(400, "maximum context length is 2048 tokens", formatted=True)
    assert isinstance(other, RequestRefusedError) and other.status == 400
    assert isinstance(classify_status(401, "bad key json_schema", formatted=True),
                      RequestRefusedError)


def test_a_400_not_naming_the_format_fails_without_stepping_down():
    handler, seen = scripted_http([(400, "maximum context length is 2048 tokens")])
    with serving(handler) as url:
        llm = http_llm(url)
        with pytest.raises(RequestRefusedError, match="context length"):
            run_sync(llm.structured(MSGS, Verdict, purpose="match"))
    assert len(seen) == 1 and llm.model.structured_mode == "json_schema"


def test_a_format_refusal_steps_down_for_that_server_only_and_is_reported_once(caplog):
    refusal = (400, "response_format of type json_schema is not supported by this model")
    handler, seen = scripted_http([refusal])
    other_handler, other_seen = scripted_http([])
    with caplog.at_level(logging.WARNING, logger="bookmarks.models.llm"), \
            serving(handler) as url, serving(other_handler) as other_url:
        llm, other = http_llm(url), http_llm(other_url)
        for _ in range(3):
            run_sync(llm.structured(MSGS, Verdict, purpose="match", temperature=0.5))
            run_sync(other.structured(MSGS, Verdict, purpose="match", temperature=0.5))
    assert [rf and rf["type"] for rf in seen] == ["json_schema", "json_object", "json_object",
                                                  "json_object"]
    assert all(rf["type"] == "json_schema" for rf in other_seen)
    assert llm.model.structured_mode == "json_object"
    assert other.model.structured_mode == "json_schema"
    reports = [r for r in caplog.records if "refused the json_schema" in r.getMessage()]
    assert len(reports) == 1 and url.split("/v1")[0] in reports[0].getMessage()


def test_concurrent_refusals_step_down_once_not_twice():
    """Four calls refused at json_schema at the same time: the server is asked with
    json_object next, not with no format at all."""
    fake = ScriptedFakeModel(structured_mode="json_schema")
    fake.gate = threading.Event()

    def reply(request):
        if (request.response_format or {}).get("type") == "json_schema":
            raise FormatRejectedError("HTTP 400: response_format json_schema unsupported")
        return GOOD

    fake.default = reply
    llm = make_llm(fake)

    async def four():
        calls = [asyncio.create_task(llm.structured(MSGS, Verdict, purpose=f"p{n}"))
                 for n in range(4)]
        for _ in range(100_000):  # until all four wait at the server (no timing involved)
            if fake.in_flight == 4:
                break
            await asyncio.sleep(0)
        fake.gate.set()
        return await asyncio.gather(*calls)

    assert [v.decision for v in run_sync(four())] == ["reuse"] * 4
    assert fake.structured_mode == "json_object"
    assert all(r.response_format is not None for r in fake.history)


def test_a_failing_server_fails_clearly_after_its_retries():
    handler, seen = scripted_http([(503, "overloaded")] * 10)
    with serving(handler) as url:
        llm = http_llm(url)
        with pytest.raises(ModelError, match="Gave up after 4 attempts"):
            run_sync(llm.structured(MSGS, Verdict, purpose="match"))
    assert len(seen) == 4 and llm.model.structured_mode == "json_schema"

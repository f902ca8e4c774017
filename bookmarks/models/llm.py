"""Model access for one role: `LLM` wraps a `ChatModel` (transport.py) for one role
(actor, memory, judge) and adds what every call needs: timeouts, retries with
backoff for transient failures only, a cache of validated replies, a log row per call,
and structured output (pydantic model in, validated instance out, one repair re-ask).
Model output is parsed with `json.loads` and pydantic only; it is never executed.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import random
import re
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from pydantic import BaseModel

from bookmarks.config import DEFAULT_CONTEXT_TOKENS, RoleConfig
from bookmarks.errors import ModelError, StructuredOutputError
from bookmarks.models.fitting import (
    CHARS_PER_TOKEN,
    REPLY_MARGIN,
    clip_text,
    estimate_tokens,
    fit_messages,
    text_tokens,
)
from bookmarks.models.structured import (
    parse_structured,
    response_format_for,
    with_schema_hint,
)
from bookmarks.models.transport import (
    ChatModel,
    ChatRequest,
    Completion,
    FormatRejectedError,
    RequestRefusedError,
    TransientModelError,
)

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")

LENGTH_NOTE = ("Your previous reply to this was cut off at the length limit. Answer again, "
               "much shorter: a few words per text field.")
EMBED_MARGIN = 8  # tokens an embedder adds of its own (BOS/EOS, special tokens)
CallLogger = Callable[[dict], None]
# The scene a chain of calls serves (set around a turn; inherited by concurrent tasks).
scene_scope: contextvars.ContextVar[int | None] = contextvars.ContextVar("scene_scope",
                                                                        default=None)


@dataclass
class CallContext:
    purpose: str
    scene_id: int | None = None
    bookmark_id: int | None = None


@dataclass
class LLM:
    """One role's access to a model: retries, cache, logging, structured output."""

    model: ChatModel
    config: RoleConfig
    log: CallLogger | None = None
    cache_get: Callable[[str], str | None] | None = None
    cache_put: Callable[[str, str, str], None] | None = None
    retries: int = 3
    backoff: float = 0.5
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    # calls, prompt_tokens, completion_tokens: what the model did — or, with `count_cached`,
    # would have to do (a reply served from the cache counted at what it first cost);
    # cached_calls, cached_tokens: the replies the cache served, apart
    usage: dict[str, int] = field(default_factory=lambda: new_usage())
    _mode_lock: threading.Lock = field(default_factory=threading.Lock)
    # the memory role's optional embedder (an OpenAI-compatible /v1/embeddings backend)
    embedder: LLM | None = None
    count_cached: bool = True
    _sinks: tuple[dict[str, int], ...] = ()  # the usage of the LLMs this one was metered from

    @property
    def role(self) -> str:
        return self.config.role

    def metered(self) -> LLM:
        """The same model, cache and log, with its own usage counters (cost attribution);
        its calls count in this one's usage too (a run meters all its steps' calls)."""
        return replace(self, usage=new_usage(), _sinks=(*self._sinks, self.usage))

    def _cache_key(self, req: ChatRequest, extra: str = "") -> str:
        payload = json.dumps([self.model.name, self.model.base_url, req.messages, req.temperature,
                              req.max_tokens, req.response_format, req.stop, extra],
                             sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()

    async def _call(self, req: ChatRequest, ctx: CallContext) -> Completion:
        """One logical call with retries on transient failures only."""
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                result = await self.model.chat(req)
            except TransientModelError as exc:
                self._log(ctx, started, error=str(exc))
                if attempt >= self.retries:
                    raise TransientModelError(
                        f"{exc} Gave up after {attempt + 1} attempts ({self.role} model, "
                        f"{ctx.purpose})."
                    ) from exc
                delay = self.backoff * (2 ** attempt) * (0.5 + random.random())
                attempt += 1
                await self.sleep(delay)
                continue
            except ModelError as exc:
                self._log(ctx, started, error=str(exc))
                raise
            self._log(ctx, started, result=result)
            if result.model and result.model != self.model.name:
                try:  # what the server says it served (see `model_identity`)
                    self.model.served_model = result.model  # type: ignore[attr-defined]
                except AttributeError:
                    pass
            return result

    def _log(self, ctx: CallContext, started: float, *, result: Completion | None = None,
             error: str | None = None, cached: bool = False) -> None:
        if result is not None:
            for usage in (self.usage, *self._sinks):
                if cached:
                    usage["cached_calls"] = usage.get("cached_calls", 0) + 1
                    usage["cached_tokens"] = usage.get("cached_tokens", 0) + \
                        result.prompt_tokens + result.completion_tokens
                if not cached or self.count_cached:
                    usage["calls"] += 1
                    usage["prompt_tokens"] += result.prompt_tokens
                    usage["completion_tokens"] += result.completion_tokens
        if self.log is None:
            return
        self.log({
            "role": self.role, "purpose": ctx.purpose, "model": self.model.name,
            "base_url": self.model.base_url,
            "prompt_tokens": result.prompt_tokens if result else 0,
            "completion_tokens": result.completion_tokens if result else 0,
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
            "ok": int(error is None), "error": error, "cached": int(cached),
            "scene_id": ctx.scene_id if ctx.scene_id is not None else scene_scope.get(),
            "bookmark_id": ctx.bookmark_id,
        })

    @property
    def context_tokens(self) -> int:
        """The role's context window: configured, else as the server reported it (see
        `discover_context`), else DEFAULT_CONTEXT_TOKENS."""
        return (self.config.context_tokens or getattr(self.model, "discovered_context", None)
                or DEFAULT_CONTEXT_TOKENS)

    async def discover_context(self) -> None:
        """Ask the server its context length once per model (when none is configured)."""
        if self.config.context_tokens or hasattr(self.model, "discovered_context"):
            return
        ask = getattr(self.model, "context_window", None)
        found = await ask() if ask else None
        try:
            self.model.discovered_context = found  # type: ignore[attr-defined]
        except AttributeError:
            pass

    def prompt_budget(self, max_tokens: int | None = None) -> int:
        """Tokens a prompt may use so that it and a reply of `max_tokens` fit the context."""
        reply = max_tokens or self.config.max_tokens
        return max(256, self.context_tokens - reply - REPLY_MARGIN)

    def prompt_chars(self, max_tokens: int | None = None, reserve: int = 1200) -> int:
        """Characters of passages a prompt builder may pack (`reserve` for its own text)."""
        return max(600, self.prompt_budget(max_tokens) * CHARS_PER_TOKEN - reserve)

    def _request(self, messages: list[dict[str, str]], temperature: float | None,
                 max_tokens: int | None, **kw: Any) -> ChatRequest:
        reply = min(max_tokens or self.config.max_tokens, self.context_tokens // 2)
        return ChatRequest(
            messages=fit_messages(messages, self.prompt_budget(reply)),
            temperature=self.config.temperature if temperature is None else temperature,
            max_tokens=reply, **kw)

    def _roomier(self, req: ChatRequest, note: str) -> ChatRequest:
        """The same question after a reply was cut at max_tokens: never asked identically
        (at temperature 0 it would be cut the same way) — twice the room where the context
        allows, and a request for a shorter answer."""
        msgs = [dict(m) for m in req.messages]
        for m in reversed(msgs):
            if m["role"] == "user":
                m["content"] = f"{m['content']}\n\n{note}"
                break
        room = self.context_tokens - estimate_tokens(msgs) - REPLY_MARGIN
        tokens = max(req.max_tokens, min(req.max_tokens * 2, room))
        return replace(req, messages=fit_messages(msgs, self.context_tokens - tokens
                                                  - REPLY_MARGIN), max_tokens=tokens)

    async def text(self, messages: list[dict[str, str]], *, purpose: str,
                   temperature: float | None = None, max_tokens: int | None = None,
                   stop: list[str] | None = None, cache: bool | None = None,
                   scene_id: int | None = None, bookmark_id: int | None = None,
                   on_text: Callable[[str], None] | None = None) -> Completion:
        """A free-text reply (cached only when deterministic or `cache=True`); streamed
        to `on_text` (the text so far) when given."""
        await self.discover_context()
        req = self._request(messages, temperature, max_tokens, stop=stop, on_text=on_text)
        ctx = CallContext(purpose, scene_id, bookmark_id)
        use_cache = (req.temperature <= 0) if cache is None else cache
        key = self._cache_key(req) if use_cache else ""
        if use_cache and self.cache_get and (hit := self.cache_get(key)) is not None:
            return self._cache_hit(ctx, hit)
        result = await self._call(req, ctx)
        spent = (result.prompt_tokens, result.completion_tokens)
        if result.finish_reason == "length" and not on_text:
            # cut at max_tokens: ask once more with room and for brevity; a reply still
            # cut is returned as it is (callers trim it) and is never cached
            result = await self._call(self._roomier(req, LENGTH_NOTE), ctx)
            spent = (spent[0] + result.prompt_tokens, spent[1] + result.completion_tokens)
        if use_cache and self.cache_put and result.text.strip() and result.finish_reason != "length":
            self.cache_put(key, self.model.name, result.text, *spent)
        return result

    def _cache_hit(self, ctx: CallContext, hit: str) -> Completion:
        """A reply the cache served: logged apart (cached), at what it first cost."""
        done = Completion(text=str(hit), prompt_tokens=getattr(hit, "prompt_tokens", 0),
                          completion_tokens=getattr(hit, "completion_tokens", 0),
                          model=self.model.name, finish_reason="stop")
        self._log(ctx, time.perf_counter(), result=done, cached=True)
        return done

    async def structured(self, messages: list[dict[str, str]], schema: type[T], *,
                         purpose: str, temperature: float | None = None,
                         max_tokens: int | None = None, scene_id: int | None = None,
                         bookmark_id: int | None = None,
                         check: Callable[[T], None] | None = None) -> T:
        """A reply validated against `schema` (and `check`, which raises ValueError).

        Invalid replies get one repair re-ask; a reply that is still invalid raises
        StructuredOutputError. Only validated replies are cached."""
        ctx = CallContext(purpose, scene_id, bookmark_id)
        await self.discover_context()
        msgs = with_schema_hint(messages, schema)
        mode = self._mode()
        req = self._request(msgs, temperature, max_tokens,
                            response_format=response_format_for(mode, schema))
        key = self._cache_key(req, schema.__name__)
        if self.cache_get and (hit := self.cache_get(key)) is not None:
            try:
                value = parse_structured(hit, schema)
                if check:
                    check(value)
                self._cache_hit(ctx, hit)
                return value
            except ValueError:
                pass  # a stale or foreign entry: ask again
        problem = ""
        attempts, allowed = 0, 2
        spent = [0, 0]  # every attempt is part of what the validated reply cost
        while attempts < allowed:
            attempts += 1
            result = await self._call_structured(req, schema, ctx)
            spent = [spent[0] + result.prompt_tokens, spent[1] + result.completion_tokens]
            try:
                value = parse_structured(result.text, schema)
                if check:
                    check(value)
            except ValueError as exc:
                problem = str(exc)
                if result.finish_reason == "length":
                    # cut off: a repair re-ask would be cut again; ask with room, briefly
                    allowed = 3
                    problem = f"the reply was cut off at {req.max_tokens} tokens ({problem})"
                    req = self._roomier(req, LENGTH_NOTE)
                else:
                    req = replace(req, messages=[
                        *req.messages[: len(msgs)],
                        {"role": "assistant", "content": result.text[:4000]},
                        {"role": "user", "content": f"That reply was not valid ({problem}). Reply "
                                                    "again with only the corrected JSON object."}])
                    req = replace(req, messages=fit_messages(
                        req.messages, self.prompt_budget(req.max_tokens)))
                continue
            if self.cache_put:
                self.cache_put(key, self.model.name, result.text, *spent)
            return value
        raise StructuredOutputError(
            f"The {self.role} model gave an invalid {schema.__name__} twice ({purpose}): "
            f"{problem}. Try again, or configure a more capable model."
        )

    async def embed(self, texts: list[str], *, purpose: str) -> list[list[float]]:
        """Embeddings of `texts` (batches of 64), retried like calls, logged once a batch.
        Each text is fitted to the embedder's context (configured, reported by the server,
        or learnt from its refusal: "maximum context length is 512 tokens"), keeping its
        end — a scene's newest lines."""
        await self.discover_context()
        out: list[list[float]] = []
        for start in range(0, len(texts), 64):
            batch = texts[start:start + 64]
            attempt = refits = 0
            while True:
                limit = getattr(self.model, "embed_limit", None) or self.context_tokens
                fitted = [clip_text(t, max(16, limit - EMBED_MARGIN), keep="end") for t in batch]
                started = time.perf_counter()
                try:
                    out.extend(await self.model.embed(fitted))  # type: ignore[attr-defined]
                    self._log(CallContext(purpose), started, result=Completion(
                        text="", prompt_tokens=sum(text_tokens(t) for t in fitted)))
                    break
                except RequestRefusedError as exc:  # too long for this embedder: learn its size
                    self._log(CallContext(purpose), started, error=str(exc))
                    if exc.status not in (400, 413, 422) or refits >= 3 or limit <= 32:
                        raise
                    refits += 1
                    stated = [int(n) for n in re.findall(r"\b(\d{2,6})\b", str(exc))
                              if 16 <= int(n) < limit]
                    self.model.embed_limit = min(stated) if stated else limit // 2  # type: ignore[attr-defined]
                except TransientModelError as exc:
                    self._log(CallContext(purpose), started, error=str(exc))
                    if attempt >= self.retries:
                        raise
                    attempt += 1
                    await self.sleep(self.backoff * (2 ** attempt))
        return out

    def _mode(self) -> str:
        mode = self.model.structured_mode
        if mode == "auto":
            mode = "json_schema"
        return mode

    async def _call_structured(self, req: ChatRequest, schema: type[BaseModel],
                               ctx: CallContext) -> Completion:
        """Call, stepping down json_schema → json_object → prompt when the server refuses
        the response format (a definite 400/422 naming it; see `classify_status`). The step
        is this server's (its model object), taken once however many calls were refused at
        the same time, and reported once; a transient failure never changes the mode."""
        while True:
            try:
                return await self._call(req, ctx)
            except FormatRejectedError as exc:
                if req.response_format is None:
                    raise
                used = _mode_of(req.response_format)
                with self._mode_lock:
                    current = self._mode()
                    if current == used:  # the first refusal of this mode steps down
                        current = {"json_schema": "json_object", "json_object": "prompt"}[used]
                        self.model.structured_mode = current
                        log.warning("%s at %s refused the %s response format (%s); using %s "
                                    "for this server from now on.", self.model.name,
                                    self.model.base_url, used, str(exc)[:200], current)
                req = replace(req, response_format=response_format_for(current, schema))

    # -- sync facades (Gradio handlers, CLI) --
    def text_sync(self, *args: Any, **kw: Any) -> Completion:
        return run_sync(self.text(*args, **kw))

    def structured_sync(self, *args: Any, **kw: Any) -> Any:
        return run_sync(self.structured(*args, **kw))


def model_identity(llm: LLM) -> str:
    """Which model answers, whatever server or alias it is reached by: the model the server
    says it served (once it has answered), else the configured name, compared without its
    organisation prefix, a ":latest" tag, a ".gguf" suffix or case ("Qwen/Qwen2.5-7B-Instruct"
    on vLLM and "qwen2.5-7b-instruct" on another server are one model)."""
    name = getattr(llm.model, "served_model", None) or llm.model.name or ""
    name = name.strip().rsplit("/", 1)[-1].casefold()
    return name.removesuffix(":latest").removesuffix(".gguf")


def new_usage() -> dict[str, int]:
    return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_calls": 0,
            "cached_tokens": 0}


def _mode_of(response_format: dict) -> str:
    return "json_schema" if response_format.get("type") == "json_schema" else "json_object"


def run_sync(coro: Coroutine[Any, Any, R]) -> R:
    """Run a coroutine from sync code, also when called inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]

"""Transport: the chat-model protocol and its implementation for any OpenAI-compatible HTTP
server (OpenAI, vLLM, Ollama, llama.cpp) through the `openai` package. HTTP failures are
classified here: transient (retry), refused (4xx), or a refused response format."""

from __future__ import annotations

import asyncio
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bookmarks.errors import ModelError


class TransientModelError(ModelError):
    """A failure worth retrying: timeout, connection lost, HTTP 429 or 5xx."""


class FormatRejectedError(ModelError):
    """The server refused the requested `response_format`."""


class RequestRefusedError(ModelError):
    """The server refused this request (HTTP 4xx): `status` says why."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


# what a server says when it refuses the response format itself (OpenAI, vLLM, llama.cpp,
# Ollama, LM Studio): only then may structured output step down
_NAMES_FORMAT = re.compile(r"response_format|response format|json_schema|json_object|"
                           r"structured output|guided_json|grammar|\bschema\b", re.IGNORECASE)


def classify_status(status: int, body: str, *, formatted: bool) -> ModelError:
    """The error an HTTP status means. 429, 5xx: transient (retried with back-off; a server
    error never says anything about the response format, so it never changes a mode). A
    400/422 that names the response format, on a request that had one: the format is
    refused (the caller steps down json_schema → json_object → prompt). Any other 4xx:
    this request is refused as it is."""
    if status == 429 or status >= 500:
        return TransientModelError(f"The model server answered HTTP {status}: {body}")
    if formatted and status in (400, 422) and _NAMES_FORMAT.search(body):
        return FormatRejectedError(f"HTTP {status}: {body}")
    return RequestRefusedError(f"The model server refused the request (HTTP {status}): {body}",
                               status)


@dataclass(frozen=True)
class ChatRequest:
    messages: list[dict[str, str]]
    temperature: float = 0.0
    max_tokens: int = 400
    response_format: dict | None = None
    stop: list[str] | None = None
    # when set, the reply is streamed: called with the text so far as it grows
    on_text: Callable[[str], None] | None = None


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    finish_reason: str | None = None


class ChatModel(Protocol):
    """Anything that turns a chat request into a completion."""

    name: str
    base_url: str
    structured_mode: str  # json_schema | json_object | prompt | auto

    async def chat(self, request: ChatRequest) -> Completion: ...


class OpenAIChatModel:
    """A model behind an OpenAI-compatible HTTP API (OpenAI, vLLM, Ollama, llama.cpp)."""

    def __init__(self, *, model: str | None, base_url: str | None, api_key: str | None,
                 timeout: float = 120.0, structured_mode: str = "auto"):
        import openai  # imported here so the engine can be used with fakes alone

        self._openai = openai
        self.base_url = base_url or "https://api.openai.com/v1"
        self.name = model or "gpt-4o-mini"
        self.structured_mode = structured_mode
        self._client_args = {"base_url": self.base_url, "api_key": api_key or "none",
                             "timeout": timeout, "max_retries": 0}
        self._clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _client_for_loop(self) -> Any:
        """httpx connection pools belong to one event loop: one client per loop."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._openai.AsyncOpenAI(**self._client_args)
        return client

    async def context_window(self) -> int | None:
        """The context length the server reports for this model, if it does: vLLM's
        `max_model_len` and the `context_length` of other servers in `/v1/models`,
        llama.cpp's `n_ctx` in `/props`. None when it says nothing (or cannot be asked)."""
        try:
            page = await self._client_for_loop().models.list()
            for m in page.data:
                if getattr(m, "id", None) not in (self.name, None) and len(page.data) > 1:
                    continue
                extra = {**(getattr(m, "model_extra", None) or {})}
                meta = extra.get("meta") or {}
                for value in (extra.get("max_model_len"), extra.get("context_length"),
                              extra.get("context_window"), meta.get("n_ctx")):
                    if isinstance(value, int) and value > 0:
                        return value
            root = self.base_url.rstrip("/").removesuffix("/v1")
            props = await self._client_for_loop().get(f"{root}/props", cast_to=dict)
            n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx") or props.get("n_ctx")
            return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None
        except Exception:  # noqa: BLE001 - discovery is best effort; the default applies
            return None

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors for `texts` from the server's /v1/embeddings."""
        oa = self._openai
        try:
            resp = await self._client_for_loop().embeddings.create(model=self.name, input=texts)
        except (oa.APITimeoutError, oa.APIConnectionError) as exc:
            raise TransientModelError(f"The embedding server at {self.base_url} did not answer "
                                      f"({type(exc).__name__}).") from exc
        except oa.APIStatusError as exc:  # 429/5xx retried; a 4xx says why (too long …)
            raise classify_status(exc.status_code, "embedding server: " + str(
                getattr(exc, "message", exc))[:300], formatted=False) from exc
        except oa.APIError as exc:
            raise ModelError(f"The embedding server refused the request: "
                             f"{str(getattr(exc, 'message', exc))[:300]}") from exc
        vectors = [d.embedding for d in sorted(resp.data, key=lambda d: d.index)]
        if len(vectors) != len(texts) or not all(isinstance(v, list) and v for v in vectors):
            raise ModelError("The embedding server returned a malformed answer.")
        return [[float(x) for x in v] for v in vectors]

    async def chat(self, request: ChatRequest) -> Completion:
        oa = self._openai
        kwargs: dict[str, Any] = {"model": self.name, "messages": request.messages,
                                  "temperature": request.temperature,
                                  "max_tokens": request.max_tokens}
        if request.response_format:
            kwargs["response_format"] = request.response_format
        if request.stop:
            kwargs["stop"] = request.stop
        try:
            if request.on_text is not None:
                return await self._stream(kwargs, request)
            resp = await self._client_for_loop().chat.completions.create(**kwargs)
        except (oa.APITimeoutError, oa.APIConnectionError) as exc:
            raise TransientModelError(f"The model server at {self.base_url} did not answer "
                                      f"({type(exc).__name__}).") from exc
        except oa.APIStatusError as exc:
            raise classify_status(exc.status_code, str(getattr(exc, "message", exc))[:300],
                                  formatted=bool(request.response_format)) from exc
        except (oa.APIError, ValueError) as exc:  # a malformed or unexpected response body
            raise TransientModelError(f"The model server at {self.base_url} sent a malformed "
                                      f"response ({type(exc).__name__}).") from exc
        if not resp.choices:
            raise TransientModelError("The model server returned no choices.")
        choice = resp.choices[0]
        usage = resp.usage
        return Completion(
            text=choice.message.content or "",
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            model=resp.model or self.name,
            finish_reason=choice.finish_reason,
        )


    async def _stream(self, kwargs: dict[str, Any], request: ChatRequest) -> Completion:
        """Stream the reply, reporting the text so far; token counts are estimated (about
        four characters a token) when the server sends no usage with the stream."""
        parts: list[str] = []
        finish = None
        usage = None
        stream = await self._client_for_loop().chat.completions.create(**kwargs, stream=True)
        async for chunk in stream:
            usage = getattr(chunk, "usage", None) or usage
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            finish = choice.finish_reason or finish
            delta = choice.delta.content if choice.delta else None
            if delta:
                parts.append(delta)
                request.on_text("".join(parts))  # type: ignore[misc]
        text = "".join(parts)
        if finish is None and not text:  # the server ignored `stream`: ask plainly
            return await self.chat(replace(request, on_text=None))
        prompt = sum(len(m["content"]) for m in request.messages) // 4
        return Completion(text=text,
                          prompt_tokens=getattr(usage, "prompt_tokens", 0) or prompt,
                          completion_tokens=getattr(usage, "completion_tokens", 0)
                          or max(1, len(text) // 4) if text else 0,
                          model=self.name, finish_reason=finish)

"""Which model each role talks to: an OpenAI-compatible server, or the embedded one.

`build_llms` turns `Settings` into one `LLM` per role. Roles without a base URL or key
share the embedded llama.cpp server, started lazily on their first call.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from bookmarks.config import ROLES, RoleConfig, Settings
from bookmarks.models.embedded import MODEL_ALIAS, EmbeddedServer, shared_server
from bookmarks.models.llm import LLM
from bookmarks.models.transport import ChatRequest, Completion, OpenAIChatModel
from bookmarks.store import Store


class EmbeddedChatModel:
    """The embedded llama.cpp server as a ChatModel; starts it on the first request."""

    def __init__(self, server: EmbeddedServer, timeout: float = 300.0):
        self.server = server
        self.name = MODEL_ALIAS
        self.structured_mode = "json_object"  # llama.cpp's grammar-constrained form
        self.timeout = timeout
        self._inner: OpenAIChatModel | None = None

    @property
    def base_url(self) -> str:
        return self.server.base_url if self.server.port else "embedded://not-started"

    def start(self) -> OpenAIChatModel:
        url = self.server.ensure_started()
        if self._inner is None or self._inner.base_url != url:
            self._inner = OpenAIChatModel(model=MODEL_ALIAS, base_url=url, api_key="embedded",
                                          timeout=self.timeout, structured_mode="json_object")
        return self._inner

    async def chat(self, request: ChatRequest) -> Completion:
        inner = self._inner if self._inner and self.server.alive() else \
            await asyncio.to_thread(self.start)
        inner.structured_mode = self.structured_mode
        return await inner.chat(request)


def build_model(config: RoleConfig, settings: Settings):
    if config.embedded:
        server = shared_server(settings.gguf_path, settings.embedded_threads,
                               settings.embedded_ctx)
        return EmbeddedChatModel(server, timeout=max(config.timeout, 300.0))
    return OpenAIChatModel(model=config.model, base_url=config.base_url,
                           api_key=config.api_key, timeout=config.timeout,
                           structured_mode=config.structured)


def build_llms(settings: Settings, store: Store | None) -> dict[str, LLM]:
    llms = {}
    for role in ROLES:
        config = settings.role(role)
        if config.embedded:  # the embedded server's own window
            config = replace(config, context_tokens=settings.embedded_ctx)
        llms[role] = LLM(
            model=build_model(config, settings), config=config,
            log=store.log_call if store else None,
            cache_get=store.cache_get if store else None,
            cache_put=store.cache_put if store else None,
        )
    if settings.embedder is not None:  # RICL ranks past scenes by embedding similarity
        e = settings.embedder
        llms["memory"].embedder = LLM(
            model=OpenAIChatModel(model=e.model, base_url=e.base_url, api_key=e.api_key,
                                  timeout=e.timeout),
            config=e, log=store.log_call if store else None)
    return llms

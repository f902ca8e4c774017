"""Test doubles. Nothing here is ever the app's default model.

`ScriptedFakeModel` implements the `ChatModel` protocol from a queue of scripted replies
(strings, exceptions to raise, or functions of the request), records every request it
receives, and reports fake token usage (about four characters a token).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from .llm import ChatRequest, Completion

Reply = str | BaseException | Callable[[ChatRequest], str]


def fake_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedFakeModel:
    """A scripted stand-in for a language model (test double)."""

    def __init__(self, replies: list[Reply] | None = None, *, name: str = "scripted-fake",
                 default: Reply | None = None, delay: float = 0.0,
                 structured_mode: str = "json_schema"):
        self.name = name
        self.base_url = "fake://scripted"
        self.structured_mode = structured_mode
        self.default = default
        self.delay = delay
        self.queue: deque[Reply] = deque(replies or [])
        self.history: list[ChatRequest] = []

    def enqueue(self, *replies: Reply) -> ScriptedFakeModel:
        self.queue.extend(replies)
        return self

    @property
    def prompts(self) -> list[str]:
        """The last user message of every request received, in order."""
        return [next((m["content"] for m in reversed(r.messages) if m["role"] == "user"), "")
                for r in self.history]

    async def chat(self, request: ChatRequest) -> Completion:
        self.history.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.queue:
            reply = self.queue.popleft()
        elif self.default is not None:
            reply = self.default
        else:
            raise AssertionError("ScriptedFakeModel received a request with no reply queued: "
                                 + repr(request.messages[-1]["content"][:200]))
        if isinstance(reply, BaseException):
            raise reply
        text = reply(request) if callable(reply) else reply
        prompt = sum(fake_tokens(m["content"]) for m in request.messages)
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=fake_tokens(text),
                          model=self.name, finish_reason="stop")

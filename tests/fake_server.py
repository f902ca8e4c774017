"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 (test double).

Answers `POST /v1/chat/completions` with `ScriptedMemory`'s replies (valid JSON for
memory requests, a line for the actor) and `GET /v1/models`; real HTTP, so the app's
`openai` client path is exercised end to end.
"""

from __future__ import annotations

import json
import sys
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bookmarks.models.testing import ScriptedMemory, fake_tokens
from bookmarks.models.transport import ChatRequest


def completion(body: dict, text: str, finish: str = "stop") -> dict:
    """An OpenAI chat completion answering request `body` with `text`."""
    prompt = sum(fake_tokens(m["content"]) for m in body["messages"])
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": fake_tokens(text),
                      "total_tokens": prompt + fake_tokens(text)}}


def bag_of_words(text: str, dims: int = 64) -> list[float]:
    """A deterministic stand-in for an embedding: word counts hashed into `dims` buckets."""
    import hashlib
    import re as _re

    vec = [0.0] * dims
    for word in _re.findall(r"[a-z']+", text.lower()):
        vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % dims] += 1.0
    return vec


def make_handler(responder, streams: bool = True, context: int | None = None):
    """`context`: report this `max_model_len` (as vLLM does) and refuse, with HTTP 400, a
    request whose prompt and max_tokens exceed it (about four characters a token)."""
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802
            model = {"id": "scripted", "object": "model"}
            if context:
                model["max_model_len"] = context
            self._send(200, {"object": "list", "data": [model]})

        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            if self.path.endswith("/embeddings"):  # a hashed bag of words, 64 dimensions
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [{"object": "embedding", "index": n, "embedding": bag_of_words(t)}
                        for n, t in enumerate(texts)]
                return self._send(200, {"object": "list", "data": data, "model": body["model"],
                                        "usage": {"prompt_tokens": 0, "total_tokens": 0}})
            req = ChatRequest(messages=body["messages"], temperature=body.get("temperature", 0),
                              max_tokens=body.get("max_tokens", 100),
                              response_format=body.get("response_format"))
            size = sum(len(m["content"]) // 4 + 4 for m in req.messages) + req.max_tokens
            if context and size > context:
                return self._send(400, {"error": {"message": f"This model's maximum context "
                                                  f"length is {context} tokens; you requested "
                                                  f"{size}.", "type": "invalid_request_error"}})
            text = responder(req)
            if body.get("stream") and streams:
                return self._stream(body, text)
            self._send(200, completion(body, text))

        def _stream(self, body: dict, text: str) -> None:
            """Server-sent events, as OpenAI-compatible servers stream a reply."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            pieces = [text[i:i + 8] for i in range(0, len(text), 8)] or [""]
            for n, piece in enumerate(pieces):
                last = n == len(pieces) - 1
                chunk = {"id": "s", "object": "chat.completion.chunk", "created": 0,
                         "model": body.get("model", "scripted"),
                         "choices": [{"index": 0, "delta": {"content": piece},
                                      "finish_reason": "stop" if last else None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


@contextmanager
def scripted_server(responder=None, streams: bool = True, context: int | None = None):
    responder = responder or ScriptedMemory(sections=[
        {"title": "Harbour gate", "type": "concept", "subject": "harbour gate"},
        {"title": "Ada's plans", "type": "state", "subject": "Ada"}])
    with serving(make_handler(responder, streams, context)) as url:
        yield url


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A client that hung up (an app stopped mid-request, a cancelled stream) is not an
        error of the server's; anything else is printed as usual."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


@contextmanager
def serving(handler):
    """Serve `handler` on a free 127.0.0.1 port in a thread; yields the /v1 base URL."""
    server = _Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()

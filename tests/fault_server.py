"""A fault-injecting OpenAI-compatible server on 127.0.0.1 (test double).

Each request, a seeded random draw picks: a good answer, a slow one, a timeout, HTTP 429
or 500, a dropped connection, a malformed body, schema-violating content, or output
truncated mid-reply. Good answers come from `ScriptedMemory`.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from contextlib import contextmanager

from bookmarks.models.testing import ScriptedMemory
from bookmarks.models.transport import ChatRequest

from .fake_server import completion, make_handler, serving

FAULTS = ("ok", "slow", "timeout", "429", "500", "drop", "malformed", "schema", "truncated")


class FaultPlan:
    def __init__(self, seed: int, rate: float = 0.15, hang: float = 0.6):
        self.rng = random.Random(seed)
        self.rate = rate
        self.hang = hang
        self.enabled = True
        self.counts: Counter = Counter()
        self.lock = threading.Lock()

    def draw(self) -> str:
        with self.lock:
            fault = (self.rng.choice(FAULTS[1:]) if self.enabled and self.rng.random() < self.rate
                     else "ok")
            self.counts[fault] += 1
            return fault


def make_fault_handler(plan: FaultPlan, responder):
    base = make_handler(responder)

    class Handler(base):
        def do_POST(self):  # noqa: N802
            fault = plan.draw()
            if fault == "ok":
                return super().do_POST()
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            if fault == "slow":
                time.sleep(0.05)
                return self._answer(body, responder(_request(body)))
            if fault == "timeout":
                time.sleep(plan.hang)
                return None
            if fault in ("429", "500"):
                return self._send(int(fault), {"error": {"message": f"injected {fault}"}})
            if fault == "drop":
                self.close_connection = True
                return None
            if fault == "malformed":
                data = b'{"id": "x", "choices": [ {"message": '
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return None
            text = responder(_request(body))
            if fault == "schema":
                text = '{"unexpected": true}' if body.get("response_format") else "Tobias Bell: no"
            else:  # truncated
                text = text[: max(1, len(text) // 2)]
            return self._answer(body, text, finish="length" if fault == "truncated" else "stop")

        def _answer(self, body, text, finish="stop"):
            self._send(200, completion(body, text, finish))

    return Handler


def _request(body: dict) -> ChatRequest:
    return ChatRequest(messages=body["messages"], response_format=body.get("response_format"))


@contextmanager
def fault_server(plan: FaultPlan, responder=None):
    with serving(make_fault_handler(plan, responder or ScriptedMemory())) as url:
        yield url

"""Test doubles. Nothing here is ever the app's default model.

`ScriptedFakeModel` implements the `ChatModel` protocol from a queue of scripted replies
(strings, exceptions to raise, or functions of the request), records every request it
receives, and reports fake token usage (about four characters a token). With
`enforce_max_tokens`, a reply longer than the request's `max_tokens` is cut there and
reported with `finish_reason="length"`, as a real server does.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable

from bookmarks.models.transport import ChatRequest, Completion

Reply = str | BaseException | Callable[[ChatRequest], str]
CUT_FINISH = "length"


def fake_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedFakeModel:
    """A scripted stand-in for a language model (test double)."""

    def __init__(self, replies: list[Reply] | None = None, *, name: str = "scripted-fake",
                 default: Reply | None = None, delay: float = 0.0,
                 structured_mode: str = "json_schema", enforce_max_tokens: bool = False,
                 sync_mode: str = "auto"):
        self.name = name
        self.base_url = "fake://scripted"
        self.structured_mode = structured_mode
        self.sync_mode = sync_mode  # how memory reads a block for several bookmarks
        self.default = default
        self.delay = delay
        self.queue: deque[Reply] = deque(replies or [])
        self.history: list[ChatRequest] = []
        self.enforce_max_tokens = enforce_max_tokens
        # test control without sleeps: `entered` is set when a call arrives; while `gate` is
        # an unset Event every call waits for it; `in_flight` / `max_in_flight` count calls
        self.entered = threading.Event()
        self.gate: threading.Event | None = None
        self.in_flight = 0
        self.max_in_flight = 0

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
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.entered.set()
        try:
            if self.gate is not None:
                await asyncio.to_thread(self.gate.wait, 120)
            if self.delay:
                await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
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
        finish = "stop"
        if self.enforce_max_tokens and fake_tokens(text) > request.max_tokens:
            text, finish = text[: request.max_tokens * 4], CUT_FINISH
        if request.on_text is not None and text:  # "stream" it in two pieces
            request.on_text(text[: len(text) // 2])
            request.on_text(text)
        prompt = sum(fake_tokens(m["content"]) for m in request.messages)
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=fake_tokens(text),
                          model=self.name, finish_reason=finish)


class ScriptedMemory:
    """A reply function for `ScriptedFakeModel(default=ScriptedMemory(...))` (test double).

    It recognises each kind of request the engine makes by its prompt and answers with a
    valid, deterministic reply: `sections` (a list of dicts, or a function of the request
    returning one) for proposals, `decide` for reuse/new, fixed texts otherwise.
    """

    def __init__(self, sections=None, decide: str = "reuse", state: str = "append",
                 keep: list[int] | None = None, line: str = "I will see to it myself."):
        self.sections = sections or [{"title": "Harbour tide schedule", "type": "concept",
                                      "subject": "harbour"}]
        self.decide = decide
        self.state = state
        self.keep = [1] if keep is None else keep
        self.line = line
        self.counts: dict[str, int] = {}

    def kind(self, request: ChatRequest) -> str:
        text = request.messages[-1]["content"]
        for needle, kind in (("Update each memory section below", "joint"),
                             ("Propose at most", "propose"), ('Answer "reuse" or "new"', "match"),
                             ("Write the updated description", "concept"),
                             ("Decide how the state changes", "state"),
                             ("Nothing is recorded for this section yet", "first_state"),
                             ("Which candidates are good examples", "behavioral"),
                             ("Summarize what these actions show", "eta_extract"),
                             ("Write the updated profile", "eta_aggregate"),
                             ("Which parts of", "eta3_select"), ("next line.", "act"),
                             ("For each dimension answer yes", "judge"),
                             ("? Answer yes or no.", "judge_dimension"),
                             ("Who speaks the quoted words", "attribute"),
                             ("Answer with the letter", "mcq")):
            if needle in text:
                return kind
        return "unknown"

    def __call__(self, request: ChatRequest) -> str:
        import json

        kind = self.kind(request)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        n = self.counts[kind]
        if kind == "propose":
            sections = self.sections(request) if callable(self.sections) else self.sections
            return json.dumps({"sections": sections})
        if kind == "match":  # one decision, or one per pair of a batched question
            pairs = [k for k in _schema(request).get("properties", {}) if k != "decision"]
            return json.dumps({k: self.decide for k in pairs} if pairs
                              else {"decision": self.decide})
        if kind == "concept":
            return f"Description, update {n}."
        if kind == "state":
            return json.dumps({"decision": self.state, "text": f"State after update {n}."})
        if kind == "first_state":
            return json.dumps({"text": f"State after update {n}."})
        if kind == "behavioral":
            return json.dumps({"keep": self.keep})
        if kind == "joint":
            return json.dumps(self.joint(request))
        if kind == "eta_extract":
            return f"Observations {n}."
        if kind == "eta_aggregate":
            return f"Profile, update {n}."
        if kind == "eta3_select":
            return json.dumps({"sections": ["state", "behavior"]})
        if kind == "judge":
            return json.dumps({"emotion": "yes", "intent": "no" if n % 2 else "yes",
                               "causality": "yes", "position": "no", "content": "no"})
        if kind == "attribute":  # the first character named in the prompt's cast list
            import re

            cast = re.search(r"Characters: ([^,.]+)", request.messages[-1]["content"])
            return json.dumps({"speaker": cast.group(1) if cast else "unknown",
                               "confidence": 0.9})
        if kind == "judge_dimension":
            return json.dumps({"answer": "yes" if n % 5 in (1, 3) else "no"})
        if kind == "mcq":
            return "B"
        return f"{self.line} (take {n})"


    def joint(self, request: ChatRequest) -> dict:
        """One valid part per section of a joint update, read from the request's schema;
        each part counts as a reply of its kind (so update numbers run on per kind)."""

        schema = _schema(request)
        out = {}
        for key, part in schema["properties"].items():
            props = part.get("properties", {})
            kind = ("state" if "decision" in props else "first_state" if "text" in props
                    else "concept" if "description" in props else "behavioral")
            self.counts[kind] = self.counts.get(kind, 0) + 1
            n = self.counts[kind]
            if kind == "state":
                out[key] = {"decision": self.state, "text": f"State after update {n}."}
            elif kind == "first_state":
                out[key] = {"text": f"State after update {n}."}
            elif kind == "concept":
                out[key] = {"description": f"Description, update {n}."}
            else:
                allowed = props["keep"]["items"].get("enum")
                out[key] = {"keep": [allowed[k - 1] for k in self.keep if k <= len(allowed)]
                            if allowed else list(self.keep)}
        return out


def _schema(request: ChatRequest) -> dict:
    """The JSON schema a structured request asks for ({} if none)."""
    import json

    fmt = request.response_format or {}
    schema = fmt.get("schema") or fmt.get("json_schema", {}).get("schema")
    if schema is None:  # prompt mode: the schema is written after the request
        text = request.messages[-1]["content"]
        at = text.rfind("JSON schema:\n")
        schema = json.loads(text[at + 13:]) if at >= 0 else {}
    return schema


LENGTH_ECHO = ("Your previous reply was cut off at the length limit. Answer again, much shorter: "
               "a few words per text field.")


class WorstCaseMemory(ScriptedMemory):
    """The worst a model can do short of failing (test double): every proposal has pronoun
    titles, every match, synchronization, summary and selection is invalid JSON, and the
    actor echoes its prompt — each time another part of it (the whole request, a grounding
    header, the app's length note, the numbered "next line" template) — on every call
    (`actor="echo"`) or the first time it is asked, with a valid line on the re-ask
    (`actor="echo-then-line"`) or a line that runs on past any length limit
    (`actor="echo-then-long"`; with `ScriptedFakeModel(enforce_max_tokens=True)` it is cut
    there, as a real server cuts it). Judges answer validly, so evaluations can complete.

    `proposals`: the sections proposed (pronoun titles by default; see `UNREPAIRABLE`);
    `vary`: each proposal words its titles a little differently from the last ("his plan",
    "his plan for now", …), so existing bookmarks are near matches and match decisions,
    invalid too, are asked for."""

    PRONOUN_TITLES = [{"title": "his plan", "type": "state", "subject": "he"},
                      {"title": "What she wants from him", "type": "concept", "subject": "her"}]
    UNREPAIRABLE = [{"title": "it", "type": "state", "subject": "it"},
                    {"title": "Her feelings for him", "type": "concept", "subject": ""}]
    INVALID_JSON = '{"decision": "reuse", "keep": [1, 2, "text": oops'
    RAMBLE = "The tide turns at the gate before the lamps are lit, and nobody else knows the way. "

    VARIANTS = ("", " for now", " for tonight")

    def __init__(self, proposals: list[dict] | None = None, actor: str = "echo-then-line",
                 line: str = "I will see to it myself.", vary: bool = False):
        super().__init__(sections=proposals or self.PRONOUN_TITLES, line=line)
        self.actor = actor
        self.vary = vary
        self.echoes = 0
        self.asked: set[str] = set()

    def kind(self, request: ChatRequest) -> str:
        # a repair re-ask ends with the app's note: the request's kind is in its first ask
        first = next((m for m in request.messages if m["role"] == "user"), request.messages[-1])
        return super().kind(ChatRequest(messages=[first], temperature=0, max_tokens=1))

    def __call__(self, request: ChatRequest) -> str:
        kind = self.kind(request)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind == "propose":
            import json

            tail = self.VARIANTS[(self.counts[kind] - 1) % len(self.VARIANTS)] if self.vary else ""
            return json.dumps({"sections": [{**x, "title": x["title"] + tail}
                                            for x in self.sections]})
        if kind in ("match", "state", "first_state", "behavioral", "eta3_select", "concept", "joint",
                    "eta_extract", "eta_aggregate"):
            return self.INVALID_JSON
        if kind == "act":
            import re

            # the same question again (a re-ask, perhaps with a note added): a line
            asked = re.match(r".*next line\.", request.messages[-1]["content"], re.DOTALL)
            key = asked.group(0) if asked else request.messages[-1]["content"]
            if self.actor in ("echo-then-line", "echo-then-long") and key in self.asked:
                line = f"{self.line} (take {self.counts[kind]})"
                return line if self.actor == "echo-then-line" else f"{line} {self.RAMBLE * 40}"
            self.asked.add(key)
            return self.echo(request)
        self.counts[kind] -= 1  # the parent counts it again
        return super().__call__(request)

    def echo(self, request: ChatRequest) -> str:
        import re

        user = request.messages[-1]["content"]
        who = re.search(r"Write (.+?)'s next line\.", user)
        name = who.group(1) if who else "Jack"
        header = re.search(r"^## (.+?) \(", user, re.MULTILINE)
        options = [user, request.messages[0]["content"],
                   f"{header.group(1) if header else 'The King’s Last Words'} (now)",
                   LENGTH_ECHO, f"1. {name}'s next line: {self.line}"]
        self.echoes += 1
        return options[(self.echoes - 1) % len(options)]

"""Structured output without trusting the model: find the JSON object in a reply, validate
it with pydantic (one readable reason when it fails), and describe a schema to a server in
the form it accepts (OpenAI/vLLM `json_schema`, llama.cpp `json_object` + schema).
Only `json.loads` and pydantic ever touch model output; nothing is executed."""

from __future__ import annotations

import functools
import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> str:
    """The JSON object inside a reply (strips code fences and chatter around it)."""
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    start = text.find("{")
    if start < 0:
        return text.strip()
    depth, in_str, escape = 0, False, False
    for pos in range(start, len(text)):
        ch = text[pos]
        if in_str:
            escape = ch == "\\" and not escape
            if ch == '"' and not escape:
                in_str = False
            elif ch != "\\":
                escape = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start:pos + 1]
    return text[start:]


def parse_structured(text: str, schema: type[T]) -> T:
    """Validate a reply against `schema`; raises ValueError with a readable reason.

    Raw control characters inside JSON strings (small models emit raw newlines) are
    accepted. Only `json.loads` and pydantic touch the text: nothing is executed."""
    if len(text) > 200_000:
        raise ValueError("the reply is too long")
    raw = extract_json(text)
    try:
        return schema.model_validate_json(raw)
    except ValidationError as exc:
        error = exc
    try:
        obj = json.loads(raw, strict=False)
    except (json.JSONDecodeError, RecursionError):
        obj = None
    if obj is not None:
        try:
            return schema.model_validate(obj)
        except ValidationError as exc:
            error = exc
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in error.errors()[:5]
    )
    raise ValueError(problems)


_GRAMMAR_UNSAFE = ("maxLength", "minLength", "maxItems", "minItems")


def grammar_safe(node: Any) -> Any:
    """A schema without length/count bounds. llama.cpp turns `maxLength: 2000` into a
    grammar of nested repetitions that it refuses (and its server then crashes); pydantic
    still enforces every bound on the reply."""
    if isinstance(node, dict):
        return {k: grammar_safe(v) for k, v in node.items() if k not in _GRAMMAR_UNSAFE}
    if isinstance(node, list):
        return [grammar_safe(v) for v in node]
    return node


@functools.lru_cache(maxsize=64)
def _plain_schema_json(schema: type[BaseModel]) -> str:
    return json.dumps(_strip_titles(schema.model_json_schema()), separators=(",", ":"))


def plain_schema(schema: type[BaseModel]) -> dict:
    """The JSON schema without pydantic's auto-generated "title" labels, which small
    models copy into their answers (a proposal titled "Title")."""

    return json.loads(_plain_schema_json(schema))  # a fresh copy: callers may change it


def _strip_titles(node: Any, in_properties: bool = False) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v, k == "properties") for k, v in node.items()
                if in_properties or k != "title"}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def response_format_for(mode: str, schema: type[BaseModel]) -> dict | None:
    js = plain_schema(schema)
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": js, "strict": False}}
    if mode == "json_object":
        return {"type": "json_object", "schema": grammar_safe(js)}
    return None


def _schema_hint(schema: type[BaseModel]) -> str:
    return ("Reply with one JSON object only, no other text, matching this JSON schema:\n"
            + _plain_schema_json(schema))


def with_schema_hint(messages: list[dict[str, str]], schema: type[BaseModel]) -> list[dict[str, str]]:
    """Append the schema instruction to the last user message (keeps prefixes stable)."""
    msgs = [dict(m) for m in messages]
    for m in reversed(msgs):
        if m["role"] == "user":
            m["content"] = f"{m['content']}\n\n{_schema_hint(schema)}"
            break
    else:
        msgs.append({"role": "user", "content": _schema_hint(schema)})
    return msgs

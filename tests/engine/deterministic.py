"""A scripted memory whose every answer is a function of what it is about — the section,
its current text and the block of actions — whatever prompt asks it (a section's own
prompt, a joint one, a multi-block one) and in whatever order calls come (test double).

So two schedules that read the same blocks commit the same state versions however they
group blocks and bookmarks into calls: a state decides once per block."""

from __future__ import annotations

import hashlib
import json
import re

_BLOCK = re.compile(r"^Block \d+ of \d+ \(actions \d+–\d+\):$", re.MULTILINE)
_PART = re.compile(r'^s(\d+)\. (state|description|examples) of .*?"(.+?)" - (.*)$', re.MULTILINE)


def _h(*texts: str) -> int:
    return int(hashlib.sha256("|".join(texts).encode()).hexdigest(), 16)


def state_answer(title: str, current: str, block: str) -> dict:
    h = _h("state", title, current, block)
    return {"decision": ("unchanged", "refine", "append")[h % 3], "text": f"State {h % 997}."}


def first_answer(title: str, block: str) -> dict:
    return {"text": f"First state {_h('first', title, block) % 997}."}


def concept_answer(title: str, current: str, lines: str) -> str:
    return f"Description {_h('concept', title, current, lines) % 997}."


def keep_answer(title: str, lines: str) -> dict:
    return {"keep": [1] if _h("keep", title, lines) % 2 else []}


def blocks_of(text: str) -> list[str]:
    """The blocks of actions a prompt shows (one, or several numbered ones)."""
    body = text[text.index("New actions:\n") + 13:]
    if _BLOCK.match(body):
        body = body[:body.index("\n\n")]
        return [b.strip("\n") for b in _BLOCK.split(body) if b.strip()]
    return [body[:body.index("\n\n")]]


def _current(rest: str) -> str | None:
    """A state part's current text (None: nothing recorded yet)."""
    if rest.startswith("nothing recorded yet"):
        return None
    return rest.split("): ", 1)[1]


def joint(text: str, schema: dict) -> dict:
    blocks = blocks_of(text)
    out = {}
    for n, kind, title, rest in _PART.findall(text):
        if kind == "state":
            current = _current(rest)
            keys = [f"s{n}_b{j}" for j in range(1, len(blocks) + 1)] \
                if f"s{n}_b1" in schema["properties"] else [f"s{n}"]
            for key, block in zip(keys, blocks, strict=True):
                if current is None:
                    out[key] = first_answer(title, block)
                    current = out[key]["text"]
                else:
                    out[key] = state_answer(title, current, block)
                    if out[key]["decision"] != "unchanged":
                        current = out[key]["text"]
        elif kind == "description":
            out[f"s{n}"] = {"description": concept_answer(title, rest.split(": ", 1)[1],
                                                          "\n".join(blocks))}
        else:
            out[f"s{n}"] = keep_answer(title, "\n".join(blocks))
    return out


def reply(request) -> str:
    """Answer a memory request (sync prompts only) as a function of its content."""
    text = request.messages[-1]["content"]
    if "Update each memory section below" in text:
        fmt = request.response_format or {}
        return json.dumps(joint(text, fmt["json_schema"]["schema"]))
    title = re.search(r'Section: "(.+?)" - ', text).group(1)
    if "Decide how the state changes" in text:
        current = re.search(r"^Current state \(.*?\): (.*)$", text, re.MULTILINE).group(1)
        return json.dumps(state_answer(title, current, blocks_of(text)[0]))
    if "Nothing is recorded for this section yet" in text:
        return json.dumps(first_answer(title, blocks_of(text)[0]))
    if "Write the updated description" in text:
        current = re.search(r"^Current description \(as of action \d+\): (.*)$", text,
                            re.MULTILINE).group(1)
        return concept_answer(title, current, blocks_of(text)[0])
    if "Which candidates are good examples" in text:
        return json.dumps(keep_answer(title, blocks_of(text)[0]))
    raise AssertionError(text[:200])

"""Prompt texts for memory work. Stable text first (system, story, section), the
volatile part (new passages, the scene) last, so servers with prefix caching reuse KV."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Sequence

from bookmarks.engine.actor import PLACEHOLDER, PLACEHOLDER_NUMBER, register_app_texts
from bookmarks.engine.lineage import IndexedLine
from bookmarks.stories.story import NARRATION

PRONOUNS = frozenset(
    "he she him his her hers they them their theirs it its i me my mine we us our ours you "
    "your yours himself herself themselves itself".split()
)

MEMORY_SYSTEM = (
    "You maintain the memory of a role-playing agent for a story. Be factual and brief; use "
    "only what the given passages say; never invent events."
)


MAX_ACTION_CHARS = 1200  # one action as any prompt shows it; longer ones are cut, marked


def clip(text: str, limit: int = MAX_ACTION_CHARS) -> str:
    """`text`, or its first `limit` characters with a visible mark of what was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()} […{len(text) - limit} more characters cut]"


def line_text(ln: IndexedLine, limit: int = MAX_ACTION_CHARS) -> str:
    text = clip(ln.text, limit)
    return f"[{ln.index}] ({text})" if ln.character == NARRATION else f"[{ln.index}] {ln.character}: {text}"


def lines_block(lines: Sequence[IndexedLine]) -> str:
    return "\n".join(line_text(ln) for ln in lines)


def pack(lines: Sequence[IndexedLine], chars: int, *, newest: bool = True) -> list[IndexedLine]:
    """The longest run of `lines` whose block fits in `chars` characters: the newest lines
    (for a scene) or, with `newest=False`, the oldest (for a block read in story order).
    Always at least one line (a single line is clipped by `lines_block`)."""
    order = reversed(lines) if newest else iter(lines)
    kept: list[IndexedLine] = []
    used = 0
    for ln in order:
        used += len(line_text(ln)) + 1
        if kept and used > chars:
            break
        kept.append(ln)
    return kept[::-1] if newest else kept


TYPE_HELP = {
    "concept": "- concept: what a person, object or place is (subject: that entity);\n",
    "state": "- state: how something stands now and how it changed - knowledge, location, "
             "relationship, goal (subject: whose or what state);\n",
    "behavioral": "- behavioral: how a character typically acts or speaks (subject: that "
                  "character).\n",
}


def propose(*, title: str, cast: Sequence[str], character: str, scene: Sequence[IndexedLine],
            recent: Sequence[str], own: Sequence[str], budget: int,
            types: Sequence[str] = ("concept", "state", "behavioral")) -> list[dict[str, str]]:
    """`recent`: the sections used most recently; `own`: other sections about the character
    who acts (after its name, so the prompts of several characters at one point share all
    before it)."""
    recent_text = "\n".join(f"- {r}" for r in recent) or "- (none yet)"
    own_text = "".join(f"- {r}\n" for r in own)
    own_text = (f"Other sections about {character} (ask for the same title again to go on "
                f"with one):\n{own_text}") if own else ""
    kind = "state" if "state" in types else types[0]
    example = {"state": f"{character}'s current goal", "concept": f"Who {character} is",
               "behavioral": f"How {character} speaks"}[kind]
    # stable first: every character proposing at the same point shares all but the end
    user = (
        f'Story: "{title}". Cast: {", ".join(cast)}.\n'
        "Memory sections have a type:\n"
        + "".join(TYPE_HELP[t] for t in types) +
        f"\nThe scene so far:\n{lines_block(scene)}\n\n"
        f"Sections used recently (ask for the same title again when it fits):\n{recent_text}\n\n"
        f"{character} acts next. {own_text}Propose at most {budget} memory sections that "
        f"would help predict {character}'s next action. Titles are short noun phrases with full names and "
        f"no pronouns. Example: {{\"sections\": [{{\"title\": \"{example}\", "
        f"\"type\": \"{kind}\", \"subject\": \"{character}\"}}]}}"
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def match(*, wanted: str, kind: str, subject: str, existing: str) -> list[dict[str, str]]:
    user = (  # the question first, the titles last: a stable prefix
        "Does an existing bookmark hold the same information as a memory section that is "
        'needed, so it can be reused? Answer "reuse" or "new".\n'
        f'Needed: "{wanted}" ({kind}, about {subject}).\n'
        f'Existing bookmark: "{existing}".'
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def match_many(*, pairs: Sequence[tuple[str, str, str, str]]) -> list[dict[str, str]]:
    """Several (wanted, type, subject, existing) decisions in one question, each on its own."""
    listed = "\n".join(f'd{n}. Needed: "{wanted}" ({kind}, about {subject}). Existing bookmark: '
                       f'"{existing}".' for n, (wanted, kind, subject, existing)
                       in enumerate(pairs, start=1))
    keys = ", ".join(f"d{n}" for n in range(1, len(pairs) + 1))
    user = (
        "For each pair below: does the existing bookmark hold the same information as the "
        'memory section that is needed, so it can be reused? Answer "reuse" or "new" for each '
        f"pair on its own.\n{listed}\n\nReply with one JSON object with one key per pair "
        f"({keys})."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def concept(*, story: str, title: str, subject: str, current: str, p: int, pinned: bool,
            windows: Sequence[Sequence[IndexedLine]]) -> list[dict[str, str]]:
    keep = ("The current description was written by the user: keep its wording and only add "
            "new facts. " if pinned else "")
    passages = "\n---\n".join(lines_block(w) for w in windows)
    user = (
        f'Story: "{story}". Section: "{title}" - a description of {subject}.\n'
        f"Current description (as of action {p}): {current or '(none yet)'}\n\n"
        f"New passages that mention {subject}:\n{passages}\n\n"
        f"{keep}Write the updated description of {subject} in at most 120 words. Keep what is "
        "still true, add what the passages reveal. Reply with the description only."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def state(*, story: str, title: str, subject: str, node: str, node_range: str,
          block: Sequence[IndexedLine]) -> list[dict[str, str]]:
    # The block of actions comes first: several state bookmarks reading the same block
    # then share the longest part of their prompts, which a server that keeps the last
    # prompt's cache (llama.cpp) does not process again (benchmarks/prefix_order.py).
    user = (
        f'Story: "{story}". New actions:\n{lines_block(block)}\n\n'
        f'Section: "{title}" - the evolving state of {subject}.\n'
        f"Current state ({node_range}): {node or '(nothing recorded yet)'}\n\n"
        "Decide how the state changes after these actions:\n"
        '- "unchanged": nothing relevant to this section happened;\n'
        '- "refine": still the same state, but the new actions add detail (give the full '
        "rewritten state);\n"
        '- "append": the state changed (give the new state, mentioning what changed).\n'
        "Reply with the decision and the state text (at most 60 words; empty if unchanged)."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def first_state(*, story: str, title: str, subject: str,
                block: Sequence[IndexedLine]) -> list[dict[str, str]]:
    user = (
        f'Story: "{story}". New actions:\n{lines_block(block)}\n\n'
        f'Section: "{title}" - the evolving state of {subject}.\n'
        "Nothing is recorded for this section yet.\n\n"
        f"Describe the state of {subject} for this section as these actions leave it, in at "
        "most 60 words. If they say nothing about it, say briefly what is known so far (for "
        f"example that {subject} has not appeared yet)."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def behavioral(*, story: str, title: str, subject: str,
               candidates: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    numbered = "\n".join(f"{n}. Before: {before}\n   {subject}: {action}"
                         for n, (before, action) in enumerate(candidates, start=1))
    user = (
        f'Story: "{story}". Section: "{title}" - examples of how {subject} behaves.\n\n'
        f"Candidates:\n{numbered}\n\n"
        "Which candidates are good examples for this section? Reply with their numbers in "
        '"keep" (an empty list if none fits).'
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def eta_extract(*, story: str, character: str, focus: str, block: Sequence[IndexedLine],
                words: int) -> list[dict[str, str]]:
    user = (
        f'Story: "{story}". New observations:\n{lines_block(block)}\n\n'
        f"Summarize what these actions show about {character}'s {focus} in at most {words} "
        "words. Reply with the summary only."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def eta_aggregate(*, story: str, character: str, focus: str, profile: str, summary: str,
                  words: int) -> list[dict[str, str]]:
    user = (
        f'Story: "{story}". Current profile of {character} ({focus}):\n'
        f"{profile or '(empty)'}\n\nNew observations:\n{summary}\n\n"
        f"Write the updated profile in at most {words} words, keeping what is still true. "
        "Reply with the profile only."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def eta3_select(*, character: str, scene: Sequence[IndexedLine]) -> list[dict[str, str]]:
    user = (
        f"The scene so far:\n{lines_block(scene)}\n\n{character} acts next. Which parts of "
        f"{character}'s profile are needed to predict the next action: experience (what has "
        "happened to them), state (their current situation, knowledge and goals), behavior "
        "(how they act and speak)? Choose one or more."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def builders() -> dict[str, object]:
    """Every prompt builder of this module (the functions that return chat messages)."""
    module = sys.modules[__name__]
    return {name: fn for name, fn in vars(module).items()
            if inspect.isfunction(fn) and fn.__module__ == __name__
            and fn.__annotations__.get("return") == "list[dict[str, str]]"}


def templates(value: str = PLACEHOLDER, number: int = PLACEHOLDER_NUMBER,
              lines: Sequence[IndexedLine] | None = None) -> list[tuple[str, list[dict[str, str]]]]:
    """Every prompt of this module as (builder, messages), rendered with `value` for each
    text argument, `number` for each number and `lines` for each block of actions
    (arguments with defaults keep them); each builder with its flags off and on."""
    lines = list(lines or [IndexedLine(value, value, number), IndexedLine(NARRATION, value, number)])
    samples = {"str": value, "int": number, "Sequence[str]": [value],
               "Sequence[IndexedLine]": lines, "Sequence[Sequence[IndexedLine]]": [lines],
               "Sequence[tuple[str, str]]": [(value, value)],
               "Sequence[tuple[str, str, str, str]]": [(value, value, value, value)] * 2}
    out = []
    for name, fn in builders().items():
        for flag in (False, True):
            kw = {}
            for param in inspect.signature(fn).parameters.values():
                if param.annotation == "bool":
                    kw[param.name] = flag
                elif param.default is inspect.Parameter.empty:
                    if param.annotation not in samples:
                        raise TypeError(f"prompts.{name}: no sample for {param.annotation}")
                    kw[param.name] = samples[param.annotation]
            out.append((name, fn(**kw)))
    return out


register_app_texts(lambda: [m["content"] for _, msgs in templates() for m in msgs])

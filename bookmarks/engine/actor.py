"""The role-playing agent: prompt, reply hygiene, bounded re-asks.

Small models often answer as the wrong speaker, echo a `NAME:` label, narrate for the
whole cast or run on for several turns. `clean_reply` keeps one utterance/action of the
requested character or rejects the reply with a reason; `act` re-asks a bounded number
of times and fails with a clear error when no usable line comes back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bookmarks.errors import NoUsableLineError
from bookmarks.models.llm import LLM
from bookmarks.stories.story import NARRATION

MAX_CHARS = 500
_SPECIAL = re.compile(r"<\|[^|>]{1,40}\|>|</?s>|\[/?INST\]|<end_of_turn>|<start_of_turn>\w*")
_NAME = r"[A-Za-z][\w'\-]*\.?(?:\s[A-Za-z][\w'\-]*){0,3}"
_LABEL = re.compile(rf"^[*_\s]*({_NAME})[*_\s]*(?:\([^)]{{0,60}}\))?[*_\s]*[:：][*_\s]*")
_LINE_LABEL = re.compile(rf"^\s*[*_]*(?=[A-Z]){_NAME}[*_]*\s*(?:\([^)]{{0,60}}\))?\s*[:：]")


@dataclass(frozen=True)
class Line:
    """One line of a scene as the actor sees it."""

    character: str
    text: str


@dataclass
class ActResult:
    text: str
    tries: int
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (raw reply, reason)


def _names(character: str, aliases: Sequence[str]) -> set[str]:
    return {n.casefold() for n in [character, *aliases] if n}


def clean_reply(raw: str, character: str, *, aliases: Sequence[str] = (),
                others: Sequence[str] = (), scene: Sequence[Line] = ()) -> tuple[str | None, str]:
    """One usable line of `character` from a raw reply, or (None, reason)."""
    mine = _names(character, aliases)
    theirs = {o.casefold() for o in others} - mine
    text = _SPECIAL.sub("", raw).strip()
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    if not blocks:
        return None, "empty reply"
    lines = [re.sub(r"^#{1,6}\s*", "", ln.strip()) for ln in blocks[0].splitlines() if ln.strip()]
    lines = [ln for ln in lines if ln] or [""]
    first = lines[0]
    label = _LABEL.match(first)
    if label:
        who = label.group(1).strip().casefold()
        if who in mine:
            first = first[label.end():]
        elif who in theirs or who == NARRATION or len(who.split()) <= 3 and who[:1].isalpha() \
                and label.group(1)[:1].isupper():
            return None, f"spoke as {label.group(1).strip()!r}"
    kept = [first]
    for ln in lines[1:]:
        if _LINE_LABEL.match(ln):
            break  # another speaker's turn begins: drop it and what follows
        kept.append(ln)
    text = " ".join(kept)
    text = _cut_inline_labels(text, theirs)
    text = _cut_scaffolding(text)
    text = _plain(text)
    text = text.strip().strip('"“”').strip()
    if len(text) > MAX_CHARS:
        cut = max(text.rfind(p, 0, MAX_CHARS) for p in (". ", "! ", "? ", "… "))
        text = text[: cut + 1] if cut > 40 else text[:MAX_CHARS].rsplit(" ", 1)[0] + "…"
    if sum(ch.isalpha() for ch in text) < 2:
        return None, "no words left after cleaning"
    folded = text.casefold()
    if any(folded == ln.text.strip().casefold() for ln in scene):
        return None, "repeated a line of the scene"
    return text, "ok"


_SCAFFOLD = re.compile(r"should keep in mind|\(story memory\)|the scene so far|setting:|"
                       r"next line\.|write [\w .'-]{1,40}'s next|"
                       r"\((?:#\w+, )?(?:concept|state|behavioral|profile), as of action|\[actions \d",
                       re.IGNORECASE)


def _plain(text: str) -> str:
    """Markdown emphasis out of a line: bold markers dropped, an *action* in asterisks
    written as a bracketed direction, stray asterisks removed."""
    text = re.sub(r"\*\*|__", "", text)
    text = re.sub(r"(?<![\w*])\*([^*\n]{1,120})\*(?![\w*])", r"[\1]", text)
    return re.sub(r" {2,}", " ", text.replace("*", ""))


def _cut_scaffolding(text: str) -> str:
    """Drop an echo of the prompt's own headings and what follows it."""
    m = _SCAFFOLD.search(text)
    if m is None:
        return text
    head = text[: m.start()]
    cut = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    return head[: cut + 1] if cut >= 0 else ""


def _cut_inline_labels(text: str, others: set[str]) -> str:
    for name in others:
        m = re.search(rf"\s[*_]*{re.escape(name)}[*_]*\s*[:：]", text, re.IGNORECASE)
        if m:
            text = text[: m.start()]
    return text


def is_clean(raw: str, character: str, **kw) -> bool:
    """True when a raw reply is usable exactly as given (before any hygiene)."""
    text, reason = clean_reply(raw, character, **kw)
    return text is not None and text == raw.strip()


def format_scene(scene: Sequence[Line]) -> str:
    return "\n".join(
        f"({ln.text})" if ln.character == NARRATION else f"{ln.character}: {ln.text}"
        for ln in scene
    )


def actor_messages(*, story_title: str, character: str, scene: Sequence[Line],
                   grounding: str = "", setting: str = "") -> list[dict[str, str]]:
    """Stable prefix first (system, memory), the volatile scene last."""
    system = (
        f'You are an actor playing {character} in an interactive scene based on the story '
        f'"{story_title}". Stay faithful to {character}\'s personality, knowledge and way of '
        f"speaking. Reply with {character}'s next action only: one line of speech, or one "
        "short action, at most three sentences. Do not write a name label, other characters' "
        "lines, or narration about the other characters."
    )
    parts = []
    if grounding:
        parts.append(f"What {character} should keep in mind (story memory):\n{grounding}")
    if setting:
        parts.append(f"Setting: {setting}")
    parts.append("The scene so far:\n" + (format_scene(scene) or "(the scene begins)"))
    parts.append(f"Write {character}'s next line.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


async def act(llm: LLM, *, story_title: str, character: str, scene: Sequence[Line],
              grounding: str = "", setting: str = "", aliases: Sequence[str] = (),
              others: Sequence[str] = (), max_tries: int = 4, scene_id: int | None = None,
              temperature: float | None = None,
              on_text: Callable[[str], None] | None = None) -> ActResult:
    """The character's next line; `on_text` sees each try's raw reply as it streams."""
    messages = actor_messages(story_title=story_title, character=character, scene=scene,
                              grounding=grounding, setting=setting)
    rejected: list[tuple[str, str]] = []
    base = llm.config.temperature if temperature is None else temperature
    for attempt in range(max_tries):
        reply = await llm.text(messages, purpose="act", scene_id=scene_id, cache=False,
                               temperature=base + 0.15 * attempt, on_text=on_text)
        text, reason = clean_reply(reply.text, character, aliases=aliases, others=others,
                                   scene=scene)
        if text is not None:
            return ActResult(text=text, tries=attempt + 1, rejected=rejected)
        rejected.append((reply.text, reason))
    reasons = "; ".join(sorted({r for _, r in rejected}))
    raise NoUsableLineError(f"The actor model gave no usable line for {character} in {max_tries} "
                     f"tries ({reasons}). Try again, or configure a more capable model.")

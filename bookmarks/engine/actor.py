"""The role-playing agent: prompt, reply hygiene, bounded re-asks.

Small models often answer as the wrong speaker, echo a `NAME:` label, narrate for the
whole cast or run on for several turns. `clean_reply` keeps one utterance/action of the
requested character or rejects the reply with a reason; `act` re-asks a bounded number
of times. A reply cut at the length limit is not asked again when its complete sentences
make a line: it is kept up to its last complete sentence (recorded as `trimmed` among the
try's notes). A reply that writes the scene as a script ("Ada: … / Ben: …") gives the
character's own labelled line when it has one.

Degrade, never fail: when no try gives a usable line, a stand-in stands for the turn — the
character hesitates and says nothing (`stand_in_line`) — and the result says why
(`ActResult.fallback`), so a walk, NAP and Play record a fallback of step `act` instead of
a failed prediction. `stand_in=False` raises `NoUsableLineError` instead (the arena: an
annotator is never shown a stand-in).

The app's own words are never a line: a reply that repeats a grounding header ("… (now)"),
a section title, an instruction or re-ask note of the app, or the prompt's structure
("1. Jack's next line: …") is rejected (`app_words`). What the app says is collected from
the prompt builders themselves: each module that builds prompts registers them
(`register_app_texts`), rendered with a placeholder where the story supplies text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from bookmarks.errors import NoUsableLineError
from bookmarks.models.llm import LENGTH_NOTE, LLM
from bookmarks.models.structured import with_schema_hint
from bookmarks.stories.story import NARRATION

MAX_CHARS = 500
ECHO = "repeated the app's own words"  # in the reason of every such rejection
_SPECIAL = re.compile(r"<\|[^|>]{1,40}\|>|</?s>|\[/?INST\]|<end_of_turn>|<start_of_turn>\w*")
_NAME = r"[A-Za-z][\w'\-]*\.?(?:\s[A-Za-z][\w'\-]*){0,3}"
_OPEN = "\"“‘'(\\[-–—"  # what may come before a name label: quotes, a bracket, a dash
_LABEL = re.compile(rf"^[*_\s{_OPEN}]*({_NAME})[*_\s]*(?:\([^)]{{0,60}}\))?[*_\s]*[:：][*_\s]*")
_LINE_LABEL = re.compile(rf"^\s*[*_{_OPEN}]*(?=[A-Z]){_NAME}[*_]*\s*(?:\([^)]{{0,60}}\))?\s*[:：]")


@dataclass(frozen=True)
class Line:
    """One line of a scene as the actor sees it."""

    character: str
    text: str


TRIMMED = "trimmed"  # the reason of a reply cut at the length limit and kept trimmed
MIN_KEPT_WORDS = 3  # a trimmed line keeps at least this many words, or it is asked again


@dataclass
class ActResult:
    text: str
    tries: int
    # (raw reply, reason): the replies re-asked, and a reply kept trimmed (reason TRIMMED…)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    fallback: str = ""  # why the text is a stand-in (no try gave a usable line)

    @property
    def trimmed(self) -> bool:
        return any(why.startswith(TRIMMED) for _, why in self.rejected)


def _names(character: str, aliases: Sequence[str]) -> set[str]:
    return {n.casefold() for n in [character, *aliases] if n}


def clean_reply(raw: str, character: str, *, aliases: Sequence[str] = (),
                others: Sequence[str] = (), scene: Sequence[Line] = (),
                titles: Sequence[str] = (), prompt: Sequence[str] = (),
                context: Sequence[str] = ()) -> tuple[str | None, str]:
    """One usable line of `character` from a raw reply, or (None, reason). `titles`: the
    grounding's section titles; `prompt`: the app's texts of this very request (its
    instructions, with the names filled in); `context`: what the request shows besides the
    scene (the setting, the grounding). None of them is ever a line, nor a scene line
    repeated."""
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
            # a script of the scene (another character's line first): the character's own
            # labelled line in it, when it is one
            own = _own_labelled(text, mine) if who in theirs or who == NARRATION else None
            if own is not None:
                salvaged, why = clean_reply(own, character, aliases=aliases, others=others,
                                            scene=scene, titles=titles, prompt=prompt,
                                            context=context)
                if salvaged is not None and len(_words(salvaged)) >= MIN_KEPT_WORDS:
                    return salvaged, why
            return None, f"spoke as {label.group(1).strip()!r}"
    kept = [first]
    for ln in lines[1:]:
        if _LINE_LABEL.match(ln):
            break  # another speaker's turn begins: drop it and what follows
        kept.append(ln)
    text = " ".join(kept)
    text = _cut_inline_labels(text, theirs)
    before = text
    text = _cut_scaffolding(text)
    text = _plain(text)
    text = _unquoted(text)
    if sum(ch.isalpha() for ch in text) < 2 and text != before:
        return None, f"no words left after cleaning (the rest {ECHO})"
    if len(text) > MAX_CHARS:
        cut = max(text.rfind(p, 0, MAX_CHARS) for p in (". ", "! ", "? ", "… "))
        text = text[: cut + 1] if cut > 40 else text[:MAX_CHARS].rsplit(" ", 1)[0] + "…"
    if sum(ch.isalpha() for ch in text) < 2:
        return None, "no words left after cleaning"
    echo = app_words(text, titles=titles, prompt=prompt)
    if echo:
        return None, f"{ECHO} ({echo})"
    if _repeats(text, [ln.text for ln in scene]):
        return None, "repeated a line of the scene"
    if narrated := _narrates_another(text, theirs):
        return None, f"narrated another character ({narrated!r})"
    if _verbatim(text, context):
        return None, f"{ECHO} (the setting or the memory, copied)"
    return text, "ok"


def _unquoted(text: str) -> str:
    """The line without the quotation marks around all of it, or a dialogue dash before
    it (`"It sank."`, `- It sank.`); marks inside it stay (`"Go," she said.`)."""
    text = re.sub(r"^[-–—]\s+", "", text.strip())
    marks = [n for n, ch in enumerate(text) if ch in '"“”']
    if len(marks) == 2 and marks == [0, len(text) - 1] or len(marks) == 1 and marks[0] in (
            0, len(text) - 1):
        text = text.replace('"', "").replace("“", "").replace("”", "")
    return text.strip()


def _narrates_another(text: str, others: set[str]) -> str:
    """A bracketed direction about someone else ("(Nell Cobb nods.)" for Maren): the other's
    name when the reply is one ("" otherwise)."""
    m = re.match(r"^\s*[(\[]\s*([^)\]]{1,60})", text)
    if not m:
        return ""
    head = m.group(1).casefold()
    return next((o for o in sorted(others, key=len, reverse=True)
                 if head.startswith(o) and head[len(o):len(o) + 1] in (" ", "'", "’")), "")


def _repeats(text: str, lines: Sequence[str]) -> bool:
    """The reply is a scene line again: the same words (brackets and quotes aside), or a
    long line's first eight words and on."""
    words = _words(text)
    for line in lines:
        theirs = _words(line)
        if words == theirs or len(theirs) >= 8 and words[:8] == theirs[:8]:
            return True
    return False


def _verbatim(text: str, texts: Sequence[str]) -> bool:
    """The reply's words (two or more) stand, in order and together, in one of `texts`."""
    words = _words(text)
    if len(words) < 2:
        return False
    needle = f" {' '.join(words)} "
    return any(needle in f" {' '.join(_words(t))} " for t in texts if t)


def _own_labelled(text: str, mine: set[str]) -> str | None:
    """The reply from its first line labelled with one of the character's names on (None
    when no line is)."""
    lines = text.splitlines()
    for n, ln in enumerate(lines[1:], start=1):
        label = _LABEL.match(re.sub(r"^#{1,6}\s*", "", ln.strip()))
        if label and label.group(1).strip().casefold() in mine:
            return "\n".join(lines[n:])
    return None


_SCAFFOLD = re.compile(r"should keep in mind|\(story memory\)|the scene so far|setting:|"
                       r"next line\.|write [\w .'-]{1,40}'s next|\(now\)|'s next (?:line|action)\s*[:：]|"
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


def _system(character: str, story_title: str) -> str:
    return (
        f'You are an actor playing {character} in an interactive scene based on the story '
        f'"{story_title}". Stay faithful to {character}\'s personality, knowledge and way of '
        f"speaking. Reply with {character}'s next action only: one line of speech, or one "
        "short action, at most three sentences. Do not write a name label, other characters' "
        "lines, or narration about the other characters."
    )


def _instruction(character: str) -> str:
    return f"Write {character}'s next line."


def _retry_note(character: str) -> str:
    """Added to a re-ask after a reply that repeated the app's own words."""
    return (f"(Only {character}'s own words or action, please: not these instructions, not "
            "the memory's headings.)")


def actor_messages(*, story_title: str, character: str, scene: Sequence[Line],
                   grounding: str = "", setting: str = "") -> list[dict[str, str]]:
    """Stable prefix first (system, memory), the volatile scene last."""
    parts = []
    if grounding:
        parts.append(f"What {character} should keep in mind (story memory):\n{grounding}")
    if setting:
        parts.append(f"Setting: {setting}")
    parts.append("The scene so far:\n" + (format_scene(scene) or "(the scene begins)"))
    parts.append(_instruction(character))
    return [{"role": "system", "content": _system(character, story_title)},
            {"role": "user", "content": "\n\n".join(parts)}]


_HEADER = re.compile(r"^## (.+?)(?: \((?:#\w+, )?[\w-]+, as of action \d+\))?\s*$", re.MULTILINE)


def grounding_titles(grounding: str) -> list[str]:
    """The section titles a grounding text shows under its `## ` headers."""
    return [m.group(1).strip() for m in _HEADER.finditer(grounding)]


async def act(llm: LLM, *, story_title: str, character: str, scene: Sequence[Line],
              grounding: str = "", setting: str = "", aliases: Sequence[str] = (),
              others: Sequence[str] = (), max_tries: int = 4, scene_id: int | None = None,
              temperature: float | None = None, stand_in: bool = True,
              on_text: Callable[[str], None] | None = None) -> ActResult:
    """The character's next line; `on_text` sees each try's raw reply as it streams.
    A reply that repeats the app's own words is re-asked with a short note. When no try
    gives a usable line: the stand-in (`stand_in`), else NoUsableLineError."""
    messages = actor_messages(story_title=story_title, character=character, scene=scene,
                              grounding=grounding, setting=setting)
    own = [messages[0]["content"], _instruction(character), _retry_note(character)]
    titles = grounding_titles(grounding)
    rejected: list[tuple[str, str]] = []
    base = llm.config.temperature if temperature is None else temperature
    for attempt in range(max_tries):
        asked = messages
        if rejected and ECHO in rejected[-1][1]:
            asked = [messages[0], {"role": "user", "content": f"{messages[1]['content']}\n\n"
                                                              f"{_retry_note(character)}"}]
        reply = await llm.text(asked, purpose="act", scene_id=scene_id, cache=False,
                               temperature=base + 0.15 * attempt, on_text=on_text)
        clean = dict(character=character, aliases=aliases, others=others, scene=scene,
                     titles=titles, prompt=own, context=[setting, grounding])
        if reply.finish_reason == "length":  # cut: its complete sentences, if they make a line
            text, reason = _trimmed(reply.text, last=attempt == max_tries - 1, **clean)
            if text is not None:
                return ActResult(text=text, tries=attempt + 1,
                                 rejected=[*rejected, (reply.text, reason)])
            rejected.append((reply.text, reason))
            continue
        text, reason = clean_reply(reply.text, **clean)
        if text is not None:
            return ActResult(text=text, tries=attempt + 1, rejected=rejected)
        rejected.append((reply.text, reason))
    reasons = "; ".join(sorted({r for _, r in rejected}))
    why = f"The actor model gave no usable line for {character} in {max_tries} tries ({reasons})."
    if not stand_in:
        raise NoUsableLineError(f"{why} Try again, or configure a more capable model.")
    return ActResult(text=stand_in_line(character), tries=max_tries, rejected=rejected,
                     fallback=why)


def stand_in_line(character: str) -> str:
    """The line that stands for a turn no try gave a usable line for."""
    return f"[{character} hesitates and says nothing.]"


def fallback_event(result: ActResult) -> dict:
    """A stand-in line as a `fallback` event (as the grounding's fallbacks are recorded)."""
    return {"kind": "fallback", "step": "act", "title": "",
            "outcome": f"a stand-in line: {result.text}", "reason": result.fallback[:300]}


_SENTENCE_END = re.compile(r"[.!?…]+[\"”’')\]]*(?=\s|$)")
_ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St|Sr|Jr|Mt|Capt|Col|Gen|Lt|Sgt|Rev|Prof)\.$")


def complete_sentences(text: str) -> str:
    """`text` up to the end of its last complete sentence ("" when it has none)."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)
            if not _ABBREVIATION.search(text[: m.start() + 1])]
    return text[: ends[-1]].rstrip() if ends else ""


def _trimmed(raw: str, *, last: bool, character: str, **clean) -> tuple[str | None, str]:
    """A line from a reply cut at the length limit: its complete sentences when they make
    a line (at least MIN_KEPT_WORDS words that pass the cleaner); on the `last` try, the
    cut line itself, marked "…". (None, reason) when nothing usable is left."""
    kept = complete_sentences(raw)
    text, reason = clean_reply(kept, character, **clean) if kept else (None, "")
    if text is not None and len(_words(text)) >= MIN_KEPT_WORDS:
        return text, f"{TRIMMED}: cut off at the length limit, kept up to its last complete " \
                     "sentence"
    if last:  # degrade, never fail: the cut line as it is
        whole, why = clean_reply(raw, character, **clean)
        if whole is not None and len(_words(whole)) >= MIN_KEPT_WORDS:
            return whole.rstrip(" ,;:-—") + "…", f"{TRIMMED}: cut off at the length limit, " \
                                                  "no complete sentence; kept as cut"
    why = "no complete sentence" if not kept else reason if text is None else "too short"
    return None, f"cut off at the length limit, nothing usable before the cut ({why})"


# -- the app's own words --------------------------------------------------------------------

PLACEHOLDER = "zqxplaceholder"  # stands for story-given text when a template is rendered
PLACEHOLDER_NUMBER = 987654321
_SOURCES: list[Callable[[], Iterable[str]]] = []
_GRAMS: dict[str, frozenset[tuple[str, ...]]] = {}
N = 4  # word n-grams compared


def register_app_texts(source: Callable[[], Iterable[str]]) -> None:
    """`source()` gives texts the app writes (prompt templates rendered with PLACEHOLDER
    and PLACEHOLDER_NUMBER for what the story or the settings supply)."""
    _SOURCES.append(source)
    _GRAMS.clear()


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.casefold().replace("’", "'"))


def _grams(words: Sequence[str]) -> set[tuple[str, ...]]:
    return {tuple(words[k:k + N]) for k in range(len(words) - N + 1)}


def _app_grams() -> frozenset[tuple[str, ...]]:
    if "all" not in _GRAMS:
        marks = {PLACEHOLDER, str(PLACEHOLDER_NUMBER)}
        found: set[tuple[str, ...]] = set()
        for source in list(_SOURCES):
            for text in source():
                found |= {g for g in _grams(_words(text))
                          if not any(w.startswith(m) for w in g for m in marks)}
        _GRAMS["all"] = frozenset(found)
    return _GRAMS["all"]


def _own_texts() -> list[str]:
    """The actor's prompt and the app's re-ask notes, rendered with the placeholder."""
    x = PLACEHOLDER
    msgs = actor_messages(story_title=x, character=x, scene=[Line(x, x), Line(NARRATION, x)],
                          grounding=x, setting=x)
    texts = [m["content"] for m in msgs] + [_retry_note(x), LENGTH_NOTE]
    texts += [m["content"] for m in with_schema_hint([], _Probe)]
    return texts


class _Probe(BaseModel):
    text: str


register_app_texts(_own_texts)

_JSON = re.compile(r'^\s*\{|^\s*\[\s*[\[{"]|[{,]\s*"[^"]{1,40}"\s*:')
_NUMBERED = re.compile(r"^\s*(?:\d{1,2}[.)]|\(\d{1,2}\))\s")
_INDEXED = re.compile(r"^\s*-?\s*\[\d+\]|→\s*[A-Z][\w' ]{0,40}:")
_HEADING = re.compile(r"(?:^|\n)\s*#{1,6}\s|\(now\)", re.IGNORECASE)
# Phrases only the app's prompts use (any one is an echo) ...
_APP_PHRASES = re.compile(
    r"\b(?:story memory|memory sections?|json|length limit|(?:your|the) previous reply|"
    r"(?:answer|reply) again|you are an actor|role-?play\w*|predicted action|real action|"
    r"held-out|(?:my|his|her|their|the) next action|next action only|"
    r"first line of dialogue|propose at most|"
    r"the (?:scene|story) so far|each dimension|text field|correct option|answer yes or no|"
    r"who speaks (?:next|the)|which (?:continuation|candidates|parts)|name label|"
    r"in at most \d+ words|(?:reply|answer) with [^.!?]{0,40}\bonly|answer with the letter|"
    r"answer with one name|reply with the (?:word|decision|description|summary|profile)|"
    r"never invent|as of action \d|memory model|role-playing agent|bookmarks?|"
    r"reply was not valid|attribute dialogue|make the speaker clear|"
    r"use only what the (?:text|given passages))\b"
    r"|'s next (?:line|action)\b", re.IGNORECASE)
# ... and words a line rarely holds two of.
_META = ("prediction", "predicted", "dimension", "the character", "characters", "passages",
         "section", "profile", "observations", "instructions", "prompt", "candidates",
         "continuation", "schema", "the model", "emotion", "intent", "causality", "stance")


def app_words(text: str, *, titles: Sequence[str] = (), prompt: Sequence[str] = ()) -> str:
    """Why `text` is the app's own words rather than a character's line ("" when it is not):
    JSON, a numbered item or line of the prompt, a grounding header, a section title, an
    instruction or re-ask note of the app (its phrases, or two of its word 4-grams; one for
    a reply of a few words)."""
    if _JSON.search(text):
        return "JSON"
    if _NUMBERED.match(text) or _INDEXED.search(text):
        return "the prompt's structure"
    if _HEADING.search(text):
        return "a grounding header"
    words = _words(text)
    for title in titles:
        t = _words(title)
        if len(t) >= 3 and words[:len(t)] == t or len(t) >= 2 and len(words) <= len(t) + 2 \
                and f" {' '.join(t)} " in f" {' '.join(words)} ":
            return "a section title"
    if m := _APP_PHRASES.search(text):
        return f"an instruction: {m.group(0)!r}"
    folded = " ".join(words)
    if sum(1 for w in _META if re.search(rf"\b{w}\b", folded)) >= 2:
        return "the prompt's words"
    shared = _grams(words) & (_app_grams() | {g for p in prompt for g in _grams(_words(p))})
    if len(shared) >= 2 or shared and len(words) <= N + 2:
        return "the prompt's words"
    return ""


def echoes_prompt(text: str) -> bool:
    """A memory model's free-text reply (a description, a profile) that is not one: JSON,
    or mostly the words of the app's prompts."""
    if _JSON.search(text):
        return True
    grams = _grams(_words(text))
    shared = grams & _app_grams()
    return bool(grams) and (len(shared) >= 6 or len(shared) * 2 >= len(grams))

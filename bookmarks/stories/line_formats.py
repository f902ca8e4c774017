"""The line-by-line formats: JSONL (one action per line), play scripts (`NAME: speech`,
names alone above speeches, `[directions]`, `# headings`) and the paper's reference JSON.

Each parser returns validated `Action`s or raises `StoryFormatError` naming the file, the
line and the reason. Text and names are cleaned and size-checked here (`clean_text`,
`speaker_name`), for every importer.
"""

from __future__ import annotations

import json
import re

from bookmarks.errors import StoryFormatError
from bookmarks.stories.names import normalize_name
from bookmarks.stories.story import NARRATION, Action

MAX_TEXT_CHARS = 20_000
MAX_LINE = 100_000_000  # a JSONL action's "line" in its source file

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")
_DIRECTION = re.compile(r"^\s*(\[(.+)\]|\((.+)\)|\*([^*].*)\*|_([^_].*)_)\s*$")
_SPEECH = re.compile(r"^\s*([A-Za-z][\w .'\-]{0,60}?)\s*(?:\([^)]*\))?\s*:\s*(.+)$")
_NAME_ALONE = re.compile(r"^\s*([A-Z][A-Z0-9 .'\-]{0,60}?)\.?\s*$")


def clean_text(text: object, file: str, line: int, field: str = "text") -> str:
    if not isinstance(text, str):
        raise StoryFormatError(f'"{field}" must be a string.', file=file, line=line)
    cleaned = (text if text.isprintable()  # (most lines: no control character to drop)
               else "".join(ch for ch in text if ch in "\n\t" or ch.isprintable())).strip()
    if not cleaned:
        raise StoryFormatError(f'"{field}" is empty.', file=file, line=line)
    if len(cleaned) > MAX_TEXT_CHARS:
        raise StoryFormatError(
            f'"{field}" is {len(cleaned)} characters long; the limit is {MAX_TEXT_CHARS}.',
            file=file,
            line=line,
        )
    return cleaned


MAX_NAME_CHARS = 120


def speaker_name(raw: object, file: str, line: int | None) -> str:
    name = normalize_name(clean_text(raw, file, line, "character"))
    if not name:
        raise StoryFormatError('"character" is empty.', file=file, line=line)
    if len(name) > MAX_NAME_CHARS:
        raise StoryFormatError(f"a character name is {len(name)} characters long; the limit is "
                               f"{MAX_NAME_CHARS}.", file=file, line=line)
    return name


def parse_jsonl(lines: list[str], file: str) -> list[Action]:
    actions: list[Action] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = getattr(exc, "msg", "nesting too deep")
            raise StoryFormatError(f"not valid JSON ({reason}).", file=file, line=number) from None
        if not isinstance(obj, dict):
            raise StoryFormatError(
                'each line must be a JSON object like {"character": …, "text": …}.',
                file=file,
                line=number,
            )
        text = obj.get("text", obj.get("action"))
        if "character" not in obj or text is None:
            raise StoryFormatError(
                'each line needs "character" and "text" fields.', file=file, line=number
            )
        chapter = obj.get("chapter")
        if chapter is None and (obj.get("act") is not None or obj.get("scene") is not None):
            # plays exported with act/scene fields: "Act 1, Scene 2" is the chapter
            chapter = ", ".join(f"{k.capitalize()} {obj[k]}" for k in ("act", "scene")
                                if obj.get(k) is not None and str(obj[k]).strip())
        if chapter is not None and not isinstance(chapter, str):
            raise StoryFormatError('"chapter" must be a string.', file=file, line=number)
        present = obj.get("present")
        if present is not None and (not isinstance(present, list)
                                    or not all(isinstance(p, str) for p in present)):
            raise StoryFormatError('"present" must be a list of character names.', file=file,
                                   line=number)
        check = obj.get("check")
        if check is not None and (not isinstance(check, str) or len(check) > 200):
            raise StoryFormatError('"check" must be a short text (why to check the speaker).',
                                   file=file, line=number)
        line = obj.get("line", number)  # where it starts in the story's source file, as exported
        if isinstance(line, bool) or not isinstance(line, int) or not 1 <= line <= MAX_LINE:
            raise StoryFormatError(f'"line" must be a line number (1 to {MAX_LINE}).', file=file,
                                   line=number)
        name = speaker_name(obj["character"], file, number)
        actions.append(
            Action(
                index=len(actions) + 1,
                character=name,
                text=clean_text(text, file, number),
                chapter=chapter.strip() or None if chapter else None,
                present=_present(present),
                check=" ".join(check.split()) or None if check else None,
                line=line,
            )
        )
    return actions


def _present(names: list[str] | None) -> list[str] | None:
    """A JSONL action's `present` list. An empty list says that nobody could perceive the
    action (an empty stage): it is kept as `[narration]`, a list naming no one of the cast,
    since presence reads a list by the cast members it names and an empty one as absent."""
    if names is None:
        return None
    return [p.strip() for p in names if p.strip()] or [NARRATION]


def _is_name_alone(line: str) -> bool:
    m = _NAME_ALONE.match(line)
    return bool(m and len(m.group(1).strip()) >= 2 and not line.strip().endswith(":"))


def parse_script(lines: list[str], file: str) -> list[Action]:
    """`NAME: speech` lines, or a capitalised name alone followed by its speech (printed
    plays); `#` headings are chapters; bracketed/parenthesised/italic lines are narration."""
    actions: list[Action] = []
    chapter: str | None = None
    speaker: str | None = None  # set by a name-alone line, until a blank line
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            speaker = None
            continue
        if m := _HEADING.match(line):
            chapter, speaker = m.group(1), None
            continue
        if m := _DIRECTION.match(line):
            body = next(g for g in m.groups()[1:] if g)
            actions.append(action_of(actions, NARRATION, body, chapter, file, number))
            continue
        if _is_name_alone(line) and not _SPEECH.match(line):
            speaker = normalize_name(line)
            continue
        if speaker is None and (m := _SPEECH.match(line)):
            name = normalize_name(m.group(1))
            actions.append(action_of(actions, name, m.group(2), chapter, file, number))
            continue
        if speaker is not None:
            if actions and actions[-1].character == speaker and _continues(lines, number):
                merged = f"{actions[-1].text} {line}"
                actions[-1] = actions[-1].model_copy(update={"text": merged})
            else:
                actions.append(action_of(actions, speaker, line, chapter, file, number))
            continue
        raise StoryFormatError(
            "expected `NAME: speech`, a speaker name alone on a line, a `#` heading or a "
            f"[stage direction], but found: {line[:60]!r}.",
            file=file,
            line=number,
        )
    return actions


def _continues(lines: list[str], number: int) -> bool:
    """True when line `number` (1-based) directly follows a speech line (no blank)."""
    prev = lines[number - 2].strip() if number >= 2 else ""
    return bool(prev) and not _is_name_alone(prev)


def action_of(actions, name, text, chapter, file, number, check=None) -> Action:
    return Action(
        index=len(actions) + 1,
        character=name,
        text=clean_text(text, file, number),
        chapter=chapter,
        check=check,
        line=number,
    )


def parse_reference(lines: list[str], file: str) -> list[Action]:
    """The paper's format: {"chapter title": [{"action": …, "character": …}, …], …};
    an item with several `characters` becomes narration naming them."""
    try:
        data = json.loads("\n".join(lines))
    except json.JSONDecodeError as exc:
        raise StoryFormatError(f"not valid JSON ({exc.msg}).", file=file, line=exc.lineno) from None
    except RecursionError:
        raise StoryFormatError("the JSON is nested too deeply.", file=file) from None
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise StoryFormatError(
            "expected a JSON object mapping chapter titles to lists of actions.", file=file
        )
    actions: list[Action] = []
    for chapter, items in data.items():
        for k, item in enumerate(items):
            where = f"chapter {chapter!r}, item {k + 1}"
            if not isinstance(item, dict) or "action" not in item:
                raise StoryFormatError(f'{where}: each item needs an "action".', file=file)
            names = item.get("characters") or [item.get("character") or NARRATION]
            if isinstance(names, str):
                names = [names]
            if not all(isinstance(n, str) and n.strip() for n in names):
                raise StoryFormatError(f"{where}: character names must be strings.", file=file)
            text = clean_text(item["action"], f"{file} ({where})", None)  # type: ignore[arg-type]
            if len(names) == 1:
                name = speaker_name(names[0], f"{file} ({where})", None)
            else:
                name, text = NARRATION, f"[{', '.join(names)}] {text}"
            actions.append(Action(index=len(actions) + 1, character=name, text=text,
                                  chapter=str(chapter)))
    return actions


def scripted_share(lines: list[str]) -> tuple[int, int]:
    """(lines that read as a script, non-blank lines) among the first 400: names alone above
    speeches and what follows them, `# headings`, `[directions]`, `NAME: speech` lines."""
    scripted = total = 0
    in_speech = False  # inside a printed-play speech (after a name alone on a line)
    for ln in lines[:400]:
        if not ln.strip():
            in_speech = False
            continue
        total += 1
        if _is_name_alone(ln):
            in_speech = True
            scripted += 1
        elif in_speech or _HEADING.match(ln) or _DIRECTION.match(ln) or _SPEECH.match(ln):
            scripted += 1
    return scripted, total

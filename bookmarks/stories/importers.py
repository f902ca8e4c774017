"""Read narratives into a `Story`: JSONL, play scripts, plain prose, the paper's format,
Project Gutenberg plays and novels, Fountain screenplays.

Every failure raises `StoryFormatError` naming the file, the line (where there is one)
and the reason. Input is untrusted: size-capped, decoded strictly (UTF-8, UTF-16 or UTF-32;
see decoding.py), never evaluated. Sidecar files next to a story are read when present:
`NAME.meta.json` for title and cast, `NAME.questions.jsonl` for multiple-choice questions,
`NAME.source.txt` for the text a JSONL export was made from. The line-by-line formats
(JSONL, scripts, the reference JSON) are parsed in `line_formats`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from bookmarks.errors import StoryFormatError
from bookmarks.stories.decoding import check_size, decode_text
from bookmarks.stories.fountain import looks_like_fountain, parse_fountain
from bookmarks.stories.gutenberg import is_gutenberg
from bookmarks.stories.gutenberg_novel import parse_gutenberg_novel
from bookmarks.stories.gutenberg_play import (
    gutenberg_kind,
    has_persons_list,
    looks_like_play,
    parse_gutenberg_play,
)
from bookmarks.stories.line_formats import (
    action_of,
    parse_jsonl,
    parse_reference,
    parse_script,
    scripted_share,
    speaker_name,
)
from bookmarks.stories.prose import Draft, parse_prose
from bookmarks.stories.story import PSEUDO_CHARACTERS, Action, Character, Question, Story

Format = Literal["jsonl", "script", "prose", "reference", "gutenberg-play", "gutenberg-novel",
                 "fountain"]
FORMATS: tuple[str, ...] = get_args(Format)
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


def decode(data: bytes, file: str) -> list[str]:
    """Bytes → lines, or a clear error for binary or undecodable input (UTF-8 with or
    without a byte order mark, UTF-16 and UTF-32 are read; see decoding.py)."""
    return decode_text(data, file).splitlines()


def detect_format(lines: list[str], filename: str = "") -> str:
    """Guess the format from the extension and the first lines: `.jsonl`/`.json`/`.fountain`
    by name; then JSON, Project Gutenberg START/END markers (play or novel by its speaker
    cues), a Fountain screenplay (title page or scene headings and cues), a script or prose.

    A printed play without the Gutenberg markers (as many mirrors and excerpts are) is a
    Gutenberg play when its speaker cues make up the text and it has a list of persons, or
    when it does not read as a script (`NAME: speech` lines, names alone above speeches)
    from its first line to its last."""
    suffix = Path(filename).suffix.lower()
    body = [ln for ln in lines if ln.strip()]
    first = body[0].lstrip() if body else ""
    if suffix in (".jsonl", ".json", ".fountain"):
        return {".jsonl": "jsonl", ".json": "reference", ".fountain": "fountain"}[suffix]
    if first.startswith("{"):
        try:
            obj = json.loads(first)
        except (json.JSONDecodeError, RecursionError):
            return "reference"  # a multi-line JSON document
        return "jsonl" if isinstance(obj, dict) and "character" in obj else "reference"
    if is_gutenberg(lines):
        return gutenberg_kind(lines)
    if looks_like_fountain(lines):
        return "fountain"
    scripted, total = scripted_share(lines)
    guess = "script" if total and scripted >= 0.6 * total else "prose"
    if not looks_like_play(lines):
        return guess
    if guess == "script" and not has_persons_list(lines):
        try:
            parse_script(lines, filename)
            return "script"
        except StoryFormatError:
            pass
    return "gutenberg-play"



PARSERS = {"jsonl": parse_jsonl, "script": parse_script, "prose": parse_prose,
           "reference": parse_reference, "gutenberg-play": parse_gutenberg_play,
           "gutenberg-novel": parse_gutenberg_novel, "fountain": parse_fountain}


def _from_drafts(drafts: list[Draft], file: str, line_breaks: bool = False) -> list[Action]:
    """Validate what a parser found (names, text limits, control characters). Spaces are
    collapsed; line breaks are kept only where the format makes them the writer's own
    (`line_breaks`: Fountain's verse), not a hard wrap."""
    actions: list[Action] = []
    for line, who, text, chapter, check in drafts:
        name = who if who in PSEUDO_CHARACTERS else speaker_name(who, file, line)
        label = " ".join("".join(c for c in chapter if c.isprintable() or c.isspace()).split())[:200] \
            if chapter else None
        tidy = "\n".join(" ".join(row.split()) for row in text.split("\n")) if line_breaks \
            else " ".join(text.split())
        actions.append(action_of(actions, name, tidy, label or None, file, line, check))
    return actions


def _with_aliases(cast: list[Character], found: dict[str, list[str]]) -> list[Character]:
    """Add the name variants a parser found to the cast member they belong to (a variant
    that already names someone else is left out)."""
    owner = {k.casefold(): c.name for c in cast for k in c.keys()}
    out = []
    for c in cast:
        new = []
        for alias in (a for k in c.keys() for a in found.get(k, [])):
            if owner.setdefault(alias.casefold(), c.name) == c.name and alias not in c.keys() + new:
                new.append(alias)
        out.append(c.model_copy(update={"aliases": [*c.aliases, *new]}) if new else c)
    return out


def parse_story(
    data: bytes,
    filename: str,
    *,
    fmt: str | None = None,
    title: str | None = None,
    meta: dict | None = None,
    questions: list[Question] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    source: str | None = None,
) -> Story:
    """Parse raw bytes into a Story. `meta` may give title, description and cast; `source`
    the text of the file a JSONL export was made from (its `.source.txt`), which its lines'
    `"line"` fields point into."""
    name = Path(filename).name or "story"
    meta = _check_meta(meta, name)
    check_size(len(data), max_bytes, name)
    lines = decode(data, name)
    fmt = fmt or (meta or {}).get("format") or detect_format(lines, name)
    if fmt not in PARSERS:
        raise StoryFormatError(
            f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}.", file=name
        )
    parsed = PARSERS[fmt](lines, name)
    found: dict = {}
    if isinstance(parsed, tuple):  # drafts and what the file says of itself (title, aliases)
        found = parsed[1]
        actions = _from_drafts(parsed[0], name, bool(found.get("line_breaks")))
    else:
        actions = parsed
    if not actions:
        raise StoryFormatError("no actions were found in the file.", file=name)
    cast = _with_aliases(_cast(actions, meta.get("characters"), name), found.get("aliases", {}))
    cast = _with_joint(cast, found.get("joint", []))
    actions = _canonical_speakers(actions, cast)
    return Story(
        title=_title(title, meta.get("title") or found.get("title"), filename),
        description=str(meta.get("description", "")),
        author=str(meta.get("author") or found.get("author") or ""),
        source_format=fmt,
        characters=cast,
        actions=actions,
        questions=_check_questions(questions or [], len(actions), name),
        source=source if fmt in ("jsonl", "reference") else "\n".join(lines),  # not JSON's own
    )


class MetaFile(BaseModel):
    """The sidecar `NAME.meta.json` (or the same fields given by a caller)."""

    model_config = ConfigDict(extra="ignore")

    title: str | None = None
    description: str = ""
    author: str = ""
    format: Format | None = None
    characters: list[Character] | None = None


def _check_meta(meta: dict | None, file: str) -> dict:
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise StoryFormatError("the meta file must hold a JSON object.", file=file)
    try:
        return MetaFile.model_validate(meta).model_dump(exclude_none=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise StoryFormatError(f"the meta file's {where!r} is invalid: {first['msg']}.",
                               file=file) from None


def _title(given: str | None, from_meta: object, filename: str) -> str:
    for candidate in (given, from_meta, Path(filename).stem.replace("_", " ").title()):
        if isinstance(candidate, str) and candidate.strip():
            return " ".join(candidate.split())[:200]
    return "Untitled story"


# speakers that are a group, not a person: their lines stay speech, but they are never a
# major character (so never in a default cast, walk, evaluation or preparation)
GROUP_SPEAKERS = frozenset({"all", "both", "omnes", "everyone", "others", "several", "crowd",
                            "the crowd", "voices", "all three", "all four", "chorus of voices"})


def _cast(actions: list[Action], declared: list | None, file: str) -> list[Character]:
    counts: dict[str, int] = {}
    for a in actions:
        if a.character not in PSEUDO_CHARACTERS:
            counts[a.character] = counts.get(a.character, 0) + 1
    cast: list[Character] = []
    if declared:
        try:
            cast = [Character.model_validate(c) for c in declared]
        except ValidationError as exc:
            raise StoryFormatError(f"the cast in the meta file is invalid: {exc}", file=file) from None
    known = {k.casefold() for c in cast for k in c.keys()}
    ranked = sorted(counts, key=lambda n: -counts[n])
    top = max(counts.values(), default=0)
    for n in ranked:
        if n.casefold() not in known:
            major = not declared and counts[n] >= max(3, top * 0.2) and ranked.index(n) < 6 \
                and n.casefold() not in GROUP_SPEAKERS
            cast.append(Character(name=n, major=major))
            known.add(n.casefold())
    return cast


def _with_joint(cast: list[Character], joint: list[str]) -> list[Character]:
    """Speakers heard only in joint speeches (`ROS. and GUIL.`, given to the first) join the
    cast too, so that directions naming them and presence find them."""
    known = {k.casefold() for c in cast for k in c.keys()}
    return cast + [Character(name=n) for n in dict.fromkeys(joint)
                   if n.casefold() not in known and n.casefold() not in GROUP_SPEAKERS]


def _canonical_speakers(actions: list[Action], cast: list[Character]) -> list[Action]:
    lookup = {k.casefold(): c.name for c in cast for k in c.keys()}
    return [
        a if a.character in PSEUDO_CHARACTERS or lookup.get(a.character.casefold()) == a.character
        else a.model_copy(update={"character": lookup.get(a.character.casefold(), a.character)})
        for a in actions
    ]


def _check_questions(questions: list[Question], n: int, file: str) -> list[Question]:
    """Questions checked against the story; one without a story point is asked at its end."""
    questions = [q.model_copy(update={"after": n}) if q.after == 0 else q for q in questions]
    for q in questions:
        if q.after > n:
            raise StoryFormatError(
                f"question {q.id} is asked after action {q.after}, but the story has {n}.",
                file=file,
            )
        if q.answer not in q.options:
            raise StoryFormatError(f"question {q.id}: answer {q.answer!r} is not an option.",
                                   file=file)
    return questions


def read_questions(path: Path) -> list[Question]:
    out: list[Question] = []
    for number, raw in enumerate(decode(path.read_bytes(), path.name), start=1):
        if not raw.strip():
            continue
        try:
            out.append(Question.model_validate_json(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "line"
            raise StoryFormatError(f"{loc}: {first['msg']}.", file=path.name, line=number) from None
    return out


SIDECAR_ENDS = ("meta.json", "questions.jsonl", "source.txt")


def sidecars(path: Path) -> tuple[Path, Path, Path]:
    """The files `load_story` reads next to a story: its meta, questions and source, named
    by the story file's name up to its first dot."""
    stem = path.name.split(".")[0]
    return tuple(path.with_name(f"{stem}.{end}")  # type: ignore[return-value]
                 for end in SIDECAR_ENDS)


def load_story(
    path: str | Path,
    *,
    fmt: str | None = None,
    title: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Story:
    """Read a story file from disk, with its sidecar meta, questions and source if present."""
    path = Path(path)
    if not path.is_file():
        raise StoryFormatError("no such file.", file=str(path))
    check_size(path.stat().st_size, max_bytes, path.name)
    meta_path, q_path, s_path = sidecars(path)
    meta = None
    if meta_path.is_file():
        check_size(meta_path.stat().st_size, max_bytes, meta_path.name)
        try:
            meta = json.loads(decode_text(meta_path.read_bytes(), meta_path.name))
        except json.JSONDecodeError as exc:
            raise StoryFormatError(f"the meta file is not valid JSON ({exc}).",
                                   file=meta_path.name) from None
    questions = read_questions(q_path) if q_path.is_file() else None
    source = None
    if s_path.is_file() and s_path != path:
        check_size(s_path.stat().st_size, max_bytes, s_path.name)
        source = "\n".join(decode_text(s_path.read_bytes(), s_path.name).splitlines())
    return parse_story(path.read_bytes(), path.name, fmt=fmt, title=title, meta=meta,
                       questions=questions, max_bytes=max_bytes, source=source)

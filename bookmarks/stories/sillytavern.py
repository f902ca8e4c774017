"""SillyTavern interchange: character cards in, World Info lorebooks in and out.

Pure functions over bytes and strings; nothing here calls a model or touches the disk.

Reading
    `read_card(data, file)` reads a character card from a ``.json`` file or from a ``.png``
    image whose ``tEXt`` (also ``iTXt``/``zTXt``) chunk ``ccv3`` (preferred) or ``chara``
    holds the card as base64 JSON. Specs ``chara_card_v2`` (spec_version 2.x) and
    ``chara_card_v3`` (3.x) are read from their ``data`` object; a legacy v1 / TavernAI card
    (flat ``name``, ``description``, ``personality``, ``scenario``, ``first_mes``,
    ``mes_example`` and no ``spec``) is accepted too. The macros ``{{char}}``/``<BOT>`` and
    ``{{user}}``/``<USER>`` are replaced by the card's name and the user's name in every text
    taken from the card, since the app has no macro engine of its own.

    `read_world_info(data, file)` reads a standalone World Info file: ``entries`` either a
    dict keyed by uid strings (SillyTavern's own form) or a list (e.g. a ``character_book``).
    Each entry may use SillyTavern's names (``key``, ``keysecondary``, ``comment``,
    ``disable``, ``order``) or the card spec's (``keys``, ``secondary_keys``, ``name``,
    ``enabled``, ``insertion_order``).

    Used: the fields of `Card` and `LoreEntry`. Ignored, because the app has no equivalent:
    card ``extensions`` (depth prompt, talkativeness, regex scripts, linked world...),
    ``group_only_greetings`` (no group chats), ``assets``, ``creation_date``,
    ``modification_date``, ``source``, ``creator_notes_multilingual``; the lorebook's
    ``scan_depth``, ``token_budget``, ``recursive_scanning``; and every entry setting that only
    steers SillyTavern's own prompt assembly (``selective``/``selectiveLogic``, ``position``,
    ``depth``, ``role``, ``probability``, groups, recursion, timed effects, scan depth, case
    and whole-word matching, character filters, triggers, ``use_regex``, ``priority``) -- the
    app's memory does its own retrieval. Entry ``uid``/``id`` only name an entry in errors.

Writing
    `world_info_json(entries, name)` writes a World Info file SillyTavern imports;
    `card_json(card)` writes a v2 card (with the v1 fields at the top for old readers);
    `png_with_card(png, card_json_text)` embeds a card in a PNG; `bookmark_entries(...)` turns
    what the memory learned (concepts, states) into lore entries keyed by subject and aliases.

Every bad input raises `StoryFormatError` naming the file, the line (JSON syntax errors) or
the PNG chunk or lorebook entry, and the reason.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from bookmarks.errors import StoryFormatError
from bookmarks.stories.decoding import check_size, decode_text, looks_like_text
from bookmarks.stories.story import Character

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
MAX_NAME_CHARS = 120  # story.Character's limit
DEFAULT_USER = "User"
CARD_KEYWORDS = ("ccv3", "chara")  # in order of preference
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt")
_SPECS = {"chara_card_v2": ("v2", 2), "chara_card_v3": ("v3", 3)}
_WORLD_DEFAULT_DEPTH = 4

# --------------------------------------------------------------------------- models


class LoreEntry(BaseModel):
    """One lorebook / World Info entry: text that applies when one of its keys is mentioned."""

    model_config = ConfigDict(extra="forbid")

    keys: list[str] = Field(default_factory=list)  # may be empty only for a constant entry
    secondary_keys: list[str] = Field(default_factory=list)
    title: str = ""  # SillyTavern's comment; defaults to the first key
    content: str
    enabled: bool = True
    constant: bool = False  # always active, whatever is mentioned
    order: int = 100  # SillyTavern's insertion order (higher goes first)

    @field_validator("keys", "secondary_keys")
    @classmethod
    def _non_empty_keys(cls, keys: list[str]) -> list[str]:
        cleaned = [k.strip() for k in keys]
        if any(not k for k in cleaned):
            raise ValueError("keys must be non-empty strings")
        return list(dict.fromkeys(cleaned))

    @model_validator(mode="after")
    def _complete(self) -> LoreEntry:
        if not self.content.strip():
            raise ValueError("content is empty")
        if not self.keys and not self.constant:
            raise ValueError("an entry needs at least one key unless it is constant")
        self.title = self.title.strip() or (self.keys[0] if self.keys else "")
        return self


class Card(BaseModel):
    """A character card, macros already replaced."""

    model_config = ConfigDict(extra="forbid")

    spec: Literal["v1", "v2", "v3"] = "v2"
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_message: str = ""
    examples: list[list[tuple[str, str]]] = Field(default_factory=list)  # one list per <START> block
    alternate_greetings: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    nickname: str = ""  # v3; becomes an alias
    creator: str = ""
    creator_notes: str = ""
    character_version: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    lorebook_name: str = ""
    lorebook: list[LoreEntry] = Field(default_factory=list)

    @property
    def example_dialogue(self) -> list[tuple[str, str]]:
        """Every example turn as (speaker, text), the `<START>` blocks one after another."""
        return [turn for block in self.examples for turn in block]

    def character(self) -> Character:
        aliases = [self.nickname] if self.nickname and self.nickname != self.name else []
        return Character(name=self.name, aliases=aliases, major=True)


# --------------------------------------------------------------------------- raw input models


class _Raw(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, value: Any) -> Any:
        # Cards in the wild write null for "not set"; treat it as absent.
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if v is not None}
        return value


class _RawCard(_Raw):
    name: str = ""
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    alternate_greetings: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    creator: str = ""
    character_version: str = ""
    nickname: str = ""
    character_book: dict[str, Any] | None = None

    @field_validator("character_version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


class _RawEntry(_Raw):
    keys: list[str] | str = Field(default_factory=list, validation_alias=AliasChoices("key", "keys"))
    secondary_keys: list[str] | str = Field(
        default_factory=list, validation_alias=AliasChoices("keysecondary", "secondary_keys"))
    comment: str = ""
    name: str = ""
    content: str = ""
    constant: bool = False
    disable: bool | None = None
    enabled: bool | None = None
    order: float | None = Field(default=None, allow_inf_nan=False,
                                validation_alias=AliasChoices("order", "insertion_order"))
    uid: int | str | None = Field(default=None, validation_alias=AliasChoices("uid", "id"))


# --------------------------------------------------------------------------- text helpers

_CHAR_MACRO = re.compile(r"\{\{\s*char\s*\}\}|<BOT>", re.IGNORECASE)
_USER_MACRO = re.compile(r"\{\{\s*user\s*\}\}|<USER>", re.IGNORECASE)
_START = re.compile(r"^[ \t]*<START>[ \t]*$", re.IGNORECASE | re.MULTILINE)
_TURN = re.compile(r"^\s*(\{\{\s*(?:char|user)\s*\}\}|<BOT>|<USER>)\s*:[ \t]?(.*)$", re.IGNORECASE)


def _clean(text: str) -> str:
    """Untrusted text: CRLF → LF, control characters other than newline and tab dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(ch for ch in text if ch in "\n\t" or ch.isprintable()).strip()


def replace_macros(text: str, char: str, user: str = DEFAULT_USER) -> str:
    """SillyTavern's `{{char}}`/`<BOT>` and `{{user}}`/`<USER>` replaced by the names."""
    text = _CHAR_MACRO.sub(lambda _m: char, text)
    return _USER_MACRO.sub(lambda _m: user, text)


def parse_examples(mes_example: str, char: str, user: str = DEFAULT_USER) -> list[list[tuple[str, str]]]:
    """`mes_example` → one list of (speaker, text) turns per `<START>` block.

    A turn starts at a line `{{char}}:` / `{{user}}:` (or `<BOT>:` / `<USER>:`, or the card's
    or user's name followed by a colon); other lines continue the turn before them. Lines
    before the first turn of a block are the character's (narration written without a label).
    """
    blocks: list[list[tuple[str, str]]] = []
    labels = {char.casefold(): char, user.casefold(): user}
    for raw_block in _START.split(_clean(mes_example)):
        turns: list[list[str]] = []  # [speaker, text]
        for line in raw_block.split("\n"):
            match = _TURN.match(line)
            speaker: str | None = None
            if match:
                label = match.group(1).casefold()
                speaker = char if ("char" in label or "bot" in label) else user
                text = match.group(2)
            else:
                head, sep, rest = line.partition(":")
                if sep and head.strip().casefold() in labels:
                    speaker, text = labels[head.strip().casefold()], rest.removeprefix(" ")
            if speaker is not None:
                turns.append([speaker, text])
            elif turns:
                turns[-1][1] += "\n" + line
            elif line.strip():
                turns.append([char, line])
        block = [(s, replace_macros(t, char, user).strip()) for s, t in turns]
        block = [(s, t) for s, t in block if t]
        if block:
            blocks.append(block)
    return blocks


def examples_text(examples: list[list[tuple[str, str]]], char: str) -> str:
    """The inverse of `parse_examples`: `<START>` blocks of `{{char}}:` / `{{user}}:` lines."""
    parts = []
    for block in examples:
        lines = ["<START>"]
        for speaker, text in block:
            label = "{{char}}" if speaker == char else "{{user}}"
            lines.append(f"{label}: {text}")
        parts.append("\n".join(lines))
    return "\n".join(parts)


# --------------------------------------------------------------------------- bytes → JSON


def _check_size(data: bytes, file: str, max_bytes: int) -> None:
    check_size(len(data), max_bytes, file)


def _looks_binary(data: bytes) -> str | None:
    """A name for a known binary format, '' for other binary data, None for text."""
    magic = {b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image", b"PK\x03\x04": "a ZIP archive"}
    for head, what in magic.items():
        if data.startswith(head):
            return what
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "a WEBP image"
    return None if looks_like_text(data) else ""


def _json_text(data: bytes, file: str) -> Any:
    text = decode_text(data, file, advice="save it as UTF-8 JSON")  # UTF-8, -16, -32
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StoryFormatError(f"not valid JSON ({exc.msg}).", file=file, line=exc.lineno) from None
    except RecursionError:
        raise StoryFormatError("the JSON is nested too deeply.", file=file) from None


def _binary_error(data: bytes, file: str, expected: str) -> StoryFormatError:
    what = _looks_binary(data) or "a binary file"
    return StoryFormatError(f"this is {what}, not {expected}; export it from SillyTavern as "
                            f"{'PNG or JSON' if 'card' in expected else 'JSON'}.", file=file)


def _validation_reason(exc: ValidationError, prefix: str = "") -> str:
    """'"data.tags": Input should be a valid list' for the first error (union tags left out)."""
    first = exc.errors()[0]
    loc = prefix
    for part in first["loc"]:
        if isinstance(part, int):
            loc += f"[{part}]"
        elif not re.fullmatch(r"\w+\[.*\]|str", str(part)):
            loc += f".{part}" if loc else str(part)
    return f'"{loc or "value"}": {first["msg"]}'

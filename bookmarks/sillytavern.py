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

import base64
import binascii
import json
import re
import struct
import zlib
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

from .errors import StoryFormatError
from .story import Character

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
    if len(data) > max_bytes:
        raise StoryFormatError(
            f"the file is {len(data) / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.1f} MB.", file=file)


def _looks_binary(data: bytes) -> str | None:
    """A name for a known binary format, '' for other binary data, None for text."""
    magic = {b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image", b"PK\x03\x04": "a ZIP archive"}
    for head, what in magic.items():
        if data.startswith(head):
            return what
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "a WEBP image"
    return "" if b"\x00" in data[:8192] else None


def _json_text(data: bytes, file: str) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise StoryFormatError(
            f"the file is not UTF-8 text (byte 0x{data[exc.start]:02x} cannot be decoded).",
            file=file, line=data[: exc.start].count(b"\n") + 1) from None
    if not text.strip():
        raise StoryFormatError("the file is empty.", file=file)
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


# --------------------------------------------------------------------------- PNG chunks


def _png_chunks(data: bytes, file: str) -> list[tuple[bytes, bytes, bool]]:
    """(type, data, checksum ok) of each chunk up to IEND; an error for a cut-off chunk."""
    if not data.startswith(PNG_SIGNATURE):
        raise StoryFormatError("this is not a PNG image (its signature is wrong).", file=file)
    chunks: list[tuple[bytes, bytes, bool]] = []
    pos = len(PNG_SIGNATURE)
    while pos < len(data):
        if pos + 8 > len(data):
            raise StoryFormatError(f"the PNG image is cut off after chunk {len(chunks)} (byte {pos}).",
                                   file=file)
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        end = pos + 12 + length
        name = ctype.decode("latin-1", "replace")
        if end > len(data):
            raise StoryFormatError(f"the PNG chunk {len(chunks)} ({name!r}) is cut off: it declares "
                                   f"{length} bytes but the file ends first.", file=file)
        body = data[pos + 8:end - 4]
        (crc,) = struct.unpack(">I", data[end - 4:end])
        chunks.append((ctype, body, zlib.crc32(ctype + body) == crc))
        pos = end
        if ctype == b"IEND":
            break
    return chunks


def _inflate(data: bytes, limit: int, where: str, file: str) -> bytes:
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, limit)
    except zlib.error as exc:
        raise StoryFormatError(f"{where} holds corrupt compressed text ({exc}).", file=file) from None
    if inflater.unconsumed_tail:
        raise StoryFormatError(f"{where} expands to more than {limit / 1e6:.1f} MB.", file=file)
    return out


def _text_chunk(body: bytes) -> tuple[str, bytes]:
    """(keyword, the rest) of a tEXt/zTXt/iTXt chunk; keyword '' when malformed."""
    keyword, sep, rest = body.partition(b"\x00")
    if not sep or not 1 <= len(keyword) <= 79:
        return "", b""
    return keyword.decode("latin-1"), rest


def _chunk_text(ctype: bytes, rest: bytes, where: str, file: str, limit: int) -> str:
    if ctype == b"tEXt":
        return rest.decode("latin-1")
    if ctype == b"zTXt":
        if not rest or rest[0] != 0:
            raise StoryFormatError(f"{where} uses an unknown compression method.", file=file)
        return _inflate(rest[1:], limit, where, file).decode("latin-1")
    # iTXt: compression flag, method, language tag \0, translated keyword \0, UTF-8 text
    if len(rest) < 2:
        raise StoryFormatError(f"{where} is malformed.", file=file)
    flag, method, tail = rest[0], rest[1], rest[2:]
    parts = tail.split(b"\x00", 2)
    if len(parts) != 3:
        raise StoryFormatError(f"{where} is malformed (no language tag or translated keyword).", file=file)
    text = parts[2]
    if flag:
        if method != 0:
            raise StoryFormatError(f"{where} uses an unknown compression method.", file=file)
        text = _inflate(text, limit, where, file)
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        raise StoryFormatError(f"{where} is not UTF-8 text.", file=file) from None


def _card_from_png(data: bytes, file: str, max_bytes: int) -> tuple[Any, str]:
    """The decoded JSON of the card chunk (`ccv3` preferred over `chara`) and its description."""
    found: dict[str, tuple[bytes, bytes, bool]] = {}
    for ctype, body, crc_ok in _png_chunks(data, file):
        if ctype in _TEXT_CHUNKS:
            keyword, rest = _text_chunk(body)
            if keyword.lower() in CARD_KEYWORDS:
                found.setdefault(keyword.lower(), (ctype, rest, crc_ok))
    for keyword in CARD_KEYWORDS:
        if keyword not in found:
            continue
        ctype, rest, crc_ok = found[keyword]
        where = f"the PNG {ctype.decode()} chunk {keyword!r}"
        if not crc_ok:
            raise StoryFormatError(f"{where} is damaged (its checksum does not match).", file=file)
        text = _chunk_text(ctype, rest, where, file, max_bytes).strip()
        if text.startswith("{"):  # some old tools stored the JSON itself
            raw = text.encode("utf-8")
        else:
            compact = re.sub(r"\s+", "", text)
            try:
                raw = base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
            except (binascii.Error, ValueError) as exc:
                raise StoryFormatError(f"{where} does not hold valid base64 ({exc}).", file=file) from None
        try:
            decoded = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise StoryFormatError(f"{where} does not decode to UTF-8 text.", file=file) from None
        try:
            return json.loads(decoded), where
        except json.JSONDecodeError as exc:
            raise StoryFormatError(f"{where} does not hold valid JSON ({exc.msg} at line {exc.lineno} "
                                   "of the decoded text).", file=file) from None
        except RecursionError:
            raise StoryFormatError(f"{where} holds JSON nested too deeply.", file=file) from None
    raise StoryFormatError("the PNG image has no character card in its tEXt chunks 'chara' or 'ccv3'.",
                           file=file)


# --------------------------------------------------------------------------- cards


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


def _spec_of(obj: dict[str, Any], where: str, file: str) -> tuple[str, dict[str, Any]]:
    """('v1'|'v2'|'v3', the object holding the fields)."""
    if "spec" not in obj:
        if "data" in obj and isinstance(obj["data"], dict):
            raise StoryFormatError(f'{where} has a "data" object but no "spec"; expected '
                                   "'chara_card_v2' or 'chara_card_v3'.", file=file)
        return "v1", obj
    spec = obj["spec"]
    if spec not in _SPECS:
        raise StoryFormatError(f"{where} has an unknown spec {spec!r}; expected 'chara_card_v2' or "
                               "'chara_card_v3'.", file=file)
    label, major = _SPECS[spec]
    version = obj.get("spec_version")
    if version is not None:
        try:
            number = float(version) if not isinstance(version, bool) else None
        except (TypeError, ValueError):
            number = None
        if number is None or not major <= number < major + 1:
            raise StoryFormatError(f"{where} has an unknown spec_version {version!r} for {spec!r}; "
                                   f"expected {major}.0.", file=file)
    data = obj.get("data")
    if not isinstance(data, dict):
        raise StoryFormatError(f'{where} has spec {spec!r} but no "data" object.', file=file)
    return label, data


def _card_from_object(obj: Any, where: str, file: str, user: str) -> Card:
    if not isinstance(obj, dict):
        raise StoryFormatError(f"{where} must be a JSON object.", file=file)
    spec, fields = _spec_of(obj, where, file)
    try:
        raw = _RawCard.model_validate(fields)
    except ValidationError as exc:
        prefix = "data" if spec != "v1" else ""
        raise StoryFormatError(f"{where} has an invalid field {_validation_reason(exc, prefix)}.",
                               file=file) from None
    name = _clean(raw.name)
    if not name:
        raise StoryFormatError(f"{where} has no name.", file=file)
    if len(name) > MAX_NAME_CHARS:
        raise StoryFormatError(f"{where} has a name {len(name)} characters long; the limit is "
                               f"{MAX_NAME_CHARS}.", file=file)

    def text(value: str) -> str:
        return replace_macros(_clean(value), name, user)

    book = raw.character_book or {}
    if book and "entries" not in book:
        raise StoryFormatError(f'{where} has a character_book without "entries".', file=file)
    lore = _entries(book["entries"], "data.character_book.entries" if spec != "v1" else
                    "character_book.entries", file, where, name, user) if book else []
    return Card(
        spec=spec, name=name, description=text(raw.description), personality=text(raw.personality),
        scenario=text(raw.scenario), first_message=text(raw.first_mes),
        examples=parse_examples(raw.mes_example, name, user),
        alternate_greetings=[g for g in (text(g) for g in raw.alternate_greetings) if g],
        tags=list(dict.fromkeys(t for t in (_clean(t) for t in raw.tags) if t)),
        nickname=_clean(raw.nickname), creator=_clean(raw.creator), creator_notes=text(raw.creator_notes),
        character_version=_clean(raw.character_version), system_prompt=_clean(raw.system_prompt),
        post_history_instructions=_clean(raw.post_history_instructions),
        lorebook_name=_clean(str(book.get("name") or "")), lorebook=lore,
    )


def read_card(data: bytes, file: str = "card", *, user: str = DEFAULT_USER,
              max_bytes: int = DEFAULT_MAX_BYTES) -> Card:
    """A SillyTavern character card from the bytes of a `.png` or `.json` file.

    PNG is recognised by its signature, whatever the file name; anything else must be
    UTF-8 JSON. `user` replaces the `{{user}}` macro.
    """
    data = bytes(data)
    _check_size(data, file, max_bytes)
    if data.startswith(PNG_SIGNATURE):
        obj, where = _card_from_png(data, file, max_bytes)
        return _card_from_object(obj, f"the card in {where}", file, user)
    if _looks_binary(data) is not None:
        raise _binary_error(data, file, "a character card (PNG or JSON)")
    if file.lower().endswith(".png"):
        raise StoryFormatError("this is not a PNG image (its signature is wrong).", file=file)
    return _card_from_object(_json_text(data, file), "the card", file, user)


# --------------------------------------------------------------------------- lorebooks


def _key_list(value: list[str] | str) -> list[str]:
    items = value.split(",") if isinstance(value, str) else value
    return list(dict.fromkeys(k for k in (_clean(k) for k in items) if k))


def _entry_name(path: str, index: str, raw: _RawEntry | dict[str, Any] | None) -> str:
    where = f"{path}[{index}]"
    uid = raw.uid if isinstance(raw, _RawEntry) else (raw or {}).get("uid", (raw or {}).get("id"))
    if uid is not None and str(uid) != index.strip('"'):
        where += f" (uid {uid})"
    title = raw.comment or raw.name if isinstance(raw, _RawEntry) else None
    if title:
        where += f" {_clean(title)[:60]!r}"
    return where


def _entries(entries: Any, path: str, file: str, owner: str | None,
             char: str | None = None, user: str = DEFAULT_USER) -> list[LoreEntry]:
    """Lore entries of `entries` (a dict keyed by uid or a list); `owner` names the card they
    belong to, for the messages."""
    of = f" of {owner}" if owner else ""
    if isinstance(entries, dict):
        items = [(f'"{k}"', v) for k, v in entries.items()]
    elif isinstance(entries, list):
        items = [(str(i), v) for i, v in enumerate(entries)]
    else:
        raise StoryFormatError(f'"{path}"{of} must be an object keyed by uid or a list.', file=file)
    out: list[LoreEntry] = []
    for index, value in items:
        if not isinstance(value, dict):
            raise StoryFormatError(f"the entry {path}[{index}]{of} must be a JSON object.", file=file)
        try:
            raw = _RawEntry.model_validate(value)
        except ValidationError as exc:
            where = _entry_name(path, index, value)
            raise StoryFormatError(f"the entry {where}{of} has an invalid field "
                                   f"{_validation_reason(exc)}.", file=file) from None
        where = _entry_name(path, index, raw)

        def text(value: str) -> str:
            value = _clean(value)
            return replace_macros(value, char, user) if char else value

        content = text(raw.content)
        keys = [text(k) for k in _key_list(raw.keys)]
        if not content:
            raise StoryFormatError(f"the entry {where}{of} has no content.", file=file)
        if not keys and not raw.constant:
            raise StoryFormatError(f"the entry {where}{of} has no keys (only a constant entry may "
                                   "have none).", file=file)
        enabled = not raw.disable if raw.disable is not None else raw.enabled is not False
        out.append(LoreEntry(
            keys=keys, secondary_keys=[text(k) for k in _key_list(raw.secondary_keys)],
            title=_clean(raw.comment) or _clean(raw.name), content=content, enabled=enabled,
            constant=raw.constant, order=round(raw.order) if raw.order is not None else 100,
        ))
    return out


def read_world_info(data: bytes, file: str = "world info", *, char: str | None = None,
                    user: str = DEFAULT_USER, max_bytes: int = DEFAULT_MAX_BYTES) -> list[LoreEntry]:
    """The entries of a SillyTavern World Info (lorebook) JSON file.

    Macros are left as written unless `char` is given (a standalone World Info file
    belongs to no character).
    """
    data = bytes(data)
    _check_size(data, file, max_bytes)
    if data.startswith(PNG_SIGNATURE):
        raise StoryFormatError("this is a PNG image, not a World Info file; read it as a character "
                               "card.", file=file)
    if _looks_binary(data) is not None:
        raise _binary_error(data, file, "a World Info file")
    obj = _json_text(data, file)
    if not isinstance(obj, dict) or "entries" not in obj:
        raise StoryFormatError('this is not a World Info file: expected a JSON object with "entries".',
                               file=file)
    return _entries(obj["entries"], "entries", file, None, char, user)


# --------------------------------------------------------------------------- writing


def world_info_json(entries: list[LoreEntry], name: str) -> str:
    """A World Info file SillyTavern imports: entries keyed by uid strings "0", "1", ..."""
    out: dict[str, Any] = {}
    for uid, entry in enumerate(entries):
        out[str(uid)] = {
            "uid": uid,
            "key": list(entry.keys),
            "keysecondary": list(entry.secondary_keys),
            "comment": entry.title,
            "content": entry.content,
            "constant": entry.constant,
            "vectorized": False,
            "selective": True,
            "selectiveLogic": 0,
            "addMemo": bool(entry.title),
            "order": entry.order,
            "position": 0,  # before the character definitions
            "disable": not entry.enabled,
            "ignoreBudget": False,
            "excludeRecursion": False,
            "preventRecursion": False,
            "delayUntilRecursion": 0,
            "probability": 100,
            "useProbability": True,
            "depth": _WORLD_DEFAULT_DEPTH,
            "group": "",
            "groupOverride": False,
            "groupWeight": 100,
            "scanDepth": None,
            "caseSensitive": None,
            "matchWholeWords": None,
            "useGroupScoring": None,
            "automationId": "",
            "role": 0,
            "sticky": None,
            "cooldown": None,
            "delay": None,
            "displayIndex": uid,
        }
    return json.dumps({"name": name, "entries": out}, ensure_ascii=False, indent=4)


def _book_entry(uid: int, entry: LoreEntry) -> dict[str, Any]:
    return {
        "id": uid,
        "keys": list(entry.keys),
        "secondary_keys": list(entry.secondary_keys),
        "comment": entry.title,
        "name": entry.title,
        "content": entry.content,
        "constant": entry.constant,
        "selective": bool(entry.secondary_keys),
        "insertion_order": entry.order,
        "enabled": entry.enabled,
        "position": "before_char",
        "extensions": {},
    }


def card_json(card: Card) -> str:
    """A `chara_card_v2` card for `card`, with the v1 fields repeated at the top for old readers."""
    mes_example = examples_text(card.examples, card.name)
    data: dict[str, Any] = {
        "name": card.name,
        "description": card.description,
        "personality": card.personality,
        "scenario": card.scenario,
        "first_mes": card.first_message,
        "mes_example": mes_example,
        "creator_notes": card.creator_notes,
        "system_prompt": card.system_prompt,
        "post_history_instructions": card.post_history_instructions,
        "alternate_greetings": list(card.alternate_greetings),
        "tags": list(card.tags),
        "creator": card.creator,
        "character_version": card.character_version,
        "extensions": {},
    }
    if card.lorebook:
        data["character_book"] = {
            "name": card.lorebook_name or f"{card.name}'s lorebook",
            "extensions": {},
            "entries": [_book_entry(uid, e) for uid, e in enumerate(card.lorebook)],
        }
    top = {key: data[key] for key in ("name", "description", "personality", "scenario", "first_mes",
                                      "mes_example")}
    return json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": data, **top},
                      ensure_ascii=False, indent=2)


def _chunk(ctype: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + ctype + body + struct.pack(">I", zlib.crc32(ctype + body))


def png_with_card(png_bytes: bytes, card_json_text: str, keyword: str = "chara") -> bytes:
    """`png_bytes` with a tEXt chunk `keyword` (base64 of the card's UTF-8 JSON) before IEND.

    An existing card chunk with the same keyword is replaced; writing `chara` also drops a
    `ccv3` chunk, which readers would otherwise prefer over the new card.
    """
    if not 1 <= len(keyword) <= 79 or "\x00" in keyword or not keyword.isascii():
        raise ValueError(f"a PNG text keyword must be 1 to 79 ASCII characters, not {keyword!r}")
    chunks = _png_chunks(bytes(png_bytes), "PNG image")
    if not chunks or chunks[-1][0] != b"IEND":
        raise StoryFormatError("the PNG image has no IEND chunk.", file="PNG image")
    drop = {keyword.lower()} | ({"ccv3"} if keyword.lower() == "chara" else set())
    kept = [c for c in chunks if not (c[0] in _TEXT_CHUNKS and _text_chunk(c[1])[0].lower() in drop)]
    payload = base64.b64encode(card_json_text.encode("utf-8"))
    text = (b"tEXt", keyword.encode("ascii") + b"\x00" + payload, True)
    kept.insert(len(kept) - 1, text)
    return PNG_SIGNATURE + b"".join(_chunk(ctype, body) for ctype, body, _ in kept)


# --------------------------------------------------------------------------- memory export


def bookmark_entries(bookmarks: list[tuple[str, str, str, list[str]]]) -> list[LoreEntry]:
    """Lore entries for what the memory learned: (type, title, text, keys) per bookmark.

    `keys` are the subject and its aliases (the subject first). The entry's title is
    "subject: title" (just the title when it is the subject). Bookmarks with no text are
    skipped; one with no keys is keyed by its title.
    """
    out: list[LoreEntry] = []
    for kind, title, text, keys in bookmarks:
        if kind not in ("concept", "state", "behavioral"):
            raise ValueError(f"unknown bookmark type {kind!r}")
        content = _clean(text)
        if not content:
            continue
        title = _clean(title)
        cleaned = list(dict.fromkeys(k for k in (_clean(k) for k in keys) if k)) or ([title] if title else [])
        if not cleaned:
            raise ValueError(f"a {kind} bookmark needs a title or keys")
        subject = cleaned[0]
        label = title if not title or title.casefold() == subject.casefold() else f"{subject}: {title}"
        out.append(LoreEntry(keys=cleaned, title=label or subject, content=content))
    return out

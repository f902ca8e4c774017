"""SillyTavern World Info / lorebooks: read (dict- or list-keyed entries, SillyTavern's or
the card spec's field names), written, and made from what the memory learned."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from bookmarks.errors import StoryFormatError
from bookmarks.stories.sillytavern import (
    _WORLD_DEFAULT_DEPTH,
    DEFAULT_MAX_BYTES,
    DEFAULT_USER,
    PNG_SIGNATURE,
    LoreEntry,
    _binary_error,
    _check_size,
    _clean,
    _json_text,
    _looks_binary,
    _RawEntry,
    _validation_reason,
    replace_macros,
)

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

"""SillyTavern character cards: v1 (TavernAI), v2 and v3 read from JSON or PNG, and a v2
card written (see sillytavern.py for the fields used and ignored)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from bookmarks.errors import StoryFormatError
from bookmarks.stories.sillytavern import (
    _SPECS,
    DEFAULT_MAX_BYTES,
    DEFAULT_USER,
    MAX_NAME_CHARS,
    PNG_SIGNATURE,
    Card,
    _binary_error,
    _check_size,
    _clean,
    _json_text,
    _looks_binary,
    _RawCard,
    _validation_reason,
    examples_text,
    parse_examples,
    replace_macros,
)
from bookmarks.stories.sillytavern_lorebook import _book_entry, _entries
from bookmarks.stories.sillytavern_png import _card_from_png

# --------------------------------------------------------------------------- cards


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

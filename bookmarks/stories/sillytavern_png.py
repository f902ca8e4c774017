"""SillyTavern PNG containers: a card read from, and written into, a PNG's text chunks
(`ccv3` preferred over `chara`; tEXt, zTXt and iTXt)."""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
import zlib
from typing import Any

from bookmarks.errors import StoryFormatError
from bookmarks.stories.sillytavern import (
    _TEXT_CHUNKS,
    CARD_KEYWORDS,
    PNG_SIGNATURE,
)

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

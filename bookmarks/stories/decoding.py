"""Bytes of an uploaded text file → text, and the size limit's message.

Shared by every reader of untrusted files (stories, meta and question files, cards, World
Info). Text is UTF-8 (with or without a byte order mark), UTF-16 (with a BOM, or without
one when the zero bytes of mostly-ASCII text show its byte order) or UTF-32 with a BOM;
anything else that holds zero bytes is binary. Decoding is strict: a byte that cannot be
decoded is an error naming its line, never a replacement character.
"""

from __future__ import annotations

import codecs

from bookmarks.errors import StoryFormatError

# longest first: the UTF-32 LE mark begins with the UTF-16 LE one
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"), (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
         (codecs.BOM_UTF8, "utf-8", "UTF-8"), (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
         (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"))
_SAMPLE = 8192


def text_encoding(data: bytes) -> tuple[str, int, str]:
    """(codec, bytes of byte order mark to skip, name for messages) of text `data`, or
    ("", 0, "") when the data holds zero bytes that no text encoding explains (binary)."""
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            return codec, len(bom), label
    head = data[:_SAMPLE]
    if b"\x00" not in head:
        return "utf-8", 0, "UTF-8"
    pairs = len(head) // 2
    if pairs >= 2:
        even = head[0:pairs * 2:2].count(0)  # the high bytes of ASCII text in UTF-16 BE
        odd = head[1:pairs * 2:2].count(0)  # … in UTF-16 LE
        if odd >= pairs * 0.3 and even == 0:
            return "utf-16-le", 0, "UTF-16"
        if even >= pairs * 0.3 and odd == 0:
            return "utf-16-be", 0, "UTF-16"
    return "", 0, ""


def looks_like_text(data: bytes) -> bool:
    """True when `data` is (or claims to be) text in an encoding `decode_text` reads."""
    return bool(text_encoding(data)[0])


def decode_text(data: bytes, file: str, *, advice: str = "save it as UTF-8 and try again") -> str:
    """The text of `data`, or a `StoryFormatError` naming the file, the line and the reason
    (binary data, a byte sequence the encoding cannot decode, no text at all)."""
    codec, skip, label = text_encoding(data)
    if not codec:
        raise StoryFormatError("this looks like a binary file, not a text file.", file=file)
    body = data[skip:]
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as exc:
        line = body[: exc.start].decode(codec, errors="replace").count("\n") + 1
        what = f"byte 0x{body[exc.start]:02x}" if exc.start < len(body) else "the last byte"
        raise StoryFormatError(
            f"the file is not {label} text ({what} at offset {exc.start + skip} cannot be "
            f"decoded); {advice}.", file=file, line=line) from None
    if "\x00" in text or _unprintable_share(text) > 0.1:
        raise StoryFormatError("this looks like a binary file, not a text file.", file=file)
    if not text.strip():
        raise StoryFormatError("the file is empty.", file=file)
    return text


def _unprintable_share(text: str) -> float:
    sample = text[:_SAMPLE]
    if not sample:
        return 0.0
    return sum(not (ch.isprintable() or ch.isspace()) for ch in sample) / len(sample)


# --------------------------------------------------------------------------- size limit

_MB = 1_000_000


def size_message(size: int, limit: int) -> str:
    """"the file is 52.4 MB; the limit is 21.0 MB." — as many decimals as it takes for the
    two numbers to differ, exact bytes when even three do not (or the limit is small)."""
    if limit >= 100_000:
        for digits in (1, 2, 3):
            have, most = f"{size / _MB:.{digits}f}", f"{limit / _MB:.{digits}f}"
            if have != most:
                return f"the file is {have} MB; the limit is {most} MB."
    return f"the file is {size:,} bytes; the limit is {limit:,} bytes."


def check_size(size: int, limit: int, file: str) -> None:
    if size > limit:
        raise StoryFormatError(size_message(size, limit), file=file)

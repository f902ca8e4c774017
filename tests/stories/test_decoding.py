"""Text in any of its usual encodings is text; binary is binary; a size over the limit says
both sizes so that they differ. Every text here was written for these tests."""

from __future__ import annotations

import codecs
import json

import pytest

from bookmarks.errors import StoryFormatError
from bookmarks.stories.decoding import decode_text, size_message
from bookmarks.stories.importers import load_story, parse_story
from bookmarks.stories.sillytavern_card import read_card
from bookmarks.stories.sillytavern_lorebook import read_world_info

SCRIPT = "## Scène 1\nANNA: Grüß dich — ça va?\nBEN: Très bien.\n[Ils s’assoient.]\n"


@pytest.mark.parametrize("data", [
    SCRIPT.encode("utf-8"),
    codecs.BOM_UTF8 + SCRIPT.encode("utf-8"),
    codecs.BOM_UTF16_LE + SCRIPT.encode("utf-16-le"),
    codecs.BOM_UTF16_BE + SCRIPT.encode("utf-16-be"),
    SCRIPT.encode("utf-16"),  # the platform's order, with its mark
    SCRIPT.encode("utf-16-le"),  # no mark: the order from where the zero bytes are
    SCRIPT.encode("utf-16-be"),
    SCRIPT.replace("\n", "\r\n").encode("utf-16"),  # as Windows Notepad saves it
    SCRIPT.encode("utf-32"),
], ids=["utf8", "utf8-bom", "utf16le-bom", "utf16be-bom", "utf16", "utf16le", "utf16be",
        "utf16-crlf", "utf32"])
def test_a_story_in_any_usual_encoding_reads_the_same(data):
    story = parse_story(data, "duet.txt")
    assert [(a.character, a.text, a.chapter) for a in story.actions] == [
        ("Anna", "Grüß dich — ça va?", "Scène 1"), ("Ben", "Très bien.", "Scène 1"),
        ("narration", "Ils s’assoient.", "Scène 1")]


def test_meta_and_questions_files_with_a_byte_order_mark(tmp_path):
    (tmp_path / "duet.txt").write_bytes(SCRIPT.encode("utf-16"))
    meta = {"title": "Duet", "author": "Zoë", "characters": [{"name": "Anna", "aliases": ["Ann"]}]}
    (tmp_path / "duet.meta.json").write_bytes(codecs.BOM_UTF8 + json.dumps(meta).encode())
    question = {"id": "q1", "question": "Who?", "options": {"A": "Anna", "B": "Ben"}, "answer": "A"}
    (tmp_path / "duet.questions.jsonl").write_bytes(json.dumps(question).encode("utf-16"))
    story = load_story(tmp_path / "duet.txt")
    assert (story.title, story.author) == ("Duet", "Zoë")
    assert story.characters[0].aliases == ["Ann"] and story.questions[0].id == "q1"


@pytest.mark.parametrize("data,reason,line", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary", None),
    (bytes(range(256)) * 4, "binary", None),
    (b"A: fine\nB: caf\xe9\n", "not UTF-8 text (byte 0xe9 at offset 14", 2),
    (codecs.BOM_UTF16_LE + "A: fine\nB: fine\n".encode("utf-16-le") + b"\x00\xdc", "not UTF-16 text",
     3),  # a lone low surrogate
    (codecs.BOM_UTF16_LE + "A: odd".encode("utf-16-le") + b"A", "not UTF-16 text", 1),
    ("\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f".encode("utf-16-le") * 10, "binary", None),
    (codecs.BOM_UTF16_LE + "  \n".encode("utf-16-le"), "empty", None),
])
def test_what_is_not_text_says_why(data, reason, line):
    with pytest.raises(StoryFormatError) as err:
        decode_text(data, "upload.txt")
    assert reason in str(err.value) and err.value.line == line
    assert str(err.value).startswith("upload.txt")


def test_cards_and_world_info_in_utf16():
    card = {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": "Éloïse", "description": "Keeps the ferry’s log."}}
    assert read_card(json.dumps(card, ensure_ascii=False).encode("utf-16"), "c.json").name == "Éloïse"
    assert read_card(json.dumps(card).encode("utf-16-le"), "c.json").description == \
        "Keeps the ferry’s log."
    world = {"entries": {"0": {"key": ["ferry"], "content": "The ferry’s bell is cracked."}}}
    entries = read_world_info(codecs.BOM_UTF8 + json.dumps(world).encode(), "w.json")
    assert entries[0].content == "The ferry’s bell is cracked."
    assert read_world_info(json.dumps(world).encode("utf-16-be"), "w.json")[0].keys == ["ferry"]


def test_size_messages_state_two_different_sizes():
    limit = 20 * 1024 * 1024  # the default, 20.97 MB
    assert size_message(52_428_800, limit) == "the file is 52.4 MB; the limit is 21.0 MB."
    assert size_message(21_000_000, limit) == "the file is 21.00 MB; the limit is 20.97 MB."
    assert size_message(20_972_000, limit) == "the file is 20.972 MB; the limit is 20.972 MB." \
        or size_message(20_972_000, limit) == "the file is 20,972,000 bytes; the limit is " \
        "20,971,520 bytes."
    assert size_message(limit + 1, limit) == "the file is 20,971,521 bytes; the limit is " \
        "20,971,520 bytes."
    assert size_message(50, 10) == "the file is 50 bytes; the limit is 10 bytes."
    for size in range(limit + 1, limit + 3_000_000, 4099):
        have, most = size_message(size, limit).removeprefix("the file is ").split("; the limit is ")
        assert have != most.rstrip(".")
    with pytest.raises(StoryFormatError, match=r"big.txt: the file is 21,000,001 bytes; the "
                                               r"limit is 21,000,000 bytes\."):
        parse_story(b"x" * 21_000_001, "big.txt", max_bytes=21_000_000)
    with pytest.raises(StoryFormatError, match=r"the file is 2,001 bytes; the limit is 2,000"):
        read_card(b" " * 2001, "big.json", max_bytes=2000)

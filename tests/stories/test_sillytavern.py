"""SillyTavern cards and World Info: reading JSON and PNG, errors, and round trips.

Every card and lorebook here was written for these tests.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest

from bookmarks.errors import StoryFormatError
from bookmarks.stories.sillytavern import Card, LoreEntry, parse_examples
from bookmarks.stories.sillytavern_card import card_json, read_card
from bookmarks.stories.sillytavern_lorebook import bookmark_entries, read_world_info, world_info_json
from bookmarks.stories.sillytavern_png import png_with_card

DATA = Path(__file__).resolve().parent.parent / "data"


def chunk(ctype: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + ctype + body + struct.pack(">I", zlib.crc32(ctype + body))


def tiny_png() -> bytes:
    """A valid 1x1 RGB PNG."""
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\xff\x80\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def png_chunk_types(png: bytes) -> list[bytes]:
    types, pos = [], 8
    while pos < len(png):
        length, ctype = struct.unpack(">I4s", png[pos:pos + 8])
        types.append(ctype)
        pos += 12 + length
    return types


def b64(obj) -> bytes:
    return base64.b64encode(json.dumps(obj).encode())


def v2(**data) -> dict:
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Ivo", **data}}


def v3(**data) -> dict:
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Ivo", **data}}


def card_bytes(obj) -> bytes:
    return json.dumps(obj).encode()


def error_of(fn, *args, **kw) -> StoryFormatError:
    with pytest.raises(StoryFormatError) as err:
        fn(*args, **kw)
    return err.value


# --------------------------------------------------------------------------- cards


def test_v2_json_card_with_lorebook_from_file():
    card = read_card((DATA / "st_card_v2_lorebook.json").read_bytes(), "st_card_v2_lorebook.json")
    assert card.spec == "v2" and card.name == "Wren"
    assert card.description == "Wren keeps the lighthouse on Gull Rock and distrusts User."
    assert card.scenario == "A storm strands User at Wren's lighthouse."
    assert card.first_message == "*Wren squints at the door.* You're dripping on my floor, User."
    assert card.alternate_greetings == ["*Wren lights a lantern.* Who's there?"]
    assert card.tags == ["lighthouse", "drama"]
    assert card.creator == "tests" and card.character_version == "1.2"
    assert card.creator_notes == "Written for the Bookmarks tests."
    assert card.examples == [
        [("User", "Is the lamp always lit?"),
         ("Wren", "Every night for thirty years.\n*She taps the brass.*")],
        [("Wren", "Tea's on the stove."), ("User", "Thank you.")],
    ]
    assert card.example_dialogue[0] == ("User", "Is the lamp always lit?") and len(card.example_dialogue) == 4
    assert card.lorebook_name == "Gull Rock"
    lamp, tomas, weather = card.lorebook
    assert lamp == LoreEntry(keys=["lamp", "lens"], title="The lamp", order=100,
                             content="The Fresnel lens came from France in 1890; Wren polishes it daily.")
    assert tomas.title == "Tomas" and tomas.enabled is False and tomas.secondary_keys == ["drowned"]
    assert tomas.order == 50
    assert weather.constant and weather.keys == [] and weather.title == "Weather"
    character = card.character()
    assert character.name == "Wren" and character.major


def test_v3_json_card_reads_v3_fields():
    card = read_card(card_bytes(v3(nickname="Ivy", description="{{Char}} and <USER>.",
                                   group_only_greetings=["hi all"], assets=[{"type": "icon"}],
                                   creation_date=1700000000, character_version=3)),
                     "ivo.json", user="Sam")
    assert card.spec == "v3" and card.nickname == "Ivy" and card.description == "Ivo and Sam."
    assert card.character_version == "3"
    assert card.character().aliases == ["Ivy"]


def test_legacy_v1_card_without_spec():
    card = read_card(card_bytes({"name": "Old", "description": "<BOT> is old.", "first_mes": "Hm.",
                                 "mes_example": "<START>\n<USER>: hi\n<BOT>: hello"}), "old.json")
    assert card.spec == "v1" and card.description == "Old is old." and card.first_message == "Hm."
    assert card.example_dialogue == [("User", "hi"), ("Old", "hello")]


def test_nulls_are_treated_as_absent():
    card = read_card(card_bytes(v2(description=None, tags=None, character_book=None)), "n.json")
    assert card.description == "" and card.tags == [] and card.lorebook == []


def test_v2_png_card():
    png = png_with_card(tiny_png(), json.dumps(v2(description="A {{char}} card.")))
    assert png_chunk_types(png) == [b"IHDR", b"IDAT", b"tEXt", b"IEND"]
    card = read_card(png, "ivo.png")
    assert card.spec == "v2" and card.description == "A Ivo card."


def test_v3_png_prefers_ccv3_over_chara():
    png = png_with_card(tiny_png(), json.dumps(v2(description="from chara")))
    png = png_with_card(png, json.dumps(v3(description="from ccv3")), keyword="ccv3")
    assert png_chunk_types(png).count(b"tEXt") == 2
    card = read_card(png, "both.png")
    assert card.spec == "v3" and card.description == "from ccv3"
    # Writing a new chara card drops the stale ccv3 chunk that readers would prefer.
    png = png_with_card(png, json.dumps(v2(description="new")))
    assert png_chunk_types(png).count(b"tEXt") == 1
    assert read_card(png, "new.png").description == "new"


def test_png_card_in_itxt_and_ztxt_chunks():
    body = b64(v2(description="itxt"))
    itxt = chunk(b"iTXt", b"chara\x00\x01\x00\x00\x00" + zlib.compress(body))
    png = tiny_png()
    assert read_card(png[:-12] + itxt + png[-12:], "i.png").description == "itxt"
    ztxt = chunk(b"zTXt", b"Chara\x00\x00" + zlib.compress(b64(v2(description="ztxt"))))
    assert read_card(png[:-12] + ztxt + png[-12:], "z.png").description == "ztxt"


def test_examples_parsing_and_macros():
    text = ("<START>\n*narration first*\n{{user}}: Hello {{char}}.\n{{char}}: Hi, {{user}}!\n\n"
            "Second line.\n<start>\n\n<START>\nIvo: Named label.\nSam: Back.\nNot a label: still Ivo")
    blocks = parse_examples(text, "Ivo", "Sam")
    assert blocks == [
        [("Ivo", "*narration first*"), ("Sam", "Hello Ivo."), ("Ivo", "Hi, Sam!\n\nSecond line.")],
        [("Ivo", "Named label."), ("Sam", "Back.\nNot a label: still Ivo")],
    ]
    assert parse_examples("{{char}}: no start tag", "Ivo") == [[("Ivo", "no start tag")]]
    assert parse_examples("", "Ivo") == []


# --------------------------------------------------------------------------- World Info


def test_world_info_dict_keyed_from_file():
    entries = read_world_info((DATA / "st_world_info.json").read_bytes(), "st_world_info.json")
    harbour, mara = entries
    assert harbour.keys == ["harbour", "docks"] and harbour.title == "Harbour" and harbour.enabled
    assert harbour.content == "The harbour freezes every January."
    assert mara.keys == ["Mara", "the smuggler"] and mara.title == "Mara"
    assert mara.secondary_keys == ["boat"] and not mara.enabled and mara.order == 40


def test_world_info_list_keyed_and_card_book_field_names():
    wi = {"entries": [
        {"uid": 7, "key": ["a"], "content": "A.", "comment": "first"},
        {"id": 8, "keys": "b, c", "secondary_keys": ["d"], "name": "second", "content": "B.",
         "enabled": False, "insertion_order": 12.0},
        {"key": [], "content": "Always.", "constant": True},
    ]}
    a, b, c = read_world_info(card_bytes(wi), "list.json")
    assert (a.keys, a.title, a.content, a.enabled) == (["a"], "first", "A.", True)
    assert (b.keys, b.secondary_keys, b.title, b.enabled, b.order) == (["b", "c"], ["d"], "second", False, 12)
    assert c.constant and c.keys == [] and c.title == ""


def test_world_info_macros_only_with_char():
    wi = card_bytes({"entries": {"0": {"key": ["{{char}}"], "content": "{{char}} meets {{user}}."}}})
    assert read_world_info(wi, "w.json")[0].content == "{{char}} meets {{user}}."
    entry = read_world_info(wi, "w.json", char="Ivo", user="Sam")[0]
    assert entry.content == "Ivo meets Sam." and entry.keys == ["Ivo"]


# --------------------------------------------------------------------------- errors


def test_png_without_card_chunk():
    png = tiny_png()
    other = chunk(b"tEXt", b"Comment\x00made by hand")
    err = error_of(read_card, png[:-12] + other + png[-12:], "plain.png")
    assert err.file == "plain.png"
    assert "no character card in its tEXt chunks 'chara' or 'ccv3'" in str(err)
    assert str(err).startswith("plain.png: ")


def test_png_chunk_with_bad_base64_names_the_chunk():
    png = tiny_png()
    bad = png[:-12] + chunk(b"tEXt", b"ccv3\x00not*base64!") + png[-12:]
    err = error_of(read_card, bad, "bad64.png")
    assert "bad64.png" in str(err) and "tEXt chunk 'ccv3'" in str(err) and "base64" in str(err)


def test_png_chunk_with_bad_json_names_the_chunk_and_line():
    png = tiny_png()
    payload = base64.b64encode(b'{\n "spec": "chara_card_v2",\n oops}')
    err = error_of(read_card, png[:-12] + chunk(b"tEXt", b"chara\x00" + payload) + png[-12:], "j.png")
    assert "j.png" in str(err) and "chunk 'chara'" in str(err) and "valid JSON" in str(err)
    assert "line 3 of the decoded text" in str(err)


def test_png_chunk_with_bad_checksum():
    png = png_with_card(tiny_png(), json.dumps(v2()))
    pos = png.index(b"tEXtchara") + 10
    damaged = png[:pos] + bytes([png[pos] ^ 1]) + png[pos + 1:]
    err = error_of(read_card, damaged, "crc.png")
    assert "chunk 'chara'" in str(err) and "checksum" in str(err)


def test_truncated_png():
    png = png_with_card(tiny_png(), json.dumps(v2()))
    err = error_of(read_card, png[:60], "cut.png")
    assert "cut.png" in str(err) and "cut off" in str(err)


@pytest.mark.parametrize("obj,needle", [
    ({"spec": "chara_card_v9", "data": {"name": "X"}}, "unknown spec 'chara_card_v9'"),
    ({"spec": "chara_card_v2", "spec_version": "3.0", "data": {"name": "X"}},
     "unknown spec_version '3.0' for 'chara_card_v2'"),
    ({"spec": "chara_card_v3", "spec_version": "banana", "data": {"name": "X"}},
     "unknown spec_version 'banana' for 'chara_card_v3'"),
    ({"spec": "chara_card_v2", "spec_version": "2.0"}, 'no "data" object'),
    ({"data": {"name": "X"}}, 'no "spec"'),
    (v2(name=""), "has no name"),
    (v2(tags="not a list"), '"data.tags"'),
    (v2(character_book={"name": "b"}), 'character_book without "entries"'),
    (["not", "an", "object"], "must be a JSON object"),
])
def test_card_errors_name_file_and_reason(obj, needle):
    err = error_of(read_card, card_bytes(obj), "bad.json")
    assert err.file == "bad.json" and needle in str(err)


def test_unknown_spec_inside_png_names_the_chunk():
    png = png_with_card(tiny_png(), json.dumps({"spec": "chara_card_v4", "data": {"name": "X"}}), "ccv3")
    err = error_of(read_card, png, "v4.png")
    assert "the card in the PNG tEXt chunk 'ccv3' has an unknown spec 'chara_card_v4'" in str(err)


def test_card_lorebook_entry_errors_name_the_entry():
    book = {"entries": [{"keys": ["ok"], "content": "fine"},
                        {"id": 5, "keys": ["x"], "content": "  ", "comment": "Empty one"}]}
    err = error_of(read_card, card_bytes(v2(character_book=book)), "book.json")
    assert str(err) == ("book.json: the entry data.character_book.entries[1] (uid 5) 'Empty one' of the "
                        "card has no content.")
    book = {"entries": [{"id": 9, "keys": [" ", ""], "content": "text"}]}
    err = error_of(read_card, card_bytes(v2(character_book=book)), "book.json")
    assert "character_book.entries[0] (uid 9)" in str(err) and "has no keys" in str(err)


@pytest.mark.parametrize("entries,needle", [
    ({"4": {"uid": 4, "key": ["k"], "content": ""}}, 'entries["4"]'),
    ({"4": {"uid": 4, "key": [], "content": "c", "comment": "Keyless"}},
     "the entry entries[\"4\"] 'Keyless' has no keys"),
    ([{"key": ["k"]}], "entries[0] has no content"),
    ([{"key": ["k"], "content": 5}], 'entries[0] has an invalid field "content"'),
    ([{"key": [1], "content": "c"}], 'invalid field "key[0]": Input should be a valid string'),
    ([{"key": ["k"], "content": "c", "disable": "maybe"}], 'invalid field "disable"'),
    ([["not an object"]], "entries[0] must be a JSON object"),
    ("nope", '"entries" must be an object keyed by uid or a list'),
])
def test_world_info_entry_errors(entries, needle):
    err = error_of(read_world_info, card_bytes({"entries": entries}), "world.json")
    assert err.file == "world.json" and needle in str(err)


def test_world_info_not_a_world_info_file():
    assert 'with "entries"' in str(error_of(read_world_info, b'{"name": "x"}', "w.json"))
    assert "PNG image" in str(error_of(read_world_info, tiny_png(), "w.png"))


def test_json_syntax_error_has_line():
    err = error_of(read_card, b'{\n"spec": "chara_card_v2",\n"data": {\n}}}', "syntax.json")
    assert err.line == 4 and "syntax.json, line 4" in str(err)
    err = error_of(read_world_info, b'{"entries": {\n"0": }', "w.json")
    assert err.line == 2


def test_file_over_max_bytes():
    err = error_of(read_card, card_bytes(v2(description="x" * 2000)), "big.json", max_bytes=1000)
    assert "big.json" in str(err) and "limit" in str(err)
    err = error_of(read_world_info, b" " * 50, "big-wi.json", max_bytes=10)
    assert "big-wi.json" in str(err) and "limit" in str(err)


@pytest.mark.parametrize("data,needle", [
    (b"\xff\xd8\xff\xe0" + b"\x00" * 40, "JPEG image"),
    (b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 20, "WEBP image"),
    (b"\x01\x02\x00\x03binary", "binary file"),
])
def test_non_png_binary(data, needle):
    err = error_of(read_card, data, "odd.png")
    assert err.file == "odd.png" and needle in str(err) and "not a character card" in str(err)


def test_png_name_but_text_content_and_non_utf8():
    assert "not a PNG image" in str(error_of(read_card, b"hello", "fake.png"))
    err = error_of(read_card, b'{"name": "caf\xe9"}', "latin.json")
    assert "UTF-8" in str(err) and err.line == 1


# --------------------------------------------------------------------------- writing and round trips


def test_world_info_round_trip():
    entries = [
        LoreEntry(keys=["Mara", "smuggler"], secondary_keys=["boat"], title="Mara", content="Smuggles tea."),
        LoreEntry(keys=["harbour"], content="Freezes in January.", enabled=False, order=7),
        LoreEntry(keys=[], content="It always rains.", constant=True, title="Weather"),
    ]
    text = world_info_json(entries, "Gull Rock")
    obj = json.loads(text)
    assert obj["name"] == "Gull Rock" and list(obj["entries"]) == ["0", "1", "2"]
    first = obj["entries"]["0"]
    for field in ("uid", "key", "keysecondary", "comment", "content", "constant", "selective", "order",
                  "position", "disable", "addMemo", "excludeRecursion", "probability", "useProbability",
                  "depth", "group"):
        assert field in first
    assert first["uid"] == 0 and first["key"] == ["Mara", "smuggler"] and first["disable"] is False
    assert obj["entries"]["1"]["comment"] == "harbour" and obj["entries"]["1"]["disable"] is True
    assert read_world_info(text.encode(), "out.json") == entries


def test_card_json_round_trip():
    card = read_card((DATA / "st_card_v2_lorebook.json").read_bytes(), "st_card_v2_lorebook.json")
    text = card_json(card)
    obj = json.loads(text)
    assert obj["spec"] == "chara_card_v2" and obj["spec_version"] == "2.0"
    assert obj["name"] == obj["data"]["name"] == "Wren" and obj["first_mes"] == card.first_message
    assert obj["data"]["mes_example"].startswith("<START>\n{{user}}: Is the lamp always lit?")
    again = read_card(text.encode(), "again.json")
    assert again == card
    png_again = read_card(png_with_card(tiny_png(), text), "again.png")
    assert png_again == card


def test_card_json_round_trip_of_a_built_card():
    card = Card(name="Ivo", description="d", personality="p", scenario="s", first_message="f",
                examples=[[("Ivo", "one"), ("User", "two\nlines")]], alternate_greetings=["g"],
                tags=["t"], creator="c", creator_notes="n", character_version="1", system_prompt="sp",
                post_history_instructions="ph")
    again = read_card(card_json(card).encode(), "built.json")
    assert again == card


def test_png_with_card_rejects_bad_input():
    with pytest.raises(StoryFormatError):
        png_with_card(b"not a png", "{}")
    with pytest.raises(ValueError):
        png_with_card(tiny_png(), "{}", keyword="")
    no_iend = tiny_png()[:-12]
    with pytest.raises(StoryFormatError, match="IEND"):
        png_with_card(no_iend, "{}")


def test_bookmark_entries_export():
    entries = bookmark_entries([
        ("concept", "Mara", "A smuggler with a red boat.", ["Mara", "the smuggler", "mara"]),
        ("state", "mood", "Angry since the raid.", ["Mara", "the smuggler"]),
        ("state", "empty", "   ", ["Mara"]),
        ("concept", "Gull Rock", "An island.", []),
    ])
    assert [e.title for e in entries] == ["Mara", "Mara: mood", "Gull Rock"]
    assert entries[0].keys == ["Mara", "the smuggler", "mara"]
    assert entries[2].keys == ["Gull Rock"]
    again = read_world_info(world_info_json(entries, "memory").encode(), "memory.json")
    assert again == entries
    with pytest.raises(ValueError):
        bookmark_entries([("profile", "x", "y", ["k"])])


def test_damaged_inputs_raise_only_story_format_errors():
    """Bytes flipped, cut and inserted anywhere in a PNG card, a JSON card and a World Info
    file give a StoryFormatError or a valid result, never another exception."""
    import random

    rng = random.Random(7)
    card_text = (DATA / "st_card_v2_lorebook.json").read_bytes()
    originals = [png_with_card(tiny_png(), card_text.decode()), card_text,
                 (DATA / "st_world_info.json").read_bytes()]
    for _ in range(600):
        data = bytearray(rng.choice(originals))
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(data))
            op = rng.random()
            if op < 0.4:
                data[pos] = rng.randrange(256)
            elif op < 0.7:
                del data[pos:pos + rng.randint(1, 20)]
            else:
                data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 5)))
        for reader in (read_card, read_world_info):
            try:
                reader(bytes(data), "fuzzed")
            except StoryFormatError as err:
                assert str(err).startswith("fuzzed")

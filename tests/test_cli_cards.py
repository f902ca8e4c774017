"""`bookmarks export --story`, `bookmarks card add` and `bookmarks lore add` as a user runs
them (a real process, a real database file). Every card and lorebook here was written for
these tests."""

from __future__ import annotations

import json

from bookmarks.engine.cards import unique_lore
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.recall import visible_bookmarks
from bookmarks.store import Store
from bookmarks.stories.sillytavern import LoreEntry
from tests.test_cli import run, run_env

STORY = [
    {"character": "narration", "text": "The quay at dusk. Ada and Ben wait by the gate.",
     "chapter": "One"},
    {"character": "Ada", "text": "The gate sings at seven waves,\nand sleeps at eight.",
     "chapter": "One"},
    {"character": "Ben", "text": "Then we wait for eight.", "chapter": "One"},
    {"character": "narration", "text": "Ben leaves.", "chapter": "One", "present": []},
    {"character": "Ada", "text": "Alone again.", "chapter": "Two"},
    {"character": "Ben", "text": "Not quite.", "chapter": "Two"},
]
META = {"title": "Quay", "author": "A. Writer", "description": "Two at a gate.",
        "characters": [{"name": "Ada", "aliases": ["Miss Ada"], "major": True},
                       {"name": "Ben", "aliases": ["Benjamin"], "major": True}]}
GATE = {"keys": ["gate"], "content": "The harbour gate has a brass whistle in its hinge.",
        "comment": "The singing gate"}
CARD = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
    "name": "Marisol Quill", "description": "A cartographer who maps tides by ear.",
    "personality": "Patient, dry.", "scenario": "{{char}} charts the gate's tides.",
    "first_mes": "Seven waves, {{user}}.",
    "mes_example": "<START>\n{{user}}: What are you doing?\n{{char}}: Counting. Hush.",
    "character_book": {"entries": [GATE, {"keys": ["lighthouse"],
                                          "content": "The lighthouse is dark."}]}}}
# the card's book exported as World Info: the gate again (keys in another case, spacing),
# and one entry of its own
WORLD = {"entries": {"0": {"uid": 0, "key": ["GATE"], "comment": "Gate",
                           "content": "The harbour gate has a brass whistle  in its hinge."},
                     "1": {"uid": 1, "key": ["tide"], "content": "Spring tides flood the quay."}}}


def setup(tmp_path) -> None:
    (tmp_path / "quay.jsonl").write_text("".join(json.dumps(r) + "\n" for r in STORY))
    (tmp_path / "quay.meta.json").write_text(json.dumps(META))
    (tmp_path / "card.json").write_text(json.dumps(CARD))
    (tmp_path / "world.json").write_text(json.dumps(WORLD))
    out = run(tmp_path, "import", str(tmp_path / "quay.jsonl"))
    assert out.returncode == 0, out.stderr


def store_of(tmp_path) -> Store:
    return Store(tmp_path / "data" / "bookmarks.db")


def test_a_story_goes_out_and_back_in_over_the_cli(tmp_path):
    setup(tmp_path)
    (tmp_path / "out").mkdir()
    out = run(tmp_path, "export", "--story", "1", "--format", "jsonl", "--out",
              str(tmp_path / "out" / "quay2.jsonl"))
    assert out.returncode == 0, out.stderr
    assert "quay2.jsonl" in out.stdout and "quay2.meta.json" in out.stdout
    assert run(tmp_path, "import", str(tmp_path / "out" / "quay2.jsonl")).returncode == 0
    out = run(tmp_path, "export", "--story", "2", "--format", "fountain", "--out",
              str(tmp_path / "out"))  # a folder: named after the title
    assert out.returncode == 0, out.stderr
    fountain = tmp_path / "out" / "quay.fountain"
    assert "Author: A. Writer" in fountain.read_text() and "seven waves,\nand sleeps" in \
        fountain.read_text()
    assert run(tmp_path, "import", str(fountain)).returncode == 0
    store = store_of(tmp_path)
    try:
        # the same storyline (where each line starts differs: each is its own file)
        first, second, third = ([a.model_copy(update={"line": None}) for a in store.actions(i)]
                                for i in (1, 2, 3))
        assert first == second == third
        assert [c.aliases for c in store.characters(3)] == [["Miss Ada"], ["Benjamin"]]
        assert store.story(3).author == "A. Writer" and store.story(2).description == "Two at a gate."
        assert store.presence(2) == store.presence(1)
    finally:
        store.close()
    # on stdout: the storyline, and a word on the sidecar files
    out = run(tmp_path, "export", "--story", "1")
    assert out.returncode == 0 and len(out.stdout.splitlines()) == len(STORY)
    assert json.loads(out.stdout.splitlines()[3])["present"] == []
    assert "--out" in out.stderr
    out = run(tmp_path, "export", "--story", "1", "--format", "markdown")
    assert out.returncode == 1 and "jsonl or fountain" in out.stderr
    out = run(tmp_path, "export", "--story", "9", "--format", "jsonl")
    assert out.returncode == 1 and "no story with id 9" in out.stderr


def test_a_card_starts_a_scene_with_one_copy_of_each_lore_entry(tmp_path):
    setup(tmp_path)
    out = run(tmp_path, "card", "add", str(tmp_path / "card.json"), "--lore",
              str(tmp_path / "world.json"), "--story", "1", "--cast", "ada", "--at", "3",
              "--user", "Ben")
    assert out.returncode == 0, out.stderr
    assert "Scene 1" in out.stdout and "1 duplicate entry left out" in out.stdout
    assert "3 lore entries" in out.stdout
    store = store_of(tmp_path)
    try:
        scene = store.scene(1)
        assert scene.cast == ["Ada", "Marisol Quill"] and scene.start_point == 3
        assert [t.text for t in store.turns(1)] == ["Seven waves, Ben."]
        lineage = Lineage.of(store, scene.branch_id)
        memory = visible_bookmarks(store, 1, "story", lineage, lineage.length(store))
        gates = [b for b in memory if "brass whistle" in getattr(b.content, "description", "")]
        assert len(gates) == 1 and gates[0].pinned and gates[0].activation == "keys"
        assert {b.title for b in memory} >= {"The singing gate", "lighthouse", "tide"}
        assert all(b.pinned for b in memory)
    finally:
        store.close()
    # a card alone, with no story: a scene on an empty stage, as in the Play tab
    out = run(tmp_path, "card", "add", str(tmp_path / "card.json"))
    assert out.returncode == 0 and "on an empty stage" in out.stdout, out.stderr
    store = store_of(tmp_path)
    try:
        assert store.scene(2).cast == ["Marisol Quill", "You"]
    finally:
        store.close()


def test_lore_pinned_to_a_story_reaches_every_scene(tmp_path):
    setup(tmp_path)
    out = run(tmp_path, "lore", "add", str(tmp_path / "world.json"), "--story", "1", "--pin")
    assert out.returncode == 0, out.stderr
    assert "Pinned to story 1" in out.stdout
    out = run(tmp_path, "card", "add", str(tmp_path / "card.json"), "--story", "1", "--pin")
    assert out.returncode == 0, out.stderr
    assert "1 already in its memory" in out.stdout  # the card's book repeats the gate
    store = store_of(tmp_path)
    try:
        for knowledge in ("omniscient", "witnessed"):
            scene = store.create_scene(1, start_point=4, cast=["Ada", "Ben"],
                                       settings={"knowledge": knowledge})
            lineage = Lineage.of(store, scene.branch_id)
            space = "story" if knowledge == "omniscient" else "story@Ben"
            titles = {b.title for b in visible_bookmarks(store, 1, space, lineage, 4)}
            assert {"Gate", "tide", "lighthouse"} <= titles and "The singing gate" not in titles
        own = visible_bookmarks(store, 1, "story@Marisol Quill", lineage, 4)
        assert any(b.activation == "self" and b.subject == "Marisol Quill" for b in own)
        assert not visible_bookmarks(store, 1, "story@Marisol Quill", lineage, 4,
                                     types=("behavioral",)) == []
    finally:
        store.close()


def test_lore_into_an_existing_scene_and_the_errors(tmp_path):
    setup(tmp_path)
    assert run(tmp_path, "lore", "add", str(tmp_path / "world.json"), "--story", "1",
               "--cast", "Ada", "--cast", "Ben").returncode == 0
    out = run(tmp_path, "lore", "add", str(tmp_path / "world.json"), "--scene", "1")
    assert out.returncode == 0 and "Added to scene 1" in out.stdout, out.stderr
    out = run(tmp_path, "card", "add", str(tmp_path / "card.json"), "--scene", "1")
    assert out.returncode == 1 and "has no Marisol Quill" in out.stderr
    (tmp_path / "bad.json").write_text('{"spec": "chara_card_v2",\n"data": {\n}}}')
    (tmp_path / "utf16.json").write_bytes(json.dumps(WORLD).encode("utf-16"))
    (tmp_path / "big.json").write_bytes(b" " * (2 * 1024 * 1024 + 1))
    cases = [
        (("card", "add", str(tmp_path / "nope.png"), "--story", "1"), "nope.png: no such file"),
        (("card", "add", str(tmp_path / "bad.json"), "--story", "1"), "bad.json, line 3"),
        (("lore", "add", str(tmp_path / "card.json"), "--story", "1"),
         'card.json: this is not a World Info file'),
        (("lore", "add", str(tmp_path / "world.json"), "--story", "1", "--cast", "Ada"),
         "at least two characters"),
        (("lore", "add", str(tmp_path / "world.json"), "--story", "1", "--at", "99",
          "--cast", "Ada", "--cast", "Ben"), "between 0 and 6"),
        (("lore", "add", str(tmp_path / "world.json")), "--story"),
    ]
    for args, needle in cases:
        out = run(tmp_path, *args)
        assert out.returncode == 1 and needle in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr
    out = run_env(tmp_path, {"BOOKMARKS_MAX_UPLOAD_MB": "2"}, "lore", "add",
                  str(tmp_path / "big.json"), "--story", "1", "--pin")
    assert out.returncode == 1 and "big.json: the file is 2,097,153 bytes; the limit is " \
        "2,097,152 bytes." in out.stderr
    out = run(tmp_path, "lore", "add", str(tmp_path / "utf16.json"), "--story", "1", "--pin")
    assert out.returncode == 0, out.stderr  # UTF-16 with its byte order mark is text


def test_one_copy_of_a_lore_entry():
    gate = LoreEntry(keys=["gate", "Hinge"], content="A brass whistle.", title="Gate")
    same = LoreEntry(keys=["hinge", "GATE"], content="A  brass\nwhistle.", title="Other title",
                     enabled=False)
    other_keys = LoreEntry(keys=["gate"], content="A brass whistle.")
    other_text = LoreEntry(keys=["gate", "hinge"], content="A silver whistle.")
    off = gate.model_copy(update={"enabled": False})
    assert unique_lore([gate, same, other_keys, other_text]) == [gate, other_keys, other_text]
    assert unique_lore([off, gate]) == [off.model_copy(update={"enabled": True})]
    assert unique_lore([]) == []


def test_a_line_is_shown_and_corrected_over_the_cli(tmp_path):
    setup(tmp_path)
    shown = run(tmp_path, "line", "--story", "1", "3")
    assert shown.returncode == 0 and "3  Ben: Then we wait for eight." in shown.stdout
    out = run(tmp_path, "line", "--story", "1", "3", "--speaker", "benjamin")
    assert out.returncode == 0, out.stderr
    assert "Line 3 of “Quay” is now Ben’s." in out.stdout  # an alias gives the character
    out = run(tmp_path, "line", "--story", "1", "5", "--speaker", "Harbour Master",
              "--text", "Alone, at last.")
    assert out.returncode == 0, out.stderr
    store = store_of(tmp_path)
    a = store.actions(1, 5, 5)[0]
    assert (a.character, a.text) == ("Harbour Master", "Alone, at last.")
    assert "Harbour Master" in [c.name for c in store.characters(1)]
    for bad in (run(tmp_path, "line", "--story", "1", "9", "--speaker", "Ada"),
                run(tmp_path, "line", "--story", "1", "9")):
        assert bad.returncode == 1 and "numbered 1 to 6" in bad.stderr
        assert "Traceback" not in bad.stderr
    out = run(tmp_path, "line", "--story", "1", "2", "--text", "The gate sings.")
    assert out.returncode == 0 and "is now Ada’s" in out.stdout  # the text alone changes


def test_lines_to_check_are_counted_listed_and_cleared_over_the_cli(tmp_path):
    from tests.stories.test_attribution_check import TALK

    (tmp_path / "kitchen.txt").write_text(TALK)
    out = run(tmp_path, "import", str(tmp_path / "kitchen.txt"))
    assert out.returncode == 0, out.stderr
    assert "3 lines to check (turn-taking 2, a pronoun tag 1): " in out.stdout  # and why
    listed = run(tmp_path, "line", "--story", "1", "--to-check")
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    assert rows[-1].startswith("3 lines to check in “") and len(rows) == 4
    first = rows[0]
    assert "[turn-taking]: Then I shall put it on myself." in first
    index, speaker = first.split()[0], first.split("  ", 1)[1].split(" [")[0]
    assert "(file line 7)  " in first  # where it starts in the file
    shown = run(tmp_path, "line", "--story", "1", index).stdout
    assert "[check: turn-taking]" in shown
    assert "In the file (lines 5–9; ▶ this line):" in shown  # the reply before, the one after
    assert '▶      7  "Then I shall put it on myself."' in shown
    assert '       5  "Not yet," Tom answered.' in shown and '"Do, and welcome."' in shown
    assert run(tmp_path, "line", "--story", "1", index, "--speaker", speaker).returncode == 0
    again = run(tmp_path, "line", "--story", "1", "--to-check").stdout
    assert "2 lines to check" in again and "Then I shall put it on myself." not in again
    bad = run(tmp_path, "line", "--story", "1")
    assert bad.returncode == 1 and "--to-check" in bad.stderr and "Traceback" not in bad.stderr
    one = run(tmp_path, "line", "--story", "1", "--to-check", "--reason", "a pronoun tag").stdout
    assert one.splitlines()[-1].startswith("1 line to check for a pronoun tag in “")
    assert len(one.splitlines()) == 2 and "[a pronoun tag]" in one.splitlines()[0]
    bad = run(tmp_path, "line", "--story", "1", "--to-check", "--reason", "the weather")
    assert bad.returncode == 1 and "“turn-taking” (1)" in bad.stderr and "Traceback" not in bad.stderr
    bad = run(tmp_path, "line", "--story", "1", "--reason", "turn-taking")
    assert bad.returncode == 1 and "give --to-check too" in bad.stderr

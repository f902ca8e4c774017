"""A story out and back in: every bundled story and every gold play, as JSONL (lossless:
presence corrections included) and as Fountain (everything but presence corrections)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bookmarks.services import bundled_story_files
from bookmarks.stories.fountain import to_fountain
from bookmarks.stories.importers import load_story, parse_story
from bookmarks.stories.story import Action, Character, Story
from bookmarks.stories.story_export import export_story, file_stem
from tests.conftest import ROOT, STORIES

GOLD = sorted((ROOT / "benchmarks" / "gold" / "presence").glob("*.txt"))
BUNDLED = bundled_story_files(STORIES)


def stored(store, sid: int) -> Story:
    return store.stored_story(sid)


def snapshot(store, sid: int, *, presence: bool = True) -> dict:
    info = store.story(sid)
    shot = {
        "title": info.title, "author": info.author, "description": info.description,
        "n_actions": info.n_actions,
        "cast": [(c.name, c.aliases, c.major) for c in store.characters(sid)],
        "actions": [(a.index, a.character, a.text, a.chapter) for a in store.actions(sid)],
        "chapters": store.chapters(sid),
        "questions": [q.model_dump() for q in store.questions(sid)],
    }
    if presence:
        shot["presence"] = store.presence(sid)
    return shot


def round_trip(store, sid: int, fmt: str, folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    files = export_story(stored(store, sid), fmt)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    main = next(folder / n for n in files if n.endswith((".jsonl", ".fountain"))
                and not n.endswith(".questions.jsonl"))
    return store.add_story(load_story(main))


def same_story(store, sid: int, again: int, expected: dict | None = None) -> None:
    """`again` is `sid`'s story (or `expected`, a snapshot of it), presence included; a
    presence difference is shown by character and action."""
    expected = expected or snapshot(store, sid)
    got = snapshot(store, again)
    assert {k: v for k, v in got.items() if k != "presence"} == \
        {k: v for k, v in expected.items() if k != "presence"}
    cells = {(name, i) for name, runs in expected["presence"].items() for a, b in runs
             for i in range(a, b + 1)}
    back = {(name, i) for name, runs in got["presence"].items() for a, b in runs
            for i in range(a, b + 1)}
    speakers = {a[0]: a[1] for a in expected["actions"]}
    wrong = [f"{name} at action {i} ({speakers[i]}'s line): "
             f"{'lost' if (name, i) in cells else 'added'}" for name, i in sorted(cells ^ back,
                                                                              key=lambda c: c[1])]
    assert not wrong, ("presence did not come back as exported — a given `present` list must "
                       "be taken as it is (nobody when empty, the speaker only if listed): "
                       + "; ".join(wrong[:8]))


def correct_presence(store, sid: int) -> None:
    """A writer's corrections: someone present where they were not, and absent where they
    were (a narration line, so that it may be nobody's), and a whole stretch emptied."""
    n = store.story(sid).n_actions
    names = [c.name for c in store.characters(sid)]
    store.mark_presence(sid, names[-1], 2, max(2, n // 3), True)
    narration = [a.index for a in store.actions(sid) if a.character == "narration"]
    for index in narration[:3]:
        for name in names:
            store.mark_presence(sid, name, index, index, False)


def load(path: Path) -> Story:
    return load_story(path, fmt="gutenberg-play") if path.parent.name == "presence" \
        else load_story(path)


@pytest.mark.parametrize("path", BUNDLED + GOLD, ids=lambda p: p.name)
def test_every_story_goes_out_and_back_without_loss(store, tmp_path, path):
    assert len(BUNDLED) >= 3 and len(GOLD) >= 7
    sid = store.add_story(load(path))
    before = snapshot(store, sid)
    assert before["actions"]
    # Fountain: everything, presence too as long as it is the derived one
    again = round_trip(store, sid, "fountain", tmp_path / "fountain")
    same_story(store, sid, again, before)
    # JSONL: everything, the writer's presence corrections included
    correct_presence(store, sid)
    corrected = snapshot(store, sid)
    assert corrected["presence"] != before["presence"]
    again = round_trip(store, sid, "jsonl", tmp_path / "jsonl")
    same_story(store, sid, again, corrected)
    # and every line still shows where it stands in the file it was first read from
    assert store.source(again) == store.source(sid)
    n = store.story(sid).n_actions
    for index in sorted({1, 2, n // 3, n // 2, n - 1, n} - {0}):
        assert store.source_around(again, index) == store.source_around(sid, index)
    assert bool(store.source_around(sid, n)) == (path.suffix != ".jsonl")  # JSON: no file view
    # and once more from the copy: a fixed point
    third = round_trip(store, again, "jsonl", tmp_path / "third")
    same_story(store, sid, third, corrected)
    # Fountain keeps the storyline and the cast, not the corrections
    fountain = round_trip(store, sid, "fountain", tmp_path / "fountain2")
    assert snapshot(store, fountain, presence=False) == snapshot(store, sid, presence=False)


VERSE = [
    {"character": "narration", "text": "A hall in the castle. Night.", "chapter": "Act 1, Scene 1"},
    {"character": "narration", "text": "Enter HAMLET and HORATIO.", "chapter": "Act 1, Scene 1"},
    {"character": "Hamlet", "text": "To be, or not to be, that is the question:\n"
     "Whether 'tis nobler in the mind to suffer\nThe slings and arrows of outrageous fortune,",
     "chapter": "Act 1, Scene 1"},
    {"character": "Horatio", "text": "My lord,\n\nthe second stanza, after a pause.\n"
     "(aside) A line in parentheses,\n(softly)\nand a parenthetical line before another.",
     "chapter": "Act 1, Scene 1", "present": ["Horatio", "Hamlet", "Ophelia"]},
    {"character": "environment", "text": "Thunder.\n\n\nThen silence.", "chapter": "Act 1, Scene 1"},
    {"character": "narration", "text": "Exeunt.", "chapter": "Act 1, Scene 1", "present": []},
    {"character": "narration", "text": "THE END OF THE SCENE\n~ a tilde line\n!bang\n#not a section",
     "chapter": "Act 1, Scene 1", "present": []},
    {"character": "Ophelia", "text": "~ Sung: he is dead and gone, lady,\n~ he is dead and gone.",
     "chapter": "Act 4, Scene 5"},
    {"character": "Hamlet", "text": "*Words*, _words_, words.\nINT. not a heading\nEXT.",
     "chapter": "Act 4, Scene 5"},
]
VERSE_META = {"title": "Verse, Breaks & Corrections", "author": "W. S.", "description": "Test.",
              "characters": [{"name": "Hamlet", "aliases": ["Prince Hamlet", "the Dane"],
                              "major": True},
                             {"name": "Horatio", "aliases": ["his friend"], "major": True},
                             {"name": "Ophelia", "aliases": [], "major": False},
                             {"name": "Yorick", "aliases": ["the jester"], "major": False}]}


def verse_story(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "verse.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in VERSE), encoding="utf-8")
    (folder / "verse.meta.json").write_text(json.dumps(VERSE_META), encoding="utf-8")
    return path


def test_verse_line_breaks_presence_and_cast_survive_jsonl(store, tmp_path):
    sid = store.add_story(load_story(verse_story(tmp_path / "src")))
    texts = [a.text for a in store.actions(sid)]
    assert texts == [r["text"] for r in VERSE]  # the importer keeps the breaks
    presence = store.presence(sid)
    assert any(a <= 4 <= b for a, b in presence["Ophelia"])  # the file's own presence list
    assert not any(a <= 6 <= b or a <= 7 <= b for runs in presence.values() for a, b in runs)
    store.mark_presence(sid, "Horatio", 8, 9, True)  # a correction: Horatio stays
    before = snapshot(store, sid)
    again = round_trip(store, sid, "jsonl", tmp_path / "out")
    assert snapshot(store, again) == before
    rows = [json.loads(x) for x in (tmp_path / "out" / "verse_breaks_corrections.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    assert rows[2]["text"].count("\n") == 2 and rows[5]["present"] == []
    assert rows[7]["present"] == ["Horatio", "Ophelia"]
    assert rows[8]["present"] == ["Hamlet", "Horatio", "Ophelia"]


def test_what_fountain_keeps_of_a_verse_story(store, tmp_path):
    """Fountain keeps actions, speakers (the environment too), texts with their line breaks
    (empty lines, a parenthetical line, lyric `~`, emphasis marks, headings inside a
    speech), chapters, title, author, aliases — with the meta file also description and
    major characters and the non-speaking cast; its presence is derived again."""
    sid = store.add_story(load_story(verse_story(tmp_path / "src")))
    story = stored(store, sid)
    text = to_fountain(story.title, story.actions, author=story.author,
                       characters=story.characters)
    assert "Author: W. S." in text and '    ["Hamlet", "Prince Hamlet", "the Dane"]' in text
    # without its meta file: the storyline, title, author and the speakers' aliases
    alone = parse_story(text.encode(), "verse.fountain")
    assert [(a.character, a.text, a.chapter) for a in alone.actions] == \
        [(a.character, a.text, a.chapter) for a in story.actions]
    assert (alone.title, alone.author) == (story.title, story.author)
    assert {c.name: c.aliases for c in alone.characters} == \
        {"Hamlet": ["Prince Hamlet", "the Dane"], "Horatio": ["his friend"], "Ophelia": []}
    # with it: the whole cast and description; presence is derived, not the file's own
    again = round_trip(store, sid, "fountain", tmp_path / "out")
    assert snapshot(store, again, presence=False) == snapshot(store, sid, presence=False)
    assert store.presence(again) != store.presence(sid)


def test_a_scene_in_fountain_keeps_verse_line_breaks(store, tmp_path):
    from bookmarks.scenes.scene_export import export_scene

    sid = store.add_story(load_story(verse_story(tmp_path / "src")))
    scene = store.create_scene(sid, start_point=3, cast=["Hamlet", "Horatio"])
    store.add_turn(scene.id, character="Hamlet", text="O, that this too too solid flesh would melt,\n"
                   "Thaw, and resolve itself into a dew!", source="user")
    back = parse_story(export_scene(store, scene.id, "fountain").encode(), "scene.fountain")
    assert back.actions[-1].text == "O, that this too too solid flesh would melt,\n" \
        "Thaw, and resolve itself into a dew!"


def test_fountain_reads_line_breaks_written_by_hand():
    text = ("Title: Hand\n\nINT. ROOM - DAY\n\nANNA\n(quietly)\nOne line,\n  \nanother after a "
            "gap,\n~and a lyric.\n\nRain.\nMore rain.\n")
    story = parse_story(text.encode(), "hand.fountain")
    assert [a.text for a in story.actions] == [
        "(quietly) One line,\n\nanother after a gap,\nand a lyric.", "Rain.\nMore rain."]


_texts = st.text(alphabet="abcAB .,!?*_/():#@~>=<\\\n\t-", min_size=1, max_size=40)


def _lines_kept(text: str) -> str:
    """What Fountain keeps of a text: its line breaks (empty lines inside too), each line
    trimmed with its runs of spaces collapsed."""
    return "\n".join(" ".join(row.split()) for row in text.split("\n")).strip("\n")


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.sampled_from(["Mara", "Dr. Watson", "narration", "environment"]),
                          _texts), min_size=1, max_size=6))
def test_fountain_keeps_every_line_break(items):
    actions = [Action(index=k, character=who, text=text, chapter="Act I")
               for k, (who, text) in enumerate(((w, t) for w, t in items if t.split()), 1)]
    if actions:
        back = parse_story(to_fountain("T", actions).encode(), "lines.fountain")
        assert [(a.character, a.text) for a in back.actions] == \
            [(a.character, _lines_kept(a.text)) for a in actions]


def test_file_names_and_formats():
    story = Story(title="Ça va? / The End", characters=[Character(name="A")],
                  actions=[Action(index=1, character="A", text="Hi.")])
    assert file_stem(story.title) == "ça_va_the_end"
    assert set(export_story(story, "jsonl")) == {"ça_va_the_end.jsonl", "ça_va_the_end.meta.json"}
    assert set(export_story(story, "fountain", "x")) == {"x.fountain", "x.meta.json"}
    with pytest.raises(ValueError, match="jsonl or fountain"):
        export_story(story, "markdown")
    assert json.loads(export_story(story, "fountain", "x")["x.meta.json"])["format"] == "fountain"


def test_the_library_exports_a_story_for_download(tmp_path):
    """The Library's export writes the storyline and its sidecars side by side; importing
    the downloaded storyline from that folder gives the story back, presence included."""
    from bookmarks.config import load_settings
    from bookmarks.services import Services
    from bookmarks.store import Store
    from ui.library import export_story_files

    settings = load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path / "data")})
    services = Services(settings=settings, store=Store(settings.db_path), llms={})
    try:
        sid = services.store.add_story(load_story(verse_story(tmp_path / "src")))
        services.store.mark_presence(sid, "Yorick", 1, 2, True)
        paths = [Path(p) for p in export_story_files(services, sid, "jsonl")]
        assert [p.name for p in paths] == ["verse_breaks_corrections.jsonl",
                                           "verse_breaks_corrections.meta.json"]
        again = services.store.add_story(load_story(paths[0]))
        assert snapshot(services.store, again) == snapshot(services.store, sid)
        paths = export_story_files(services, sid, "fountain")
        assert paths[0].endswith("verse_breaks_corrections.fountain")
    finally:
        services.store.close()

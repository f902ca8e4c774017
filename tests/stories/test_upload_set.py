"""Several files uploaded at once (the Library's upload): the story file and its sidecars are
put side by side, so an export comes back whole; a set that is not one story with its
sidecars is refused, naming the file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bookmarks.errors import StoryFormatError
from bookmarks.stories.importers import load_story, parse_story
from bookmarks.stories.story_export import export_story
from bookmarks.stories.upload_set import KEPT_S, gather, story_and_sidecars
from tests.conftest import STORIES


def uploaded(tmp_path: Path, files: dict[str, str]) -> list[Path]:
    """Each file in a folder of its own, as a browser upload leaves them."""
    paths = []
    for n, (name, text) in enumerate(files.items()):
        folder = tmp_path / "upload" / f"u{n}"
        folder.mkdir(parents=True)
        (folder / name).write_text(text, encoding="utf-8")
        paths.append(folder / name)
    return paths


def test_an_exports_files_uploaded_together_come_back_whole(tmp_path):
    story = load_story(STORIES / "the_long_winter_at_harrowgate.txt")
    files = export_story(story, "jsonl", "winter")
    assert set(files) == {"winter.jsonl", "winter.meta.json", "winter.questions.jsonl",
                          "winter.source.txt"}
    paths = uploaded(tmp_path, files)
    alone = load_story(paths[0])  # the storyline alone: no title, cast aliases nor file text
    assert alone.title == "Winter" and not alone.source
    main = gather(list(reversed(paths)), tmp_path / "joined")
    assert main.name == "winter.jsonl"
    back = load_story(main)
    assert back.title == story.title and back.author == story.author
    assert [(c.name, c.aliases) for c in back.characters] == \
        [(c.name, c.aliases) for c in story.characters]
    assert back.source == story.source and len(back.questions) == len(story.questions) > 0
    assert [(a.character, a.text, a.line) for a in back.actions] == \
        [(a.character, a.text, a.line) for a in story.actions]
    # the same upload maps to the same folder (read once, however often it is asked for)
    assert gather(paths, tmp_path / "joined") == main
    assert len(list((tmp_path / "joined").iterdir())) == 1
    # an upload gathered more than a day ago goes when another is gathered; a new one stays
    old = tmp_path / "joined" / "old"
    old.mkdir()
    os.utime(old, (time.time() - KEPT_S - 60,) * 2)
    fresh = tmp_path / "joined" / "fresh"
    fresh.mkdir()
    gather(paths[:2], tmp_path / "joined")
    assert not old.exists() and fresh.exists() and main.exists()


def test_one_file_is_read_where_it_is(tmp_path):
    (path,) = uploaded(tmp_path, {"ferry.txt": "MAYA: Hello.\nTOM: Hi.\n"})
    assert gather([path], tmp_path / "joined") == path
    assert not (tmp_path / "joined").exists()


def test_a_prose_file_called_source_txt_is_a_story(tmp_path):
    paths = uploaded(tmp_path, {"tale.source.txt": "“Hello,” said Maya.\n",
                                "tale.meta.json": '{"title": "A Tale"}'})
    story, rest = story_and_sidecars(paths)
    assert story.name == "tale.source.txt" and [p.name for p in rest] == ["tale.meta.json"]


@pytest.mark.parametrize("files, named, says", [
    ({"a.jsonl": "", "b.txt": ""}, "the upload", "each a story file: a.jsonl, b.txt"),
    ({"a.jsonl": "", "b.meta.json": ""}, "b.meta.json", "not a sidecar of a.jsonl"),
    ({"a.jsonl": "", "b.source.txt": ""}, "b.source.txt",
     "must be named a.meta.json, a.questions.jsonl or a.source.txt"),
    ({"a.meta.json": "", "a.questions.jsonl": ""}, "the upload",
     "no story file among a.meta.json, a.questions.jsonl"),
    ({"a.jsonl": "", "a.META.JSON": ""}, "the upload", "each a story file: a.jsonl, a.META.JSON"),
])
def test_a_set_that_is_not_one_story_is_refused_by_name(tmp_path, files, named, says):
    with pytest.raises(StoryFormatError) as err:
        gather(uploaded(tmp_path, files), tmp_path / "joined")
    assert err.value.file == named and says in str(err.value)


def test_the_same_name_twice_is_refused(tmp_path):
    one = uploaded(tmp_path / "x", {"a.jsonl": ""})
    two = uploaded(tmp_path / "y", {"a.jsonl": ""})
    with pytest.raises(StoryFormatError, match="twice"):
        story_and_sidecars([*one, *two])


def test_a_sidecar_set_is_read_with_the_story_parser(tmp_path):
    """The gathered story goes through the normal reader: a broken meta still names itself."""
    paths = uploaded(tmp_path, {"s.jsonl": parse_story_jsonl(), "s.meta.json": "{not json"})
    with pytest.raises(StoryFormatError) as err:
        load_story(gather(paths, tmp_path / "joined"))
    assert err.value.file == "s.meta.json"


def parse_story_jsonl() -> str:
    story = parse_story(b"MAYA: Hello.\nTOM: Hi.\n", "s.txt", fmt="script")
    return export_story(story, "jsonl", "s")["s.jsonl"]

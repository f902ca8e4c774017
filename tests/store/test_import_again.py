"""A story read from a file keeps that file's text; `import_again` reads it with the current
import rules as a new story, leaving the old one (its scenes, its corrections) as it was. A
story stored by older rules (here: one whose picture caption was read as speech) comes back
read right; one the rules read the same is not imported twice."""

from __future__ import annotations

import pytest

from bookmarks.config import load_settings
from bookmarks.errors import BookmarksError
from bookmarks.models.testing import ScriptedFakeModel
from bookmarks.services import Services
from bookmarks.stories.importers import parse_story
from tests.conftest import STORIES, make_llm

TALE = ("The Lantern\n\nby Iris Penhallow\n\nCHAPTER I\n\nWenna lit the lantern at dusk.\n\n"
        '"Is it lit?" asked Davey.\n\n[Illustration:\n\n"She held it up to the glass"]\n\n'
        '"It is lit," said Wenna.\n')


@pytest.fixture
def services(tmp_path):
    llm = make_llm(ScriptedFakeModel())
    s = Services.open(load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path)}),
                      llms={"actor": llm, "memory": llm, "judge": llm})
    yield s
    s.store.close()


def stored_long_ago(services: Services) -> int:
    """The tale as an import that did not know pictures stored it: the caption a line of
    Wenna's, the file's text kept."""
    story = parse_story(TALE.encode(), "lantern.txt", fmt="prose")
    old = list(story.actions)
    caption = old[2].model_copy(update={"index": 3, "character": old[2].character,
                                        "text": "She held it up to the glass"})
    actions = [*old[:2], caption, old[2].model_copy(update={"index": 4})]
    return services.store.add_story(story.model_copy(update={"actions": actions}))


def test_a_story_read_by_older_rules_comes_back_read_right(services):
    old = stored_long_ago(services)
    before = services.store.actions(old)
    new, said = services.import_again(old)
    assert new is not None and new != old
    assert [a.text for a in services.store.actions(new)] == [
        "Wenna lit the lantern at dusk.", "Is it lit?", "It is lit."]
    assert services.store.story(new).title == "The Lantern"
    assert services.store.actions(old) == before  # the old story stays as it was
    assert f"Read again as story {new}: 3 actions (were 4)" in said
    assert services.store.source(new) == services.store.source(old)


def test_a_story_the_rules_read_the_same_is_not_imported_twice(services):
    sid = services.import_bytes(TALE.encode(), "lantern.txt", fmt="prose")
    n = len(services.store.list_stories())
    new, said = services.import_again(sid)
    assert new is None and "nothing to import again" in said
    assert len(services.store.list_stories()) == n


def test_a_jsonl_story_has_no_file_of_its_own_to_read_again(services):
    sid = services.import_file(STORIES / "saltmarsh_lighthouse.jsonl")
    with pytest.raises(BookmarksError, match="keeps no file of its own"):
        services.import_again(sid)

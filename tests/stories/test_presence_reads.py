"""`presence.Reads`: what reading the directions gave is kept between derivations of a
story's presence, so that a writer's correction of one line does not read the whole
narration again — and presence comes out exactly as a derivation from scratch."""

from __future__ import annotations

import pytest

from bookmarks.services import bundled_story_files
from bookmarks.stories.importers import load_story
from bookmarks.stories.presence import Reads, derive
from bookmarks.stories.story import NARRATION
from tests.conftest import ROOT, STORIES

GOLD_PLAYS = sorted((ROOT / "benchmarks" / "gold" / "presence").glob("*.txt"))
STORIES_ = bundled_story_files(STORIES) + GOLD_PLAYS


def load(path):
    return load_story(path, fmt="gutenberg-play") if path.parent.name == "presence" else load_story(path)


@pytest.mark.parametrize("path", STORIES_, ids=lambda p: p.name)
def test_kept_reads_give_what_a_derivation_from_scratch_gives(path):
    story = load(path)
    actions, cast = [a.model_copy(update={"present": None}) for a in story.actions], story.characters
    reads = Reads(cast)
    assert derive(actions, cast, reads) == derive(actions, cast)
    # the writer gives a few lines to someone else and one to narration
    names = [c.name for c in cast]
    changed = list(actions)
    spoken = [k for k, a in enumerate(actions) if a.character != NARRATION]
    for n, k in enumerate(spoken[len(spoken) // 3::max(1, len(spoken) // 5)]):
        other = NARRATION if n == 0 else names[(names.index(actions[k].character) + 1) % len(names)] \
            if actions[k].character in names else names[0]
        changed[k] = actions[k].model_copy(update={"character": other})
    hits = reads.hits
    assert derive(changed, cast, reads) == derive(changed, cast)
    assert reads.hits > hits  # the unchanged narration was not read again


def test_reads_serve_one_cast_only():
    story = load_story(STORIES / "the_night_ferry.txt")
    reads = Reads(story.characters)
    fewer = story.characters[:-1]
    with pytest.raises(ValueError, match="another cast"):
        derive(story.actions, fewer, reads)
    assert reads.fitting(story.characters) is reads
    assert reads.fitting(fewer) is not reads and reads.fitting(fewer).moves == {}


def test_a_line_correction_in_the_store_matches_a_fresh_derivation(store):
    sid = store.add_story(load_story(STORIES / "the_long_winter_at_harrowgate.txt"))
    line = next(a for a in store.actions(sid) if a.character != NARRATION and a.index > 300)
    store.correct_line(sid, line.index, NARRATION)
    assert store._reads[1].hits > 0
    from bookmarks.stories.presence import to_ranges
    fresh = to_ranges(derive(store.actions(sid), store.characters(sid)))
    assert store.presence(sid) == fresh

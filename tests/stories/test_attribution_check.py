"""Lines to check: a line the import's rules attributed without a tag naming its speaker
carries the reason (`Action.check`); the store keeps it, a writer's correction or
confirmation clears it, the JSONL export carries it out and back (attribution_check.py)."""

from __future__ import annotations

import pytest

from bookmarks.errors import StoryFormatError
from bookmarks.stories.attribution_check import (
    pronoun_subject,
    quote_reasons,
    reason,
    several_described,
    shared_names,
)
from bookmarks.stories.importers import parse_story
from bookmarks.stories.story_export import story_jsonl
from tests.stories.test_attribution_narrator import EVENING

TALK = ('Anna came into the kitchen where Tom sat reading.\n\n'
        '"Is the kettle on?" said Anna.\n\n'
        '"Not yet," Tom answered.\n\n'
        '"Then I shall put it on myself."\n\n'
        '"Do, and welcome."\n\n'
        'She filled it at the pump. "It is cold water," she said, "and slow."\n')


def checks(text: str) -> dict[str, str | None]:
    story = parse_story(text.encode(), "tale.txt", fmt="prose")
    return {a.text: a.check for a in story.actions if a.character != "narration"}


def test_a_naming_tag_is_sure_and_other_evidence_says_why_to_check():
    got = checks(TALK)
    assert got["Is the kettle on?"] is None  # `said Anna`
    assert got["Not yet."] is None  # `Tom answered`
    assert got["Then I shall put it on myself."] == "turn-taking"
    assert got["Do, and welcome."] == "turn-taking"
    assert got["It is cold water, and slow."] == "a pronoun tag"  # both halves: one reason
    told = checks(EVENING)  # a governess tells it
    assert told["I am warm enough here, sir."] is None  # the narrator's own `I said`
    assert told["I have all I need, sir."] == "turn-taking"


def test_a_pronoun_subject_with_its_stage_is_no_name():
    """One reading of a tag's subject in `how` for the marks and the self-naming rule: the
    capital `Hechain` is a pronoun, `Hector` and `Ivan` are names (the rule's old pattern
    read `He…` as a name and `Ivan` as the narrator's `I`)."""
    assert all(pronoun_subject(s) for s in ("he", "Hechain", "shesole", "They", "weback"))
    assert not any(pronoun_subject(s) for s in ("Hector", "Shelby", "Itzel", "I", "Ivan"))
    assert pronoun_subject("I", narrator=True) and pronoun_subject("Isubject", narrator=True)
    assert not pronoun_subject("Ivan", narrator=True)


def test_reasons_of_each_kind_of_evidence():
    assert reason("after:Hector") is None and reason("before:the old man") is None
    assert reason("after:She") == reason("before:hesubject") == "a pronoun tag"
    assert reason("after:Shelby") is None and reason("after:Itzel") is None  # names, not pronouns
    assert reason("exchange") == reason("turn") == "turn-taking"
    assert reason("beat:Tom") == "an action beat" and reason("continued") == "the context"
    # a quotation that continues the one before it in its paragraph shares its reason
    assert quote_reasons(["after:Tom", "same", "turn"], ["Tom", "Tom", "Ann"]) == \
        [None, None, "turn-taking"]
    assert quote_reasons(["after:he", "same", ""], ["Tom", "Tom", None]) == \
        ["a pronoun tag", "a pronoun tag", None]


SALOON = ('Two drummers came in out of the rain and stood by the stove.\n\n'
          '"A bed for the night?" asked the drummer.\n\n'
          '"None left," said the landlord.\n\n'
          '"Then I will sleep by the stove," said the drummer.\n\n'
          'The landlord shrugged.\n')


def test_a_description_that_may_be_several_people_is_to_check():
    """`said the drummer` names a role two men share here (a plural; also `the other
    drummer`, or `the Dutch drummer` beside `the American drummer`): its lines are marked;
    `the landlord` is one man."""
    got = checks(SALOON)
    assert got["A bed for the night?"] == "a description that may be several people"
    assert got["Then I will sleep by the stove."] == "a description that may be several people"
    assert got["None left."] is None
    assert several_described(["Two drummers came in."], ["the drummer", "the landlord"]) == \
        {"drummer"}
    assert several_described(["The other man sat."], ["the man"]) == {"man"}
    assert several_described(["The Dutch drummer and the American drummer."],
                             ["the drummer"]) == {"drummer"}
    assert several_described(["The drummer sat by the landlord's fire."],
                             ["the drummer", "the landlord"]) == frozenset()


CABIN = ('George Harris came to the cabin where George Shelby sat writing.\n\n'
         '"Good evening," said George Harris.\n\n'
         '"Evening," said George Shelby.\n\n'
         '"Is the letter done?" said George.\n\n'
         '"Nearly," said George Shelby.\n')


def test_a_name_several_people_share_is_to_check():
    """`said George` with two Georges: the import keeps `George` apart, and marks its line."""
    got = checks(CABIN)
    assert got["Is the letter done?"] == "a name several people share"
    assert got["Good evening."] is None and got["Nearly."] is None
    assert shared_names({"George", "George Harris", "Mas'r George", "Eliza"}) == {"George"}
    assert shared_names({"Sedley", "Mr. Sedley", "Amelia"}) == {"Sedley"}
    assert shared_names({"Tom", "Anna Vell"}) == frozenset()


def test_the_store_keeps_the_mark_and_a_writer_clears_it(store):
    story = parse_story(TALK.encode(), "tale.txt", fmt="prose")
    sid = store.add_story(story)
    marked = [a for a in store.actions(sid) if a.check]
    assert [a.check for a in marked] == ["turn-taking", "turn-taking", "a pronoun tag"]
    assert sum(store.check_reasons(sid).values()) == 3
    store.correct_line(sid, marked[0].index, "Tom")  # the rules gave it to Anna: corrected
    store.correct_line(sid, marked[1].index, marked[1].character)  # confirmed as it is
    assert [a.check for a in store.actions(sid) if a.check] == ["a pronoun tag"]
    assert sum(store.check_reasons(sid).values()) == 1
    assert store.actions(sid, marked[0].index, marked[0].index)[0].character == "Tom"


def test_the_jsonl_export_carries_the_mark_out_and_back():
    story = parse_story(TALK.encode(), "tale.txt", fmt="prose")
    again = parse_story(story_jsonl(story).encode(), "tale.jsonl", fmt="jsonl")
    assert [a.check for a in again.actions] == [a.check for a in story.actions]
    assert any(a.check for a in again.actions)
    with pytest.raises(StoryFormatError) as exc:
        parse_story(b'{"character": "Tom", "text": "Hi."}\n'
                    b'{"character": "Tom", "text": "Yo.", "check": 3}\n', "t.jsonl", fmt="jsonl")
    assert "line 2" in str(exc.value) and '"check"' in str(exc.value)


def test_a_database_from_before_the_marks_opens_with_every_line_unmarked(tmp_path):
    from bookmarks.store import Store
    from tests.tools import old_database

    path = tmp_path / "old.db"
    db = old_database(path, "m012_action_check", n_actions=1)
    db["actions"].insert({"story_id": 1, "idx": 1, "character": "Tom", "text": "Hi."})
    db.conn.close()
    store = Store(path)
    assert [(a.character, a.check) for a in store.actions(1)] == [("Tom", None)]
    assert sum(store.check_reasons(1).values()) == 0
    store.close()


def test_the_store_counts_lines_to_check_by_reason(store):
    story_id = store.add_story(parse_story(TALK.encode(), "tale.txt", fmt="prose"))
    assert store.check_reasons(story_id) == {"turn-taking": 2, "a pronoun tag": 1}
    line = next(a for a in store.actions(story_id) if a.check == "a pronoun tag")
    store.correct_line(story_id, line.index, line.character)  # the writer confirms it
    assert store.check_reasons(story_id) == {"turn-taking": 2}

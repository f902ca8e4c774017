"""An untagged exchange solved as a whole (attribution_exchange), on text written for these
tests: Mother and Tom at the breakfast table, the run of bare lines opening untagged and
placed by a later tag and by the names the lines call."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story
from tests.stories.test_attribution_family import who

OPENING = "The kitchen was warm and the kettle sang on the hob.\n\n"
LINES = ['"Is the post come?"', '"Not yet, Tom."', '"Nothing from Father?"']


CLOSING = "\n\nA knock came at the door, and Tom ran to it.\n\n\"It's the postman!\" cried Tom.\n"


def scene(lines: list[str], end: str = '"Eat your porridge," said Mother.') -> str:
    return OPENING + "\n\n".join(lines) + "\n\n" + end + CLOSING


def test_a_run_that_opens_untagged_is_counted_back_from_its_tag_and_its_calls():
    text = scene(LINES)
    assert [who(text, x.strip('"')) for x in LINES] == ["Tom", "Mother", "Tom"]


def test_a_call_of_anyone_else_leaves_the_run_alone():
    lines = [*LINES[:2], '"Ask Jane about it."', '"Jane, is the post come?"']
    text = scene(lines)
    assert who(text, "Is the post come?") == "narration"  # (only the count could place it)


def test_lines_that_do_not_fit_one_alternation_are_left_alone():
    # the call makes the first line Mother's, and so does the tag three lines later
    lines = ['"Is the post come, Tom?"', '"Not yet."', '"Nothing from Father?"']
    text = scene(lines)
    assert who(text, "Nothing from Father?") == "narration"


def test_a_third_speaker_near_leaves_the_run_alone():
    # Jane answers Mother: the run's tagged lines name three people, so it is no exchange of two
    text = scene(LINES, '"Eat your porridge," said Mother.\n\n"I have," said Jane.')
    assert who(text, "Is the post come?") == "narration"


def test_a_line_that_is_only_a_name_answers_and_calls_no_one():
    lines = ['"Who is coming to dinner?"', '"Mr. Grey."', '"Is he married?"']
    text = scene(lines, '"Not yet, Tom," said Mother.')
    text += '\nCHAPTER II\n\nMr. Grey came at six.\n\n"Good evening," said Mr. Grey.\n'
    assert [who(text, x.strip('"')) for x in lines] == ["Tom", "Mother", "Tom"]


def test_pronoun_beats_fit_the_count_and_place_a_man_and_a_woman():
    lines = ['"Is the post come?" He looked up from his plate.', '"Not yet."',
             '"Nothing from Father?"']
    text = scene(lines, '"Nothing, Tom," she said. "Eat it."').replace(
        OPENING, "Mother stood at the stove, and the kettle sang.\n\n")
    text += '\nCHAPTER II\n\n"Where is my hat?" said Mother.\n'
    assert [who(text, x) for x in ["Is the post come?", "Not yet.", "Nothing from Father?"]] \
        == ["Tom", "Mother", "Tom"]
    wrong = text.replace("He looked up", "She looked up")  # a woman's line where Tom's turn is
    assert who(wrong, "Not yet.") == "narration"


def test_a_counted_line_off_the_count_of_the_tags_is_taken_back():
    from bookmarks.stories.attribution_exchange import check_turns
    from bookmarks.stories.dialogue import Cast, _read
    from bookmarks.stories.speakers import NameChecker
    texts = ['"Is the post come?" asked Tom.', '"Not yet," said Mother.', '"Nothing from Father?"',
             '"Nothing."', '"Then I shall write," said Tom.']
    paras = _read([(i, t, None) for i, t in enumerate(texts)], "double")
    cast = Cast(paras, NameChecker("\n\n".join(texts)), None)
    given = [("Tom", "after:Tom"), ("Mother", "after:Mother"), ("Mother", "turn"), ("Tom", "turn"),
             ("Tom", "after:Tom")]  # a count that started wrong: Mother, Tom where Tom, Mother is
    for p, (who_, how) in zip(paras, given, strict=True):
        p.speakers, p.how = [who_] * len(p.quotes), [how] * len(p.quotes)
    check_turns(paras, cast)
    assert [p.speakers[0] for p in paras] == ["Tom", "Mother", None, None, "Tom"]
    paras[2].speakers, paras[2].how = ["Tom"], ["turn"]  # on the count: kept
    check_turns(paras, cast)
    assert paras[2].speakers == ["Tom"]


def test_after_time_moves_on_the_one_met_talks_with_the_narrator():
    """`Shortly after this I had to go out of town. … I found Miss Singer there … Corky, I
    took it, was out telephoning.` ¶ `"Well, what?" I said.` ¶ bare lines: the narrator and
    Miss Singer alternate — Corky, whom the lines talk of and who spoke before the time
    moved on, is not one of the two."""
    text = ('I had known Corky for years, and I liked him.\n\n'
            'He came up to my rooms that evening to tell me his news.\n\n'
            '"It is a cert!" I said, and I meant it.\n\n'
            '"An absolute cinch!" said Corky.\n\n'
            'Shortly after this I had to go out of town. When I came back I went into a little '
            'restaurant I like, and I found Miss Singer there, sitting by herself. Corky, I took '
            'it, was out telephoning. I went up to her table.\n\n'
            '"Well, well, what?" I said.\n\n'
            '"Why, how do you do?"\n\n'
            '"Is Corky around?"\n\n'
            '"I beg your pardon?"\n\n'
            '"You are waiting for Corky, aren\'t you?"\n\n'
            '"Oh, no. I am not waiting for him."\n')
    assert who(text, "how do you do") == "Miss Singer"
    assert who(text, "Is Corky around") == "Narrator"
    assert who(text, "not waiting for him") == "Miss Singer"


def test_sir_and_mamma_tell_a_man_and_a_woman_apart_in_a_bare_run():
    """A run of bare lines between a man and a woman that no tag places: `"Yes, papa."`
    is the woman's (she speaks to the man), and the count follows from it."""
    text = ('Mr. Woodhouse and Emma sat by the fire after dinner.\n\n'
            '"Poor Miss Taylor! I wish she were here again."\n\n'
            '"I cannot agree with you, papa; you know I cannot."\n\n'
            '"But she will be so far away."\n\n'
            '"Only half a mile, papa."\n')
    assert who(text, "I cannot agree") == "Emma"
    assert who(text, "so far away") == "Mr. Woodhouse"
    assert who(text, "Poor Miss Taylor") == "Mr. Woodhouse"


def test_a_bare_description_who_spoke_earlier_is_not_the_second_of_a_run():
    """The one other talker of the scene completes a run of bare lines only when the text
    names them: `the man` who spoke at the desk a page before may not be the one answering."""
    from tests.stories.test_attribution_rules import said
    text = ('"Who is it you wish to see?" asked the woman.\n\n"Any one," said Ellen.\n\n'
            "The door opened and shut again, and the clock ticked on the wall. Outside the rain "
            "went on falling on the roofs and the chimneys of the town, and the carts went by in "
            "the street below, one after another, all the long grey afternoon, until the lamps "
            "were lit.\n\n"
            '"What can I do for you?"\n\n"I want work," said Ellen.\n\n"As what?"\n')
    s = said(text)
    assert s['"What can I do for you?"'] == s['"As what?"'] == "narration"
    named = text.replace("asked the woman", "asked Mrs. Drury")  # a name: the run is hers and Ellen's
    assert said(named)["What can I do for you?"] == said(named)["As what?"] == "Mrs. Drury"


def test_a_counted_line_before_a_tag_of_the_same_speaker_is_taken_back():
    """`"…," said Mother.` ¶ bare line ¶ `"…," said Tom.`: the count would give the bare line
    to Tom, but the tag after it says Tom speaks next — Mother went on, or someone else
    spoke. Without the later tag the count stands."""
    text = ('"Is the post come?" asked Tom.\n\n"Not yet," said Mother.\n\n'
            '"The postman is always late on a Monday."\n\n'
            '"Then I shall wait for him at the gate," said Tom.\n')
    assert who(text, "always late on a Monday") == "narration"
    alone = text.replace('"Then I shall wait for him at the gate," said Tom.', "The clock struck nine.")
    assert who(alone, "always late on a Monday") == "Tom"


def test_a_beat_of_the_other_sex_takes_back_a_counted_line():
    """`"Not yet." She stopped and looked at the fire.` in a talk of two men: the count would
    give the line to Jack Lane, but the beat right after it says a woman spoke it."""
    text = ('"Where is the key?" asked Tom Reed.\n\n"I have it," said Jack Lane.\n\n'
            '"Give it to me."\n\n'
            '"Not yet. I need it." She stopped and looked at the fire. "Perhaps tomorrow."\n')
    actions = parse_story(text.encode(), "tale.txt", fmt="prose").actions
    assert actions[2].character == "Tom Reed"
    assert all(a.character == "narration" for a in actions[3:])
    him = parse_story(text.replace("She stopped", "He stopped").encode(), "tale.txt", fmt="prose").actions
    assert {a.character for a in him[3:]} - {"narration"} == {"Jack Lane"}

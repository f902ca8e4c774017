"""Turn-taking across narration, listeners and vocatives (attribution_turns.py), on text
written for these tests: Mrs. Hale and her lodger, Mr. Crowe, at breakfast."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story


def said(text: str) -> dict[str, str]:
    return {a.text: a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions}


def who(s: dict[str, str], fragment: str) -> str:
    """The character of the action holding `fragment` (narration keeps a quotation's marks)."""
    return next(c for t, c in s.items() if fragment in t)


START = ('"More tea?" asked Mrs. Hale.\n\n'
         '"Thank you, no," said Mr. Crowe.\n\n')


def test_narration_that_only_sets_the_scene_lets_the_turns_go_on():
    s = said(START + "The clock on the stair struck nine.\n\n"
             '"Then you will be late."\n\n"I am always late."\n')
    assert s["Then you will be late."] == "Mrs. Hale"
    assert s["I am always late."] == "Mr. Crowe"


def test_an_answer_in_reported_speech_is_that_one_s_turn():
    s = said('"Will you want the trap today?" asked Mrs. Hale.\n\n'
             "Mr. Crowe replied that he would walk.\n\n"
             '"In this rain?"\n\n"The rain will stop."\n')
    assert s["In this rain?"] == "Mrs. Hale"
    assert s["The rain will stop."] == "Mr. Crowe"
    s = said(START + "He expressed his thanks.\n\n"
             '"Then you will be late."\n')
    assert s["Then you will be late."] == "Mrs. Hale"  # `He` is the one man of the two


def test_a_gesture_leads_into_the_line_of_the_one_who_makes_it():
    """With a third person about (the maid), `Mr. Crowe nodded.` leads into his line, like
    any other doing of his (`_beat`): on the gold sets a gesture led into its maker's line
    far more often than it was a whole answer after which the other went on. A man and a
    woman alone: he acts, then answers (test_attribution_rules: two alone take turns across
    narration)."""
    text = ('"Will you want the trap today?" asked Mrs. Hale.\n\n'
            '"Thank you, no," said Mr. Crowe.\n\n'
            '"Then you will be late," said Mrs. Hale, and the maid came in with the tray.\n\n'
            "Mr. Crowe nodded.\n\n"
            '"I am always late."\n')
    assert said(text)["I am always late."] == "Mr. Crowe"
    looked = said(text.replace("Mr. Crowe nodded.", "Mr. Crowe looked out at the rain."))
    assert looked["I am always late."] == "Mr. Crowe"
    answered = said(text.replace("Mr. Crowe nodded.", "Mr. Crowe said nothing."))
    assert answered.get("I am always late.") != "Mr. Crowe"  # his answer: not his line
    alone = said('"Will you want the trap today?" asked Mrs. Hale.\n\n'
                 '"Thank you, no," said Mr. Crowe.\n\n'
                 '"Then you will be late," said Mrs. Hale.\n\n'
                 "Mr. Crowe looked out at the rain.\n\n"
                 '"I am always late."\n')
    assert alone["I am always late."] == "Mr. Crowe"


def test_a_laugh_or_a_sigh_is_a_gesture_not_an_answer():
    """`laughed`, `sighed` are said-verbs (`"…," he laughed`), but a narration paragraph that
    is only a laugh or a sigh is a gesture: it leads into the laugher's own line (Smith
    laughed. ¶ "Useless, …" is Smith's), and gives nobody a turn. With the maid about, the
    two are not alone (where any doing of his leads into his line)."""
    start = ('"Will you want the trap today?" asked Mrs. Hale.\n\n'
             '"Thank you, no," said Mr. Crowe.\n\n'
             '"Then you will be late," said Mrs. Hale, and the maid came in with the tray.\n\n')
    for gesture in ("Mr. Crowe laughed.", "Mr. Crowe sighed heavily.", "Mr. Crowe chuckled."):
        s = said(start + gesture + '\n\n"I am always late."\n')
        assert s["I am always late."] == "Mr. Crowe", gesture
    for two in (start, start.replace(", and the maid came in with the tray", "")):  # alone, too
        reported = said(two + "Mr. Crowe laughed and answered that he was always late.\n\n"
                        '"Then you must hurry."\n')
        assert reported["Then you must hurry."] == "Mrs. Hale"  # an answer after all: her turn
    looked = said(start + "Mr. Crowe returned her look gravely.\n\n"
                  '"I am always late."\n')
    assert looked["I am always late."] == "Mr. Crowe"  # a look back, no answer


def test_a_line_spoken_to_someone_the_cast_does_not_know_leaves_the_answer_unsure():
    """`"…," he said to the porter` ¶ `"…"`: the porter, whom no tag names, may answer — not
    the one who spoke before. The same after narration (`spoke to the guard at the gate`)."""
    s = said(START + '"Is the train late?" Mr. Crowe said to the porter.\n\n"Ten minutes, sir."\n')
    assert s['"Ten minutes, sir."'] == "narration"
    s = said(START + "Mr. Crowe spoke to the guard at the gate.\n\n"
             '"Is the train late?" he asked.\n\n"Ten minutes, sir."\n')
    assert s["Is the train late?"] == "Mr. Crowe"
    assert s['"Ten minutes, sir."'] == "narration"
    kept = said(START + '"Is the train late?" Mr. Crowe said to Mrs. Hale.\n\n"Ten minutes."\n')
    assert kept["Ten minutes."] == "Mrs. Hale"  # one the cast knows: she answers


def test_narration_naming_someone_else_ends_the_exchange():
    s = said(START + "Then the door opened and Dr. Lamb came in with the post.\n\n"
             '"Then you will be late."\n')
    assert s['"Then you will be late."'] == "narration"


def test_the_listener_a_speaker_names_makes_the_two_an_exchange():
    s = said("Mrs. Hale was pouring out. She was talking to Mr. Crowe across the table. "
             '"The milk is sour again," she said.\n\n'
             '"Is it?"\n\n"It is."\n')
    assert s["Is it?"] == "Mr. Crowe"
    assert s["It is."] == "Mrs. Hale"


def test_a_vocative_with_a_title_or_dear_is_a_call():
    s = said(START + "The clock on the stair struck nine.\n\n"
             '"Then you will be late."\n\n'
             '"Late! My dear Mrs. Hale, I am never late."\n\n'
             '"You are late every day, Mr. Crowe: every single day."\n')
    assert s["Late! My dear Mrs. Hale, I am never late."] == "Mr. Crowe"
    assert s["You are late every day, Mr. Crowe: every single day."] == "Mrs. Hale"


def test_a_reply_to_one_who_called_you_makes_the_two_an_exchange():
    s = said('"A fine morning," said Mr. Crowe.\n\n'
             '"I will clear, then. No, Nell, sit still," said Mrs. Hale.\n\n'
             '"You do everything," said Nell.\n\n'
             '"Someone must."\n\n"Let me help."\n')
    assert s["Someone must."] == "Mrs. Hale"  # Mrs. Hale called Nell, Nell answered
    assert s["Let me help."] == "Nell"


def test_a_vocative_of_two_needs_the_two_alone():
    base = ('"Good night," said Harker.\n\nThe fire was low.\n\nThe wind rose.\n\n{}\n\n'
            '"Where were you?" asked Nell.\n\n"At the mill," said Tom.\n\n"Nell, you know I was."\n')
    assert said(base.format("The clock struck twelve."))["Nell, you know I was."] == "Tom"
    s = said(base.format("Harker was asleep by the fire."))
    assert s['"Nell, you know I was."'] == "narration"  # Harker is there too


def test_a_description_that_takes_a_named_speaker_s_turns_is_them():
    text = ('"Is the tide in?" asked Mr. Crowe.\n\n"Not yet," said Tom Pell.\n\n'
            '"Then we wait," said Mr. Crowe.\n\n"Not long," replied the boatman.\n\n'
            '"How long?" said Mr. Crowe.\n\n"An hour," answered the boatman.\n')
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    assert {c.name: c.aliases for c in story.characters} == {
        "Mr. Crowe": [], "Tom Pell": ["Boatman", "the boatman"]}
    once = text.replace("answered the boatman", "said Tom Pell")
    names = {c.name for c in parse_story(once.encode(), "t.txt", fmt="prose").characters}
    assert "Boatman" in names  # once is not enough: a new person may answer


def test_was_the_reply_is_the_turn_and_they_is_no_one_s():
    s = said(START + '"Then you will be late," said Mrs. Hale.\n\n'
             '"Not I," was the undaunted reply.\n\n'
             '"Late again!" they both said.\n')
    assert s["Not I."] == "Mr. Crowe"
    assert s['"Late again!" they both said.'] == "narration"


def test_accepting_what_was_said_is_an_answer():
    s = said(START + "Mr. Crowe accepted the word, not without a smile.\n\n"
             '"Then you will be late."\n\n"I am always late."\n')
    assert s["Then you will be late."] == "Mrs. Hale"
    assert s["I am always late."] == "Mr. Crowe"


def test_a_time_or_manner_phrase_between_and_and_the_verb_keeps_the_subject():
    s = said(START + '"Then you will be late," said Mrs. Hale.\n\n'
             'He seemed thoughtful, and after a few moments added: "Not if I run."\n')
    assert s["Not if I run."] == "Mr. Crowe"


def test_the_subject_of_a_when_clause_is_not_the_one_who_then_speaks():
    s = said(START + "So she looked puzzled when he spoke to her, and then said:\n\n"
             '"You will be late."\n')
    assert s["You will be late."] == "Mrs. Hale"


def test_a_sentence_that_only_says_someone_breaks_in_introduces_their_words():
    s = said(START + "At this point the clever lady at the end of the table broke in.\n\n"
             '"You are both wrong."\n\nMiss Lane broke in.\n\n"Nonsense!"\n')
    assert s["Nonsense!"] == "Miss Lane"


def test_an_inverted_tag_with_did_names_its_speaker():
    s = said(START + 'Gravely displeased, he turned to go. Not till then did Mrs. Hale reply: '
             '"Good morning, Mr. Crowe."\n')
    assert s["Good morning, Mr. Crowe."] == "Mrs. Hale"
    from bookmarks.stories.tags import tag_before
    tag = tag_before("Gravely displeased, he turned to go. Not till then did Mrs. Hale reply: ")
    assert tag is not None and tag.subject == "Mrs. Hale"


def test_the_one_a_line_calls_by_name_answers_it():
    """Three at cards, a long pause: `"Crowe, it is your deal."`, untagged, no one's turn
    (any of the other two) ¶
    `"So it is."`: the one called answers; a line that is only a name (`"Pell."`) is an
    answer, not a call."""
    pause = ("The candles burned low in their sockets, and the fire settled in the grate. Outside "
             "the wind got up and rattled the shutters, and somewhere below a door banged twice "
             "and was still. The cards went round and round, and the little heap of counters "
             "moved from one side of the table to the other.\n\n")
    start = ("Mr. Crowe, Mr. Pell and Dr. Lamb sat down to cards after supper.\n\n"
             '"Cut," said Mr. Pell.\n\n"Done," said Dr. Lamb.\n\n"Hearts," said Mr. Crowe.\n\n'
             + pause * 4)
    s = said(start + '"Crowe, it is your deal."\n\n"So it is."\n')
    assert s["So it is."] == "Mr. Crowe"
    name = said(start + '"Who dealt last?"\n\n"Pell."\n\n"Then it is mine."\n')
    assert name['"Then it is mine."'] == "narration"


def test_the_one_the_last_sentence_calls_answers_it():
    """A line placed by its tag that ends by calling a third person by name: the untagged
    line after it is theirs, not the turn's (who would be the one spoken to before)."""
    text = ('"Will you want the trap today?" asked Mrs. Hale.\n\n'
            '"Thank you, no," said Mr. Crowe.\n\n'
            '"Then you will walk," said Mrs. Hale, "and be wet through. Fetch the umbrella, Betty."\n\n'
            '"It is in the hall, ma\'am."\n\n"Betty sees to everything."\n')
    s = said('"Is the post in?" asked Betty.\n\n' + text)
    assert s["It is in the hall, ma'am."] == "Betty"
    # a call in an earlier sentence is not the last thing said: the line stays unsure
    early = said('"Is the post in?" asked Betty.\n\n' + text.replace(
        '"and be wet through. Fetch the umbrella, Betty."', '"Betty, fetch the umbrella. You will be wet."'))
    assert who(early, "It is in the hall") == "narration"


def test_lines_between_two_tagged_lines_are_counted_back():
    """Mr. Crowe and Mrs. Hale alone: a run of bare lines after his and before her tagged
    line alternates when the count fits; an odd run, or a third speaker near, stays unsure."""
    lines = ['"Is it raining?"', '"Since dawn."', '"Then I shall stay in."', '"And the trap?"']
    def scene(run: list[str], extra: str = "") -> dict[str, str]:
        return said(extra + "Mrs. Hale poured the tea, and Mr. Crowe watched the window.\n\n"
                    '"A grey morning," said Mr. Crowe.\n\n' + "\n\n".join(run) +
                    '\n\n"You had better walk," said Mrs. Hale.\n')
    s = scene(lines)
    assert [s[x.strip('"')] for x in lines] == ["Mrs. Hale", "Mr. Crowe", "Mrs. Hale", "Mr. Crowe"]
    odd = scene(lines[:3])
    assert {who(odd, x.strip('"')) for x in lines[:3]} == {"narration"}  # a two-paragraph line, or a third
    crowd = scene(lines, extra='"Good morning," said Dr. Lamb.\n\n')
    assert {who(crowd, x.strip('"')) for x in lines} == {"narration"}


def test_narration_of_no_one_between_keeps_he_for_the_last_man():
    """`The rain beat on the glass.` names no one and brings no one in: `he said` after it
    is still the man who spoke last, though the scene has named another man (who went out)."""
    text = ("Mr. Lamb had gone out early, and Mrs. Hale was alone with her lodger.\n\n"
            '"More tea?" asked Mrs. Hale.\n\n'
            '"A grey morning," said Mr. Crowe. "Thank you, no."\n\n'
            "The rain beat on the glass of the long window.\n\n"
            '"It will clear by noon," he said.\n')
    assert said(text)["It will clear by noon."] == "Mr. Crowe"
    stranger = text.replace("The rain beat", "A gentleman in a wet coat came up the path; the rain beat")
    assert who(said(stranger), "It will clear by noon") == "narration"  # he may be the newcomer


def test_lines_counted_back_from_a_line_introduced_by_narration():
    """Mr. Crowe speaks first and Mrs. Hale's turns are untagged: the run ends at `Then Mrs.
    Hale said:` ¶ `"…"` (no turn in between); when the same one speaks at both ends, the
    run is the one other's who talks in the scene and theirs in turn (an odd run)."""
    def scene(run: list[str], end: str, after: str = "",
              opening: str = "Mrs. Hale came in with the tea.") -> dict[str, str]:
        return said(f"{opening}\n\n"
                    '"A grey morning," said Mr. Crowe.\n\n' + "\n\n".join(run) +
                    f"\n\nThere was a pause. Then {end} said:\n\n" + '"You had better walk."\n' + after)
    lines = ['"Is it raining?"', '"Since dawn."']
    s = scene(lines, "Mrs. Hale")
    assert [s[x.strip('"')] for x in lines] == ["Mrs. Hale", "Mr. Crowe"]
    three = lines + ['"And the trap?"']
    same = scene(three, "Mr. Crowe", '\n"I shall," said Mrs. Hale.\n')
    assert [who(same, x.strip('"')) for x in three] == ["Mrs. Hale", "Mr. Crowe", "Mrs. Hale"]
    # nobody else has spoken: Mrs. Hale, whom the narration brought in, is the one other
    # (attribution_exchange); where the narration names nobody, who else? — narration
    alone = scene(three, "Mr. Crowe")
    assert [who(alone, x.strip('"')) for x in three] == ["Mrs. Hale", "Mr. Crowe", "Mrs. Hale"]
    nobody = scene(three, "Mr. Crowe", opening="The tea came in.")
    assert {who(nobody, x.strip('"')) for x in three} == {"narration"}


def test_she_asked_him_after_narration_naming_one_man_starts_their_exchange():
    """`… overtaken by Robert.` ¶ `"…?" she asked him` ¶ bare lines: him is Robert, the
    one man the narration just named, and the two take turns."""
    s = said('"Come in, all of you," said Mrs. Lamb.\n\n"Not yet," said Mr. Drury.\n\n'
             "Ellen went home alone along the shore, but she was soon overtaken by Robert.\n\n"
             '"Did you think I was afraid?" she asked him.\n\n'
             '"No; I knew you were not afraid."\n\n'
             '"Then why did you come?"\n\n'
             '"I never thought of it."\n\n'
             '"I am very tired," she said.\n')
    assert s["No; I knew you were not afraid."] == s["I never thought of it."] == "Robert"
    assert s["Then why did you come?"] == s["I am very tired."] == "Ellen"


def test_a_bracketed_aside_naming_someone_else_does_not_stop_the_turns():
    """`(Why was she thinking of Tom Pell?)` between two lines of a talk of two: a thought,
    no one come in; the turns go on across it."""
    s = said('"Is it far?" asked Ellen.\n\n"Not far," said Mr. Drury.\n\n"Really?"\n\n'
             "(Why was she thinking of Tom Pell?)\n\n"
             '"The town has a great future, I tell you."\n\n"Do you like it there?"\n')
    assert s["Really?"] == s["Do you like it there?"] == "Ellen"
    assert s["The town has a great future, I tell you."] == "Mr. Drury"


def test_strangers_coming_in_end_the_talk_of_two():
    s = said(START + '"Then you will be late."\n\n"I am always late."\n\n'
             "There was a knock at the door, and two strangers entered.\n\n"
             '"You have come about the rooms?" said Mrs. Hale.\n\n"We have."\n')
    assert who(s, "We have.") != "Mr. Crowe"  # not the talk of two going on: strangers came in
    s = said(START + '"Then you will be late."\n\n"I am always late."\n\n'
             "The clock struck, and Mrs. Hale looked at him over the teapot while Mr. Crowe "
             "buttered his toast.\n\n"
             '"You never listen," said Mrs. Hale.\n\n"I do."\n')
    assert s["I do."] == "Mr. Crowe"  # no one came in: the two talk on


def test_a_line_that_calls_a_group_after_two_speakers_is_the_narrator_s():
    text = ("CHAPTER I\n\n"
            "I had met the old hunter at the drift, and I nursed him for a week.\n\n"
            "He died on the seventh day, and I buried him by the river.\n\n"
            "I took his map, and I rode south alone.\n\n"
            "CHAPTER II\n\n"
            '"But the map?" said Sir Roger, leaning forward.\n\n'
            '"Yes, the map; where is it?" added the captain.\n\n'
            '"Well, gentlemen, if you care to see it, it is in my box upstairs."\n')
    assert who(said(text), "Well, gentlemen") == "Narrator"


def test_a_line_that_calls_a_group_is_neither_of_the_two_who_spoke():
    text = ('"Is the boat ready?" said Tom Wake.\n\n'
            '"Not yet," said Ned Ash.\n\n'
            '"Come, boys, the tide will not wait for either of you."\n')
    assert who(said(text), "Come, boys") == "narration"


def test_someone_the_cast_does_not_know_coming_in_ends_the_talk_of_two():
    text = ("I had come to the house at nine, and I rang twice.\n\n"
            "I waited on the step, and I heard feet in the hall.\n\n"
            "I was shown into the parlour, where I found the landlady.\n\n"
            '"Will you have tea, Doctor?" said Mrs. Hale.\n\n'
            '"Thank you, no," I said.\n\n'
            '"I never liked her, Doctor," said Mrs. Hale.\n\n'
            "The girl was stealing down the stair!\n\n"
            "I leaped out into the hall, and she turned and fled before me up the stairs.\n\n"
            '"So I came in time," I said grimly.\n\n'
            '"Oh!" she panted, and stood facing me.\n')
    assert who(said(text), "Oh!") != "Mrs. Hale"  # the girl's, whom the cast does not know


def test_the_other_said_in_narration_before_a_line_is_the_one_whose_turn_it_is():
    """`There was a brief silence. Then the other said:` ¶ `"…"` after an exchange of two:
    the introducing paragraph has no quotation of its own (this crashed the import once);
    the line is the other of the two."""
    from tests.stories.test_attribution_names import who
    text = ('"Where is the pearl?" asked Lupin.\n\n"I do not know," said Victor.\n\n"You lie."\n\n'
            '"Certainly not. I rescued him from certain death."\n\n'
            'There was a brief silence. Then the other said:\n\n"I never lie."\n')
    assert who(text, "I never lie") == "Lupin"

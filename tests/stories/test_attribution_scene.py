"""Talk in a room of several people (attribution_scene.py and the name and tag rules it
leans on), on text written for these tests: Mrs. Pell's drawing-room — Mrs. Pell, her
daughters Kitty and Jane, Mr. Lorne who calls, and the Countess Brühl."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story


def said(text: str) -> dict[str, str]:
    return {a.text: a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions}


def cast(text: str) -> dict[str, list[str]]:
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    return {c.name: list(c.aliases) for c in story.characters}


ROOM = ("Mrs. Pell sat at her frame in the drawing-room. Kitty was at the window, and Jane "
        "was reading by the fire.\n\n")


# --- names --------------------------------------------------------------------------------


def test_a_name_with_accented_letters_is_a_name():
    s = said('"We are late," said Mrs. Brühl.\n\n"Not at all," said Mr. Lorne.\n')
    assert s["We are late."] == "Mrs. Brühl"


def test_a_word_before_a_title_is_no_fuller_name():
    text = ("Mr. Lorne had never met a Russian Countess before.\n\n"
            '"You are kind," said the Countess.\n\n"Not at all," said Mr. Lorne.\n')
    assert "Russian Countess" not in cast(text)
    assert said(text)["You are kind."] == "Countess"


def test_the_old_man_and_the_young_man_are_two_people():
    text = ('"It is cold," said the old man.\n\n"It is," said the young man.\n\n'
            '"Then shut the door," said the old man.\n')
    names = cast(text)
    assert "Old man" in names and "Young man" in names
    assert "Old man" not in names["Young man"]


# --- what the narration before a line says ------------------------------------------------


def test_narration_ending_on_someone_s_words_introduces_them():
    s = said(ROOM + "Mr. Lorne was shown in. Kitty smiled at Mrs. Pell's greeting, "
             '"Come in, come in!"\n')
    assert s["Come in, come in!"] == "Mrs. Pell"
    s = said(ROOM + "The silence gave a certain weight to Mrs. Pell's next words. "
             '"We dine at six," she said to Kitty.\n')
    assert s["We dine at six."] == "Mrs. Pell"


def test_a_beat_is_the_subject_of_its_last_clause():
    s = said(ROOM + 'Mrs. Pell led them in; Kitty stopped and looked up. "What a staircase!"\n')
    assert s["What a staircase!"] == "Kitty"  # not Mrs. Pell, who led them in


def test_a_pronoun_that_goes_on_from_another_is_not_a_name_inside_its_sentence():
    s = said('"Shall you go?" asked Mr. Lorne.\n\n"Yes," said Jane.\n\n'
             'She wondered whether he meant the visit Kitty had spoken of. "Well," she said, '
             '"perhaps."\n')
    assert s["Well, perhaps."] == "Jane"  # not Kitty, who had spoken of it


def test_narration_ending_in_a_dash_introduces_the_next_line():
    s = said(ROOM + "Mrs. Pell said--\n\n" + '"Kitty, come away from the window."\n')
    assert s["Kitty, come away from the window."] == "Mrs. Pell"
    s = said(ROOM + "Jane was silent a long while. At length she said,--\n\n" + '"I wish I were good!"\n')
    assert s["I wish I were good!"] == "Jane"


def test_a_name_joined_by_a_hyphen_is_no_call():
    s = said("Anna had come with the Countess.\n\n"
             '"What is your name?" asked Kitty.\n\n'
             '"Anna-Louisa," said the Countess. "But call me Countess."\n\n'
             '"I will call you Countess, then."\n')
    assert s["I will call you Countess, then."] == "Kitty"  # `Anna-Louisa` calls no Anna


# --- attribution_scene.py -----------------------------------------------------------------


def test_a_speaker_who_names_themselves_is_that_one():
    s = said(ROOM + "A young man stood before Mrs. Pell, turning his hat in his hands.\n\n"
             '"And who are you?" said Mrs. Pell.\n\n'
             '"My name is Edmund Lorne, ma\'am," he said.\n')
    assert s["My name is Edmund Lorne, ma'am."] == "Edmund Lorne"


def test_she_went_on_is_the_one_who_spoke_before_in_the_paragraph():
    s = said('"In some houses," said Mrs. Pell. "Not in all." Kitty was standing beside her; '
             'she took her hand. "And you, my dear, where did you get that colour?" she went on.\n')
    assert s["And you, my dear, where did you get that colour?"] == "Mrs. Pell"


def test_going_on_after_someone_else_s_reported_answer_is_theirs():
    s = said('"Good evening, sir," said Williams.\n\n'
             'Mr. Lorne stopped Williams in the hall. "Was there a letter?" said he. But Williams was '
             'positive nothing had come; "and only bills by the post," he added.\n')
    assert s["and only bills by the post."] == "Williams"  # not Mr. Lorne going on


def test_the_one_called_by_name_answers_a_line_tagged_by_a_description():
    s = said('"It is cold," said the young man.\n\n"It is," said Mrs. Pell.\n\n'
             '"It is," said the young man.\n\n'
             "Mr. Lorne came in and bowed to the company.\n\n"
             '"Why did you not come to dinner, Mr. Lorne?" Mrs. Pell asked.\n\n'
             '"I did not think you would want me," said the young man.\n')
    assert s["I did not think you would want me."] == "Mr. Lorne"


def test_an_answer_to_a_question_makes_the_two_an_exchange():
    s = said(ROOM + '"It is a long way," said Mr. Lorne.\n\n'
             '"Have you been to Bath?" asked Kitty.\n\n'
             '"Twice," said the Countess.\n\n'
             '"Did you like it?"\n')
    assert s["Did you like it?"] == "Kitty"  # Kitty asked, the Countess answered: those two

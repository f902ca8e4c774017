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
    s = said('"Come in," said Mrs. Pell. They were entering the hall; she paused and looked round her. '
             '"What a staircase!"\n')
    assert s["What a staircase!"] == "Mrs. Pell"  # `she paused`, not `They were entering`


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


# --- two in the room, and who opens the talk ------------------------------------------------

HALL = ("At last Mrs. Pell came home, tired out with her walk. Until her cloak was taken off, "
        "she seemed quite unable to attend to Kitty's questions.\n\n")


def test_with_two_in_the_room_an_untagged_reply_is_the_other_s():
    s = said(HALL + '"Is anything the matter?" asked Kitty.\n\n"Oh, no! Why should there be?"\n\n'
             '"You looked so pale."\n')
    assert s["Oh, no! Why should there be?"] == "Mrs. Pell"
    assert s["You looked so pale."] == "Kitty"


def test_a_first_line_that_calls_one_of_two_is_the_other_s():
    s = said("Jane remained downstairs by the low fire. Kitty came softly in, and sat down at "
             "her feet on the rug.\n\n"
             '"You loved her dearly, did you not, Jane?"\n\n"Yes," sobbed Jane.\n\n'
             '"Had you known her long?"\n')
    assert s["You loved her dearly, did you not, Jane?"] == "Kitty"
    assert s["Had you known her long?"] == "Kitty"


def test_the_one_the_last_clause_is_about_opens_the_talk():
    s = said(HALL + '"Oh, yes! The coach comes at ten."\n')
    assert s["Oh, yes! The coach comes at ten."] == "Mrs. Pell"
    s = said("Kitty ran down to the hall, and Mrs. Pell said that the coach was late.\n\n"
             '"It comes at ten."\n')
    assert s['"It comes at ten."'] == "narration"  # she has spoken already: either may go on


def test_a_line_that_talks_of_someone_by_name_is_not_theirs():
    s = said("Kitty went all over very red; she saw that Jane was watching her with amusement.\n\n"
             '"I am afraid Kitty is not grateful, mamma."\n')
    assert s['"I am afraid Kitty is not grateful, mamma."'] == "narration"  # not Kitty's own


def test_newcomers_in_the_narration_end_the_exchange():
    s = said(HALL + '"Is the coach in?" asked Kitty.\n\n"Not yet," said Mrs. Pell.\n\n'
             '"Here it is!" cried Kitty. Her father was walking up the lane with a tall young lady.\n\n'
             '"Well! Here we are at last."\n')
    assert s['"Well! Here we are at last."'] == "narration"  # not Mrs. Pell's turn


def test_a_lone_he_is_the_one_man_in_the_room():
    s = said("One day, to Kitty's surprise, Mr. Lorne was announced. Mrs. Pell and she were sitting "
             "in the drawing-room. He came in with an easy air.\n\n"
             "At length they were seated, and conversation began.\n\n"
             '"It is the first time I have called, Mrs. Pell."\n\n'
             '"I did not expect you."\n\n'
             '"You can hardly be lonely with such a companion," said he.\n')
    assert s["You can hardly be lonely with such a companion."] == "Mr. Lorne"


def test_a_reply_to_a_smile_introduces_the_next_line():
    s = said(ROOM + "Kitty could not help laughing at the bonnet. Jane replied to her smile.\n\n"
             '"Ah, you may laugh."\n')
    assert s["Ah, you may laugh."] == "Jane"


def test_someone_the_cast_does_not_know_stops_the_pronoun():
    s = said('"Good night," said Mr. Lorne.\n\n'
             "Mr. Lorne was the only man Kitty feared. Even old Hobbs, the gardener, felt it; he "
             "said to Kitty:\n\n" + '"That be a rare gentleman!"\n')
    assert s['"That be a rare gentleman!"'] == "narration"  # not Mr. Lorne, whom `he` would reach


def test_a_vocative_reply_waits_when_a_line_before_was_not_placed():
    s = said(ROOM + '"You can hardly be lonely," said Mr. Lorne.\n\n"Oh, but I am so much alone."\n\n'
             '"You could not ride with him, mamma," said Kitty.\n\n'
             '"He might keep a carriage, Kitty!"\n')
    assert s['"He might keep a carriage, Kitty!"'] == "narration"  # not Mr. Lorne: Mrs. Pell may have spoken


def test_a_bow_to_someone_does_not_make_them_the_one_spoken_to():
    s = said(ROOM + '"Good evening," said Mr. Lorne, bowing to Kitty.\n\n'
             '"Good evening, Mr. Lorne."\n')
    assert s['"Good evening, Mr. Lorne."'] == "narration"  # any of the three women may answer


def test_a_reply_is_not_given_to_someone_known_only_by_a_description():
    s = said('And the girl thought: "I must be kinder."\n\n'
             "One of the old ladies now came up and asked if she might sit down.\n\n"
             '"Here you are as safe as at home."\n\n"Yet our rooms are cold," said Kitty.\n\n'
             '"Ah, then you face the yard." She sighed.\n')
    assert s['"Ah, then you face the yard." She sighed.'] == "narration"  # `the girl` may be Kitty

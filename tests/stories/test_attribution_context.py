"""The narration around a speech, read as a reader reads it (attribution_context.py and the
rules in attribution_rules.py that use it), on text written for these tests: a ferryman,
Mr. Drury, and his niece Bess, with a pedlar and a customs officer passing through."""

from __future__ import annotations

from bookmarks.stories.attribution_context import former_latter, listeners, main_subjects, sentences
from bookmarks.stories.dialogue import Cast, _read
from bookmarks.stories.importers import parse_story
from bookmarks.stories.quotes import quote_style
from bookmarks.stories.speakers import NameChecker
from bookmarks.stories.tags import last_sentence, tag_before


def said(text: str) -> dict[str, str]:
    return {a.text: a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions}


# --- sentences ----------------------------------------------------------------------------


def test_a_title_or_an_initial_ends_no_sentence():
    text = "The boat was late. She was talking to Mr. Drury, and G. H. Pell was asleep. "
    assert [s.strip() for _, s in sentences(text)] == [
        "The boat was late.", "She was talking to Mr. Drury, and G. H. Pell was asleep."]
    assert last_sentence("It rained. Then said Mr. Drury, ")[1] == "Then said Mr. Drury, "
    tag = tag_before("The rain had stopped. “Well,” said Mr. Drury, as soon as the boat had gone, ")
    assert tag is not None and tag.subject == "Mr. Drury"


def test_main_subjects_skip_subordinate_clauses_and_asides():
    text = ("Mr. Drury pulled the oars in. Then he held out his hand as the pedlar climbed "
            "down. (The pedlar, to look brave, whistled.) ")
    assert [s for _, s in main_subjects(text)] == ["he", "Mr. Drury"]
    clauses = "Bess said never a word; and the pedlar went on. "
    assert [s for _, s in main_subjects(clauses)] == ["the pedlar", "Bess"]


def test_a_long_aside_after_the_subject_and_the_voice_of_someone_keep_the_subject():
    long_aside = ("Tom Pell, with his slow careful ways and the look of a sailor who has seen every "
                  "port (he had been at sea for thirty years, and it showed), put the oars away.")
    assert [s for _, s in main_subjects(long_aside)] == ["Tom Pell"]
    assert [s for _, s in main_subjects("The voice of Mr. Drury woke him from his thoughts.")] \
        == ["Mr. Drury"]  # his voice: his doing, so `"…," he was saying` is his
    assert not main_subjects("The voice of the sea woke him.")  # no one's
    assert [s for _, s in main_subjects("At the window his father, James, was still looking out.")] \
        == ["James"]  # the name in apposition is who the description is
    assert [s for _, s in main_subjects("Her husband, who was tired, sat down.")] == ["Her husband"]
    assert [s for _, s in main_subjects("During this talk the child had stayed silent.")] \
        == ["the child"]  # a phrase of time first: `During` is no one
    assert [s for _, s in main_subjects("After some questions, mostly referring to her past, she was "
                                        "asked to relate what she knew.")] == ["she"]


# --- pronouns -----------------------------------------------------------------------------


def test_a_pronoun_continues_the_chain_of_main_subjects():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             "Mr. Drury pulled the oars in. Then he held out his hand as Tom Pell climbed "
             'down. "Mind the step," he said.\n')
    assert s["Mind the step."] == "Mr. Drury"  # not Tom Pell, the nearest subject


def test_a_pronoun_chain_stops_at_someone_unknown():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             'Mr. Drury said never a word; and the boatman smiled. "It turns at six," said '
             'he.\n')
    assert "It turns at six." not in s  # the boatman is no one it knows: left as narration
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             'Mr. Drury said never a word; and the boatman went on. "It turns at six," said '
             'he.\n')
    assert s["It turns at six."] == "Boatman"  # `went on`: a speaker the text names so


def test_the_one_spoken_to_is_not_the_speaker():
    s = said('"Is that you, Bess?" called Mrs. Drury.\n\n"Yes, aunt," said Bess.\n\n'
             'Mrs. Drury set down the lamp and looked at the door.\n\n'
             '"Shut it behind you," she said to Bess.\n')
    assert s["Shut it behind you."] == "Mrs. Drury"
    text = "she said to Bess, and told Mr. Drury nothing"
    mentions = [(text.index("Bess"), text.index("Bess") + 4, "Bess", False),
                (text.index("Mr. Drury"), text.index("Mr. Drury") + 9, "Mr. Drury", False)]
    assert listeners(text, mentions) == {"Bess", "Mr. Drury"}


def test_a_pronoun_tag_is_not_the_one_the_quotation_calls_by_name():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             'Mr. Drury and Tom Pell stood on the jetty together.\n\n'
             '"Go home, Tom," he said.\n')
    assert s["Go home, Tom."] == "Mr. Drury"


# --- the other, the former, the latter ------------------------------------------------------


def test_the_other_is_the_one_whose_turn_it_is():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             '"Then we wait," said Mr. Drury.\n\n"For how long?" returned the other.\n')
    assert s["For how long?"] == "Tom Pell"


def test_the_former_and_the_latter_are_the_two_named_last():
    s = said('"Good evening," said Mr. Drury.\n\n"Good evening," said Tom Pell.\n\n'
             "Tom Pell and Mr. Drury walked on; and at the gate the former stopped. "
             '"This is my house," he said.\n\n'
             "Tom Pell thanked Mr. Drury at the door. "
             '"It was nothing," answered the latter.\n')
    assert s["This is my house."] == "Tom Pell"
    assert s["It was nothing."] == "Mr. Drury"
    text = "Tom Pell and Mr. Drury walked on; the former stopped"
    mentions = [(0, 8, "Tom Pell", True), (13, 22, "Mr. Drury", True)]
    assert former_latter(text, mentions) == [(text.index("the former"), text.index(" stopped"),
                                              "Tom Pell")]


# --- beats after a quotation --------------------------------------------------------------


def test_a_beat_that_ends_the_paragraph_is_the_listener_s():
    s = said('"Where is the boat?" asked Mr. Drury.\n\n'
             '"Here it is." Mr. Drury nodded.\n\n'
             '"Is it yours?" Tom Pell laughed. "It is mine now."\n')
    assert "Here it is." not in s  # a reply to him, not his: left as narration
    assert s["Is it yours? It is mine now."] == "Tom Pell"  # the beat between his quotations


# --- the paragraph before, and what is no character ------------------------------------------


def test_a_tag_at_the_start_takes_its_pronoun_from_the_narration_before():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             "That evening Mr. Drury came home late, while Tom Pell slept by the fire.\n\n"
             '"I thought as much," he said.\n')
    assert s["I thought as much."] == "Mr. Drury"  # not Tom Pell, named later in the paragraph


def test_a_quotation_that_ends_a_sentence_ends_it_for_the_narration_too():
    s = said("Mr. Drury stopped at the door and spoke with Tom Pell. "
             '"Is the boat in?" he asked. "The wind has dropped." But Tom Pell was sure it was '
             'not; "and it will not be till six," he added.\n')
    assert s["and it will not be till six."] == "Tom Pell"


def test_an_aside_in_a_tag_is_not_its_subject():
    said_by = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
                   'The newsboys, as he went, were crying along the quay: "Wreck off the point!"\n')
    assert said_by['The newsboys, as he went, were crying along the quay: "Wreck off the point!"'] \
        == "narration"  # a group the rules do not know, not `he`


def test_a_possessive_is_no_character_of_its_own():
    text = ('"Is the clock right?" asked Mrs. Drury.\n\nMrs. Drury looked at it. It was Tom '
            "Pell’s old clock, and the key was Mr. Lamb’s.")
    paras = _read([(1, t, None) for t in text.split("\n\n")], quote_style(text))
    people = set(Cast(paras, NameChecker(text), None).people)
    assert {"Tom Pell", "Mr. Lamb"} <= people
    assert not {n for n in people if n.endswith(("’s", "'s"))}


def test_a_described_stranger_at_a_sentence_start_stops_the_pronoun():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             "The young man stepped down into the boat.\n\n"
             '"My uncle is ill," he said.\n')
    assert "My uncle is ill." not in s  # `The young man` is no one the cast knows


def test_a_subordinate_clause_before_the_subject_is_skipped():
    s = said('"Good evening," said Mr. Drury.\n\n"Good evening," said Tom Pell.\n\n'
             "Mr. Drury and Tom Pell were on the jetty; but when they came to the steps, the "
             "former lifted his lamp.\n\n"
             '"Look at the water," he said.\n')
    assert s["Look at the water."] == "Mr. Drury"


def test_a_speech_paragraph_that_ends_by_introducing_the_next_speech():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n'
             '"Not yet," said Tom Pell, and looked at the clock. Nobody spoke for a while, and '
             "at last Mrs. Drury put down her sewing and said:\n\n"
             '"Then we must wait."\n')
    assert s["Then we must wait."] == "Mrs. Drury"


def test_the_one_a_tag_speaks_to_is_neither_the_pronoun_nor_the_turn():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             '"Then we wait," said Mr. Drury.\n\n'
             '"Hold the rope meanwhile," he said to Tom Pell.\n')
    assert s["Hold the rope meanwhile."] == "Mr. Drury"  # of the two men, the one not spoken to


def test_a_word_used_as_a_noun_is_no_speech():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             'There was a splash and a "plop!" from the jetty.\n')
    assert set(s.values()) - {"narration"} == {"Mr. Drury", "Tom Pell"}
    assert 'There was a splash and a "plop!" from the jetty.' in s


def test_a_description_in_apposition_is_the_named_one():
    text = ('Mr. Drury the ferryman was a silent man.\n\n"Is the tide in?" asked Mr. Drury.\n\n'
            '"Not yet," said Tom Pell.\n\n"Then we wait," said the ferryman.\n')
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    names = {c.name: c.aliases for c in story.characters}
    assert "Ferryman" not in names and "the ferryman" in names["Mr. Drury"]
    assert {a.text: a.character for a in story.actions}["Then we wait."] == "Mr. Drury"
    from bookmarks.stories.attribution_context import appositives
    found = appositives(["Mr. Lamb, his head clerk, came in. Bess, her friend, sat down."],
                        {"Mr. Lamb": "Mr. Lamb", "Bess": "Bess", "Clerk": "the clerk"})
    assert found == {"Clerk": "Mr. Lamb"}  # `her friend` is a relation, not a description


def test_the_old_man_is_the_one_the_narration_calls_old():
    """`old Ben Hale was digging` … `said the old man`: Ben Hale, not a character `Old man`
    of his own; with two men called old (`old Ben`, `old Pell`), `the old man` stays apart."""
    text = ('"Good morning," said Mary.\n\nOld Ben Hale was digging by the wall.\n\n'
            '"Morning," said Ben Hale.\n\n"What are you planting?" asked Mary.\n\n'
            '"Nothing you would know," said the old man.\n')
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    names = {c.name for c in story.characters}
    assert "Old man" not in names
    assert {a.text: a.character for a in story.actions}["Nothing you would know."] == "Ben Hale"
    two = text.replace("by the wall.", "by the wall, and old Pell watched him.") + \
        '\n"Weeds," said Pell.\n'
    assert "Old man" in {c.name for c in parse_story(two.encode(), "t.txt", fmt="prose").characters}


def test_a_speaker_s_own_narration_goes_on_about_them():
    s = said('"Is the tide in?" asked Nell.\n\n'
             '"Not yet," said Tom Pell, and he went out to the jetty. He looked at the water for '
             "a long while, and then he came back and sat down.\n\n"
             '"It will turn at six," he said.\n')
    assert s["It will turn at six."] == "Tom Pell"  # not a reply to Tom Pell: his narration
    # (after a man's question, `he` could be either man: the stricter rules decide that)


def test_a_tag_with_its_verb_first_reads_the_narration_before_the_quotation():
    s = said("Tom Pell sat by the fire, and across it sat Mr. Drury.\n\n"
             '"You are late," began the latter.\n')
    assert s["You are late."] == "Mr. Drury"


def test_what_is_read_or_written_is_no_speech():
    s = said('"Is there a letter?" asked Mr. Drury.\n\n"Here," said Tom Pell.\n\n'
             "Mr. Drury opened it and read as follows:\n\n"
             '"Dear Drury,—The boat is sold.\n\n"Your friend, H. L."\n\n'
             '"Sold!" said Mr. Drury. "I knew it," Tom Pell wrote on the slate, "long ago."\n\n'
             'On the box was marked "Not to be opened," and Mr. Drury did not open it.\n')
    assert "Dear Drury,—The boat is sold." not in s and "Your friend, H. L." not in s
    assert s["Sold!"] == "Mr. Drury" and "I knew it" not in " ".join(
        t for t, who in s.items() if who != "narration")
    assert "Not to be opened" not in " ".join(t for t, who in s.items() if who != "narration")


def test_a_note_book_containing_the_following_is_read_not_said():
    s = said('"Is the boat in?" asked Mr. Drury.\n\n"Here," said Tom Pell.\n\n'
             "Mr. Drury took up his note-book, which contained the following entries:\n\n"
             '"Left Dover at nine. Reached Calais at noon."\n')
    assert "Left Dover at nine. Reached Calais at noon." not in s  # kept as narration, marks and all


def test_it_is_never_a_person_of_unknown_sex():
    s = said('"Is the tide in?" asked Pell.\n\n"Not yet," said Lamb.\n\n'
             'A voice answered from the cellar: "Go away," it said.\n')
    assert "Go away." not in s  # Pell or Lamb, whose sex the text never shows: not `it`


def test_a_tag_looking_someone_in_the_eyes_is_not_their_line():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             "Mr. Drury sat down by the fire.\n\n"
             '"Sir," he said, looking Mr. Drury in the eyes, "was that the bell?"\n')
    assert s["Sir."] == s["was that the bell?"] == "Tom Pell"  # the narration between is kept


def test_a_month_is_no_first_name():
    text = ('"Is the tide in?" asked Drury.\n\nOn the 8th of January Drury had dined alone, '
            "and on the 9th of March Drury went to sea.")
    paras = _read([(1, t, None) for t in text.split("\n\n")], quote_style(text))
    people = set(Cast(paras, NameChecker(text), None).people)
    assert "Drury" in people and not {"January Drury", "March Drury"} & people


def test_was_someones_reply_and_informed():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n'
             '"It is turning," was Tom Pell’s reply. "It will be full by six," he informed them.\n')
    assert s["It is turning. It will be full by six."] == "Tom Pell"


def test_a_pronoun_does_not_reach_over_narration_without_them():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell, and he went out.\n\n'
             "The room was full of sailors, and out of them rose the voice of a preacher.\n\n"
             '"Repent," he was saying.\n')
    assert "Repent." not in s  # not Tom Pell: the paragraph between has no `he` and no name



def test_a_description_with_a_hyphenated_word_is_a_speaker():
    """`the red-faced man said` / `said the red-faced man` / `the red-faced man went on`: a
    hyphenated adjective is part of the description, as `the old man` is."""
    s = said('A red-faced man stumped out of the cabin and stood by the rail.\n\n'
             '"Nasty weather," the red-faced man said to me.\n\n'
             '"It is," said the pilot.\n\n'
             '"And worse to come," said the red-faced man, and spat.\n')
    assert s["Nasty weather."] == s["And worse to come."] == "Red-faced man"


def test_one_of_a_kind_in_apposition_is_the_named_one():
    text = ("This was Pell, one of the detectives who had been sent from London. The detective "
            "paced the quay.\n\n"
            '"The boat is late," said Pell.\n\n"Not for long," answered the harbourmaster.\n\n'
            '"It will come," said the detective.\n')
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    names = {c.name: c.aliases for c in story.characters}
    assert "Detective" not in names and "the detective" in names["Pell"]
    assert {a.text: a.character for a in story.actions}["It will come."] == "Pell"
    from bookmarks.stories.attribution_context import appositives
    found = appositives(["Tom Hale, a sailor, came in. Ann, one of the nurse's friends, sat. "
                         "Bess, the nurses' friend, left."],
                        {"Tom Hale": "Tom Hale", "Ann": "Ann", "Bess": "Bess"})
    assert found == {"Sailor": "Tom Hale"}  # `one of` wants the plural; `the nurses'` owns

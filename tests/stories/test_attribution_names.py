"""Names a tag gives that a reader knows at once, on text written for these tests: a name
that opens with its particle (`von Horn`, `de Vere`, `d'Artagnan`), a surname after a
title that is also a common word (`Captain Good`, `Mr. Brown`), and a tale told over
several paragraphs that goes on with the words of someone in it."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story


def who(text: str, quote: str) -> str:
    found = [a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions
             if quote in a.text]
    assert len(found) == 1, found
    return found[0]


def test_a_name_that_opens_with_its_particle_is_the_speaker():
    text = ('"The thing lives," said Professor Maxim.\n\n'
            '"And yet it cannot speak," replied von Horn, and he turned to the vat.\n\n'
            '"I will not fight you," said d\'Artagnan.\n\n'
            '"Then you are a coward," answered de Vere.\n')
    assert who(text, "And yet it cannot speak") == "von Horn"
    assert who(text, "I will not fight you") == "d'Artagnan"
    assert who(text, "Then you are a coward") == "de Vere"


def test_a_surname_after_a_title_may_be_a_common_word():
    text = ('"Where are the mines?" asked Sir Henry.\n\n'
            '"Nobody knows," said Captain Good, and he polished his eyeglass.\n\n'
            '"Have a good look at the map," said Sir Henry.\n')
    assert who(text, "Nobody knows") == "Captain Good"


def test_a_tale_goes_on_with_the_words_of_someone_in_it():
    tale = " ".join(["I was hunting koodoo in the hills that year, and the wagon road ran"
                     " past the old workings;"] * 5)
    text = ("I had come down to Durban that winter, and I took a room at the hotel.\n\n"
            "I met the two gentlemen on the boat, and I liked them at once.\n\n"
            "I told them that I knew the country, and I lit my pipe.\n\n"
            '"Tell us about the mines," said Sir Henry.\n\n'
            '"Well," said Captain Good, "do."\n\n'
            f'"Very well," I said. "{tale} and a fine bit of masonry it is."\n\n'
            "\"'Ay,' said Evans, 'but I can tell you a stranger yarn than that'; and he told "
            'me of a ruined city in the north."\n')
    assert who(text, "said Evans") == "Narrator"


def test_monsieur_written_m_dot_before_a_name_with_its_particle():
    text = ('"You are late," said M. de Treville, and he rose.\n\n'
            '"The road was long, monsieur," replied the young man.\n\n'
            '"I did not know that," replied M. de Treville, in a softened tone.\n\n'
            "Mr. L. D. M. Randall had a soul above farming.\n")
    assert who(text, "I did not know that") == "M. de Treville"


def test_a_particle_name_after_an_article_and_an_adjective_and_its_bare_form_are_one():
    text = ('"I am lost," thought the terrified d’Artagnan.\n\n'
            "Artagnan ran down the stair.\n\n"
            '"Stop!" cried d’Artagnan.\n')
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    assert who(text, "I am lost") == who(text, "Stop!") == "d’Artagnan"
    assert [c.name for c in story.characters] == ["d’Artagnan"]


def test_a_number_before_a_plural_name_makes_a_group():
    text = ('"Were you there?" asked the captain.\n\n'
            '"No, sir, we were not," replied the two Musketeers.\n')
    assert who(text, "we were not") == "Two Musketeers"


def test_a_particle_name_capitalized_at_a_sentence_start_is_the_same_subject():
    """`D’Artagnan added M. de Treville …` opens its sentence with the name: the `he` of the
    next tag goes on with him, not with the captain named later in the sentence."""
    text = ('"Sit down," said M. de Treville.\n\n'
            '"I came to Paris to serve the king," replied d’Artagnan.\n\n'
            'D’Artagnan added M. de Treville to the list, as may be perceived; but he thought '
            'this addition would do no harm.\n\n'
            '"And I have the greatest respect for the cardinal," continued he.\n')
    assert who(text, "the greatest respect") == "d’Artagnan"


def test_a_group_is_never_the_he_of_a_tag():
    """`When the two Musketeers had entered; … when M. de Treville had paced the room--he
    stopped in front of them, "…," cried he`: the group that opened the sentence is no
    `he`; the captain is."""
    text = ('"Athos! Porthos!" called M. de Treville.\n\n'
            '"Here we are," said the two Musketeers.\n\n'
            'When the two Musketeers had entered; when the door was closed behind them; when '
            'M. de Treville had three or four times paced the room in silence--he stopped all at '
            'once in front of them, "Do you know what the king said to me," cried he.\n')
    assert who(text, "what the king said") == "M. de Treville"


def _speakers(text: str) -> list[str]:
    return sorted({a.character for a in parse_story(text.encode(), "tale.txt", fmt="prose").actions
                   if a.character != "narration"})


def test_a_bare_pet_name_and_a_womans_own_first_name_after_mrs_are_one_character():
    """`said Tom` where the text's one Thomas is `Thomas Reed`, `said Lizzy` beside
    `Elizabeth Bennet`: a nickname of the one full name is that character. `said Mary` beside
    `Mrs. Mary Dolan`: a woman's first name after `Mrs.` is her own (`Mrs. Alexander Bell`'s
    `Alexander` is her husband's, and stays apart)."""
    assert _speakers('"Come in," said Thomas Reed.\n\n"Thank you," said Jack Lane.\n\n'
                     '"Sit down," said Tom.\n\n"I will," said Jack.\n') == ["Jack Lane", "Thomas Reed"]
    assert _speakers('"Come in," said Elizabeth Bennet.\n\n"Thank you," said Mr. Darcy.\n\n'
                     '"Sit down," said Lizzy.\n\n"I will," said Darcy.\n') \
        == ["Elizabeth Bennet", "Mr. Darcy"]
    assert _speakers('"Come in," said Mrs. Mary Dolan.\n\n"Thank you," said Tom Reed.\n\n'
                     '"Sit down," said Mrs. Dolan.\n\n"Tea?" said Mary.\n') == ["Mrs. Mary Dolan", "Tom Reed"]
    assert _speakers('"Come in," said Mrs. Alexander Bell.\n\n"Thank you," said Tom Reed.\n\n'
                     '"Sit down," said Alexander.\n') == ["Alexander", "Mrs. Alexander Bell", "Tom Reed"]

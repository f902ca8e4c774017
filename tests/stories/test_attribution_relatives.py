"""Relatives who share a surname stay two people, on text written for these tests: a
titled name (`Mrs. Hollis`, `Doctor Brand`, `Mr. Finch`) does not join the one fuller
name of that surname (`Nora Hollis`, `Lucy Brand`, `Mr. Albert Finch`) when the text shows
them apart — a line of the titled one calls the other by a first name, or a title that
gives no sex meets the other sex in the pronouns after it — and still joins it when
nothing does (`Mrs. Hale` is Edna Hale)."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story


def story(text: str):
    return parse_story(text.encode(), "t.txt", fmt="prose")


def who(text: str, quote: str) -> str:
    found = [a.character for a in story(text).actions if quote in a.text]
    assert len(found) == 1, found
    return found[0]


AUNT_AND_NIECE = (
    "Nora Hollis came down the stairs with the lamp. Nora was eighteen that spring.\n\n"
    "Mrs. Hollis sat by the range with her mending, and she did not look up.\n\n"
    '"Come in, Nora," said Mrs. Hollis. "Shut the door behind you."\n\n'
    '"Is the carrier come?" asked Nora.\n\n'
    '"Not yet," said Mrs. Hollis. "He is late again, the idle man."\n\n'
    '"Then I shall wait up," said Nora Hollis.\n')


def test_a_titled_aunt_who_calls_her_niece_by_name_is_not_the_niece():
    assert who(AUNT_AND_NIECE, "He is late again") == "Mrs. Hollis"
    assert who(AUNT_AND_NIECE, "Is the carrier come?") == "Nora Hollis"
    names = {c.name for c in story(AUNT_AND_NIECE).characters}
    assert {"Mrs. Hollis", "Nora Hollis"} <= names


FATHER_AND_DAUGHTER = (
    "Doctor Brand walked in the garden after dinner, and he talked of his roses.\n\n"
    "Lucy Brand followed him with a basket, and she cut what he pointed at.\n\n"
    '"The yellow ones are finished," said Doctor Brand. "Cut them back."\n\n'
    '"All of them?" asked Lucy.\n\n'
    "Doctor Brand nodded, and he turned to the wall.\n\n"
    '"Every one," said Doctor Brand. "They will come again in June."\n\n'
    "Lucy Brand laughed, and she filled her basket.\n")


def test_a_title_without_a_sex_does_not_join_a_first_name_of_the_other_sex():
    assert who(FATHER_AND_DAUGHTER, "The yellow ones are finished") == "Doctor Brand"
    assert who(FATHER_AND_DAUGHTER, "They will come again in June.") == "Doctor Brand"
    assert who(FATHER_AND_DAUGHTER, "All of them?") == "Lucy Brand"


FATHER_AND_SON = (
    "Mr. Albert Finch had come home from India with a liver and a great many shawls.\n\n"
    '"I have brought you a shawl, mother," said Mr. Albert Finch.\n\n'
    '"Bravo, Bert!" said Mr. Finch, who was his father. "And what for me?"\n\n'
    '"A pipe, sir," said Albert.\n\n'
    '"A pipe!" said Mr. Finch. "I have forty pipes."\n')


def test_a_father_who_calls_his_son_by_a_pet_name_is_not_the_son():
    assert who(FATHER_AND_SON, "I have forty pipes.") == "Mr. Finch"
    assert who(FATHER_AND_SON, "A pipe, sir") == "Mr. Albert Finch"


ONE_WOMAN = (
    "Edna Hale sat on the porch in the heat, and she fanned herself.\n\n"
    '"It is too hot to walk," said Mrs. Hale.\n\n'
    '"Then we shall drive," said the colonel, and he went for the trap.\n\n'
    '"Do come too," said Edna Hale.\n')


def test_a_wife_with_nothing_to_tell_her_apart_is_still_the_one_woman_of_the_name():
    assert who(ONE_WOMAN, "It is too hot to walk") == who(ONE_WOMAN, "Do come too") == "Edna Hale"


PROFESSOR_AND_DAUGHTER = (
    '"Good morning, my dear," said Professor Hume, and he went out to the laboratory.\n\n'
    '"Do not forget your lunch," said Miss Hume.\n\n'
    "Ellen Hume was his daughter, and she kept his house.\n\n"
    "Professor Hume bent over the glass, and he watched the thing in it for a long while.\n\n"
    "Professor Hume straightened his back, and he rubbed his eyes.\n\n"
    '"It lives," he said at last. "Tell the boy to bring the lamp."\n')


def test_a_surname_titled_miss_for_a_daughter_does_not_make_her_father_a_woman():
    assert who(PROFESSOR_AND_DAUGHTER, "It lives") == "Professor Hume"

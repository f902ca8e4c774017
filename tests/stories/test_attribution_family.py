"""Prose speakers in a family scene, on text written for these tests: the Greys at home
(Mother, Father, Tom, Ann and Jane the cook). Bare family titles as names, `said:—`
introductions, asides between a name and its verb, a tag that introduces the next
paragraph, speech resumed after an interposed action, a pronoun for the one person of
that sex the narration just named."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story


def who(text: str, quote: str) -> str:
    """The character of the action that holds `quote` (`narration` when unattributed)."""
    found = [a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions
             if quote in a.text]
    assert len(found) == 1, found
    return found[0]


FAMILY = ('"What would you like for supper?" Mother asked.\n\n'
          '"Toast," said Tom, "with a great deal of butter."\n\n'
          '"Butter is dear," said Father. "Ask your mother for dripping."\n\n')


def test_mother_and_father_without_an_article_are_characters():
    assert who(FAMILY, "What would you like for supper?") == "Mother"
    assert who(FAMILY, "Ask your mother for dripping.") == "Father"


def test_a_bare_family_title_has_its_sex():
    text = FAMILY + "Tom went out. Mother laughed.\n\n\"I don't blame him!\" she said.\n"
    assert who(text, "I don't blame him!") == "Mother"


def test_said_colon_dash_introduces_the_next_paragraph():
    text = ('"Is it settled?" asked Tom.\n\n'
            "Mother came down one morning, very pale, and she smiled and said:—\n\n"
            '"Everything is settled. We are going to live in the country."\n')
    assert who(text, "Everything is settled.") == "Mother"


def test_an_aside_between_dashes_does_not_hide_the_subject():
    text = ('"Is that the bell?" asked Ann.\n\n'
            "Jane—she was the cook and had a temper—came in and said that the carrier "
            "had called.\n\n"
            '"He left a parcel, Miss," said she.\n')
    assert who(text, "He left a parcel") == "Jane"


def test_a_name_in_brackets_does_not_take_the_next_pronoun():
    text = ('"Certainly," said Tom, stooping to the fire. (Father, to show that he was not '
            'listening, opened his newspaper.) "I have a boat"—he pointed at the shed—"and '
            'I mean to sail it."\n')
    assert who(text, "and I mean to sail it.") == "Tom"


def test_a_tag_ending_in_a_colon_after_the_last_quotation_speaks_the_next_paragraph():
    text = ('"I have a secret," said Tom.\n\n'
            '"Keep it, Tom," said Ann; "I do not want it." But Jane said:—\n\n'
            '"I should like to hear it!"\n')
    assert who(text, "I do not want it.") == "Ann"
    assert who(text, "I should like to hear it!") == "Jane"


def test_speech_resumed_in_lower_case_after_an_action_of_others_is_the_same_speaker():
    text = ('"You can help me," said Mother, "by being good,"—Tom and Ann exchanged '
            'guilty glances,—"for I shall be away a good deal."\n')
    assert who(text, "for I shall be away a good deal.") == "Mother"
    text = ('"You can help me," said Mother, "by being good"—Tom and Ann exchanged '
            'guilty glances—"Ann will help me."\n')
    assert who(text, "Ann will help me.") == "narration"  # a new sentence: no continuation


def test_a_pronoun_names_the_one_person_of_that_sex_the_narration_just_named():
    text = ('"Where is everybody?" asked Ann.\n\n'
            "Jane brushed the girls' hair. When she had turned down the gas she found Tom, "
            "still dressed, waiting on the stairs.\n\n"
            '"I say, Jane, what is up?" he asked.\n')
    assert who(text, "I say, Jane, what is up?") == "Tom"
    text = ('"Where is everybody?" asked Ann.\n\n'
            "Jane found Tom and Father on the stairs.\n\n"
            '"What is up?" he asked.\n')
    assert who(text, "What is up?") == "narration"  # two men named: unsure


def test_a_relation_in_a_tag_is_the_one_of_the_scene_who_fits():
    text = ('"Harriet is coming," said Maria.\n\n'
            '"Then I must have a ribbon. Harriet, you will lend me your blue one?" cried Maria.\n\n'
            '"I will not," said her sister. "You spoiled the last."\n\n'
            '"You are unkind," said Maria, and Harriet laughed.\n')
    assert who(text, "I will not") == "Harriet"
    assert who(text, "You spoiled the last.") == "Harriet"


def test_his_master_is_the_other_man_of_the_scene():
    """`"Tobias!" called Mr. Crane.` ¶ … ¶ `Tobias came up.` ¶ `"…," observed his master.`:
    Mr. Crane, not a new `Master`."""
    text = ('"Tobias!" called Mr. Crane.\n\n"Coming, sir," answered Tobias from the cellar.\n\n'
            'Tobias came up at last.\n\n'
            '"I have called you twice," observed his master.\n\n'
            '"I was in the cellar, sir."\n')
    assert who(text, "I have called you twice") == "Mr. Crane"
    assert who(text, "I was in the cellar") == "Tobias"


def test_a_relation_with_two_who_fit_stays_unsure_and_with_none_stays_a_description():
    text = ('"Where are you going?" asked Maria.\n\n'
            '"Out," said Harriet.\n\n"With whom?" said Jane.\n\n'
            '"That is no concern of yours," said her sister.\n')
    assert who(text, "That is no concern of yours") == "narration"  # Harriet or Maria
    text = ('"Where are you going?" asked Tom.\n\n'
            '"To the village," said his mother, without looking up.\n')
    assert who(text, "To the village") == "Mother"  # nobody named fits: a mother of her own


def test_a_new_speaker_who_turns_to_someone_makes_the_two_an_exchange():
    text = ('"We came to thank you," said Mrs. Hurst.\n\n'
            '"It was nothing," replied Mrs. Grey.\n\n'
            '"Nothing! You are too modest," said Mrs. Hurst.\n\n'
            'Kitty turned to Harriet. "And you, are you fond of walking?"\n\n'
            '"Very fond," said she.\n\n'
            '"Then we must walk together."\n\n'
            '"With pleasure."\n')
    assert who(text, "Very fond") == "Harriet"  # not Mrs. Hurst, the one who spoke most
    assert who(text, "Then we must walk together.") == "Kitty"
    assert who(text, "With pleasure.") == "Harriet"


def test_mr_x_s_wife_is_mrs_x_and_the_one_called_is_whose_relation_it_is():
    text = ('Mr. Grey was reading. Mrs. Hurst and Mrs. Grey had written to each other.\n\n'
            '"You will come to the ball, Mr. Grey?" said his wife.\n\n'
            '"I had rather not."\n')
    assert who(text, "You will come to the ball") == "Mrs. Grey"
    assert who(text, "I had rather not.") == "Mr. Grey"


def test_a_relation_that_fits_nobody_near_but_a_speaker_of_the_chapter_stays_unsure():
    text = ('"Papa is out," said Harriet.\n\n"He went early," said Tom.\n\n'
            '"To the mill," said Mr. Lee.\n\n'
            '"I shall go to the village," said Maria.\n\n'
            "The rain came on.\n\nIt rained all the morning.\n\nNobody went out.\n\n"
            '"Maria!" cried her sister.\n')
    assert who(text, "Maria!") == "narration"  # Harriet, most likely: not a new "Sister"


def test_a_line_that_calls_another_known_character_breaks_the_turns():
    text = ('"I am ready," said Maria.\n\n'
            '"Is the carriage ready?" asked Mrs. Grey.\n\n'
            '"It is at the door, ma\'am," said Hannah.\n\n'
            '"Then fetch your shawl, Maria," said Mrs. Grey.\n\n'
            '"Yes, Mamma."\n')
    assert who(text, "Yes, Mamma.") == "Maria"  # Maria was called last, not Hannah's turn
    text = text.replace("fetch your shawl, Maria", "fetch my shawl, Hannah")
    assert who(text, "Yes, Mamma.") == "Hannah"  # the one called is the one whose turn it is


def test_a_line_spoken_to_her_husband_is_answered_by_him_or_left_unsure():
    start = ('"You are going to the town?" said Mr. Lucas.\n\n'
             '"Only to the library," said Mrs. Grey.\n\n'
             '"My dear," said Mrs. Grey to her husband, "you will not forget the letters?"\n\n'
             '"I never forget anything."\n')
    assert who(start, "I never forget anything.") == "narration"  # not Mr. Lucas's turn
    text = "Mr. Grey was reading.\n\n" + start
    assert who(text, "I never forget anything.") == "Mr. Grey"


def test_two_who_speak_together_are_not_one_of_them():
    text = ('"Who is to have the new bonnet?" asked Mrs. Grey.\n\n'
            '"I am!" cried Harriet and Maria together.\n\n'
            '"Then let Maria have it," said Harriet, and Mr. Lucas laughed.\n')
    assert who(text, "I am!") == "narration"
    assert who(text, "Then let Maria have it") == "Harriet"  # `and Mr. Lucas laughed` is no pair


def test_two_who_come_in_together_start_a_new_exchange():
    text = ('"Ring for Hannah," said Mrs. Grey.\n\n"You rang, ma\'am?" said Hannah.\n\n'
            '"Bring the tea," said Mrs. Grey.\n\n'
            "Mr. Grey and Captain Hurst came in from the garden.\n\n"
            '"It cannot last," said the Captain.\n\n'
            '"It has lasted ten years," replied Mr. Grey.\n\n'
            '"Then it must end soon."\n\n"That does not follow."\n')
    assert who(text, "Then it must end soon.") == "Captain"
    assert who(text, "That does not follow.") == "Mr. Grey"


def test_a_tag_naming_someone_the_rules_cannot_place_is_not_the_turn_s():
    text = ('"You look well tonight, Miss Hurst," said Mr. Grey.\n\n'
            '"Thank you," said Miss Hurst.\n\n'
            '"And you, Lady Hurst?"\n\n'
            '"I am as well as I ever am," said her ladyship.\n')
    assert who(text, "I am as well as I ever am") == "narration"  # not Miss Hurst's turn


def test_a_name_called_inside_a_quoted_quotation_is_no_call_of_the_speaker_s():
    text = ('"Who was there?" asked Tom.\n\n"Everybody," said Mr. Grey.\n\n'
            '"And Lady Hurst?"\n\n'
            '"She caught me at the door. \'You are not going so soon, Mr. Grey?\' she said."\n\n'
            '"And were you?"\n')
    assert who(text, "And were you?") == "Tom"


def test_going_to_an_aunt_s_is_not_speaking_to_her():
    text = ('"I have remembered," said Tom.\n\n"Remembered what?" said Mr. Grey.\n\n'
            '"Where I heard the name." Had he gone to his aunt\'s, he would have heard it '
            "again; he smiled at the thought.\n\n"
            '"Where was it?"\n')
    assert who(text, "Where was it?") == "Mr. Grey"


def test_the_mother_of_harriet_grey_is_mrs_grey_and_never_a_girl_of_the_scene():
    start = ("Harriet Grey was the eldest of the family. Mr. Grey was reading; Mrs. Grey and "
             "Mrs. Hurst were in the drawing-room.\n\n"
             '"Harriet is coming," said Maria.\n\n"I shall go to the village," said Harriet.\n\n')
    assert who(start + '"In this rain?" said her mother.\n', "In this rain?") == "Mrs. Grey"
    text = ('"Harriet is coming," said Maria.\n\n"I shall go to the village," said Harriet.\n\n'
            '"In this rain?" said her mother.\n')
    assert who(text, "In this rain?") != "Maria"  # the one other girl about is nobody's mother


def test_with_no_exchange_running_the_one_person_a_short_narration_shows_speaks_next():
    text = ("It was a wet morning at Thornley, and Mr. Grey was reading.\n\n"
            "Mrs. Grey was not a woman to be silenced by the weather.\n\n"
            '"You will dress for dinner, Mr. Grey."\n')
    assert who(text, "You will dress for dinner") == "Mrs. Grey"
    text = ("It was a wet morning at Thornley.\n\n"
            "Harriet said that it would clear, and opened her book.\n\n"
            '"Tut, tut! Harriet! It will rain all day."\n')
    assert who(text, "Tut, tut!") == "narration"  # she has spoken, and is the one called


def test_her_father_is_the_one_titled_man_who_spoke_in_the_chapter():
    """`said her father` with nobody about who fits: the one man with a title (`Mr. Grey`)
    who has spoken in the chapter; with two such men it stays unsure."""
    text = ('"Is the carriage ready?" asked Mr. Grey.\n\n"It is at the door," said Hannah.\n\n'
            "The family drove to the assembly rooms, and the evening passed as such evenings pass. "
            "There was music, and there was a great deal of talk about the new tenant of the Hall.\n\n"
            "The next morning the girls sat at their work in the little parlour.\n\n"
            '"Do not cough so, Kitty," said Harriet.\n\n'
            '"Kitty has no discretion in her coughs," said her father; "she times them ill."\n')
    assert who(text, "Kitty has no discretion") == "Mr. Grey"
    two = text.replace('"It is at the door," said Hannah.', '"It is at the door," said Mr. Lucas.')
    assert who(two, "Kitty has no discretion") == "narration"


def test_her_mother_taking_a_girl_s_turns_is_not_that_girl():
    """`said her mother` where Kitty's turn would be, again and again: the lines show
    one person taking another's place, but a mother is no `Kitty` (a first name without a
    title): the two stay apart."""
    text = ('"I do not cough for my own amusement," replied Kitty.\n\n'
            '"When is the ball?" asked Mr. Grey.\n\n'
            '"Not for a fortnight," said her mother.\n\n'
            '"And who will pay for it?" asked Mr. Grey.\n\n'
            '"Your purse, my dear," said her mother.\n\n'
            '"My purse is empty," said Mr. Grey.\n\n'
            '"Then fill it," said her mother.\n')
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    assert {c.name for c in story.characters} == {"Kitty", "Mr. Grey", "Mother"}
    assert who(text, "Then fill it.") == "Mother"


def test_french_italian_spanish_and_german_titles_give_a_name_and_its_sex():
    text = ('Monsieur Farrand stood at the window.\n\n'
            '"The boat is late," he said.\n\n'
            'Signora Bassi folded her letter and looked up at him.\n\n'
            '"It is always late," she said.\n')
    assert who(text, "The boat is late") == "Monsieur Farrand"
    assert who(text, "It is always late") == "Signora Bassi"


def characters(text: str) -> dict[str, list[str]]:
    return {c.name: c.aliases for c in parse_story(text.encode(), "t.txt", fmt="prose").characters}


HOLLANDS = ('Mr. Holland came home late; Mrs. Holland was reading by the lamp.\n\n'
            '"You are late," said Mrs. Holland.\n\n'
            '"The train was slow," said Mr. Holland, and he hung up his coat.\n\n'
            'Ruth Holland put down her book. She had waited for him all evening, and she '
            'did not mean to say so. She smiled at him.\n\n'
            '"Was it?" said Ruth.\n\n'
            'Tom Holland laughed at her. He had been in the garden, and he came in muddy.\n\n'
            '"It always is," said Holland.\n')


def test_a_wife_title_is_the_one_woman_of_the_family_named_in_full():
    c = characters(HOLLANDS)
    assert "Mrs. Holland" in c["Ruth Holland"]
    assert "Mr. Holland" in c["Tom Holland"] and "Holland" in c["Tom Holland"]


def test_a_daughter_keeps_the_wife_title_apart():
    c = characters(HOLLANDS.replace("Ruth Holland put down", "Miss Holland looked up. Ruth Holland "
                                    "put down"))
    assert "Mrs. Holland" not in c.get("Ruth Holland", [])


def test_a_family_plural_is_no_person_and_a_first_name_takes_its_full_form():
    c = characters('I drove over to have dinner with the Tom Buchanans. Daisy Buchanan was my '
                   'cousin, and I had known Tom Buchanan in college. Jordan Baker was staying with them.\n\n'
                   '"Nick!" cried Daisy.\n\n"Hello," said Tom.\n\n"Absolutely!" said Miss Baker.\n')
    assert "Tom Buchanans" not in c and "Daisy" in c.get("Daisy Buchanan", [])
    assert "Tom" in c.get("Tom Buchanan", []) and "Miss Baker" in c.get("Jordan Baker", [])


def test_the_doctor_is_the_one_man_the_text_titles_doctor():
    text = ('Dr. Will Kennicott sat by Carol at supper.\n\n'
            '"Do you like the library?" asked the doctor.\n\n'
            '"It is pleasant," said Carol.\n\n'
            '"Don\'t you get sick of the city?" said Dr. Kennicott.\n\n'
            '"Sometimes," said Carol.\n')
    assert "Doctor" in characters(text).get("Will Kennicott", []) or \
        who(text, "Do you like the library?") == "Will Kennicott"
    both = text.replace("Dr. Will Kennicott sat by Carol at supper.",
                        "Dr. Will Kennicott sat by Carol; Dr. Lanyon came in late.")
    assert who(both, "Do you like the library?") != "Will Kennicott"


def test_common_pet_names_call_their_full_names():
    text = ('Carol sat by the window of the train; Kennicott read his paper.\n\n'
            '"What is it?" asked Kennicott.\n\n'
            '"They are so sunk in the mud," said Carol.\n\n'
            'The train ran on past the grain elevators and the shacks of the next town, past '
            'the lumber-yard and the creamery and the one church with its tin steeple, past the '
            'mud of the roads and the wire fences and the bare fields that went to the edge of '
            'the sky, and the porter came through calling the name of the next station twice.\n\n'
            '"Look here, Carrie. They are happy."\n')
    assert who(text, "Look here, Carrie.") == "Kennicott"


def test_his_wife_is_mrs_x_when_the_husband_is_known_by_his_first_name():
    text = HOLLANDS + ('\n"Then we shall dine at eight," said Tom Holland, and Mrs. Quill, '
                       'the cook, came to the door.\n\n"At eight, then," said his wife.\n')
    assert who(text, "At eight, then") == "Ruth Holland"


def test_mrs_and_a_mans_first_name_is_his_wife_not_he():
    text = ('James Forsyte and his wife came in; Jolyon Forsyte stood by the fire, and Mrs. '
            'Jolyon was not there.\n\n'
            '"I wonder at it," said James.\n\n'
            '"So do I," said Mrs. James.\n\n'
            '"It is late," said Jolyon.\n')
    assert who(text, "I wonder at it") != who(text, "So do I")
    c = characters(text)
    assert "Mrs. Jolyon" not in c.get("Jolyon Forsyte", [])


def test_a_plural_title_before_a_list_of_names_is_no_person():
    c = characters('Seated in a row were three ladies—Aunts Ann, Juley, and Hester.\n\n'
                   '"Very nice for the young man," said Aunt Ann.\n\n'
                   '"Yes," said Aunt Hester.\n')
    assert "Aunts Ann" not in c and "Aunt Ann" in c

"""Speakers in prose, rule by rule, on short texts written for these tests (see
bookmarks/stories/dialogue.py and attribute.py; the gold-set benchmark is
benchmarks/attribution_accuracy.py)."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story
from bookmarks.stories.quotes import find_quotes, join_quotes, mark_scare_quotes, quote_style
from bookmarks.stories.speakers import NameChecker, merge_variants


def story(text: str):
    return parse_story(text.encode(), "tale.txt", fmt="prose")


def said(text: str) -> dict[str, str]:
    """Each action's text → its character."""
    return {a.text: a.character for a in story(text).actions}


def cast(text: str) -> dict[str, list[str]]:
    return {c.name: c.aliases for c in story(text).characters}


# --- said-verbs ------------------------------------------------------------------------------


def test_said_verbs_after_and_before_the_quote():
    s = said('"Come in," said the Hatter.\n\n'
             '"I would rather not," Alice replied firmly.\n\n'
             'Harker said, "Then stay outside."\n\n'
             'The Dormouse shook its head slowly, and murmured, "Too late."\n\n'
             '"Sit," the Ruler said.\n')
    assert s["Come in."] == "Hatter"
    assert s["I would rather not."] == "Alice"
    assert s["Then stay outside."] == "Harker"
    assert s["Too late."] == "Dormouse"
    assert s["Sit."] == "Ruler"


def test_interrupted_quote_is_one_speech_with_its_sentence_break():
    s = said('"I think," said Mara, "that we should go."\n\n'
             '"Nope," said Tom. "I\'m going alone."\n')
    assert s["I think, that we should go."] == "Mara"
    assert s["Nope. I'm going alone."] == "Tom"  # not "Nope I'm going alone"
    assert join_quotes(["Nope", "I'm going"]) == "Nope. I'm going"
    assert join_quotes(["Wait—", "—no, go on."]) == "Wait— —no, go on."


# --- pronouns --------------------------------------------------------------------------------


def test_pronouns_go_to_the_nearest_character_of_their_gender():
    s = said('"Tea?" said the Hatter.\n\n'
             'Alice looked at the Hatter for a long time. "Why is a raven like a desk?" she '
             'asked.\n\n'
             'The Hatter opened his eyes very wide. "I have no idea," he said.\n\n'
             '"Nor have I," said Alice.\n\n'
             '"Then why ask?" he grumbled.\n')
    assert s["Why is a raven like a desk?"] == "Alice"
    assert s["I have no idea."] == "Hatter"
    # no antecedent in its own paragraph: the one man of the exchange
    assert s["Then why ask?"] == "Hatter"


def test_a_pronoun_nobody_fits_stays_narration():
    s = said('"Good morning," said Mr. Pell.\n\n'
             '"Good morning," said Mr. Crane.\n\n'
             '"Is it raining?" she asked.\n')
    assert s['"Is it raining?" she asked.'] == "narration"


# --- turn-taking and vocatives ---------------------------------------------------------------


EXCHANGE = ('"Where were you?" asked Nell.\n\n'
            '"At the mill," said Tom.\n\n'
            '"All night?"\n\n'
            '"All night."\n\n')


def test_turn_taking_alternates_in_a_two_person_exchange():
    actions = story(EXCHANGE).actions
    assert [a.character for a in actions] == ["Nell", "Tom", "Nell", "Tom"]


def test_a_new_name_in_the_narration_ends_the_exchange():
    s = said(EXCHANGE + "Then the door opened and Harker came in, stamping.\n\n"
             '"Nobody sleeps here tonight," said Harker.\n\n"Why not?"\n')
    assert s['"Why not?"'] == "narration"  # Harker and whom? unsure, so narration


def test_a_vocative_vetoes_the_turn_it_names():
    s = said('"Where were you?" asked Nell.\n\n'
             '"At the mill," said Tom.\n\n'
             '"Nell, you know I was."\n')
    # the turn would give it to Nell, who is called: of the two alone, it is Tom going on
    assert s["Nell, you know I was."] == "Tom"
    s = said('"Where were you?" asked Nell.\n\n'
             '"Out," said Harker.\n\n'
             '"At the mill," said Tom.\n\n'
             '"Nell, you know I was."\n')
    assert s['"Nell, you know I was."'] == "narration"  # Harker or Tom: a third is near


def test_an_unknown_speaker_stays_narration_and_breaks_the_turns():
    s = said('"Where were you?" asked Nell.\n\n'
             '"At the mill," said Tom.\n\n'
             '"Off with his head!" the soldiers shouted.\n\n'
             '"Is it done?" said a timid voice.\n')
    assert s['"Off with his head!" the soldiers shouted.'] == "narration"
    assert s['"Is it done?" said a timid voice.'] == "narration"


# --- the first-person narrator ---------------------------------------------------------------


def test_first_person_narrator_named_by_the_text():
    text = ("My name is Nell Carrow, and I kept the lamp at Gullet Point.\n\n"
            "I went down to the door when the knock came.\n\n"
            "I found a sailor on the step, and I let him in.\n\n"
            '"Come in," I said.\n\n"Thank you, miss," said the sailor.\n')
    assert said(text)["Come in."] == "Nell Carrow"


def test_first_person_narrator_named_by_what_the_others_call_them():
    text = ("I had not seen my friend for a month when I called at the old rooms.\n\n"
            "I found him at the fire, and I sat down opposite.\n\n"
            "My chair was where I had left it.\n\n"
            '"You have been travelling, Watson," said Holmes.\n\n'
            '"How do you know?" said I.\n\n'
            '"My dear Watson, your boots tell me."\n')
    s = said(text)
    assert s["How do you know?"] == "Watson"
    assert s["You have been travelling, Watson."] == "Holmes"
    assert s["My dear Watson, your boots tell me."] == "Holmes"  # turn-taking


def test_unnamed_first_person_narrator():
    text = ("I remember the evening well.\n\nI was the last of the guests to arrive.\n\n"
            "My host met me at the door.\n\n"
            '"You are late," said Filby.\n\n"The roads," said I.\n')
    assert said(text)["The roads."] == "Narrator"


def test_a_name_shouted_to_someone_else_before_the_narrator_is_not_the_narrators():
    """Only an answer in a talk with the narrator (next to an `I said`) may name them: the
    captain calling the cook twice, with the narrator looking on, does not make the
    narrator the cook."""
    text = ("I stood by the rail and watched the men at the hatch.\n\n"
            "I was wet through, and my hands shook.\n\n"
            "\"Cooky! Oh, Cooky!\" shouted Larsen.\n\n"
            "The cook came running with a pan, and I followed him below.\n\n"
            "\"Where am I?\" I said.\n\n"
            "\"On the schooner,\" said Larsen.\n")
    s = said(text)
    assert s["Where am I?"] == "Narrator" and s["Cooky! Oh, Cooky!"] == "Larsen"
    assert "Cooky" not in cast(text)


def test_an_object_pronoun_says_nothing_of_the_subjects_sex():
    """`Selden had never seen her` is about someone else: Selden is not made a woman, so
    `she repeated` goes to the woman of the talk, not to Selden."""
    from bookmarks.stories.speakers import pronoun_votes

    forms = {"Selden": "Selden", "Anne": "Anne", "Tom": "Tom"}
    votes = pronoun_votes("Selden had never seen her more radiant. Selden saw her at once. "
                          "Selden met her at the door. Anne shook her head. Tom had seen him "
                          "before. Tom rubbed his eyes.", forms)
    assert "Selden" not in votes  # three object `her`s: nothing about Selden
    assert votes["Anne"] == {"f": 1} and votes["Tom"] == {"m": 1}  # `him` is someone else


def test_a_title_anywhere_in_the_text_gives_a_surname_its_sex():
    """`Mr. Halloran` said once, even inside speech, makes Halloran a man: `she said` in a
    talk of the two is never his; `Mr. and Mrs. Pell` says nothing of Pell."""
    from bookmarks.stories.speakers import titled_genders

    seen = titled_genders('"Mr. Halloran, at last!" Mr. and Mrs. Pell came in. The Baroness.\n\n'
                          'Felix looked up. Miss\nOdile Varnier nodded.')
    assert seen["Halloran"] == {"m"} and seen["Pell"] == {"m", "f"} and seen["Odile"] == {"f"}
    assert "Felix" not in seen  # a paragraph break after a title is no title of his
    text = ('Halloran stopped on the platform. Among the travellers stood Miss Odile Varnier.\n\n'
            '"Mr. Halloran, what luck!"\n\n'
            'Halloran had never seen her so pleased with herself.\n\n'
            '"Luck for me," she repeated. "Take me to tea."\n')
    assert said(text)["Luck for me. Take me to tea."] == "Miss Odile Varnier"


def test_a_pronoun_with_no_antecedent_near_is_the_one_person_of_that_sex_in_the_scene():
    """Two alone over tea, named long ago: `she declared` is the woman's, `he said` the man's
    — unless the scene has someone the cast does not know (`a stout woman`)."""
    talk = ('Mr. Corran held the door, and Miss Ilse Brandt went up before him.\n\n'
            'The rooms were small and smelt of books; the kettle sang on the hob.\n\n'
            'Rain ran down the glass. The street below was empty.\n\n'
            'It was late in the day, and the lamps were lit one by one.\n\n'
            '"What a nice little place," she declared.\n\n'
            '"It does for a bachelor," he said.\n')
    s = said(talk)
    assert s["What a nice little place."] == "Miss Ilse Brandt"
    assert s["It does for a bachelor."] == "Mr. Corran"
    crowded = talk.replace("Rain ran down the glass.", "A stout woman shook her umbrella.")
    assert said(crowded)['"What a nice little place," she declared.'] == "narration"


def test_a_man_and_a_woman_alone_take_turns_across_narration():
    """Two alone: an untagged line after narration is the one who did not speak last —
    not when the narration is about the last speaker: a short paragraph of his doing
    introduces his next line (attribution_rules `_beat`)."""
    text = ('Mr. Corran met Miss Ilse Brandt at the gate.\n\n'
            '"You are late," she said.\n\n'
            '"The train was," he said.\n\n'
            'She looked along the quay, where the lamps were being lit.\n\n'
            '"Then we shall walk quickly."\n\n'
            '"As you like," he said.\n\n'
            'He turned up his collar and looked at the sky.\n\n'
            '"It will pass."\n')
    s = said(text)
    assert s["Then we shall walk quickly."] == "Miss Ilse Brandt"
    assert s["It will pass."] == "Mr. Corran"  # his collar, his sky: he goes on
    crowd = text.replace("She looked along the quay, where the lamps were being lit.",
                         "Along the quay a porter was lighting the lamps.")
    assert said(crowd)['"Then we shall walk quickly."'] == "narration"  # a third is there


def test_names_with_accented_letters_titles_and_descriptions():
    """`Mrs. Brühl` is a name; `a German Baroness` in the narration is no fuller name of
    `the Baroness` (she stays herself, and `Madame Münster` is a name); `the old man` and
    `the young man` are two people."""
    s = said('"We are late," said Mrs. Brühl.\n\n"Not at all," said Mr. Lorne.\n')
    assert s["We are late."] == "Mrs. Brühl"
    text = ('She had married a German Baroness\'s brother, people said, and was a Baroness '
            'herself.\n\n"We are expected," said the Baroness.\n\n'
            '"And the daughters?" Madame Münster demanded.\n\n'
            '"I am too old," said the old man.\n\n"I am not," said the young man.\n')
    people = cast(text)
    assert "German Baroness" not in people and "Madame Münster" in people
    s = said(text)
    assert s["I am too old."] != s["I am not."]


def test_a_possessive_before_the_verb_is_the_speaker_not_a_new_character():
    text = ('"Is she coming about?" I asked.\n\n'
            '"Very probably," was Dan Forde\'s answer, as he turned partly away from me and '
            'cried out, "Cooky! Oh, Cooky!"\n')
    assert said(text)["Cooky! Oh, Cooky!"] == "Dan Forde"
    assert "Dan Forde's" not in cast(text)


def test_a_description_is_merged_only_into_someone_with_a_name_of_their_own():
    """`replied the servant` where Poole's turn was may be Poole; `the boy` answering `the
    captain` is not the captain (a title alone is a description too)."""
    from bookmarks.stories.attribution_rules import _proper
    from bookmarks.stories.dialogue import Cast
    from bookmarks.stories.speakers import Person

    people = Cast.__new__(Cast)
    people.nouns = frozenset({"boy"})
    people.people = {"Captain": Person("Captain", {"Captain", "the captain"}),
                     "Poole": Person("Poole", {"Poole"}),
                     "Mr. Hyde": Person("Mr. Hyde", {"Mr. Hyde", "the man"})}
    assert not _proper(people, "Captain")
    assert _proper(people, "Poole") and _proper(people, "Mr. Hyde")


# --- several speakers in one paragraph -------------------------------------------------------


def test_several_speakers_in_one_paragraph_become_separate_actions():
    actions = story('"Who are you?" said the Queen. Alice curtsied low. "My name is Alice," '
                    'she said.\n').actions
    assert [(a.character, a.text) for a in actions] == [
        ("Queen", "Who are you?"), ("narration", "Alice curtsied low."),
        ("Alice", "My name is Alice.")]


# --- not speech ------------------------------------------------------------------------------


def test_scare_quotes_titles_and_labels_stay_narration():
    s = said('At the word "liberality," Scrooge frowned.\n\n'
             "She took down a jar labelled 'ORANGE MARMALADE' from the shelf.\n\n"
             'They often "came down" handsomely, and Scrooge never did.\n')
    assert set(s.values()) == {"narration"}
    p = 'the Psychologist gave an account of the “ingenious paradox and trick” we had seen'
    quotes = find_quotes(p)
    mark_scare_quotes(p, quotes)
    assert [q.speech for q in quotes] == [False]


def test_single_quote_texts_and_apostrophes():
    text = ("'Well!' thought Alice to herself, 'after such a fall as this, I shan't mind "
            "stairs!'\n\nShe didn't say a word; the bottle said 'DRINK ME' in large letters.\n\n"
            "'I wonder,' said Alice.\n\n'What's that?' she asked.\n")
    assert quote_style(text) == "single"
    s = said(text)
    assert s["Well! after such a fall as this, I shan't mind stairs!"] == "Alice"
    assert s["What's that?"] == "Alice"
    assert "DRINK ME" in next(t for t, who in s.items() if who == "narration")


def test_speech_over_several_paragraphs_keeps_its_speaker():
    s = said('"It began long ago," said the Captain, "when I was young.\n\n'
             '"Then the war came, and I went to sea."\n')
    assert s["Then the war came, and I went to sea."] == "Captain"


# --- names -----------------------------------------------------------------------------------


def test_name_variants_are_one_character_with_aliases():
    c = cast('"Here," said Sue Eagen.\n\n"There," said Captain Slops.\n\n'
             '"Where?" asked Miss Eagen.\n\n"Everywhere," Slops said.\n\n'
             '"Nowhere," said the Captain.\n')
    assert c == {"Sue Eagen": ["Miss Eagen"], "Captain Slops": ["Slops"]}


def test_a_calling_is_a_title_and_a_bare_description_no_short_form():
    """`Shepherd Oak` and `Mr. Oak` are Gabriel Oak (a calling before a surname is a title,
    and two titles of one sex are no family); `the man` is not `the little man`."""
    canon = merge_variants(["Gabriel Oak", "Shepherd Oak", "Mr. Oak", "Oak", "Jan Coggan"])
    assert {canon[n] for n in ("Shepherd Oak", "Mr. Oak", "Oak")} == {"Gabriel Oak"}
    canon = merge_variants(["Little man", "Man"])
    assert canon["Man"] == "Man"


def test_a_family_keeps_its_titles_apart():
    names = ["Mr. Bennet", "Mrs. Bennet", "Elizabeth Bennet", "Elizabeth", "Lizzy"]
    canon = merge_variants(names)
    assert canon["Mr. Bennet"] == "Mr. Bennet" and canon["Mrs. Bennet"] == "Mrs. Bennet"
    assert canon["Elizabeth"] == "Elizabeth Bennet"
    assert merge_variants(["Mr. Eagen", "Sue Eagen"])["Mr. Eagen"] == "Mr. Eagen"


def test_no_character_from_a_sentence_start():
    text = ('The guards had gone. Those Korvin said were loyal stayed.\n\n'
            '"Go," Korvin said. Dutifully Scribney said, "At once."\n\n'
            '"And the horses?" To Robert it was plain. "Leave them," Robert answered.\n\n'
            '"Nonsense." She\'d said it twice. "Nonsense," said Korvin.\n')
    names = set(cast(text))
    assert names == {"Korvin", "Scribney", "Robert"}
    checker = NameChecker(text)
    assert checker.clean("Those Korvin") == "Korvin" and checker.clean("She'd") is None


def test_tags_with_an_auxiliary_or_an_adverb():
    s = said('Mr. Drury kept the ferry. "A fool and his boat," he used to say: "soon parted."\n\n'
             '"Rain tonight," he had thought. He was wrong, and he even added: "Or snow."\n\n'
             'The tide turned; and then "Drury," said Tom Pell, "the boat is loose."\n')
    assert s["A fool and his boat, soon parted."] == "Mr. Drury"
    assert s["Rain tonight."] == "Mr. Drury"
    assert s["Or snow."] == "Mr. Drury"
    assert s["Drury, the boat is loose."] == "Tom Pell"  # a quotation mid-sentence, then its tag


def test_a_name_with_adjectives_and_a_verb_with_back():
    s = said('"Is the tide in?" asked the anxious Mole.\n\n'
             '"Not yet," replied the good-natured Rat.\n\n'
             '"Good night," whispered back the Mole.\n')
    assert s["Is the tide in?"] == s["Good night."] == "Mole"
    assert s["Not yet."] == "Rat"
    assert "Face" not in {c.name for c in story('The face of Hyde was pale. "Go," said Tom.\n').characters}


def test_a_pronoun_after_narration_about_a_group_is_unsure():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             "They walked up to the house, and found Mr. Lamb asleep in the garden.\n\n"
             '"Hooray!" he cried.\n')
    assert '"Hooray!" he cried.' in s and s['"Hooray!" he cried.'] == "narration"


NARRATOR_ALONE = ("I had lived at Greywater a month before Mr. Ashford came home. I saw little "
                  "of him; he dined alone.\n\n"
                  "One evening I was sent for. I smoothed my hair and went down, and found "
                  "Mr. Ashford by the fire.\n\n"
                  "My pupil was asleep upstairs, and I was glad of it.\n\n"
                  '"Sit down, Miss Vane," said he; "nearer the lamp."\n\n'
                  '"Thank you, sir."\n\n'
                  '"You have been here four weeks?"\n\n'
                  '"Four weeks and two days, sir."\n\n'
                  '"And you like the place?"\n\n'
                  '"Very much, sir."\n')


def test_a_first_person_narrator_alone_with_one_speaker_takes_the_other_turns():
    s = said(NARRATOR_ALONE)
    assert s["Sit down, Miss Vane, nearer the lamp."] == "Mr. Ashford"
    assert [s["Thank you, sir."], s["Four weeks and two days, sir."], s["Very much, sir."]] \
        == ["Narrator"] * 3  # "I" is the one spoken to: the exchange is the two of them
    assert s["You have been here four weeks?"] == s["And you like the place?"] == "Mr. Ashford"


def test_a_narrator_with_someone_else_in_the_scene_takes_no_turn():
    s = said(NARRATOR_ALONE.replace("My pupil was asleep upstairs", "A maid was mending by the "
                                                                    "window"))
    assert s['"Thank you, sir."'] == "narration"  # the maid may answer: unsure
    assert s['"Very much, sir."'] == "narration"


def test_a_beat_named_then_he_leads_two_men_out_of_their_alternation():
    """Two men arguing in bare lines: `Thomas sat silent a while. Then he returned to the
    charge.` gives Thomas the next line though the alternation would give it to Walter
    (`he` goes on with the paragraph's own subject; `returned to` is no answer), and the
    bare lines after alternate from there. A beat whose line speaks of its subject by
    name (`"I fear Thomas …"`) is not his."""
    text = ('Walter and Thomas walked by the canal.\n\n'
            '"You are wrong about the mill," said Walter.\n\n'
            '"I am right about the mill," said Thomas.\n\n'
            '"The miller has debts."\n\n'
            '"Every miller has debts."\n\n'
            'Thomas sat silent a while. Then he returned to the charge.\n\n'
            '"You never answer the question."\n\n'
            '"Ask it plainly, then."\n\n'
            '"Who pays the carters?"\n')
    s = said(text)
    assert s["The miller has debts."] == "Walter" and s["Every miller has debts."] == "Thomas"
    assert s["You never answer the question."] == "Thomas"
    assert s["Ask it plainly, then."] == "Walter"
    assert s["Who pays the carters?"] == "Thomas"
    other = text.replace('"You never answer the question."', '"I fear Thomas never listens."')
    assert next(c for t, c in said(other).items() if "I fear Thomas" in t) != "Thomas"


def test_one_of_several_unnamed_breaks_the_chain_of_he():
    """`One of them now … turned towards him.` ¶ `"…," he said`: `he` is that one, whom the
    cast does not know — not the man named earlier in the paragraph."""
    text = ('"The harvest is ruined," said Mr. Oakes.\n\n'
            '"Ruined entirely," said Mr. Tull.\n\n'
            'Mr. Oakes had appealed to the whole room. At the window two travellers had put down '
            'their cards. One of them now, with a slow smile, turned towards the fire.\n\n'
            '"You farmers always say so," he said.\n')
    assert next(c for t, c in said(text).items() if "You farmers" in t) == "narration"
    named = text.replace("One of them now, with a slow smile, turned", "He now, with a slow smile, turned")
    assert said(named)["You farmers always say so."] == "Mr. Oakes"


def test_he_after_a_possessive_is_the_one_named_before_it():
    """`But this was too much for Mr. Oakes's patience. He burst out laughing.` ¶
    `"Ha!" He laughed …`: the `he` is the one man the narration names before it, though
    not as a subject — not when the narrator is a subject there too (`when I told of Mr.
    Tull's …, he gave a whistle`: the listener)."""
    text = ('"The harvest is ruined," said Mr. Oakes.\n\n'
            '"Ruined entirely," said Mr. Tull.\n\n'
            '"Then let us hope the rain stops," said Mr. Pike.\n\n'
            'But this was too much for Mr. Oakes\'s patience. He burst into a fit of laughter.\n\n'
            '"Ha! ha!" He laughed until his eyes streamed. "Hope, says he!"\n')
    assert next(c for t, c in said(text).items() if "Hope, says he" in t) == "Mr. Oakes"
    narrator = text.replace("But this was too much for Mr. Oakes's patience. He burst into a fit of "
                            "laughter.",
                            "I told them of Mr. Oakes's loss, and he burst into a fit of laughter.")
    assert next(c for t, c in said(narrator).items() if "Hope, says he" in t) != "Mr. Oakes"


def test_a_tag_before_wins_over_a_new_sentence_after():
    """`the sergeant said under his breath, "Are they mad?" The porter went on with relish:`
    — the line is the sergeant's; the sentence after it leads into the porter's next one."""
    text = ('"He paid for the window before he broke it," said the porter.\n\n'
            'The sergeant said under his breath, "Are they mad?" The porter went on with relish:\n\n'
            '"Then he walked off whistling."\n')
    s = said(text)
    assert next(c for t, c in s.items() if "Are they mad" in t) == "Sergeant"
    plain = text.replace("The sergeant said under his breath, ", "")
    assert next(c for t, c in said(plain).items() if "Are they mad" in t) == "Porter"


def test_a_pet_name_is_the_character_and_a_line_about_them_is_not_theirs():
    """`Lizzy` calls Elizabeth Bennet (a common short form of her first name), so the
    untagged answer is hers, not the turn's (Jane, who spoke before Mr. Hurst); a line that
    talks of her (`Lizzy's head`) is not her turn."""
    text = ('"I shall go to the ball," said Elizabeth Bennet.\n\n'
            '"And I," said Jane.\n\n'
            '"Then go," said Mr. Hurst. "When is it to be, Lizzy?"\n\n'
            '"To-morrow fortnight."\n\n'
            '"So soon!" said Mr. Hurst.\n\n'
            '"Lizzy\'s head is full of it already."\n')
    s = said(text)
    assert next(c for t, c in s.items() if "fortnight" in t) == "Elizabeth Bennet"
    assert next(c for t, c in s.items() if "full of it" in t) != "Elizabeth Bennet"


def test_an_untagged_line_before_a_pronoun_beat_is_the_beats_subject():
    """`"I shall like it better." She waited while he cut the lemon. "But that is not the
    reason," she insisted.`: with a man and a woman talking, the first line is hers too."""
    text = ('"Will you have tea?" asked Mr. Selby.\n\n'
            '"Yes, please," said Miss Vane.\n\n'
            '"I have no cream," he said.\n\n'
            '"I shall like it better." She waited while he cut the lemon. "But that is not the '
            'reason," she insisted.\n')
    s = said(text)
    assert next(c for t, c in s.items() if "like it better" in t) == "Miss Vane"


def test_she_is_carried_back_over_paragraphs_that_speak_only_of_her():
    """A first-person narrator and a woman met on the road (another woman spoke earlier):
    `she said` four paragraphs after her last named line is still hers when everything
    between speaks of her as `she`/`her` (or is the narrator's line); not when a maid came
    in between."""
    lines = ['"Good night," said Mrs. Hartright, and she went up to bed.',
             'I walked out on the heath, as I always did when I could not sleep, and I met no one '
             'until I came to the crossroads.',
             '"Is that the road to London?" said Miss Anne Catherick.',
             '"It is," I said.',
             'She looked at me, and then at the sky over the city.',
             '"Do not follow me," I said, "if you do not wish it."',
             'She turned to me, and her hand shook on the strap of her bag.',
             '"I heard you coming," she said.']
    text = "\n\n".join(lines) + "\n"
    assert next(c for t, c in said(text).items() if "heard you coming" in t) == "Miss Anne Catherick"
    maid = text.replace("She turned to me, and her hand", "A maid came up to me, and her hand")
    assert next(c for t, c in said(maid).items() if "heard you coming" in t) != "Miss Anne Catherick"


def test_a_possessive_names_no_one_who_is_there():
    """`… the lamp in Sarah's window.` ¶ `"…," she said`: the one woman the narration names
    is not there, only her window; `she` is not her."""
    text = ('"Good night," said Mrs. Hartright.\n\n'
            '"Good night," said Sarah.\n\n'
            'I walked out on the heath, as I always did when I could not sleep, and I met no '
            'one until I came to the crossroads.\n\n'
            'The road ran white under the moon, and I followed it for an hour.\n\n'
            'At the turnpike I stopped to rest my legs.\n\n'
            'I looked back at the lamp in Sarah\'s window, far behind me now.\n\n'
            '"Do you know many people in London?" she said suddenly.\n')
    assert next(c for t, c in said(text).items() if "many people" in t) != "Sarah"
    there = text.replace("the lamp in Sarah's window", "Sarah, who had followed me")
    assert next(c for t, c in said(there).items() if "many people" in t) == "Sarah"


def test_a_line_that_calls_papa_is_the_one_who_bears_his_surname():
    """Emma Woodhouse, Mr. Woodhouse and Mr. Knightley talk: the untagged `"My dearest
    papa! …"` after Mr. Woodhouse's line is Emma's — the one of them with his surname —
    not the turn's (Mr. Knightley, who spoke before him)."""
    text = ('"It is a sad business," said Mr. Knightley.\n\n'
            '"Especially for poor Miss Taylor," said Emma Woodhouse.\n\n'
            '"She will miss us," said Mr. Knightley.\n\n'
            '"I believe it is very true, my dear," said Mr. Woodhouse.\n\n'
            '"My dearest papa! You do not think I could mean you."\n')
    assert next(c for t, c in said(text).items() if "My dearest papa" in t) == "Emma Woodhouse"


def test_a_line_introduced_for_someone_it_calls_is_not_theirs():
    """`… and at last he said:` ¶ `"What a charming amusement, Mr. Darcy!"` (he: Mr. Darcy)
    — the introduction cannot give the line to the one it calls by name."""
    text = ('"Good evening," said Sir William.\n\n'
            '"Good evening," said Mr. Darcy.\n\n'
            'Mr. Darcy stood near them in silent indignation, and at last he said:\n\n'
            '"What a charming amusement for young people this is, Mr. Darcy!"\n')
    assert next(c for t, c in said(text).items() if "charming amusement" in t) != "Mr. Darcy"


def test_a_bare_surname_shared_by_a_man_and_his_daughter_is_his():
    """`Mr Theodore Racksole` and `Miss Racksole`: `said Racksole` is the man (a bare surname
    in a tag is a man's); with a woman of the family known by her first name too
    (`Elizabeth Bennet`), `Bennet` alone stays apart."""
    merged = merge_variants(["Mr Theodore Racksole", "Racksole", "Miss Racksole"])
    assert merged["Racksole"] == "Mr Theodore Racksole"
    assert merged["Miss Racksole"] == "Miss Racksole"
    assert merge_variants(["Mr. Bennet", "Bennet", "Mrs. Bennet", "Elizabeth Bennet"])["Bennet"] == "Bennet"


def test_it_was_x_after_a_line_names_its_speaker():
    """`"Sorry to keep you waiting, Nella." It was Mr Racksole, the millionaire, …`: his,
    not the turn's (Jules, who spoke before him)."""
    text = ('"Good evening, sir," said Jules.\n\n'
            '"Good evening," said Mr Racksole.\n\n'
            '"Sorry to keep you waiting, Nella." It was Mr Racksole, the millionaire, who came in '
            'with his hat in his hand.\n')
    assert next(c for t, c in said(text).items() if "Sorry to keep you" in t) == "Mr Racksole"

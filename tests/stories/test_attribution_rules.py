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
    from bookmarks.stories.attribution_chain import has_proper_name
    from bookmarks.stories.dialogue import Cast
    from bookmarks.stories.speakers import Person

    people = Cast.__new__(Cast)
    people.nouns = frozenset({"boy"})
    people.people = {"Captain": Person("Captain", {"Captain", "the captain"}),
                     "Poole": Person("Poole", {"Poole"}),
                     "Mr. Hyde": Person("Mr. Hyde", {"Mr. Hyde", "the man"})}
    assert not has_proper_name(people, "Captain")
    assert has_proper_name(people, "Poole") and has_proper_name(people, "Mr. Hyde")


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


def test_a_pet_name_speaker_is_the_one_of_that_first_name():
    """`Bobbie` is Roberta and `Billy Smallbury` William Smallbury, as speakers (their lines
    in one memory); `Bert`, a pet form of both Albert and Ethelbert, stays apart, and so
    does a pet name of another surname."""
    canon = merge_variants(["Roberta", "Bobbie", "Billy Smallbury", "William Smallbury", "Bill Coggan"])
    assert canon["Bobbie"] == "Roberta" and canon["Billy Smallbury"] == "William Smallbury"
    assert canon["Bill Coggan"] == "Bill Coggan"
    assert merge_variants(["Albert", "Ethelbert", "Bert"])["Bert"] == "Bert"
    s = said('"Where is the train?" asked Roberta.\n\n"Late," said Peter.\n\n'
             '"Then we wait," said Bobbie.\n')
    assert s["Then we wait."] == "Roberta"


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



def test_a_second_title_after_and_is_no_speech_and_a_described_name_no_alias():
    s = said('"Hello," said Carol.\n\n'
             'The band was playing "Carmen" and "Madame Butterfly." Carol was dizzy with music. '
             '"It is all so lovely," she whispered.\n')
    assert not any("Madame Butterfly" in t and c != "narration" for t, c in s.items())
    c = cast('"Ho," the unsentimental Kennicott was moved to say.\n\n"Hi," said Kennicott.\n')
    assert "the unsentimental Kennicott" not in c.get("Kennicott", [])


def test_a_doubled_word_is_no_full_name_and_the_nephew_is_the_one_owned():
    c = cast('People new to the business called Scrooge Scrooge, and sometimes Marley.\n\n'
             '"Bah!" said Scrooge.\n\n"A merry Christmas, uncle!" cried Scrooge\'s nephew.\n\n'
             '"Don\'t be cross, uncle!" said the nephew.\n')
    assert "Scrooge Scrooge" not in c and "Scrooge" in c
    assert "Nephew" not in c


def test_it_was_x_who_was_speaking_introduces_xs_line():
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             "Mr. Drury was lost in thought for a while, and when he listened again it was again "
             "Tom Pell who was speaking:\n\n"
             '"The boat will not wait for us."\n')
    assert s["The boat will not wait for us."] == "Tom Pell"


def test_a_paragraph_ending_said_dash_introduces_the_next_line():
    """`Mrs. Gibson said, as a comment upon it,--` ¶ `"…"`: like `said:`, it introduces."""
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             "Mrs. Lamb generally said, as a comment upon her husband's account of the weather,--\n\n"
             '"My dear! why do you not ask him to dinner?"\n')
    assert s["My dear! why do you not ask him to dinner?"] == "Mrs. Lamb"


def test_a_preposition_opening_a_sentence_is_no_part_of_a_name():
    """`Unlike Celia, she rarely blushed`: the character is Celia, not `Unlike Celia`."""
    s = said('"Is it late?" asked Celia.\n\nUnlike Celia, she rarely blushed.\n\n'
             '"Not very," said Dorothea.\n')
    assert s["Is it late?"] == "Celia"


def test_stepping_into_the_breach_or_breaking_the_silence_introduces_a_line():
    """`Finally Mrs. Lamb stepped lamely into the breach.` ¶ `"…"`: hers (and `Finally Mrs`
    is no name: the title starts the name `Mrs. Lamb`)."""
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             "Neither of them knew what to say. Finally Mrs. Lamb stepped lamely into the breach.\n\n"
             '"Well, well, there is no need to quarrel."\n')
    assert s["Well, well, there is no need to quarrel."] == "Mrs. Lamb"


def test_one_who_takes_up_the_thread_in_a_sentence_s_last_clause_says_the_next_line():
    """`The talk fell during the rubber, after which Tom Pell took up its thread.` ¶ `"…"`: his."""
    s = said('"Is the tide in?" asked Mr. Drury.\n\n"Not yet," said Tom Pell.\n\n'
             "The talk fell during the rubber, after which Tom Pell took up its thread.\n\n"
             '"And when will it be?"\n')
    assert s["And when will it be?"] == "Tom Pell"


def test_a_relative_clause_inside_a_tag_is_not_its_subject():
    """`Tom Pell, whose turn it was to deal, gathered them up, and went on: "…"`: Tom Pell's,
    not the `it` of the relative clause."""
    s = said('"Is the tide in?" asked Mr. Drury.\n\n'
             'Tom Pell, whose turn it was to deal, gathered the cards up, and went on: "Not yet, '
             'but soon."\n')
    assert s["Not yet, but soon."] == "Tom Pell"


def test_an_introduction_of_two_clauses_is_the_last_clauses_subjects():
    """`Ellen paused for breath, and Mrs. Lamb managed to stammer:` ¶ `"…"`: Mrs. Lamb's."""
    s = said('"Is the tide in?" asked Ellen.\n\n"Not yet," said Mrs. Lamb.\n\n'
             "Ellen paused for breath, and Mrs. Lamb managed to stammer:\n\n"
             '"Well, I am sure it will be all right."\n')
    assert s["Well, I am sure it will be all right."] == "Mrs. Lamb"


def test_it_was_x_who_made_this_remark_names_the_line_before():
    """`"…"` ¶ `It was Mr. Drury, whose head now rose from his paper, who made this remark.`:
    his line, whatever the turns of the two talking before would give."""
    s = said('"Is the tide in?" asked Tom Pell.\n\n"Not yet," said Ellen.\n\n'
             '"Then when?"\n\n"At six, they say."\n\n'
             "It was Mr. Drury, whose head now rose from his paper, who made this remark.\n")
    assert s["At six, they say."] == "Mr. Drury"


def test_a_title_that_ends_a_sentence_gives_no_second_surname():
    """`"…, Captain. You keep it quite clean."`: `You` is no Captain You, so `the Captain`
    stays the one captain the text names (Captain Franco)."""
    from bookmarks.stories.speakers import titled_surnames
    assert titled_surnames("A nice room, Captain. You keep it clean. Captain Franco bowed. "
                           "Capt. Lee came.") == {"captain": {"Franco"}, "capt": {"Lee"}}
    s = said('"A nice room you have here, Captain. You keep it clean," said Peterson.\n\n'
             '"Thank you," said Captain Franco.\n\n"Sit down," said the Captain.\n')
    assert s["Sit down."] == "Captain Franco"

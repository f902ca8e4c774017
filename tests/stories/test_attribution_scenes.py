"""Speakers in prose across a scene, on short texts written for these tests: who a he or she
is after groups, possessives and beats, a first-person narrator alone with one speaker,
callings (papa, pet names), a line introduced for someone it calls (see
bookmarks/stories/attribution_rules.py and attribution_calls.py)."""

from __future__ import annotations

from bookmarks.stories.dialogue import Cast, _read
from bookmarks.stories.importers import parse_story
from bookmarks.stories.speakers import NameChecker, merge_variants


def said(text: str) -> dict[str, str]:
    """Each action's text → its character."""
    return {a.text: a.character for a in parse_story(text.encode(), "tale.txt", fmt="prose").actions}


def cast_of(texts: list[str]) -> Cast:
    """The cast the importer finds in these paragraphs."""
    paras = _read([(i, t, None) for i, t in enumerate(texts)], "double")
    return Cast(paras, NameChecker("\n\n".join(texts)), None)


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


def _heard(text: str) -> str:
    """The character of the line `"I heard you coming," she said.` in `text`."""
    return next(c for t, c in said(text).items() if "heard you coming" in t)


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
    assert _heard(text) == "Miss Anne Catherick"
    assert _heard(text.replace("She turned to me, and her hand", "A maid came up to me, and her hand")) \
        != "Miss Anne Catherick"


def test_she_is_carried_back_over_this_girl_when_the_girl_is_one_of_the_cast():
    """`this girl`, where the text knows one girl, is she, not someone new: it does not
    stop `she` being carried back to her over the paragraphs that speak only of her."""
    lines = ['"Good night," said Mrs. Dolan, and she went up to bed.',
             '"Is that the road to London?" said the girl.',
             '"It is," I said.',
             'She looked at me, and then at the sky over the city.',
             'Smith had laughed at me when I spoke of this girl and her eyes, and I thought of it now.',
             '"Do not follow me," I said, "if you do not wish it."',
             'She turned to me, and her hand shook on the strap of her bag.',
             '"I heard you coming," she said.']
    text = "\n\n".join(lines) + "\n"
    assert _heard(text) == "Girl"
    assert _heard(text.replace("this girl", "a woman from the village")) != "Girl"


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


def test_one_who_names_oneself_says_the_line_whatever_the_pronoun_gave():
    s = said('Nell opened the door, and there stood Bess with her box.\n\n'
             '"You must be my aunt!" Bess cried, and hugged her.\n\n'
             'Bess stood back, smiling up at her.\n\n'
             '"Oh, but you are mistaken, dear," she faltered. "I\'m only Nell. I keep the house."\n\n'
             '"I\'m Nell, the girl who does the work," she said again.\n\n'
             '"I am not Nell," said Bess, "but I could be."\n')
    assert s["Oh, but you are mistaken, dear. I'm only Nell. I keep the house."] == "Nell"
    assert s["I'm Nell, the girl who does the work."] == "Nell"
    assert s["I am not Nell, but I could be."] == "Bess"


def test_a_line_saying_youre_x_is_said_to_x():
    s = said('Nell and Bess sat on the porch; Ann came up the steps.\n\n'
             '"Ten o\'clock," said Bess. "Time for bed."\n\n'
             '"She sails in the race tomorrow," explained Nell.\n\n'
             '"Oh—you\'re Bess, then. I have heard of you."\n')
    assert s["Oh—you're Bess, then. I have heard of you."] != "Bess"


def test_a_line_about_mr_x_is_not_the_one_man_of_that_surname_s():
    text = ('Sam Clark drove them up from the station; Mrs. Clark sat beside him.\n\n'
            '"Well, I\'m glad you came, child," Sam Clark said.\n\n'
            'Contentedly Sam Clark drove off down the street.\n\n'
            '"I shall like Mr. Clark. They are all so friendly."\n')
    found = [a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions
             if "I shall like Mr. Clark" in a.text]
    assert found and found[0] != "Sam Clark"


def test_quotations_side_by_side_are_many_voices_and_no_ones_turn():
    text = ('"Did you like my playing?" asked Miss Reisz.\n\n'
            '"I could not speak," said Edna.\n\n'
            'But the others had heard her too. "What passion!" "What an artist!" '
            '"It shakes a man!"\n')
    found = {a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions
             if "What passion!" in a.text or "What an artist!" in a.text}
    assert found == {"narration"}


def test_a_stranger_who_is_a_man_leaves_the_one_woman_her_she():
    """An unnamed man in the scene makes `he` unsure, not `she`: the one woman named is she."""
    s = said("Ellen Marsh climbed the stairs to the office of the shipping company.\n\n"
             "It was a long room with high windows, and the clerks wrote at their desks.\n\n"
             "A tall gentleman with grey whiskers came out of an inner room.\n\n"
             "The tall gentleman turned towards Ellen, and she came forward.\n\n"
             '"What is it you want?" he asked, looking at her.\n\n'
             '"I am looking for work," she answered.\n\n'
             '"What kind of work?" he asked.\n\n'
             '"Any kind at all," she said.\n')
    assert s["I am looking for work."] == s["Any kind at all."] == "Ellen Marsh"
    assert s['"What kind of work?" he asked.'] == "narration"  # the stranger: no name to give


def test_the_husbands_first_name_in_mrs_x_y_is_not_hers():
    """`Mrs. Alexander Bell`: a line that calls `Alexander` calls her husband, not her; her
    surname and full name still find her."""
    cast = cast_of(['"Good evening," said Mrs. Alexander Bell.', '"Oh, Alexander, come in."'])
    assert cast.lookup("Mrs. Alexander Bell") == "Mrs. Alexander Bell"
    assert cast.lookup("Alexander") is None


def test_she_is_the_one_woman_named_just_before_a_line_of_someone_else():
    """`Mr. Gray looked up at Ellen.` ¶ `"…?" he asked` ¶ `"…," she said`: Ellen, though
    named there only as an object (another woman in the scene keeps `sole` unsure), unless
    a `he said` no one was given comes just before (someone unknown is talking: `The woman`,
    whom the text may have met before; `A woman` would be someone new, a speaker of her own)."""
    text = ("Mrs. Lamb kissed her lodger at the door, and went back to her shop.\n\n"
            "The office was a long room with high windows.\n\n"
            "Mr. Gray looked up from his desk at Ellen.\n\n"
            '"What can I do for you?" he asked, putting down his pen.\n\n'
            '"I want work," she said.\n')
    assert said(text)["I want work."] == "Ellen"
    woken = text.replace("The office was a long room with high windows.",
                         "The woman was waiting by the window.\n\n"
                         '"Is he in?" she asked.')
    assert said(woken)['"I want work," she said.'] == "narration"


def test_a_bare_surname_is_not_mrs_xs_and_miss_x_is_not_mr_x():
    """`Mrs. Hanson` … `Hanson sat reading`: the bare surname is her husband's, not hers; a
    `Miss Gibson` the cast does not know is not Mr. Gibson, whose surname it holds."""
    texts = ['"Supper is ready," said Mrs. Hanson.', 'Hanson sat by the lamp and read his paper.']
    cast = cast_of(texts)
    assert cast.lookup("Mrs. Hanson") == "Mrs. Hanson"
    assert "Mrs. Hanson" not in {n for *_, n, _ in cast.mentions(texts[1])}
    cast = cast_of(['"Good day," said Mr. Gibson.', '"Good day, Miss Gibson," said Mr. Preston.'])
    assert {n for *_, n, _ in cast.mentions("Mr. Preston bowed to Miss Gibson.")} == {"Mr. Preston"}
    assert {n for *_, n, _ in cast.mentions("Mr. Preston bowed to Gibson.")} == {"Mr. Preston", "Mr. Gibson"}


def test_he_answering_a_line_that_calls_one_man_is_that_man():
    """`"…, Robert," said she.` (a she the rules cannot place) ¶ `"My dear!" he cried.`:
    Robert, whom the line calls — unless it calls two."""
    text = ('"Is the tide in?" asked Robert.\n\n"Not yet," said Tom Pell.\n\n'
            "The rain had not stopped all day, and the lamps were lit early.\n\n"
            "The fire burned low in the grate.\n\n"
            "My brother's wife uttered an exclamation of impatience.\n\n"
            '"I wish you would take that picture away, Robert," said she.\n\n'
            '"My dear!" he cried.\n')
    assert said(text)["My dear!"] == "Robert"
    two = text.replace("away, Robert,", "away, Robert and Tom,")
    assert said(two)['"My dear!" he cried.'] == "narration"


def test_a_name_no_list_knows_is_a_person_once_the_narration_calls_it_she():
    """`Liddy` is in no list of first names: twice the subject of a sentence that goes on
    with `she`, she is someone (`she said` after `Liddy set her lips` is hers); `Chicago
    was large, and it …` is no one."""
    text = ("Liddy had been with me for twenty years, and she feared the dark. Chicago was "
            "far away, and it was large. Liddy went up to the attic, and she came down white.\n\n"
            "Chicago seemed very far away that night, and it was cold.\n\n"
            "Liddy set her lips tight and stood still.\n\n"
            '"I am not going to bed," she said.\n')
    assert said(text)["I am not going to bed."] == "Liddy"
    people = set(cast_of(text.strip().split("\n\n")).people)
    assert "Liddy" in people and "Chicago" not in people


def test_a_title_word_ending_a_firms_name_is_no_one():
    """`the firm of Storm and King`: no King in the cast for a `he` to go to."""
    texts = ["She walked to the firm of Storm and King, and went in.",
             "A man at one of the desks looked up.", '"Who is it you wish to see?" he asked.']
    assert "King" not in cast_of(texts).people
    assert said("\n\n".join(texts))['"Who is it you wish to see?" he asked.'] == "narration"


def test_one_of_these_men_coming_up_makes_the_next_he_unsure():
    """`He spoke to one of a group of three men. One of these came towards her.` ¶ `"Well?" he
    said`: one of these, not the boy who went away."""
    text = ('"Where is the manager?" asked Ellen.\n\n'
            '"I will ask," said Tom Pell. He ran away and spoke to one of a group of three men '
            "who were talking together. One of these came towards her.\n\n"
            '"Well?" he said coldly.\n')
    assert said(text)['"Well?" he said coldly.'] == "narration"


def test_a_description_of_no_known_sex_is_no_she():
    """`… as the driver mounted the box. My companion hurried on.` ¶ `"…," she said`: not the
    driver, whom the text never calls `she`."""
    text = ('"Is it far?" asked Ellen.\n\n"Not far," said the driver.\n\n'
            "I hailed a cab, as the driver mounted the box again. The night was cold and "
            "the road was long.\n\n"
            '"It is so late," she said.\n')
    assert said(text)['"It is so late," she said.'] == "narration"


def test_a_line_calling_dad_is_not_fathers():
    """The text's `Father` (`said Father`) is the one a line calls `Dad`: not its speaker."""
    cast = cast_of(['"Is the post come?" asked Father.', '"You look well, Dad."'])
    assert {n for *_, n, _ in cast.mentions("You look well, Dad.")} == {"Father"}


def test_her_face_appearing_makes_her_the_next_she():
    """`"Good night," she said.` (Mrs. Lamb) ¶ `Ellen's white face appeared over the
    bedclothes.` ¶ `"…," she said`: Ellen's face is Ellen, who answers."""
    text = ('"Is it late?" asked Ellen.\n\n"Good night," said Mrs. Lamb.\n\n'
            "Ellen’s white face appeared over the bedclothes with a startling suddenness.\n\n"
            '"How can you call it a good night?" she said.\n')
    assert said(text)["How can you call it a good night?"] == "Ellen"


def test_she_goes_on_from_the_woman_named_nearer_than_the_last_subject():
    """`Ellen stood by the door.` … ¶ `The testimony of Mrs. Lamb was short; she was asked
    what she knew.` ¶ `Lifting her head, she replied:` ¶ `"…"`: Mrs. Lamb, whom the nearer
    paragraph names and goes on calling `she`, not Ellen, its last subject further back."""
    text = ('"Is it far?" asked Ellen.\n\n"Not far," said Mrs. Lamb.\n\n'
            "Ellen stood by the door, and watched the jury come in.\n\n"
            "The testimony of Mrs. Lamb was short. After some questions, mostly referring to "
            "her place in the house, she was asked what she knew of the murder.\n\n"
            "Lifting up her head, and speaking in a low voice, she replied:\n\n"
            '"I know nothing of it, save what others have told me."\n')
    assert said(text)["I know nothing of it, save what others have told me."] == "Mrs. Lamb"


def test_a_full_name_with_a_particle_joins_its_first_name_and_surname():
    """`his friend, Philippe de Vilmorin,` ties `Philippe` and `Vilmorin` into one character."""
    text = ('"You talk like a lawyer," said Vilmorin.\n\n"I am one," said Andre.\n\n'
            "Andre had no dearer friend than Philippe de Vilmorin, a student of Rennes.\n\n"
            '"You are profane," said Philippe.\n')
    s = said(text)
    assert s["You talk like a lawyer."] == s["You are profane."] == "Philippe de Vilmorin"


def test_someone_s_face_or_eyes_doing_something_leads_into_their_line():
    """`Thomas's grey eyes opened wide.` ¶ `"…"`: the clause is about Thomas, though his eyes
    are its subject; someone's brother (`Thomas's brother came in.`) is someone else."""
    opening = ('Walter and Thomas walked by the canal.\n\n'
               '"You are wrong about the mill," said Walter.\n\n'
               '"I am right about the mill," said Thomas.\n\n')
    s = said(opening + "Thomas's grey eyes opened wide.\n\n" + '"You never listen."\n')
    assert s["You never listen."] == "Thomas"
    s = said(opening + "Thomas's brother came in.\n\n" + '"You never listen."\n')
    assert s.get("You never listen.") != "Thomas"


def test_breaking_into_a_laugh_or_tears_leads_into_a_line():
    """`His aunt Polly stood surprised, and then broke into a gentle laugh.` ¶ `"…"`: hers
    (`His aunt Polly` is Polly; `broke into a laugh` is a doing, not an answer), and so is
    the cook's after `But at this the cook broke into tears.`"""
    s = said('"Where is the jam?" asked Tom.\n\n"I ate it," said Aunt Polly.\n\n"You never!" said Tom.\n\n'
             '"I did," said Aunt Polly.\n\n'
             "His aunt Polly stood surprised a moment, and then broke into a gentle laugh.\n\n"
             '"Hang the boy, he fools me every time."\n')
    assert s["Hang the boy, he fools me every time."] == "Aunt Polly"
    s = said('"Who opened the door?" asked Mr. Gryce.\n\n"Not I, sir," said the cook.\n\n'
             '"Then who?" said Mr. Gryce.\n\nBut at this the cook broke into tears.\n\n'
             '"Oh, sir, it was never Hannah, sir."\n')
    assert s["Oh, sir, it was never Hannah, sir."] == "Cook"

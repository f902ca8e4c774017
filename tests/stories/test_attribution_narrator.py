"""A first-person narrator among the speakers, and narration paragraphs that lead into a
line (dialogue.find_narrator, Cast.gender, attribution_rules `_beat`), on text written for
these tests: a governess who tells the story, her employer Mr. Thorne, and little Bess."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story


def story(text: str):
    return parse_story(text.encode(), "t.txt", fmt="prose")


def said(text: str) -> dict[str, str]:
    return {a.text: a.character for a in story(text).actions}


HEADER = "Nell Alder\n\nby A. Writer\n\n\n\nCHAPTER IV\n\n"
EVENING = (HEADER +
           "I went down to the library after tea, as I had been told to do.\n\n"
           "I found the fire lit and the curtains drawn.\n\n"
           "I sat by the window with my work, and waited.\n\n"
           '"Come nearer the fire, Miss Alder," said Mr. Thorne.\n\n'
           '"I am warm enough here, sir," I said.\n\n'
           '"You are always warm enough, Miss Alder; you never ask for anything."\n\n'
           '"I have all I need, sir."\n\n'
           '"Nobody has all they need."\n\n')


def test_the_narrator_is_the_name_the_others_call_her_though_the_title_names_her_too():
    """The title line `Nell Alder` is no narration: the narration says `I`, never her
    name, so the name the others call her by (`Miss Alder;` counts as a call too) is hers —
    one character, not a `Narrator` beside a `Miss Alder`."""
    s = story(EVENING)
    narrator = [a.character for a in s.actions if a.text == "I am warm enough here, sir."]
    assert narrator == ["Miss Alder"]
    assert {a.character for a in s.actions} - {"narration"} == {"Miss Alder", "Mr. Thorne"}
    lines = said(EVENING)
    assert lines["I have all I need, sir."] == "Miss Alder"  # the turns go on past his call
    assert lines["Nobody has all they need."] == "Mr. Thorne"


def test_the_narrator_is_never_she():
    """`cried she` after the narrator's line is the other woman there, not the narrator,
    though the narrator is `Miss Alder`."""
    text = (EVENING + "Then the door flew open and Bess ran in with her doll.\n\n"
            '"Good night, papa," said Bess.\n\n'
            '"Bess, it is past your bedtime," I said.\n\n'
            '"Not yet!" cried she, and hid behind the curtain.\n')
    assert said(text)["Not yet!"] == "Bess"


def test_a_short_paragraph_of_one_speaker_s_doing_leads_into_their_line():
    """`He took a book from the shelf …` between two untagged lines of an exchange of two
    is his doing: the line after it is his, and so after his own gesture (`He nodded.`)."""
    text = (EVENING + "He took a book from the shelf and turned it over in his hands.\n\n"
            '"Do you read Italian?"\n')
    assert said(text)["Do you read Italian?"] == "Mr. Thorne"
    plain = ('"Is the carriage ready?" asked Mrs. Vane.\n\n'
             '"It is at the door," said Mr. Pell.\n\n'
             "He nodded.\n\n"
             '"Then I am going."\n')
    assert said(plain)["Then I am going."] == "Mr. Pell"  # the last speaker's gesture: he goes on
    # the other's gesture with a third about: test_attribution_turns


def test_what_a_narrator_does_leads_into_no_line_of_hers():
    """In a first-person story the narrator is the subject of most narration: `I put down
    my work.` says nothing of who speaks next, and `I nodded.` is her answer — the other
    goes on."""
    led = said(EVENING + "I put down my work.\n\n" '"Then you are a fortunate woman."\n')
    assert led['"Then you are a fortunate woman."'] == "narration"
    nod = said(EVENING + "I nodded.\n\n" '"Then you are a fortunate woman."\n')
    assert nod["Then you are a fortunate woman."] == "Mr. Thorne"


def test_he_after_a_narration_paragraph_that_gave_him_a_turn():
    """`He laughed to himself.` gives the one man of the two the turn; the `he said` of the
    next paragraph is still one of the two talking — the narrator, who is `I`, is no `he`
    whatever the story says of her sex."""
    text = ("I went up to the study, where Mr. Thorne sat with the letters.\n\n"
            "I waited by the door.\n\n"
            '"Well?" said Mr. Thorne.\n\n'
            '"The post has come," said I.\n\n'
            "He laughed to himself over the top letter.\n\n"
            '"It always does," he said.\n')
    assert said(text)["It always does."] == "Mr. Thorne"


def test_a_title_line_makes_no_character():
    """`My Man Thorne` over the story is its title: no `Man Thorne` beside Mr. Thorne."""
    text = ("My Man Thorne\n\nby A. Writer\n\n\n\n"
            '"Good evening," said Thorne.\n\n"Good evening, sir," I said.\n')
    names = {a.character for a in story(text).actions} - {"narration"}
    assert "Man Thorne" not in names and "Thorne" in names


def test_he_is_unsure_when_a_stranger_has_come_in_since():
    """`the uncle came in` … `The old boy shook hands …, and Jeeves stood back`: the `he
    exclaimed` after is the stranger's as likely as the last named man's — no guess."""
    text = ('"It is finished," said Thorne.\n\n'
            "Then the door opened, and the old gentleman came in. The old gentleman shook hands "
            "with me, and Thorne stood back by the easel.\n\n"
            "And then he saw the portrait.\n\n"
            '"Good heavens!" he exclaimed.\n')
    assert said(text)['"Good heavens!" he exclaimed.'] == "narration"
    known = text.replace("the old gentleman came in. The old gentleman shook", "Mr. Pell came in. "
                         "Mr. Pell shook")  # a man the cast knows: the one who came in
    assert said(known)["Good heavens!"] == "Mr. Pell"


def test_narration_that_moves_the_time_on_ends_the_exchange():
    """`Some days later …`: the next untagged line is no turn of the talk before."""
    text = (EVENING + "Some days later I was in the garden, cutting roses for the house.\n\n"
            '"Are those for the dining-room?"\n')
    assert said(text)['"Are those for the dining-room?"'] == "narration"
    assert said(EVENING + '"Are those for the dining-room?"\n')["Are those for the dining-room?"] \
        == "Miss Alder"


def test_a_description_continued_by_he_or_she_is_a_speaker():
    """`The strange woman spoke first.` ¶ `"…," she said.`: a reader knows her only as the
    strange woman; a bare `the lady` (anyone so called) makes no character."""
    text = ("I was walking home late along the high road.\n\n"
            "All at once, a woman in white stood before me. The strange woman spoke first.\n\n"
            '"Is that the road to London?" she said.\n\n'
            '"It is," I answered.\n')
    s = said(text)
    assert s["Is that the road to London?"] == "Strange woman"
    bare = said(text.replace("The strange woman spoke first.", "The lady spoke first."))
    assert who(bare, "Is that the road to London?") == "narration"


def test_someone_new_with_a_bare_description_continued_by_she_is_a_speaker():
    """`A girl in a grey cloak stood at my elbow` brings in someone new (the indefinite
    article says so), whom `she` then continues: a reader knows her as the girl, also when
    the text calls her so later (`The girl was at the door again.`). A bare `the girl` at
    first meeting might be any girl met before, and makes no character."""
    text = ("I was alone in the square when something touched my shoulder.\n\n"
            "A girl wrapped in a grey cloak stood at my elbow, and as she looked up at me I saw "
            "that she had been crying.\n\n"
            '"Forgive me," she said, "but is it true that the doctor is dead?"\n\n'
            '"Who told you so?" I asked.\n\n'
            "She did not answer. The next night the girl was at the door again.\n\n"
            "She looked past me into the dark hall.\n\n"
            '"Is he there?" she whispered.\n')
    s = said(text)
    assert who(s, "is it true that the doctor is dead") == "Girl"
    assert who(s, "Is he there?") == "Girl"
    bare = said(text.replace("A girl wrapped in a grey cloak stood", "The girl stood"))
    assert who(bare, "is it true that the doctor is dead") == "narration"


def who(s: dict[str, str], fragment: str) -> str:
    """The character of the action holding `fragment` (narration keeps a quotation's marks)."""
    return next(c for t, c in s.items() if fragment in t)


def test_i_was_asked_is_no_line_of_mine():
    """`"And you?" I was asked.`: the narrator is the one spoken to (a passive is no tag);
    `I was saying` still is one."""
    s = said(EVENING + '"And you, Miss Alder?" I was asked.\n\n'
             '"I was thinking of it," I was saying, when the bell rang.\n')
    assert who(s, "And you, Miss Alder?") != "Miss Alder"
    assert who(s, "I was thinking of it") == "Miss Alder"


def test_a_description_that_introduces_the_next_line_is_a_speaker():
    """`The new boy stepped over the line, and said:` ¶ `"…"`: a description introducing
    a line makes a character as `said the new boy` does, and the two then take turns."""
    text = ('"I dare you to step over that," said Tom.\n\n'
            "The new boy stepped over the line at once, and said:\n\n"
            '"Now let us see you do it."\n\n'
            '"Do not crowd me now."\n\n'
            '"Well, why do you not do it?"\n')
    s = said(text)
    assert s["Now let us see you do it."] == "New boy"
    assert s["Do not crowd me now."] == "Tom"
    assert s["Well, why do you not do it?"] == "New boy"


def test_a_story_told_with_words_quoted_inside_is_the_teller_s():
    """The old man tells how he was made: paragraphs that go on with his open story and
    open with the smith's words quoted inside it (`“‘…,’” said the smith.`) are his
    telling, tags and all; the smith says nothing himself."""
    text = ("“How did you come to be made?” asked Nell.\n\n"
            "“It was a long time ago,” said the old man. “The smith took a sheet of tin.\n\n"
            "“‘That will make a fine head,’” said the smith. “‘And a finer hat,’” which was true.\n\n"
            "“‘Now the arms,’” said the smith. And so he went on until I was done.\n\n"
            "“What a story!” said Nell.\n")
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    told = [a.character for a in story.actions if a.text.startswith(("‘That", "‘And", "‘Now"))]
    assert told == ["Old man"] * 2  # the two of one paragraph make one line
    assert "Smith" not in {c.name for c in story.characters}


def test_a_sentence_adverb_before_a_name_is_no_part_of_it():
    """`Whereupon Maurice Levy said, "…"`: the character is Maurice Levy, no alias
    `Whereupon Maurice Levy`."""
    text = ('"Stand forth," said Penrod.\n\n'
            'Whereupon Maurice Levy said, "I will not."\n\n"You will," said Penrod.\n')
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    levy = story.character("Maurice Levy")
    assert levy is not None and not any("Whereupon" in a for a in levy.aliases)


def test_a_narrator_called_by_name_in_lines_said_to_me_is_named_so():
    text = ("I drove over to the house that evening. I had not seen my cousin for a year.\n\n"
            "The room was cool, and I sat down on the sofa by the window.\n\n"
            "My cousin came in laughing, and I stood up to meet her friend.\n\n"
            '"Listen, Nick; you must stay the night," Daisy said to me.\n\n'
            '"Wait," Jordan said. "Let him eat first."\n\n'
            'She looked at me absently. "Don\'t believe what they say, Nick."\n\n'
            '"I won\'t," I said.\n')
    names = {c.name for c in parse_story(text.encode(), "t.txt", fmt="prose").characters}
    assert "Nick" in names and "Narrator" not in names


def test_the_narrators_own_answer_and_what_they_hear_themselves_say():
    """`"Hullo," was my answer.` and `"Hullo!" I heard myself say.` are the first-person
    narrator's lines (both were left as narration)."""
    intro = ("I had not seen Davies for a year when his letter came.\n\n"
             "I went down by the night train, and I was tired.\n\n"
             "I found him on the quay, and I knew him at once.\n\n"
             '"You are late," said Davies.\n\n')
    for line in ['"Hullo," was my answer.', '"Hullo!" I heard myself say.']:
        s = said(intro + line + "\n")
        assert who(s, "Hullo") == "Narrator", line

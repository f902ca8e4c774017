"""Prose speech tags, on text written for these tests (the Wrenns at the mill): a speech
verb's word used as a noun (`in a whisper`) is no second tag; a kind word before a name
(`said poor Nell`); a description followed by a dash (`the old lady--and Hugh nodded`); less common
speech verbs; a month after a title is a surname (`Mrs. March`); two speakers whose tags
follow one another are two people, not a description merged into a name."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story
from tests.stories.test_attribution_family import who


def test_a_speech_word_used_as_a_noun_leaves_the_speech_with_its_speaker():
    text = ('"Are you cold?" asked Hugh.\n\n'
            '"Dear Hugh," said Nell, in a whisper, "I am only tired of waiting."\n\n'
            '"Then we go," said Hugh, with a short laugh, "before the train of thought is lost."\n')
    assert who(text, "I am only tired of waiting.") == "Nell"
    assert who(text, "before the train of thought is lost.") == "Hugh"


def test_a_kind_word_before_a_name_is_not_part_of_the_speaker():
    text = ('"The mill wheel is stuck again," said Hugh.\n\n'
            '"Then we shall have no flour," said poor Nell.\n\n'
            '"Nor bread," added little Bess, with a sniff.\n')
    assert who(text, "Then we shall have no flour.") == "Nell"
    assert who(text, "Nor bread.") == "Bess"


def test_a_description_followed_by_a_dash_is_the_speaker():
    text = ('Hugh and the old lady stood by the race.\n\n'
            '"The water is low this year," muttered the old lady--and Hugh nodded.\n')
    assert who(text, "The water is low this year") == "Old lady"  # not `the old lady--and Hugh`


def test_less_common_speech_verbs_are_tags():
    text = ('"We could mend it ourselves," advised Hugh.\n\n'
            '"With what?" corroborated Nell.\n\n'
            '"Mrs. Wrenn has the tools," volunteered Bess.\n\n'
            '"Idiot!" re-echoed Hugh, laughing.\n')
    assert who(text, "We could mend it ourselves") == "Hugh"
    assert who(text, "With what?") == "Nell"
    assert who(text, "has the tools") == "Bess"
    assert who(text, "Idiot!") == "Hugh"


def test_a_month_after_a_title_is_a_surname():
    text = ('"Supper is ready," said Mrs. March, with a smile.\n\n'
            '"Look under the cloth," replied Mrs. March.\n\n'
            'It was late in March when the snow went.\n')
    assert who(text, "Supper is ready") == "Mrs. March"
    assert who(text, "Look under the cloth") == "Mrs. March"


def test_speakers_tagged_one_after_the_other_are_two_people():
    # the miller speaks twice where Mr. Wrenn's turn was, which alone would make him Mr.
    # Wrenn; but the text tags the two one right after the other, so they are two people
    text = ('"The wheel is stuck," said Hugh.\n\n'
            '"Since Monday," said Mr. Wrenn.\n\n'
            '"Then we must mend it," said Hugh.\n\n'
            '"With what?" continued the miller.\n\n'
            '"With rope," said Hugh.\n\n'
            '"Rope rots," said Mr. Wrenn.\n\n'
            '"Chain, then," said Hugh.\n\n'
            '"Chain costs money," said the miller.\n\n'
            '"I will pay," said Mr. Wrenn.\n\n'
            '"You are kind," said the miller.\n')
    assert who(text, "With what?") == "Miller"
    assert who(text, "You are kind") == "Miller"
    assert who(text, "I will pay") == "Mr. Wrenn"


def test_a_quotation_left_open_takes_any_past_tense_verb_as_its_tag():
    text = ('Jones and Nell hauled on the rope.\n\n'
            '"Come on," Jones grated, pulling at the rope.\n\n'
            '"Why me?" she bristled.\n\n'
            'At the word "liberality," Jones frowned.\n')
    assert who(text, "Come on.") == "Jones"
    assert who(text, "Why me?") == "Nell"
    assert who(text, "liberality") == "narration"  # a word quoted mid-sentence speaks not


def test_a_speech_cut_by_its_tag_has_one_listener():
    # `he` is not Darcy, whom the first half of the speech calls by name
    text = ('Elizabeth sat down; Mr. Darcy was standing near enough to hear.\n\n'
            '"Come, Darcy," said he, "I must have you dance."\n')
    assert who(text, "I must have you dance") != "Mr. Darcy"


def test_a_calling_is_a_speaker():
    text = ('"Where to, sir?" asked the driver.\n\n'
            '"Two loaves," said the baker to the newcomer.\n\n'
            '"An old man never likes changes," said the dean.\n')
    assert who(text, "Where to, sir?") == "Driver"
    assert who(text, "Two loaves.") == "Baker"
    assert who(text, "never likes changes") == "Dean"


def test_a_capitalised_article_is_no_name():
    """`The wub shrugged.` is about the wub, not someone called `The` (and `This time
    Clovis …` is no name `This`)."""
    from bookmarks.stories.tags import beat
    assert beat("The wub shrugged. ").subject == "The wub"
    assert beat("The mate glanced at him sourly. ").subject == "The mate"
    assert beat("The Baroness looked up. ").subject == "The Baroness"
    this = beat("This time the porter nodded. ")
    assert this is None or this.subject != "This"


def test_tags_with_an_aside_a_long_adverb_or_a_subject_before_a_semicolon():
    """`Meg announced, as if the idea was suggested by …, "…"` (the aside's verb is no tag),
    `Clovis very distinctly said,`, `The Badger trotted forward; then grunted, '…'`."""
    from bookmarks.stories.tags import tag_before
    assert tag_before("Then Meg announced, as if the idea was suggested by the sight of "
                      "her own pretty hands, ").subject == "Meg"
    assert tag_before("This time Clovis very distinctly said, ").subject == "Clovis"
    assert tag_before("The Badger trotted forward a pace or two; then grunted, ").subject.endswith("Badger")


def test_a_name_does_not_run_on_into_the_listener_s_title():
    """`asked Robert of Mrs. Pontellier`: Robert asks; `the Duke of York` stays one name.
    Also `Edna hastened to say` and `she requested of Robert` are tags."""
    from bookmarks.stories.tags import tag_after
    assert tag_after(" asked Robert of Mrs. Pontellier.").subject == "Robert"
    assert tag_after(" said the Duke of York.").subject.endswith("Duke of York")
    assert tag_after(" Edna hastened to say. ").subject == "Edna"
    assert tag_after(" she requested of Robert.").subject == "she"


def test_a_tag_inside_a_when_clause_is_that_clause_s_subject():
    """`I was about to speak when she sat up alertly and said` — she; but `She looked dazed
    when he spoke to her, and then said` — she (the comma closes the when-clause)."""
    from bookmarks.stories.tags import tag_before
    assert tag_before("I was about to speak when she sat up alertly and said ").subject == "she"
    assert tag_before("She looked dazed when he spoke to her, and then said ").subject == "She"


def test_any_verb_before_a_name_after_an_open_quotation_is_the_tag():
    text = ('Hugh leaned on the gate while Nell fed the hens.\n\n'
            '"The wheel will never turn again," grumbled Hugh.\n\n'
            '"It will if you mend it," maintained Nell. "Father did, every spring."\n\n'
            '"Father had better hands," nodded the old miller; "and better timber."\n\n'
            '"Go on with you," scoffed unbelieving Hugh.\n\n'
            '"Hush!" startled the hens and they ran off.\n')
    assert who(text, "It will if you mend it") == "Nell"
    assert who(text, "Father did, every spring.") == "Nell"
    assert who(text, "Father had better hands") == "Old miller"
    assert who(text, "Go on with you") == "Hugh"
    assert who(text, "Hush!") != "Hens"


def test_a_possessive_voice_before_a_quotation_is_its_owner_speaking():
    text = ('Nell sat by the race; Hugh was mending the sluice.\n\n'
            '"Hugh," Nell said.\n\n'
            '"Yes?" Hugh answered.\n\n'
            '"Is it bad?" Nell asked.\n\n'
            'Hugh shook his head and went on hammering.\n\n'
            '"Then,"--Nell\'s voice was very low now--"I think the wheel is lost."\n\n'
            'Hugh\'s face was grim. "So do I."\n')
    assert who(text, "I think the wheel is lost.") == "Nell"
    assert who(text, "So do I.") != "Hugh's"


def test_was_all_he_answered_is_a_tag():
    text = ('Hugh leaned on the gate while Nell fed the hens.\n\n'
            '"The wheel will never turn again," said Nell.\n\n'
            '"Oh, it is not so bad," was all Hugh answered. He went on mending the sluice.\n')
    assert who(text, "Oh, it is not so bad") == "Hugh"


def test_a_clause_running_into_the_quotation_by_any_verb_is_its_tag():
    text = ('Hugh leaned on the gate while Nell fed the hens.\n\n'
            '"The wheel will never turn again," said Hugh.\n\n'
            'Nell must have frowned, for at once he was pleading, "I only mean that it is old."\n')
    assert who(text, "I only mean that it is old.") == "Hugh"


def test_was_moved_to_vow_is_a_speech_verb():
    text = ('Hugh and Nell walked down to the river.\n\n'
            '"It is a good country, and I am proud of it," the quiet Hugh was moved to vow.\n')
    assert who(text, "It is a good country") == "Hugh"


def test_a_name_inside_the_tags_phrase_does_not_stop_the_speech_going_on():
    text = ('Hugh and Nell sat by the fire with old Mr. Wrenn.\n\n'
            '"No," said Hugh, not keeping pace with Mr. Wrenn\'s hasty reasoning, and thinking '
            'of the mill only. "I have little time for such things just now."\n\n'
            'They drank their ale at "The Miller\'s Rest." "It is late," said Nell.\n')
    assert who(text, "I have little time for such things") == "Hugh"
    found = [a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions
             if "Miller's Rest" in a.text]
    assert found == ["narration"]


def test_an_act_and_then_a_speech_verb_after_the_quotation_is_its_tag():
    text = ('Hugh and Nell walked by the race.\n\n'
            '"You see how widely we differ, Hugh." Nell looked straight before her, and spoke '
            'with cold brusquerie.\n\n'
            '"I see it," said Hugh.\n\n'
            '"Then go." Hugh turned away and said nothing.\n')
    assert who(text, "You see how widely we differ") == "Nell"
    assert who(text, "Then go.") != "Hugh"


def test_took_an_opportunity_of_saying_is_a_speech_verb():
    text = ('Hugh and Nell walked by the race.\n\n'
            '"But you are fond of the mill, Nell," Hugh presently took an opportunity of saying. '
            '"I should have thought so."\n')
    assert who(text, "But you are fond of the mill") == "Hugh"


def test_and_to_someone_after_a_tag_goes_on_with_the_same_speaker():
    text = ('Hugh, Nell and Sam stood at the gate.\n\n'
            '"Fine work, Sam!" cried Hugh; and, to Nell, "Let\'s go in. Sam can mind the wheel."\n')
    assert who(text, "Let's go in.") == "Hugh"


def test_a_participle_opening_a_sentence_is_no_name_and_lips_with_a_word_before_speak():
    text = ('Hugh and Nell sat with old Mr. Wrenn by the fire.\n\n'
            '"The mill pays," said Hugh.\n\n'
            'Raising his broken pipe towards the fire, Mr. Wrenn would add:\n\n'
            '"For want of a new wheel we have paid nothing this year."\n\n'
            'Through Nell\'s compressed lips a smile forced its way: "Then we shall mend it."\n')
    names = {a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions}
    assert "Raising" not in names
    assert who(text, "Then we shall mend it.") == "Nell"


def test_a_possessive_before_a_coordinated_said_is_not_its_subject():
    """`The old lady felt Tom's shirt, and said:` is the old lady's, not Tom's; but `without
    Mr. Woodhouse's giving a sigh, and saying,` is his (a gerund's subject)."""
    from bookmarks.stories.tags import tag_before
    tag = tag_before("The old lady reached out her hand and felt Tom’s shirt, and said:")
    assert tag is None or tag.subject != "Tom"  # (the sentence's subject is for `beat` to find)
    assert tag_before("He grasped Swithin’s hand, exclaiming in a jocular voice:").subject == "He"
    assert tag_before("But never did she go without Mr. Woodhouse’s giving a gentle sigh, and "
                      "saying, ").subject.startswith("Mr. Woodhouse")


def test_was_his_or_her_answer_is_a_pronoun_tag():
    """`"…," was her quiet answer.`: she answered; the pronoun goes to the one woman about."""
    text = ('The clock struck seven, and Hugh asked Nell whether the flour had come.\n\n'
            '"It came at noon," was her quiet answer.\n')
    assert who(text, "It came at noon.") == "Nell"


def test_messrs_and_their_names_are_a_group_not_a_character():
    """`"Go," replied Messrs. Hugh, Pell, and Drury, after a pause.`: several people speak
    at once (narration, like `said Tom and Mary`), not a character called `Messrs`, and the
    tag's narration stays whole."""
    story = parse_story(b'"Is it agreed?" asked Nell.\n\n'
                        b'"Agreed," replied Messrs. Hugh, Pell, and Drury, after a pause.\n',
                        "t.txt", fmt="prose")
    assert "Messrs" not in {c.name for c in story.characters}
    assert story.actions[-1].character == "narration"
    assert story.actions[-1].text.endswith("Pell, and Drury, after a pause.")


def test_a_name_ends_at_its_possessive():
    """`not all Mr Racksole's American energy`: no person `Mr Racksole's American` (seen in
    a gold text whose name statistics keep `American`; a test double keeps every word)."""
    from bookmarks.stories.cast_people import named_persons
    from bookmarks.stories.dialogue import _read

    class KeepEveryWordChecker:  # test double of NameChecker: every capitalized word is a name
        @staticmethod
        def clean(name: str) -> str:
            return name

    paras = _read([(1, "Not all Mr Racksole's American energy would have availed.", None)], "double")
    assert named_persons(paras, KeepEveryWordChecker(), {}) == {"Mr Racksole": "Mr Racksole"}


def test_an_adverb_before_the_verb_of_an_inverted_tag():
    """`"No," again said the jailer`: the tag names the jailer (an adverb may come before
    the verb, as after it); the line is not the turn of the one who spoke before him."""
    for adverb in ("again", "then", "at last", "once more"):
        text = ('"Where is the key?" asked Tom Reed.\n\n"I have it," said the jailer.\n\n'
                f'"No," {adverb} said the jailer, and he went away.\n')
        actions = parse_story(text.encode(), "tale.txt", fmt="prose").actions
        assert (actions[2].character, actions[2].text) == ("Jailer", "No."), adverb


def test_a_clause_hanging_on_the_tag_does_not_take_the_rest_of_the_speech():
    """`"I think," said Tom Reed, as he entered the room where his mother and Maud were
    busy, "We are late."`: Maud is the subject of a clause inside the tag's sentence, not
    of one of its own; the speech goes on as Tom's."""
    text = ('"Where is Maud?" asked Mrs. Reed.\n\n"In the garden," said Maud, coming in.\n\n'
            '"I think," said Tom Reed, as he entered the room where his mother and Maud were '
            'busy with their needlework, "We are late."\n')
    actions = parse_story(text.encode(), "tale.txt", fmt="prose").actions
    assert [(a.character, a.text) for a in actions if a.character != "narration"][-1] \
        == ("Tom Reed", "We are late.")


def test_speech_that_comes_from_someone_and_more_tag_verbs():
    """`"No, no," fell from Jack Lane.`, `came from Mary Hale's dry lips`, `answered the
    voice of Tom Reed behind him`, `Jack Lane cut in`, `quoth Jack Lane`: each names who
    speaks (each was left as narration, or given to the turn)."""
    base = ('"Where is the key?" asked Tom Reed.\n\n"I have it," said Mary Hale.\n\n'
            '"I know," said Jack Lane.\n\n')
    for line, speaker in [('"No, no," fell from Jack Lane.', "Jack Lane"),
                          ('"Oh, well!" broke from Jack Lane.', "Jack Lane"),
                          ('"Not I," came from Mary Hale\'s dry lips.', "Mary Hale"),
                          ('"Yes," answered the voice of Tom Reed behind him.', "Tom Reed"),
                          ('"Yes," Jack Lane cut in.', "Jack Lane"),
                          ('"Yes," Jack Lane struck in.', "Jack Lane"),
                          ('"Yes," quoth Jack Lane.', "Jack Lane")]:
        actions = parse_story((base + line + "\n").encode(), "tale.txt", fmt="prose").actions
        assert actions[3].character == speaker, line


def test_a_tag_before_with_an_aside_between_name_and_verb_or_the_verb_first():
    """`Jack Lane, however, said:`, `Jack Lane, after a pause, answered:`, `Jack Lane, who had
    been silent, said,` and `Said Jack Lane:` introduce Jack Lane's line (each was left as
    narration)."""
    base = ('"Where is the key?" asked Tom Reed.\n\n"I have it," said Mary Hale.\n\n'
            '"I know," said Jack Lane.\n\n')
    for line in ['Jack Lane, however, said: "Yes."', 'Jack Lane, after a pause, answered: "Yes."',
                 'Jack Lane, who had been silent, said, "Yes."', 'Said Jack Lane: "Yes."']:
        actions = parse_story((base + line + "\n").encode(), "tale.txt", fmt="prose").actions
        assert [(a.character, a.text) for a in actions if a.character != "narration"][-1] \
            == ("Jack Lane", "Yes."), line


def test_a_voice_of_someones_is_theirs_and_so_is_what_another_hears_them_say():
    """`answered Mary Hale's voice` and `Mary Hale's voice said,` are Mary Hale's (the first
    made a character `Mary Hale's`, the second was left as narration); `Tom Reed heard Mary
    Hale say` is hers, whoever hears it (only a pronoun could hear before)."""
    base = ('"Where is the key?" asked Tom Reed.\n\n"I have it," said Mary Hale.\n\n'
            '"I know," said Jack Lane.\n\n')
    for line in ['"Yes," answered Mary Hale\'s voice.', 'Mary Hale\'s voice said, "Yes."',
                 '"Yes," Tom Reed heard Mary Hale say.']:
        actions = parse_story((base + line + "\n").encode(), "tale.txt", fmt="prose").actions
        assert [(a.character, a.text) for a in actions if a.character != "narration"][-1] \
            == ("Mary Hale", "Yes."), line


def test_a_name_after_a_relation_in_a_tag_is_the_speaker():
    """`said his sister Maud` and `protested his sister Dora`: the name in apposition says
    who speaks (the first made a character `Sister`, the second was left unsure between the
    two sisters); `said his father Sunday morning` is still his father."""
    text = ('"There is a man hanged today," said Jasper Milvain, and he went on with his egg.\n\n'
            '"Surely it is not necessary to tell us that," said his sister Maud, coldly.\n\n'
            '"And in such a tone, too!" protested his sister Dora.\n\n'
            '"Who is it?" asked Mrs. Milvain, looking at her son.\n')
    actions = parse_story(text.encode(), "tale.txt", fmt="prose").actions
    assert [a.character for a in actions if a.character != "narration"][1:3] == ["Maud", "Dora"]


def test_it_was_x_who_answered_before_the_line():
    """`It was Jack Lane who answered. "Yes."`: the cleft names who speaks (it was left as
    narration)."""
    text = ('"Where is the key?" asked Tom Reed.\n\n"I have it," said Mary Hale.\n\n'
            '"I know," said Jack Lane.\n\nIt was Jack Lane who answered. "Yes."\n')
    actions = parse_story(text.encode(), "tale.txt", fmt="prose").actions
    assert [(a.character, a.text) for a in actions if a.character != "narration"][-1] == ("Jack Lane", "Yes.")

"""Speech tags in the narration around a quotation: who says it, as the text writes it.

`tag_after` reads the narration right after a quotation (`"…," said the Hatter`, `"…," she
remarked`, `"…," Alice hastily replied`); `tag_before` the narration right before one
(`Harker said, "…"`, `The Dormouse shook its head, and said, "…"`, `then said the Queen:
"…"`); `beat` the sentence of action right before an untagged quotation (`The Time Traveller
smiled. "…"`). Each gives a `Tag`: the subject as written (a name, a description such as
`the March Hare` or `Scrooge's nephew`, or a pronoun, `I` for the narrator) and where it is.
Nothing here decides who that is: `dialogue.py` resolves names and pronouns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bookmarks.stories.tag_words import PERSON_NOUNS, PHRASES, STOP_WORDS, VERBS

VERB = "(?:" + "|".join([*(re.escape(p) for p in PHRASES), *VERBS]) + ")"
# said-verbs that are gestures (`Smith laughed.`, `Aunt Ann sighed.`): alone in a narration
# paragraph they are no answer — on the gold sets the one who laughed spoke the next line
# far more often than the other did
GESTURES = r"(?:laughed|sighed|chuckled|giggled|smiled|grinned|sobbed|wept)\b"
_REPORTED = re.compile(rf"\b(?!{GESTURES}){VERB}\b")
_GESTURE_WORD = re.compile(rf"\b{GESTURES}")


def gesture_only(text: str) -> bool:
    """A narration paragraph whose only said-verb is a gesture (`Lord Henry laughed.`)."""
    return _GESTURE_WORD.search(text) is not None and _REPORTED.search(text) is None


ADV = (r"(?:(?:very|rather)\s+[a-z]+ly|[a-z]+ly|again|then|now|aloud|presently|too|also|both|all|"
       r"at\s+last|at\s+once|at\s+length|in\s+reply|in\s+return|once\s+more|even|just|only|still|merely|quite|half)")
AUX = (r"(?:had|has|have|was|were|is|used\s+to|(?:was|were)\s+(?:moved|driven|forced|compelled|"
       r"constrained|tempted|prompted)\s+to)")  # `he had thought`, `she was saying`, `was moved to vow`

ABBREVIATIONS = "Mr|Mrs|Ms|Mme|Mlle|Dr|Capt|Col|Lieut|Sgt|Prof|Rev|St"
TITLES = ("Mr|Mrs|Ms|Miss|Mister|Missus|Madam|Madame|Mme|Mlle|Monsieur|Mademoiselle|Signor|Signora|"
          "Signorina|Señor|Señora|Señorita|Herr|Frau|Fräulein|Dr|Doctor|Sir|Lady|Lord|Captain|"
          "Capt|Colonel|Col|Major|General|Lieutenant|Lieut|Sergeant|Sgt|Professor|Prof|Rev|Father|"
          "Mother|Sister|Brother|Aunt|Auntie|Uncle|Cousin|Master|Mistress|Dame|Judge|Count|"
          "Countess|Baron|Baroness|Duke|Duchess|Prince|Princess|King|Queen|Saint|St|Squire|"
          "Governor|Inspector|Constable|Nurse|Granny|Grandma|Grandpa|Old")
_MONSIEUR = r"(?<![A-Z]\.\s)M\.(?=\s+(?:de\s+|d[’'])?[A-Z][a-z])"  # `M. de Treville` (not `L. D. M. Randall`)
_TITLE = rf"(?:(?:{ABBREVIATIONS})\.?|(?:{TITLES})|{_MONSIEUR})"
UPPER, LOWER = "A-ZÀ-ÖØ-Þ", "a-zß-öø-ÿ"  # names with accents: `Münster`, `Zoë`, `Señora`
_NAME_WORD = rf"(?:Mc|Mac|[OD][’'])?[{UPPER}][{LOWER}]+(?:[-’'][{UPPER}]?[{LOWER}]+)*"
_DETERMINER = (r"(?!(?:The|This|That|These|Those|An?|His|Her|Its|Their|My|Our|Your|Then|And|But|So|"
               r"When|While|Through|From|With|Into|Upon|After|Before|Behind|Beside|Across|Among|"
               r"Against|Towards?|Under|Over|At|In|On|By|For|Of)\b)"  # `The wub shrugged`, `Then Meg
               # announced`, `Through Nell's lips`: no name `The`, `Then`, `Through`
               r"(?![A-Z][a-z]+ing\s+(?:his|her|the|a|an|their|its|my|our|your|him|them)\b)")
# (`Raising his broken nose towards his listener, he would add:` names no `Raising`)
_PARTICLE = rf"(?:of|de|van|von)\s+(?!(?:{TITLES}|{ABBREVIATIONS})\b)"  # not `Robert of Mrs`
NAME_PARTICLES = ("von", "van", "de", "du", "der", "ten", "ter")  # a name may open with one
_PARTICLE_LEAD = rf"(?:(?:{'|'.join(NAME_PARTICLES)})\s+|d[’'])"  # `von Horn`, `d’Artagnan`
PROPER = (rf"(?:{_TITLE}\s+)?{_PARTICLE_LEAD}?{_DETERMINER}{_NAME_WORD}"
          rf"(?:\s+(?:{_PARTICLE})?(?!(?:{ABBREVIATIONS})\.\s){_NAME_WORD}){{0,3}}")  # not `Finally Mrs`
_NOUN = "(?:" + "|".join(sorted(PERSON_NOUNS, key=len, reverse=True)) + ")"
_DESC = (rf"(?:[Tt]he|[Hh]is|[Hh]er|[Tt]heir|[Mm]y|[Oo]ur|[Yy]our|a|an|A|An)\s+"
         rf"(?:(?!said\b|{_NOUN}\b)[a-z]+(?:-[a-z]+)*\s+){{0,2}}"  # `the red-faced man`
         rf"{_NOUN}(?!\w|-\w)")  # (`the old lady--and I`)
_POSS = rf"{PROPER}[’']s\s+(?:[a-z]+\s+)?{_NOUN}(?!\w|-\w)"
_NOT_ADJ = r"(?!(?:said|and|of|in|on|at|to|with|for|from|by|into|upon|that|which|who)\b)"
_ADJ = rf"{_NOT_ADJ}[a-z]+(?:-[a-z]+)*\s+"
# `the good-natured Rat` (not `the old lady--and Hugh`)
_CAP_DESC = rf"(?:the|The)\s+(?:{_ADJ}(?:and\s+{_ADJ})?){{0,2}}{PROPER}"
PRONOUN = r"(?:[Hh]e|[Ss]he|[Ii]t|[Tt]hey|I|[Ww]e)"
_GENERIC = r"[Tt]he\s+(?!(?:same|other|others|one|rest|first|last|latter|former|whole|voice)\b)[a-z]{3,}"
ANAPHOR = r"the\s+(?:other|latter|former)"  # `returned the other`: resolved by the exchange
_FOND = r"(?:poor|little|old|young|dear|good|kind|big|wise|fat|pretty|sweet|gentle|brave)\s+"
SUBJ = (rf"(?:{_POSS}|{_CAP_DESC}|{_DESC}|{PRONOUN}|(?:{_FOND})?{PROPER}|{ANAPHOR}|"
        rf"{_GENERIC})")  # `said poor Lucy`

_LEAD = r"^[\s,.;:!?—–\-)(\[]*"
_VERB_SUBJ = re.compile(rf"{_LEAD}(?:{ADV}\s+)?({VERB})(?:\s+(?:back|out|up))?(?:\s+{ADV})?\s+"
                        rf"(?P<s>{SUBJ})(?![\w’']|-\w)")  # `again said the jailer`
_SUBJ_VERB = re.compile(rf"{_LEAD}(?P<s>{SUBJ})(?:\s+{ADV}){{0,2}}(?:\s+(?P<aux>{AUX})(?:\s+{ADV})?)?"
                        rf"\s+(?P<v>{VERB})\b(?!\s+(?:nothing|no\b))")
_SENTENCE_END = re.compile(r"[.!?;](?:[’'”\")\]]*)\s+(?=[A-Z(“\"‘'_])")
_ABBREVIATION = re.compile(r"\b(Mr|Mrs|Ms|Mme|Mlle|Dr|St|Messrs|Rev|Prof|Capt|Col|Gen|Lieut|Sgt|Jr|Sr|"
                           r"[A-HJ-Z])\.(?=\s)")


def mask_abbreviations(text: str) -> str:
    """The text with the full stop of a title or an initial (`Mr.`, `Dr.`, `G. J.`) masked, so
    it ends no sentence; offsets are kept."""
    return _ABBREVIATION.sub(lambda m: m.group(1) + "\u2024", text)
_INTRO = re.compile(r"^(?:(?:and|but|then|so|now|presently|here|there|still|yet|again|once\s+more|"
                    r"at\s+last|at\s+that|at\s+this(?!\s+moment)|on\s+which|upon\s+which|after\s+a\s+(?:while|moment|"
                    r"pause)|however|meanwhile|just\s+then|at\s+this\s+moment|suddenly|finally|"
                    r"instantly|afterwards|(?:at|in|on|by|near|from|with|to|during|throughout|through|across|"
                    r"along|behind|under|over|beneath|around|for|amid)\s+(?:the|a|an|his|her|"
                    r"their|this|that|these|those)\s+[a-z-]+|(?:when|as|while|after|before|though|"
                    r"although|if|since|until|once)\s+[^,;:.!?]{1,80},|(?:[a-z]+ly\s+)?[a-z]+ing\s+[^,;:.!?]{1,100},)"
                    r",?\s+)+", re.I)  # (`After some questions, mostly referring to her past, she was asked`)
_MODAL = frozenset("to would could should might may must can will shall not never didn’t didn't "
                   "don’t don't cannot couldn’t couldn't wouldn’t wouldn't nobody".split())


@dataclass
class Tag:
    subject: str  # as written: "the March Hare", "she", "I", "Scrooge's nephew"
    start: int  # where the subject is in the text searched
    end: int  # where the tag ends (after the verb or the subject)
    verb: bool = True  # a speech verb (False: an action beat)


def clean(text: str) -> str:
    return text.replace("_", " ")


def _tag(m: re.Match, offset: int = 0) -> Tag:
    return Tag(m.group("s"), m.start("s") + offset, m.end() + offset)


_HEARD = re.compile(rf"{_LEAD}(?:I|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|{PROPER})\s+(?:heard|hear)\s+(?P<s>{SUBJ})\s+"
                    r"(?:say|cry|ask|exclaim|mutter|whisper|shout|remark|call|reply)\b")


_WAS_REPLY = re.compile(rf"{_LEAD}(?:was|came)\s+(?P<s>{PROPER})[’']s\s+(?:[a-z]+\s+)?(?:reply|answer|retort|"
                        r"response|rejoinder)\b")  # `was Mr. Emerson’s reply`


# `"No, no," fell from Jasper.` / `broke from the girl` / `came from Steve`, and `answered the
# voice of Steve behind him`: the speech comes from them
_FROM = re.compile(rf"{_LEAD}(?:(?:came|fell|broke|burst)\s+(?:forth\s+)?from|"
                   rf"(?:{ADV}\s+)?{VERB}\s+the\s+voice\s+of)\s+(?P<s>{SUBJ})(?![\w’']|-\w)")


_WAS_OWN_REPLY = re.compile(rf"{_LEAD}(?:was|came)\s+(?P<s>his|her|my)\s+(?:[a-z]+\s+)?"
                            r"(?:reply|answer|retort|response|rejoinder)\b")  # `was his tranquil response`


_MYSELF = re.compile(rf"{_LEAD}(?P<s>I)\s+(?:heard|found)\s+myself\s+(?:say|saying|cry|crying|ask|asking|"
                     r"answer|answering|reply|replying|exclaim|exclaiming)\b")
_WAS_ALL = re.compile(rf"{_LEAD}(?:was|is)\s+all\s+(?:that\s+)?(?P<s>{SUBJ})\s+(?:would\s+|could\s+)?"
                      rf"{VERB}\b")
# `"Oh, they're not so bad," was all he answered.`


# `"…" Dorothea looked straight before her, and spoke with cold brusquerie`: one act, then
# the speech verb, in the sentence right after the quotation
_AND_SAID = re.compile(rf"{_LEAD}(?P<s>{_DESC}|{PRONOUN}|{PROPER})\s+[a-z]{{2,}}ed\b[^.!?;:“”\"]{{0,80}}?"
                       rf",?\s+and\s+(?:then\s+)?{VERB}\b(?!\s+(?:nothing|no|not|never)\b)")


_APPOSED = re.compile(rf"\s+(?P<s>{PROPER})(?![\w’']|-\w)")  # a name in apposition: `his sister Maud`
_NAMES = re.compile(rf"\.?\s+{PROPER}(?:,?\s+(?:and\s+)?{PROPER})*")


def tag_after(seg: str) -> Tag | None:
    """The speech tag at the start of the narration after a quotation."""
    seg = clean(seg)
    if m := _WAS_OWN_REPLY.match(seg):  # `was his tranquil response`, `was my answer`
        return Tag({"his": "he", "her": "she", "my": "I"}[m.group("s")], m.start("s"), m.end())
    if m := _MYSELF.match(seg):  # `"Hullo!" I heard myself say.`: the narrator's
        return Tag("I", m.start("s"), m.end())
    for pattern in (_HEARD, _WAS_REPLY, _WAS_ALL, _FROM, _VERB_SUBJ, _SUBJ_VERB, _AND_SAID):
        if m := pattern.match(seg):
            if pattern is _SUBJ_VERB and _passive(m):
                return None  # `"And you?" I was asked.`: I am the one spoken to
            if pattern is _VERB_SUBJ and re.fullmatch(_DESC, m.group("s")) \
                    and (named := _APPOSED.match(seg, m.end("s"))) \
                    and named.group("s").split()[0].casefold() not in STOP_WORDS:  # `said his sister Maud`
                return Tag(named.group("s"), named.start("s"), named.end("s"))
            if pattern is _VERB_SUBJ and (both := _AND_OTHER.match(seg, m.end())):
                return Tag(seg[m.start("s"):both.end("s2")], m.start("s"), both.end("s2"))
            if m.group("s") in ("Messrs", "Messieurs", "MM") and (names := _NAMES.match(seg, m.end("s"))):
                return Tag(seg[m.start("s"):names.end()], m.start("s"), names.end())  # a group:
            if (own := re.match(r"(.+?)[’']s$", m.group("s"))) and _VOICE.match(seg, m.end("s")):
                return Tag(own.group(1), m.start("s"), m.end())  # `from Joseph's dry lips`,
                # `answered Mary's voice`: theirs
            return _tag(m)  # `replied Messrs. Stuart, Fallentin, and Ralph` is no one of them
    return None


# `"Come on," Jones grated,` / `"What?" he snapped.`: after a quotation that leaves its
# sentence open (a comma, or `?`/`!` before narration in lower case), a name or pronoun and
# any past-tense verb is the tag, whatever the verb
_OPEN_TAG = re.compile(rf"{_LEAD}(?P<s>{_DESC}|{PRONOUN}|{PROPER})(?:\s+{ADV})?\s+"
                       r"(?P<v>[a-z]{2,}ed)\b(?!\s+(?:by|that)\b)")


# `"But it's true," maintained Nancy.` / `nodded the old man;` / `scoffed unbelieving Tom.`:
# the same, the verb first, the subject a name or a description that closes the clause
_OPEN_INVERTED = re.compile(rf"{_LEAD}(?:{ADV}\s+)?(?P<v>[a-z]{{2,}}ed)(?:\s+{ADV})?\s+"
                            rf"(?:(?:{_FOND}|[a-z]+ing\s+)(?=[{UPPER}]))?(?P<s>{_CAP_DESC}|{_DESC}|{PROPER})"
                            r"(?=\s*(?:[,.;:!?—–]|--|$))")


def open_tag_after(quote: str, seg: str) -> Tag | None:
    """The tag after a quotation whose sentence goes on into the narration, by any verb."""
    seg = clean(seg)
    quote = quote.rstrip()
    if not (quote.endswith(",") or quote[-1:] in "?!—–-" and re.match(r"\s*[a-z]", seg)):
        return None
    if (m := _OPEN_INVERTED.match(seg)) and m.group("s").split()[-1].casefold() not in STOP_WORDS:
        return _tag(m)
    m = _OPEN_TAG.match(seg)
    if not m or m.group("s").split()[0].casefold() in STOP_WORDS and not re.fullmatch(
            PRONOUN, m.group("s")) and not re.match(_DESC, m.group("s")):
        return None
    return _tag(m)


# `Carol must have flinched, for instantly he was urging, "…"`: a clause that ends the
# narration on a comma or a colon before a quotation, its subject right before any -ed or
# -ing verb, is the tag, whatever the verb
_OPEN_BEFORE = re.compile(rf"(?:^|[,;:—–(]\s*|\b(?i:and|but|for|so|then|when|as|while)\s+)(?:{ADV}\s+)?"
                          rf"(?P<s>{_DESC}|{PRONOUN}|{PROPER})(?:\s+{AUX})?(?:\s+{ADV})?\s+"
                          r"(?P<v>[a-z]{2,}(?:ed|ing))\s*[,:][\s—–-]*$")


def open_tag_before(seg: str) -> Tag | None:
    """The tag before a quotation that the narration runs into by any verb."""
    seg = clean(seg)
    m = _OPEN_BEFORE.search(seg)
    if not m or m.group("s").split()[0].casefold() in STOP_WORDS and not re.fullmatch(
            PRONOUN, m.group("s")) and not re.match(_DESC, m.group("s")):
        return None
    return Tag(m.group("s"), m.start("s"), m.end("v"))


def _passive(m: re.Match) -> bool:
    """`I was asked`, `he was told`: was/were/is before a verb that is no -ing form."""
    return bool(m.group("aux")) and m.group("aux") in ("was", "were", "is") \
        and not m.group("v").endswith("ing")


# `cried Harriet and Maria together`: two speak at once (no `and Mr. Lucas laughed`)
_AND_OTHER = re.compile(rf"\s+and\s+(?P<s2>{PROPER}|{_DESC})(?=\s*(?:[,.;:!?—–-]|$|together\b|"
                        r"at\s+once\b|in\s+(?:a\s+)?chorus\b|both\b))")


def last_sentence(seg: str) -> tuple[int, str]:
    """The last sentence of a piece of narration and where it starts."""
    starts = [m.end() for m in _SENTENCE_END.finditer(mask_abbreviations(seg))]
    start = starts[-1] if starts else 0
    return start, seg[start:]


def clause_subject(sentence: str) -> tuple[int, str] | None:
    """The subject at the start of a sentence (after `And`, `Then`, `On which` …): a name,
    a description or a pronoun followed by a verb-like word."""
    s = clean(sentence)
    lead = len(s) - len(s.lstrip(" ([“\"‘'—–-"))
    intro = _INTRO.match(s[lead:])
    at = lead + (intro.end() if intro else 0)
    m = _CLAUSE.match(s[at:])  # (the aside's words counted: a bracket blanked
    # out inside it is no length: `Nicholas Forsyte, with his bird-like rapidity (…), placed`)
    if m and (aside := m.group("aside")) and re.fullmatch(_DESC, m.group("s")) \
            and re.fullmatch(PROPER, aside) and m.group("v") not in _NOT_VERBS:
        return at + m.start("aside"), aside  # `his father, James, was scrutinizing`: James
    if not m and (v := _VOICE_OF.match(s[at:]) or _KIN_NAMED.match(s[at:])):
        return at + v.start("s"), v.group("s")  # `The voice of Swithin roused him`: his doing;
        # `His aunt Polly stood surprised`: Polly
    if not m or m.group("v") in _NOT_VERBS:
        return None
    return at + m.start("s"), m.group("s")


# the clause's subject, an aside of a few words after it, adverbs, and the verb-like word
_CLAUSE = re.compile(rf"(?P<s>{SUBJ})(?:,\s+(?P<aside>(?:[^,\s]+\s+){{0,15}}[^,\s]+)\s*,)?\s+"
                     rf"(?:{ADV}\s+){{0,2}}(?P<v>[a-z][a-z’']*)")
_VOICE_OF = re.compile(rf"[Tt]he\s+voice\s+of\s+(?P<s>{PROPER})\s+(?:{ADV}\s+){{0,2}}[a-z]")
_KIN_NAMED = re.compile(rf"(?:[Hh]is|[Hh]er|[Mm]y|[Tt]heir|[Oo]ur)\s+(?:aunt|uncle|cousin|brother|sister|"
                        rf"friend|father|mother|wife|husband|son|daughter|nephew|niece)\s+(?P<s>{PROPER})\s+"
                        rf"(?:{ADV}\s+){{0,2}}[a-z]")
_NOT_VERBS = frozenset("of and or to in at with for from on upon into by as than like who whom "
                       "which that whose the a an".split())


def tag_before(seg: str) -> Tag | None:
    """The speech tag that ends the narration before a quotation: `X said, `, `said X:`,
    `X looked up and said `, `she went on, without looking round, `."""
    seg = clean(seg)
    start, sentence = last_sentence(seg)
    if _CAP_VERB.match(sentence):  # `Said the Queen:` opens its sentence with the verb
        sentence = re.sub(r"\S", lambda c: c.group(0).lower(), sentence, count=1)
    aside = _TRAILING_ASIDE.search(sentence)
    for v in reversed(_verbs(sentence)):
        if aside and v.start() >= aside.start():
            continue  # `as if the idea was suggested by …,`: not the tag's verb
        if (found := _tag_at(sentence, v)) is not None:
            end = max(v.end(), found[0] + len(found[1]))  # `said X` ends after X
            who = re.sub(r"(?<=\w)[’']s$", "", found[1])  # `was X's answer, … and cried out`: X
            return Tag(who, start + found[0], start + end) if who else None
    return None


# a speech verb's word used as a noun: `in a whisper`, `in a low voice and a whisper`,
# `his answer`, `train of thought` (not `the woman said`: a noun stands before a verb)
_ARTICLE = r"\b(?i:a|an|the|his|her|their|my|our|your|its|this|that|of|no)\s+"
VERB_WORD = re.compile(rf"\b{VERB}\b")  # a speech verb as a word
_ARTICLE_END = re.compile(_ARTICLE + "$")
_DETERMINED_END = re.compile(_ARTICLE + r"[a-z]+(?:-[a-z]+)*\s+$")
_NOUN_FORMS = frozenset("whisper answer reply cry call thought remark shout murmur sigh laugh "
                        "question greeting sob groan retort echo growl mutter scream roar".split())


def _verbs(sentence: str) -> list[re.Match]:
    """The speech verbs of a sentence, not the same words used as nouns."""
    out = []
    for v in VERB_WORD.finditer(sentence):
        head = sentence[max(0, v.start() - 40):v.start()]
        if _ARTICLE_END.search(head) or (v.group(0) in _NOUN_FORMS and _DETERMINED_END.search(head)):
            continue
        out.append(v)
    return out


def _tag_at(sentence: str, v: re.Match) -> tuple[int, str] | None:
    """(where, subject) of the speech verb `v` when it introduces what follows the
    sentence; (0, "") when it does but its subject is no one the text names; None when the
    verb is too far from the quotation."""
    after = sentence[v.end():]
    if _TRAILING_ASIDE.match(after):
        after = ", "  # `Meg announced, as if the idea was suggested by …, "…"`
    if len(after.split()) > 9 or re.search(r"[.!?;]", mask_abbreviations(after).rstrip(" .!?:,;—–-")) \
            or re.match(r"\s+(?:nothing|not|no|never)\b", after):
        return None
    head = sentence[:v.start()]
    words = head.split()
    if words and words[-1].casefold() in _MODAL and " ".join(words[-2:]).casefold() != "used to":
        return 0, ""  # `to say "Drink me"`, `would say`, `never said` (`he used to say` speaks)
    if len(words) >= 2 and " ".join(words[-2:]).casefold() == "used to":
        head = " ".join(head.split()[:-2]) + " "
    if m := _SUBJ_END.search(head):
        if not _object_pronoun(head, m):
            return m.start("s"), m.group("s")
    if m := _CLEFT_END.search(head):
        return m.start("s"), m.group("s")  # `It was Jack who answered.`
    if m := _VOICE_END.search(head):
        return m.start("s"), m.group("s")  # `Mary Hale's voice said,`: hers
    if m := _SUBJ_ASIDE.search(head):  # `Jack, however, said:` / `Jack, after a pause, answered:`
        if not _object_pronoun(head, m):
            return m.start("s"), m.group("s")
    if m := _SUBJ_AFTER.match(after):
        return v.end() + m.start("s"), m.group("s")
    head = _TIME_PHRASE.sub(" ", head)  # `and after a few moments added:`, `and, in a low voice, said`
    if re.search(r"(?:\band|\bthen|,)\s*(?:(?:\w+ly|had|has|have|was|were|just|then|again|began|"
                 r"begun|went|kept|continued|started)\s+)*$", head):
        if found := last_subject(head):
            return found
    return 0, ""


_SUBJ_END = re.compile(rf"(?P<s>{SUBJ})(?:\s+{ADV}){{0,2}}\s*$")
_CLEFT_END = re.compile(rf"\b[Ii]t\s+was\s+(?P<s>{SUBJ})\s+(?:who|that)\s+$")
_SUBJ_AFTER = re.compile(rf"(?:\s+{ADV})?\s+(?P<s>{SUBJ})(?![\w’']|-\w)")
_CAP_VERB = re.compile(r"\s*(?:Said|Asked|Cried|Replied|Answered|Added|Returned|Continued|Observed|"
                       r"Remarked|Quoth)\s")
_SUBJ_ASIDE = re.compile(rf"(?:^|[.!?;:]\s+|,\s+(?:and|but|then)\s+)\s*(?P<s>{SUBJ}),\s*(?!and\b|but\b|or\b)"
                         rf"[^,;:.!?“”\"]{{1,40}},\s*(?:{ADV}\s+)?$")
_TRAILING_ASIDE = re.compile(r",\s*(?:as\s+if|as\s+though|as|while|though|when)\b[^,;:.!?]{0,100},\s*$")
_TIME_PHRASE = re.compile(r"(?<=\band)(?:,)?\s+(?:after|in|with|at|for)\s+(?:a|an|the|his|her|some)\s+"
                          r"(?:[a-z]+\s+){0,2}?(?:moments?|minutes?|while|pause|time|voice|tone|whisper|"
                          r"breath|smile|sigh|length|last)\b,?\s*$")
_ASIDE = re.compile(r",\s*(?:as|when|while|though|although|if|because|since|before|after|until|"
                    r"whilst|who|whose|whom|which)\b[^,;:]*,")


_SUBJECTS = re.compile(rf"(?<![\w’'-])(?=(?P<s>{SUBJ})(?:,\s+[^,]{{1,60}},)?\s+(?:{ADV}\s+){{0,2}}"
                       r"(?P<v>[a-z][a-z’']*))")


def last_subject(head: str) -> tuple[int, str] | None:
    """The last subject (a name, description or pronoun followed by a verb) in the clause
    before a coordinated speech verb: `The Dormouse shook its head, and said`."""
    clause_start = max(head.rfind(";"), head.rfind(":")) + 1
    head = _ASIDE.sub(lambda m: " " * len(m.group(0)), head)  # `The newsboys, as he went, were`
    found = None
    for m in _SUBJECTS.finditer(head[clause_start:]):
        pre = head[:clause_start + m.start("s")]
        if m.group("s").split()[0].casefold() in STOP_WORDS and not re.fullmatch(PRONOUN, m.group("s")):
            continue
        if m.group("v") in _NOT_VERBS or re.search(r"\b(?:to|at|with|for|from|on|upon|by|of|than|like|"
                                                   r"into|that|whether|if)\s+$", pre):
            continue
        if re.search(r"\b(?:when|whenever|while|whilst|as|because|though|although|since|after|before|"
                     r"until|till|unless|once)\s+$", pre, re.I) and "," in head[clause_start + m.start("s"):]:
            continue  # `she looked dazed when he spoke to her, and then said`: not `he` (but `I was
            # about to speak when she sat up alertly and said`: she)
        if found and clause_start + m.start("s") < found[0] + len(found[1]):
            continue  # `Mrs. Drury put` is not `Drury put`
        if re.search(r"[’']s$", m.group("s")) and not _VOICE.match(head, clause_start + m.end("s")) \
                and m.group("v")[-3:] != "ing":  # (`without Mr. Woodhouse's giving a sigh, and saying`)
            continue  # `felt Tom's shirt, and said`: Tom's shirt says nothing (Miss Polly's voice does)
        found = (clause_start + m.start("s"), m.group("s"))
    if found is None and clause_start and re.fullmatch(r"\s*(?:and\s+)?(?:then\s+)?(?:\w+ly\s+)?",
                                                        head[clause_start:]):
        return last_subject(head[:clause_start - 1])  # `The Badger trotted forward; then grunted,`
    return found


_WAS_UNNAMED_REPLY = re.compile(rf"{_LEAD}(?:was|is|came)\s+(?:the|his|her)\s+(?:[a-z]+\s+)?"
                                r"(?:reply|answer|retort|response|rejoinder)\b")
_UNKNOWN_AFTER = re.compile(rf"{_LEAD}(?:{VERB}\s+(?:[a-z]+ly\s+)?(?:the|a|an|one|some|several|all|"
                            rf"both|two|three|another|somebody|someone|everybody|everyone|"
                            rf"his|her|their|my|our|your)\b|"  # `said her ladyship`
                            rf"(?:the|a|an|one|some|several|all|two|three)\s+[a-z]+(?:\s+[a-z]+)?"
                            rf"\s+{VERB}\b)")


def unknown_tag(seg: str, after: bool) -> bool:
    """A speech tag whose speaker is no one the text names (`said a timid voice`, `the
    soldiers shouted`, `she heard one of them say,`): the quotation is someone's, but not
    any character's the rules know."""
    seg = clean(seg)
    if after and _WAS_UNNAMED_REPLY.match(seg):
        return False  # `was the undaunted reply`: the one whose turn it is
    if after:
        return bool(_UNKNOWN_AFTER.match(seg))
    if seg.rstrip()[-1:] in ".!?":
        return False
    _, sentence = last_sentence(seg)
    return any(_tag_at(sentence, v) == (0, "") for v in _verbs(sentence))


def _object_pronoun(head: str, m: re.Match) -> bool:
    """`one of them say`, `heard it say` — a pronoun after a verb or preposition is an object
    in form but can still be the speaker (`hear the Rabbit say`); only `them`/`him`/`her` are
    never subjects."""
    return m.group("s").casefold() in ("them", "him", "her")


def beat(seg: str) -> Tag | None:
    """The subject of the last sentence of narration right before an untagged quotation."""
    seg = clean(seg).rstrip()
    if not seg or seg[-1:] not in ".!?:;,—–-)":
        return None
    start, sentence = last_sentence(seg)
    found = clause_subject(sentence)
    if not found and (m := _THROUGH_LIPS.match(clean(sentence))):
        return Tag(m.group("s"), start + m.start("s"), len(seg), verb=False)
    if not found:
        return None
    subject = found[1]
    if re.search(r"[’']s$", subject) and _VOICE.match(sentence, found[0] + len(subject)):
        subject = subject[:-2]  # `--Miss Polly's voice was very stern now--`: hers
    return Tag(subject, start + found[0], len(seg), verb=False)


_THROUGH_LIPS = re.compile(rf"\s*(?:Through|From|In|With)\s+(?P<s>{PROPER})[’']s\s+(?:[a-z]+\s+)?"
                           r"(?:lips|voice|mouth)\b")  # `Through Aunt Ann's compressed lips a smile …:`
_VOICE = re.compile(r"\s+(?:[a-z]+\s+)?(?:voice|tones?|words|reply|answer|retort|response|question|lips)\b")
_VOICE_END = re.compile(rf"(?P<s>{PROPER})[’']s(?:{_VOICE.pattern})\s*$")  # `Mary Hale's voice said,`
_TURNS_TO = re.compile(rf"(?:and|then|and\s+then),?\s+to\s+(?:{PROPER}|him|her|them|me|the\s+[a-z]+)")


def is_tag_only(seg: str) -> bool:
    """Narration between two quotations that is only the first one's tag (with a phrase
    after it, no new sentence): the second quotation goes on the same speech."""
    seg_clean = clean(seg)
    t = tag_after(seg_clean)
    if not t:
        return False
    rest = seg_clean[t.end:].strip(" ,.;:!?—–-")
    if _TURNS_TO.fullmatch(rest):
        return True  # `cried Kennicott; and, to Carol, "…"`: he turns to her
    return not re.search(r"[.!?;]\s+\S", mask_abbreviations(seg_clean[t.end:]).rstrip()) or not rest

"""`names.one_of`: the prefix-tree alternation the name searches use matches exactly what
the flat, longest-first alternation it replaced matched, on names that share beginnings."""

from __future__ import annotations

import random
import re

from bookmarks.stories.names import one_of

NAMES = ["Ann", "Anna", "Anna Karenina", "Annabel", "Mr. Ann", "Mr", "Mrs. Dale", "Mrs Dale", "Dale",
         "d’Artagnan", "Aramis", "Ar", "Bob", "Bobby", "the doctor", "the doctor’s wife", "Jo", "Jo-Jo"]
TEXT = ("Anna Karenina met Annabel and Ann. Mr. Ann saw Mrs. Dale, then Mrs Dale, then Dale's dog. "
        "d’Artagnan and Aramis and Ar; Bobby, Bob. the doctor’s wife and the doctor. Jo-Jo and Jo. "
        "Anna Karenin, Annab, Mr Ann, Aramisx.")


def flat(words) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def spans(alternation: str, text: str) -> list[tuple[int, int, str]]:
    pattern = re.compile(r"(?<![\w’'-])(" + alternation + r")(?![\w-])(?![’'][a-rt-z])")
    return [(m.start(), m.end(), m.group(1)) for m in pattern.finditer(text)]


def test_the_same_matches_as_the_longest_first_alternation():
    found = spans(one_of(NAMES), TEXT)
    assert found == spans(flat(NAMES), TEXT)
    assert [w for _, _, w in found][:4] == ["Anna Karenina", "Annabel", "Ann", "Mr. Ann"]
    assert "the doctor’s wife" in [w for _, _, w in found]


def test_the_same_matches_on_random_names_and_text():
    rng = random.Random(7)
    letters = "aAbB .’-"
    for _ in range(200):
        words = {"".join(rng.choice(letters) for _ in range(rng.randint(1, 6))).strip() or "a"
                 for _ in range(rng.randint(1, 12))}
        text = "".join(rng.choice(letters + "c,") for _ in range(300))
        assert spans(one_of(words), text) == spans(flat(words), text), words


def test_one_name_and_characters_regexes_treat_specially():
    assert re.fullmatch(one_of(["a.b*(c)"]), "a.b*(c)")
    assert not re.fullmatch(one_of(["a.b"]), "axb")

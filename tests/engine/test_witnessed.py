"""Witnessed knowledge: presence derived from a play's entrances and exits, corrected by
a writer, and a property test that in witnessed mode no request made for a character
carries text of an action that character was not present for — any method, trunk or
branch."""

from __future__ import annotations

import json
import random
import re

import pytest

from bookmarks.engine.ground import ground_at
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.methods import METHODS
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.play import generate_turn
from bookmarks.stories.presence import derive, set_range, to_ranges
from bookmarks.stories.story import Action, Character, Story
from tests.conftest import make_llm

CAST = [Character(name="Ada Penrose", aliases=["Ada"], major=True),
        Character(name="Ben Carne", aliases=["Ben"], major=True),
        Character(name="Cid Hale", aliases=["Cid"])]

PLAY = [  # (speaker, text, chapter) — a play of our own with entrances and exits
    ("narration", "A quay at night. Enter ADA and BEN.", "Scene 1"),
    ("Ada Penrose", "The lamp is out again, Ben.", "Scene 1"),
    ("Ben Carne", "Then someone put it out.", "Scene 1"),
    ("narration", "Exit BEN.", "Scene 1"),
    ("Ada Penrose", "Alone at last. The key is under the third stone.", "Scene 1"),
    ("narration", "Enter CID, soaked.", "Scene 1"),
    ("Cid Hale", "Ada, the boat is gone.", "Scene 1"),
    ("narration", "Re-enter BEN with a lantern.", "Scene 1"),
    ("Ben Carne", "What boat?", "Scene 1"),
    ("narration", "Exeunt all but CID.", "Scene 1"),
    ("Cid Hale", "I sank it myself.", "Scene 1"),
    ("narration", "Exit.", "Scene 1"),
    ("narration", "The inn. Enter BEN and CID.", "Scene 2"),
    ("Ben Carne", "Cid, where were you last night?", "Scene 2"),
    ("Cid Hale", "Asleep.", "Scene 2"),
    ("narration", "Exeunt.", "Scene 2"),
]


def play_story() -> Story:
    return Story(title="Quay", characters=CAST, actions=[
        Action(index=n, character=who, text=text, chapter=ch)
        for n, (who, text, ch) in enumerate(PLAY, start=1)])


def test_presence_follows_entrances_exits_and_scenes():
    per = derive(play_story().actions, CAST)
    assert per[1] == {"Ada Penrose", "Ben Carne"}  # Enter ADA and BEN
    assert per[4] == {"Ada Penrose"}  # a direction gives the stage after it: Ben is gone
    assert per[5] == {"Ada Penrose"}  # alone: the secret is Ada's only
    assert per[7] == {"Ada Penrose", "Cid Hale"}
    assert per[9] == {"Ada Penrose", "Ben Carne", "Cid Hale"}  # Re-enter BEN
    assert per[10] == per[11] == {"Cid Hale"}  # Exeunt all but CID: Cid's confession is his
    assert per[12] == set()  # a bare Exit: the last speaker leaves
    assert per[13] == {"Ben Carne", "Cid Hale"}  # a new scene starts empty
    assert per[16] == set() and "Ada Penrose" not in per[14]  # Exeunt: everyone goes
    ranges = to_ranges(per)
    assert ranges["Ada Penrose"] == [(1, 9)]
    assert set_range(ranges["Ada Penrose"], 12, 14, True) == [(1, 9), (12, 14)]
    assert set_range([(1, 10)], 5, 6, False) == [(1, 4), (7, 10)]


def test_a_source_that_carries_presence_wins():
    actions = play_story().actions
    actions[4] = actions[4].model_copy(update={"present": ["Ada Penrose", "Ben Carne"]})
    assert derive(actions, CAST)[5] == {"Ada Penrose", "Ben Carne"}


def test_a_writer_corrects_presence_and_stale_memory_goes(store):
    sid = store.add_story(play_story())
    assert store.presence(sid)["Ada Penrose"] == [(1, 9)]
    store.mark_presence(sid, "Ada Penrose", 14, 15, True)
    assert store.presence(sid)["Ada Penrose"] == [(1, 9), (14, 15)]


# -- the property test ---------------------------------------------------------------------
N = 200


def tagged() -> Story:
    """Speakers rotate; every action carries a unique mark; Cid comes and goes."""
    actions = []
    for i in range(1, N + 1):
        who = ("Ada Penrose", "Ben Carne", "Cid Hale", "narration")[i % 4]
        cid_here = (i // 25) % 2 == 0
        present = ["Ada Penrose", "Ben Carne"] + (["Cid Hale"] if cid_here else [])
        if who == "Cid Hale" and not cid_here:
            who = "Ben Carne"
        if i % 7 == 0:  # Ada alone with Ben
            present = ["Ada Penrose", "Ben Carne"]
            who = "Ada Penrose"
        if i % 11 == 0:  # Ben alone
            present, who = ["Ben Carne"], "Ben Carne"
        actions.append(Action(index=i, character=who, chapter="One", present=present,
                              text=f"About the gate and the harbour, mark tk{i}x."))
    return Story(title="Tagged", characters=CAST, actions=actions)


class EchoMemory(ScriptedMemory):
    """Titles name the latest mark seen, so a leaked title would carry it (test double)."""

    def __call__(self, request):
        if self.kind(request) == "propose":
            text = request.messages[-1]["content"]
            marks = re.findall(r"(?:tk|br\d+t)\d+x", text)
            seen = marks[-1] if marks else "nothing"
            return json.dumps({"sections": [
                {"title": f"Gate plan seen {seen}", "type": "state", "subject": "Ada Penrose"},
                {"title": "The harbour gate", "type": "concept", "subject": "harbour gate"},
                {"title": "Habits", "type": "behavioral", "subject": "Ada Penrose"}]})
        if self.kind(request) == "match":
            return json.dumps({"decision": "reuse"})
        return super().__call__(request)


@pytest.mark.parametrize("method", list(METHODS))
def test_no_request_for_a_character_carries_what_they_did_not_witness(store, method):
    rng = random.Random(11 + len(method))
    sid = store.add_story(tagged())
    present = {a.index: set(a.present) for a in tagged().actions}
    fake = ScriptedFakeModel(default=EchoMemory())
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=120, cast=["Ada Penrose", "Cid Hale"],
                               method=method, settings={"knowledge": "witnessed"})
    store.add_turn(scene.id, character="Cid Hale", text="Cid: br2t121x at the gate.",
                   source="user")
    sibling = store.create_scene(sid, start_point=90, cast=["Ben Carne"], method=method)
    store.add_turn(sibling.id, character="Ben Carne", text="Ben: br9t91x elsewhere.", source="user")
    trunk = Lineage.of(store, store.story(sid).trunk_id)
    for _ in range(8):
        who = rng.choice(["Ada Penrose", "Ben Carne", "Cid Hale"])
        on_branch = rng.random() < 0.35 and who != "Ben Carne"
        lineage = Lineage.of(store, scene.branch_id) if on_branch else trunk
        i = 122 if on_branch else rng.randint(15, N)
        before = len(fake.history)
        g, lines = run_sync(ground_at(store, llms["memory"], story_id=sid, lineage=lineage,
                                      position=i, character=who, method=method, space="story",
                                      knowledge="witnessed",
                                      scene_cast=scene.cast if on_branch else None))
        store.commit_memory(g.writes)
        run_sync(llms["actor"].text([{"role": "user", "content": "\n".join(
            ln.text for ln in lines) + g.text + " next line."}], purpose="act"))
        sent = "\n".join(m["content"] for r in fake.history[before:] for m in r.messages)
        limit = 120 if on_branch else i - 1
        forbidden = [f"tk{j}x" for j in range(1, N + 1)
                     if j > limit or who not in present[j]] + ["br9t91x"]
        if not on_branch:
            forbidden.append("br2t121x")
        leaked = [m for m in forbidden if re.search(rf"{m}(?!\d)", sent)]
        assert not leaked, (method, who, i, on_branch, leaked[:5])
        if method.startswith("bookmarks"):
            assert g.events[0]["kind"] == "knowledge" and g.events[0]["knower"] == who


def test_a_witnessed_scene_keeps_each_knower_apart(store):
    sid = store.add_story(tagged())
    fake = ScriptedFakeModel(default=EchoMemory())
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=120, cast=["Ada Penrose", "Cid Hale"],
                               method="bookmarks", settings={"knowledge": "witnessed"})
    run_sync(generate_turn(store, llms, scene.id, "Ada Penrose"))
    run_sync(generate_turn(store, llms, scene.id, "Cid Hale"))
    spaces = {r["space"] for r in store.db["bookmarks"].rows}
    assert spaces == {"story@Ada Penrose", "story@Cid Hale"}


def test_witnessed_questions_measure_knowing_too_much(store):
    from bookmarks.evaluation.mcq import run_mcq
    from bookmarks.stories.story import Question

    story = play_story()
    story.questions = [Question(
        id="w01", after=14, character="Ben Carne", question="Where is the key?",
        options={"A": "Under the third stone", "B": "He does not know"}, answer="B",
        evidence=[5], witnessed=True, omniscient_answer="A")]
    sid = store.add_story(story)
    assert store.questions(sid)[0].omniscient_answer == "A"

    class Omniscient(ScriptedMemory):  # always answers with what was on stage at 5
        def __call__(self, request):
            return "A" if self.kind(request) == "mcq" else super().__call__(request)

    fake = ScriptedFakeModel(default=Omniscient())
    llms = {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}
    run = run_sync(run_mcq(store, llms, sid, method="vanilla", knowledge="witnessed"))
    s = run["summary"]
    assert s["witnessed_items"] == 1 and s["knew_too_much"] == 100 and s["accuracy"] == 0
    assert run["params"]["knowledge"] == "witnessed"


def test_an_apostrophe_to_someone_absent_is_no_entrance():
    """In a play that writes its entrances, "Ada, forgive me" said alone does not bring
    Ada on stage; in a text without directions, a name addressed counts as present."""
    actions = [Action(index=1, character="narration", text="Enter CID.", chapter="S"),
               Action(index=2, character="Cid Hale", text="Ada, forgive me. I sank it.",
                      chapter="S")]
    assert derive(actions, CAST)[2] == {"Cid Hale"}
    plain = [Action(index=1, character="Cid Hale", text="Ada, look at this.", chapter="S")]
    assert derive(plain, CAST)[1] == {"Cid Hale", "Ada Penrose"}


def test_jsonl_carries_presence_and_act_scene_chapters(store):
    from bookmarks.stories.importers import parse_story

    lines = [
        {"character": "Ada", "text": "The key is under the stone.", "act": 1, "scene": 1,
         "present": ["Ada", "Ben"]},
        {"character": "Ben", "text": "I will not tell Cid.", "act": 1, "scene": 2,
         "present": ["Ben"]},
    ]
    story = parse_story("\n".join(json.dumps(x) for x in lines).encode(), "s.jsonl")
    story.characters = CAST
    story.actions = [a.model_copy(update={"character": {"Ada": "Ada Penrose",
                                                         "Ben": "Ben Carne"}[a.character]})
                     for a in story.actions]
    assert [a.chapter for a in story.actions] == ["Act 1, Scene 1", "Act 1, Scene 2"]
    sid = store.add_story(story)
    assert store.presence(sid) == {"Ada Penrose": [(1, 1)], "Ben Carne": [(1, 2)]}
    bad = '{"character": "Ada", "text": "x", "present": "Ada"}'
    with pytest.raises(Exception, match="line 1"):
        parse_story(bad.encode(), "bad.jsonl")

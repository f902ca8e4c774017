"""No prediction fails because the model wrote something invalid (issue 25).

A scripted worst-case model proposes only pronoun titles, answers every match,
synchronization, summary and selection with invalid JSON, and echoes its prompt as the
actor: every prediction of every method completes, with the fallbacks recorded. Only an
actor that never gives a line fails a prediction, after its re-asks. The actor's cleaner
is tested against every prompt template the app has, collected from the builders.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys

import pytest

from bookmarks.engine import prompts
from bookmarks.engine.actor import (
    PLACEHOLDER,
    PLACEHOLDER_NUMBER,
    Line,
    act,
    actor_messages,
    app_words,
    clean_reply,
    echoes_prompt,
)
from bookmarks.engine.attribution import _messages as attribution_messages
from bookmarks.engine.grounding import Piece, compose
from bookmarks.engine.lineage import IndexedLine
from bookmarks.engine.method_bookmarks import full_names, resolve_pronouns
from bookmarks.engine.methods import METHODS
from bookmarks.errors import NoUsableLineError
from bookmarks.evaluation import evaluate, mcq
from bookmarks.evaluation.evaluate import run_nap
from bookmarks.evaluation.walk import walk
from bookmarks.memory import StateContent, StateNode, render_state
from bookmarks.models.llm import LENGTH_NOTE, run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory, WorstCaseMemory
from bookmarks.scenes.play import choose_speaker
from bookmarks.stories.story import Action, Character, Story
from tests.conftest import ROOT, STORIES, make_llm
from tests.engine_helpers import generated_story, ground, kinds

POINTS = [41, 43, 47, 101, 103, 151]  # Ada's lines, in story order
MEMORY_METHODS = [m for m in METHODS if m not in ("vanilla", "ricl")]


@pytest.fixture
def story_id(store):
    return store.add_story(generated_story())


def llms(store, script):
    fake = ScriptedFakeModel(default=script)
    return {role: make_llm(fake, store, role=role) for role in ("memory", "actor", "judge")}


# -- every prediction completes --------------------------------------------------------------

@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_completes_every_prediction_on_the_worst_model(store, story_id, method):
    script = WorstCaseMemory()  # pronoun titles, invalid JSON, echo then a line
    records = []
    summary = run_sync(walk(store, llms(store, script), story_id, method=method, at=POINTS,
                            on_point=records.append)).as_dict()
    assert summary["failed"] == 0 and summary["points"] == len(POINTS)
    assert all(r["prediction"].startswith("I will see to it myself") for r in records)
    # each line was an echo of the prompt first, rejected and re-asked once
    assert summary["reasked_lines"] == len(POINTS) and summary["reasked_share"] == 1.0
    assert all(r["actor_tries"] == 2 and "app's own words" in r["rejected"][0]["reason"]
               for r in records)
    if method in MEMORY_METHODS:
        assert summary["points_with_fallback"] == len(POINTS), records
        assert summary["fallback_share"] == 1.0
    else:
        assert summary["points_with_fallback"] == 0 and summary["fallbacks"] == {}


def test_a_walk_in_parts_goes_on_with_its_memory(store, story_id):
    """benchmarks/degrade_walk.py walks point by point, every method in turn."""
    models = llms(store, WorstCaseMemory(WorstCaseMemory.UNREPAIRABLE))
    first = run_sync(walk(store, models, story_id, method="bookmarks", at=POINTS[:1]))
    records = []
    run_sync(walk(store, models, story_id, method="bookmarks", at=POINTS[1:2],
                  space=first.space, on_point=records.append))
    assert records[0]["reused"] and not records[0]["initialized"]


def test_the_fallbacks_are_recorded_by_step(store, story_id):
    summary = run_sync(walk(store, llms(store, WorstCaseMemory()), story_id,
                            method="bookmarks", at=POINTS)).as_dict()
    # propose: repaired ("his plan" → "Ada's plan"); sync: the state could not be read
    assert summary["fallbacks"]["propose"] == len(POINTS)
    assert summary["fallbacks"]["sync"] >= len(POINTS)
    eta3 = run_sync(walk(store, llms(store, WorstCaseMemory()), story_id, method="eta3",
                         at=POINTS[:2])).as_dict()
    assert eta3["fallbacks"]["select"] == 2 and eta3["fallbacks"]["sync"] >= 2


def test_an_actor_that_only_echoes_still_completes_every_prediction(store, story_id):
    """No line of the character at all, ever: each point completes with a stand-in line,
    recorded as a fallback of step `act` with the reasons, after the bounded re-asks."""
    script = WorstCaseMemory(actor="echo")
    summary = run_sync(walk(store, llms(store, script), story_id, method="bookmarks",
                            at=POINTS[:3])).as_dict()
    assert summary["failed"] == 0 and summary["points"] == 3
    assert summary["fallbacks"]["act"] == 3
    assert script.counts["act"] == 3 * 4
    records = store.db["walk_records"].rows if "walk_records" in store.db.table_names() else []
    for r in records:
        assert "[Ada hesitates and says nothing.]" in json.dumps(r)


def test_nap_completes_and_counts_fallbacks_and_re_asked_lines(store, story_id):
    run = run_sync(run_nap(store, llms(store, WorstCaseMemory()), story_id, method="bookmarks",
                           characters=["Ada"], span=(40, 110)))
    s = run["summary"]
    assert run["status"] == "done" and s["unusable_predictions"] == 0
    assert s["points_with_fallback"] == s["items"] > 0 and s["fallback_share"] == 1.0
    assert s["reasked_lines"] == s["items"] and s["reasked_share"] == 1.0
    record = store.records(run["id"])[0]
    assert record["actor_tries"] == [2] and {f["step"] for f in record["fallbacks"]} >= {"propose"}


def test_nap_judges_a_stand_in_for_an_actor_that_only_echoes_and_counts_it(store, story_id):
    run = run_sync(run_nap(store, llms(store, WorstCaseMemory(actor="echo")), story_id,
                           method="vanilla", characters=["Ada"], span=(40, 50)))
    s = run["summary"]
    assert run["status"] == "done" and s["unusable_predictions"] == 0
    assert s["stand_in_predictions"] == s["items"] > 0
    assert s["points_with_fallback"] == s["items"]
    for record in store.records(run["id"]):
        assert record["predictions"] == ["[Ada hesitates and says nothing.]"]
        assert [f["step"] for f in record["fallbacks"]] == ["act"]


# -- what degrades, and how -------------------------------------------------------------------

def test_a_pronoun_proposal_is_repaired_through_the_cast(store, story_id):
    llm = make_llm(ScriptedFakeModel(default=WorstCaseMemory()), store)
    g = ground(store, llm, story_id, 100)
    assert [(e["title"], e["type"], e["subject"]) for e in kinds(g, "proposed")] == \
        [("Ada's plan", "state", "Ada")]
    (fallback,) = [f for f in kinds(g, "fallback") if f["step"] == "propose"]
    assert fallback["outcome"] == "repaired proposal: Ada's plan"
    assert "without pronouns" in fallback["reason"]
    (repaired,) = kinds(g, "repaired")
    assert {"title": "his plan", "to": "Ada's plan"} in repaired["changes"]


def test_nothing_valid_left_falls_back_to_sections_that_always_make_sense(store, story_id):
    llm = make_llm(ScriptedFakeModel(default=WorstCaseMemory(WorstCaseMemory.UNREPAIRABLE)),
                   store)
    g = ground(store, llm, story_id, 101)  # Ben spoke last
    assert [(e["title"], e["type"], e["subject"]) for e in kinds(g, "proposed")] == [
        ("Ada's current goal and state", "state", "Ada"), ("Who Ben is", "concept", "Ben"),
        ("How Ada speaks and acts", "behavioral", "Ada")]
    (fallback,) = [f for f in kinds(g, "fallback") if f["step"] == "propose"]
    assert fallback["outcome"].startswith("fallback sections: Ada's current goal and state")
    # the same titles next time: reused, not initialized again
    g2 = ground(store, llm, story_id, 103)
    assert len(kinds(g2, "reused")) == 3 and not kinds(g2, "initialized")


def test_fallback_sections_keep_to_the_budget_and_the_ablation(store, story_id):
    llm = make_llm(ScriptedFakeModel(default=WorstCaseMemory(WorstCaseMemory.UNREPAIRABLE)),
                   store)
    g = ground(store, llm, story_id, 101, method="bookmarks-nostate", budget=2)
    assert [(e["title"], e["type"]) for e in kinds(g, "proposed")] == [
        ("Who Ben is", "concept"), ("How Ada speaks and acts", "behavioral")]


def test_an_empty_proposal_is_valid_and_no_fallback(store, story_id):
    llm = make_llm(ScriptedFakeModel(default=ScriptedMemory(sections=lambda _: [])), store)
    g = ground(store, llm, story_id, 100)
    assert not kinds(g, "proposed") and not kinds(g, "fallback")


def test_an_invalid_match_decision_reuses_the_candidate_without_remembering(store, story_id):
    script = ScriptedMemory(sections=[{"title": "Ada's plan for the harbour", "type": "state",
                                       "subject": "Ada"}])
    llm = make_llm(ScriptedFakeModel(default=script), store)
    first = ground(store, llm, story_id, 100)
    (init,) = kinds(first, "initialized")
    worst = WorstCaseMemory([{"title": "Ada's plan for the harbour gate", "type": "state",
                              "subject": "Ada"}])
    g = ground(store, make_llm(ScriptedFakeModel(default=worst), store), story_id, 150)
    (reused,) = kinds(g, "reused")
    assert reused["bookmark"] == init["bookmark"] and reused["from_p"] == 99
    (fallback,) = [f for f in kinds(g, "fallback") if f["step"] == "match"]
    assert fallback["outcome"].startswith("reused “Ada's plan for the harbour”")
    assert store.match_decisions(story_id, "test") == {}


def test_a_sync_that_cannot_go_forward_keeps_the_last_good_version(store, story_id):
    section = {"title": "Harbour gate schedule", "type": "concept", "subject": "harbour gate"}
    llm = make_llm(ScriptedFakeModel(default=ScriptedMemory(sections=[section])), store)
    init = kinds(ground(store, llm, story_id, 100), "initialized")[0]["bookmark"]
    good = store.bookmark_history(init)[-1]
    g = ground(store, make_llm(ScriptedFakeModel(default=WorstCaseMemory([section])), store),
               story_id, 200)
    (sync,) = kinds(g, "synchronized")
    assert sync["p_old"] == 99 and sync["p_new"] < 199
    (fallback,) = [f for f in kinds(g, "fallback") if f["step"] == "sync"]
    assert "kept the version as of action" in fallback["outcome"]
    assert "not a description" in fallback["reason"]
    # the grounding still shows the last good one
    assert json.loads(good["content"])["description"] in g.text
    assert store.bookmark_history(init)[-1]["content"] == good["content"]


def test_an_echoed_profile_keeps_the_last_good_profile(store, story_id):
    good = make_llm(ScriptedFakeModel(default=ScriptedMemory()), store)
    ground(store, good, story_id, 100, method="eta")
    g = ground(store, make_llm(ScriptedFakeModel(default=WorstCaseMemory()), store), story_id,
               200, method="eta")
    (fallback,) = kinds(g, "fallback")
    assert fallback["step"] == "sync" and fallback["outcome"].startswith("kept the profile as of "
                                                                         "action 99")
    assert "Profile, update" in g.text


@pytest.mark.parametrize("title,subject,expected", [
    ("his plan", "Tobias Crane", "Tobias Crane's plan"),
    ("What she wants", "", "What Maren Voss wants"),
    ("Feelings for her", "Elsbeth Harrow", "Feelings for Elsbeth Harrow"),
    ("my debt", "someone", "Maren Voss's debt"),
    ("Her feelings for him", "Tobias Crane", None),  # two people: cannot tell who
    ("its cost", "the bridge", None),
])
def test_pronouns_resolve_through_the_cast(title, subject, expected):
    assert resolve_pronouns(title, subject, long_play_cast(), "Maren Voss") == expected


@pytest.mark.parametrize("title,expected", [
    ("Grint's debt", "Silas Grint's debt"),
    ("Hester Grint's husband", "Hester Grint's husband"),  # another full name stays
    ("Mistress Voss and the ledger", "Maren Voss and the ledger"),
    ("Toby and Bess", "Tobias Crane and Elsbeth Harrow"),
    ("The Long Winter", "The Long Winter"),
])
def test_short_names_are_written_out_through_the_cast(title, expected):
    assert full_names(title, long_play_cast()) == expected


def long_play_cast() -> list[Character]:
    meta = json.loads((STORIES / "the_long_winter_at_harrowgate.meta.json").read_text())
    return [Character(**c) for c in meta["characters"]]


# -- the app's own words are not lines ---------------------------------------------------------

SCENE = [Line("Tobias Bell", "Where is the boat?"), Line("narration", "Rain.")]
LINES = [IndexedLine("Tobias Bell", "Where is the boat?", 3), IndexedLine("narration", "Rain.", 4)]


def render(fn, value: str, number: int, lines: list[IndexedLine]) -> list[dict[str, str]]:
    """A builder outside prompts.py called with sample arguments, found by its signature
    (a story's index: its quoted paragraph)."""
    samples = {"str": value, "int": number, "list[IndexedLine]": lines,
               "dict[str, str]": {"A": value, "B": value}, "Story": story_for(value)}
    kw = {p.name: samples[p.annotation] for p in inspect.signature(fn).parameters.values()
          if p.default is inspect.Parameter.empty}
    if "story" in kw and isinstance(kw["story"], Story):
        kw["index"] = 2
    return fn(**kw)


def story_for(value: str) -> Story:
    return Story(title=value, characters=[Character(name="Mara"), Character(name="Tobias Bell")],
                 actions=[Action(index=1, character="Tobias Bell", text="Where is the boat?"),
                          Action(index=2, character="narration", text=f'"{value}," said one.')])


def grounding_text(value: str) -> str:
    state = StateContent(nodes=[StateNode(text=value, start=1, end=4)])
    return compose([Piece(label=f"Mara's plan (#new, state, as of action {PLACEHOLDER_NUMBER})",
                          text=render_state(state)[0])])[0]


def every_template(value: str, number: int, lines: list[IndexedLine]) -> list[tuple[str, str]]:
    """(where, text) of every prompt the app builds: the memory prompts (every builder of
    prompts.py), the actor's, the judge's and MCQ's, attribution's, and the notes the model
    layer adds (schema hint, repair re-ask, length note), captured from the requests it sends."""
    out = [(name, m["content"]) for name, msgs in prompts.templates(value, number, lines)
           for m in msgs]
    out += [("actor", m["content"]) for m in actor_messages(
        story_title=value, character=value, scene=[Line(x.character, x.text) for x in lines],
        grounding=grounding_text(value), setting=value)]
    for fn in (evaluate.judge_messages, mcq.mcq_messages, attribution_messages):
        out += [(fn.__name__, m["content"]) for m in render(fn, value, number, lines)]
    for d in evaluate.DIMENSIONS:
        out += [("dimension", m["content"]) for m in evaluate.dimension_messages(
            dimension=d, story=value, character=value, scene=lines, reference=value,
            prediction=value)]
    fake = ScriptedFakeModel(["not json", "still not json"])
    with pytest.raises(Exception, match="invalid"):
        run_sync(make_llm(fake).structured([{"role": "user", "content": value}], Probe,
                                           purpose="probe"))
    # the notes it adds to a request: the schema hint, the repair re-ask (its problem is
    # pydantic's words, standing in for what the story gives)
    notes = [m["content"].removeprefix(value) for m in fake.history[-1].messages
             if m["role"] == "user"]
    out += [("model layer", re.sub(r"not valid \(.*\)\. Reply", f"not valid ({value}). Reply",
                                   note)) for note in notes]
    out.append(("length note", LENGTH_NOTE))
    return out


class Probe(evaluate.Answer):
    pass


def fragments(text: str) -> list[str]:
    """The app's own sentences and clauses of a template rendered with the placeholder."""
    parts = re.split(rf"{PLACEHOLDER}|{PLACEHOLDER_NUMBER}|\n|(?<=[.?!:])\s", text)
    return [p.strip() for p in parts if len(re.findall(r"[A-Za-z']+", p)) >= 4]


def test_every_prompt_builder_is_collected():
    names = {name for name, _ in prompts.templates()}
    assert names == set(prompts.builders()) and len(names) >= 9


def test_no_clause_of_any_template_is_a_line():
    texts = every_template(PLACEHOLDER, PLACEHOLDER_NUMBER,
                           [IndexedLine(PLACEHOLDER, PLACEHOLDER, PLACEHOLDER_NUMBER)])
    found = {(where, f) for where, t in texts for f in fragments(t)}
    assert len(found) > 60
    kept = [(where, f) for where, f in found
            if clean_reply(f, "Mara", others=["Tobias Bell"], scene=SCENE)[0] is not None]
    assert kept == []


def test_no_template_nor_paragraph_of_one_is_a_line():
    texts = every_template("Mara", 27, LINES)
    candidates = {t for _, t in texts} | {p for _, t in texts for p in t.split("\n\n")}
    kept = [c for c in candidates if clean_reply(c, "Mara", others=["Tobias Bell"],
                                                 scene=SCENE)[0] is not None]
    assert kept == []


def test_the_speaker_prompt_is_not_a_line(store, story_id):
    scene = store.create_scene(story_id, start_point=50, cast=["Ada", "Ben", "Cora"])
    fake = ScriptedFakeModel(default='{"speaker": "Ben"}')
    run_sync(choose_speaker(store, make_llm(fake), store.scene(scene.id)))
    prompt = fake.history[0].messages[-1]["content"]
    for text in [prompt, *prompt.split("\n\n")]:
        assert clean_reply(text, "Ada", others=["Ben", "Cora"])[0] is None


@pytest.mark.parametrize("raw", [
    "The King's Last Words (now)",
    "Mara's plan (now)",
    "Your previous reply was cut off at the length limit. Answer again, much shorter…",
    "Mara: Your previous reply to this was cut off at the length limit.",
    "1. Mara's next line: It sank at noon.",
    "2) Mara's next line: It sank.",
    "Mara's next line: It sank.",
    '{"sections": [{"title": "Mara\'s plan"}]}',
    "## Mara's plan (#4, state, as of action 27)",
    "[12] after \"Where is the boat?\" → Mara: It sank.",
    "Mara's plan",  # a section title of the grounding, alone
])
def test_echoes_are_rejected(raw):
    text, reason = clean_reply(raw, "Mara", others=["Tobias Bell"], scene=SCENE,
                               titles=["Mara's plan"])
    assert text is None, reason


def test_a_title_in_a_real_line_is_not_an_echo():
    text, _ = clean_reply("I have no plan, Tobias, only the rain.", "Mara",
                          titles=["Mara's plan"])
    assert text == "I have no plan, Tobias, only the rain."


def test_lines_of_the_bundled_stories_are_never_the_apps_words():
    lines = []
    for name in ("the_long_winter_at_harrowgate.txt", "the_night_ferry.txt"):
        lines += [m.group(1) for m in re.finditer(r"^[A-Z][A-Z .'-]+:\s*(.+)$",
                                                  (STORIES / name).read_text(), re.MULTILINE)]
    for row in (STORIES / "saltmarsh_lighthouse.jsonl").read_text().splitlines():
        lines.append(json.loads(row)["text"])
    assert len(lines) > 1000
    assert [ln for ln in lines if app_words(ln)] == []


def test_a_description_that_is_the_prompt_is_not_one():
    assert echoes_prompt('{"decision": "reuse"')
    assert echoes_prompt("Write the updated description of the lamp in at most 120 words. "
                         "Keep what is still true, add what the passages reveal.")
    assert not echoes_prompt("The lamp is the lighthouse's great lens, tended by Ada Penrose.")


def test_an_echo_is_re_asked_with_a_note_and_a_line_accepted():
    fake = ScriptedFakeModel(["Write Mara's next line.", LENGTH_NOTE, "It sank at noon."])
    result = run_sync(act(make_llm(fake, role="actor"), story_title="T", character="Mara",
                          scene=SCENE, grounding=grounding_text("The boat is gone.")))
    assert result.text == "It sank at noon." and result.tries == 3
    assert "Only Mara's own words" in fake.prompts[1]
    assert all("app's own words" in why for _, why in result.rejected)


def test_an_actor_echoing_every_time_fails_clearly_without_a_stand_in():
    fake = ScriptedFakeModel(default=LENGTH_NOTE)
    with pytest.raises(NoUsableLineError, match="app's own words"):
        run_sync(act(make_llm(fake, role="actor"), story_title="T", character="Mara",
                     scene=SCENE, stand_in=False))
    assert len(fake.history) == 4
    result = run_sync(act(make_llm(ScriptedFakeModel(default=LENGTH_NOTE), role="actor"),
                          story_title="T", character="Mara", scene=SCENE))
    assert result.fallback and "app's own words" in result.fallback


# -- the walk of every method, scripted (benchmarks/degrade_walk.py --scripted) ---------------

def test_varied_pronoun_proposals_ask_match_decisions_that_fall_back(store, story_id):
    summary = run_sync(walk(store, llms(store, WorstCaseMemory(vary=True)), story_id,
                            method="bookmarks", at=POINTS)).as_dict()
    assert summary["failed"] == 0 and summary["fallbacks"]["match"] > 0


def test_the_scripted_degrade_walk_completes_and_counts(tmp_path):
    out = tmp_path / "walk.json"
    run = subprocess.run([sys.executable, "benchmarks/degrade_walk.py", "--scripted",
                          "echo-then-long", "--points", "3", "--methods", "bookmarks,eta3",
                          "--out", str(out)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT, env={**os.environ, "BOOKMARKS_DATA_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr[-2000:]
    rows = {r["method"]: r for r in json.loads(out.read_text())["rows"]}
    assert all(r["points"] == 3 and r["failed"] == 0 and r["trimmed_lines"] == 3
               for r in rows.values())
    assert rows["eta3"]["fallbacks_by_step"]["select"] == 3


def test_a_stopped_degrade_walk_resumes_without_walking_its_points_again(tmp_path):
    out = tmp_path / "walk.json"

    def walk_(*more):
        return subprocess.run([sys.executable, "benchmarks/degrade_walk.py", "--scripted",
                               "--methods", "bookmarks-noreuse", "--out", str(out), *more],
                              capture_output=True, text=True, timeout=300, cwd=ROOT,
                              env={**os.environ, "BOOKMARKS_DATA_DIR": str(tmp_path)})

    assert walk_("--points", "2").returncode == 0
    before = json.loads(out.read_text())
    run = walk_("--points", "3", "--resume")
    assert run.returncode == 0, run.stderr[-2000:]
    after = json.loads(out.read_text())
    assert after["points"][:2] == before["points"] and len(after["points"]) == 3
    assert [r["point"] for r in after["records"]["bookmarks-noreuse"]] == after["points"]
    assert after["records"]["bookmarks-noreuse"][:2] == before["records"]["bookmarks-noreuse"]
    row = after["rows"][0]
    assert row["points"] == 3 and row["failed"] == 0
    assert row["actor_tries"] > before["rows"][0]["actor_tries"]  # the figures add up
    assert after["resumed"] == [{"at": after["points"][2], "memory": "started empty"}]
    # another walk (other methods, budget or points) is refused with the reason, not mixed in
    other = walk_("--points", "3", "--resume", "--budget", "5")
    assert other.returncode != 0 and "budget" in other.stderr
    assert json.loads(out.read_text()) == after

"""Long stories: every request fits the context, every sync makes progress, memory matches
the turns that exist, behavioral scenes come from the lineage, nothing leaks across time
or branches (a property test over all methods), and the no-reuse ablation is measured."""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace

import pytest

from bookmarks.config import RoleConfig
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.matching import same_subject
from bookmarks.engine.method_bookmarks import _canonical, _concerns
from bookmarks.engine.methods import METHODS
from bookmarks.engine.recall import visible_bookmarks
from bookmarks.evaluation.walk import walk
from bookmarks.memory import Bookmark
from bookmarks.models.fitting import estimate_tokens
from bookmarks.models.llm import LLM, run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.play import fork_at, generate_turn, regenerate_last, undo_last
from bookmarks.stories.story import Action, Character, Story
from tests.conftest import _no_sleep, make_llm
from tests.engine_helpers import generated_story, ground, kinds

ADA_CONCEPT = {"title": "Ada the harbour pilot", "type": "concept", "subject": "Ada"}
ADA_STATE = {"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"}
ADA_HABITS = {"title": "Ada's habits of speech", "type": "behavioral", "subject": "Ada"}


def sized_llm(fake, store, context: int, role: str = "memory") -> LLM:
    return LLM(model=fake, config=RoleConfig(role=role, context_tokens=context),
               log=store.log_call, sleep=_no_sleep)


def worst_case_story(n: int) -> Story:
    """A name in every line; every 97th action is enormous; speakers alternate."""
    actions = []
    for i in range(1, n + 1):
        who = ("Ada", "Ben", "narration")[i % 3]
        text = f"Ada looks at the harbour, line {i}."
        if i % 97 == 0:
            text = f"Ada speaks at length, line {i}: " + "the tide and the gate and the lamp " * 400
        actions.append(Action(index=i, character=who, text=text))
    cast = [Character(name="Ada", major=True), Character(name="Ben", major=True)]
    return Story(title="Worst case", characters=cast, actions=actions)


def test_no_request_outgrows_the_context_on_20000_actions(store):
    sid = store.add_story(worst_case_story(20_000))
    # every reply as long as the budget allows: a cut reply is re-asked with more room
    script = ScriptedMemory(sections=[ADA_CONCEPT, ADA_STATE, ADA_HABITS])
    fake = ScriptedFakeModel(default=script, enforce_max_tokens=True)
    llm = sized_llm(fake, store, context=4096)
    g = ground(store, llm, sid, 19_990, commit=False)
    assert {e["type"] for e in kinds(g, "synchronized")} == {"concept", "state", "behavioral"}
    sizes = [estimate_tokens(r.messages) + r.max_tokens for r in fake.history]
    assert len(fake.history) > 100 and max(sizes) <= 4096, max(sizes)
    assert any("more characters cut]" in m["content"] for r in fake.history for m in r.messages)
    # a lead character's mentions never become one window over the whole suffix
    assert 1 <= script.counts.get("concept", 0) <= 3  # refinements, alone or in a joint call
    # the grounding itself stays within its budget
    assert len(g.text) <= 1200 * 4 + 10


def test_cut_reply_is_asked_again_with_room_never_identically(store):
    sid = store.add_story(generated_story(200))
    script = ScriptedMemory(sections=[ADA_STATE])

    def reply(request):  # a state's answer (alone, or per block in one call) runs on
        if script.kind(request) in ("state", "first_state", "joint") and "cut off" not in \
                request.messages[-1]["content"]:
            return json.dumps({"decision": "append", "text": "word " * 400})
        return script(request)

    fake = ScriptedFakeModel(default=reply, enforce_max_tokens=True)
    g = ground(store, make_llm(fake, store), sid, 100)
    (sync,) = kinds(g, "synchronized")
    assert sync["p_new"] == 99 and not sync["stalled"]
    states = [r for r in fake.history if script.kind(r) in ("state", "first_state", "joint")]
    first, again = states[0], states[1]
    assert again.messages != first.messages and again.max_tokens > first.max_tokens


def test_a_block_that_cannot_be_synchronized_keeps_the_last_good_one(store):
    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=[ADA_STATE])
    broken = {"on": True}

    def reply(request):  # every block from action 129 on gets a reply cut at max_tokens
        text = request.messages[-1]["content"]  # (alone, or among the blocks of one call)
        if broken["on"] and script.kind(request) in ("state", "joint") and "[129]" in text:
            return '{"decision": "append", "text": "' + "x" * 5000
        return script(request)

    fake = ScriptedFakeModel(default=reply, enforce_max_tokens=True)
    llm = make_llm(fake, store)
    g = ground(store, llm, sid, 200)
    (sync,) = kinds(g, "synchronized")
    (stall,) = kinds(g, "sync_stalled")
    assert sync["p_new"] == 128 and stall["p"] == 128 and stall["behind"] == 199 - 128
    assert "State after" in g.text  # the actor is grounded with the bookmark as it stands
    broken["on"] = False  # the next prediction continues from the checkpoint
    g = ground(store, llm, sid, 210)
    (sync,) = kinds(g, "synchronized")
    assert (sync["p_old"], sync["p_new"]) == (128, 209) and not kinds(g, "sync_stalled")


def test_a_new_state_bookmark_gets_a_node_from_its_first_block(store):
    sid = store.add_story(generated_story(300))
    fake = ScriptedFakeModel(default=ScriptedMemory(sections=[ADA_STATE], state="unchanged"))
    g = ground(store, make_llm(fake, store), sid, 250)
    (bm,) = visible_bookmarks(store, sid, "test", Lineage.of(store, store.story(sid).trunk_id), 300)
    assert len(bm.content.nodes) == 1 and bm.content.nodes[0].end == 249
    assert g.text.strip()


def _scene_with_turns(store, sid, llms, fork: bool):
    scene = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    if fork:
        run_sync(generate_turn(store, llms, scene.id, "Ada"))
        scene = fork_at(store, scene.id)
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    store.add_turn(scene.id, character="Ben", text="Ben says the gate is sealed.", source="user")
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    return store.scene(scene.id)


@pytest.mark.parametrize("fork", [False, True], ids=["scene", "fork"])
@pytest.mark.parametrize("path", ["undo", "regenerate", "edit"])
def test_memory_matches_the_turns_that_exist(store, path, fork):
    sid = store.add_story(generated_story(300))
    fake = ScriptedFakeModel(default=ScriptedMemory(sections=[ADA_STATE]))
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = _scene_with_turns(store, sid, llms, fork)
    lineage = Lineage.of(store, scene.branch_id)
    turns = store.turns(scene.id)
    ben, last = turns[-2], turns[-1]
    # memory that has read the last turn (as background work or a later step would leave it)
    ground(store, llms["memory"], sid, last.idx + 1, lineage=lineage, space="story")
    assert max(v["p"] for v in store.db["bookmark_versions"].rows) == last.idx
    if path == "undo":
        undo_last(store, scene.id)
        undo_last(store, scene.id)  # Ben's line too
        removed, old = ben.idx, ben.text
        store.add_turn(scene.id, character="Ben", text="Ben says the gate is open.", source="user")
    elif path == "regenerate":
        run_sync(regenerate_last(store, llms, scene.id))
        removed, old = last.idx, last.text
    else:
        store.edit_turn(ben.id, "Ben says the gate is open.")
        removed, old = ben.idx, ben.text
    mine = [v for v in store.db["bookmark_versions"].rows if v["branch_id"] == scene.branch_id]
    assert mine and all(v["p"] < removed for v in mine)  # nothing that read a removed line
    new = store.turns(scene.id)[-1].text if path == "regenerate" else "Ben says the gate is open."
    before = len(fake.history)
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    syncs = [r for r in fake.history[before:] if "New actions" in r.messages[-1]["content"]
             or "Actions:" in r.messages[-1]["content"]]
    seen = "\n".join(m["content"] for r in syncs for m in r.messages)
    assert new in seen and old not in seen  # the next turn re-reads from a valid checkpoint


def test_behavioral_examples_keep_their_real_scene_across_checkpoints(store):
    sid = store.add_story(generated_story(300))
    fake = ScriptedFakeModel(default=ScriptedMemory(sections=[ADA_HABITS], keep=[1]))
    llm = make_llm(fake, store)
    ground(store, llm, sid, 100)
    ground(store, llm, sid, 104)  # suffix 100..103: Ada speaks at 101 and 103
    (bm,) = visible_bookmarks(store, sid, "test", Lineage.of(store, store.story(sid).trunk_id), 300)
    late = [e for e in bm.content.examples if e.index > 99]
    assert late and all(e.scene != "(start)" for e in late)
    assert "Line 99" in next(e.scene for e in late if e.index == 101)


def test_subjects_and_names_compare_as_words():
    cast = [Character(name="Ada Penrose", aliases=["Ada", "the inspector"]),
            Character(name="Adam Hale")]
    assert _canonical("the Ada", cast, "Adam Hale", "concept") == "Ada Penrose"
    assert _canonical("Ada's", cast, "Adam Hale", "state") == "Ada Penrose"
    assert same_subject("the lamp", "the lighthouse lamp") and not same_subject("lamp", "gate")
    bm = Bookmark(id=1, story_id=1, space="s", subject="Adam Hale", type="state",
                  title="Adam Hale's plans in Canada")
    assert not _concerns(bm, "Ada Penrose", cast)
    assert _concerns(replace(bm, title="What Ada knows"), "Ada Penrose", cast)


def test_lamp_and_lighthouse_lamp_can_be_one_bookmark(store):
    sid = store.add_story(generated_story(200))
    lamp = {"title": "The lighthouse lamp", "type": "concept", "subject": "the lighthouse lamp"}
    script = ScriptedMemory(sections=[lamp], decide="reuse")
    llm = make_llm(ScriptedFakeModel(default=script), store)
    ground(store, llm, sid, 100)
    script.sections = [{"title": "The lamp of the lighthouse", "type": "concept",
                        "subject": "the lamp"}]
    g = ground(store, llm, sid, 120)
    assert kinds(g, "reused") and len(store.bookmarks(sid, "test")) == 1


def test_proposal_names_only_characters_who_have_appeared(store):
    story = generated_story(300)
    story.characters.append(Character(name="Dora"))
    story.actions[249] = Action(index=250, character="Dora", text="Dora arrives.")
    sid = store.add_story(story)
    script = ScriptedMemory(sections=[ADA_STATE])
    fake = ScriptedFakeModel(default=script)
    ground(store, make_llm(fake, store), sid, 100, commit=False)
    (propose,) = [p for p, r in zip(fake.prompts, fake.history, strict=True)
                  if script.kind(r) == "propose"]
    assert "Cast: Ada, Ben, Cora." in propose and "Dora" not in propose


# -- leakage: a property test over all methods, on the trunk and on branches ------------
def tagged_story(n: int) -> Story:
    actions = [Action(index=i, character=("Ada", "Ben", "narration")[i % 3],
                      text=f"Harbour talk, mark tk{i}x, about the gate.") for i in range(1, n + 1)]
    return Story(title="Tagged", characters=[Character(name="Ada", major=True),
                                             Character(name="Ben", major=True)], actions=actions)


class EchoMemory(ScriptedMemory):
    """Proposes a title naming the latest mark it was shown, so a title that leaks to an
    earlier point or another branch carries a mark that must not be there (test double)."""

    def __call__(self, request):
        text = request.messages[-1]["content"]
        if self.kind(request) == "propose":
            marks = re.findall(r"(?:tk|br\d+t)(\d+)x", text)
            tag = max(re.finditer(r"(?:tk|br\d+t)(\d+)x", text), key=lambda m: int(m.group(1)),
                      default=None)
            seen = tag.group(0) if marks and tag else "nothing"
            return json.dumps({"sections": [
                {"title": f"Ada gate plan seen {seen}", "type": "state", "subject": "Ada"},
                {"title": "Harbour gate", "type": "concept", "subject": "harbour gate"},
                {"title": "Ada habits", "type": "behavioral", "subject": "Ada"}]})
        if self.kind(request) == "match":
            return json.dumps({"decision": "reuse"})
        return super().__call__(request)


def _forbidden(i: int, fork: int | None, branch_marks: dict[int, list[tuple[int, str]]],
               own: int | None, n: int) -> list[str]:
    trunk_end = i - 1 if fork is None else fork
    marks = [f"tk{j}x" for j in range(trunk_end + 1, n + 1)]
    for b, turns in branch_marks.items():
        marks += [m for idx, m in turns if b != own or idx >= i]
    return marks


@pytest.mark.parametrize("method", list(METHODS))
def test_no_request_sees_the_future_or_another_branch(store, method):
    rng = random.Random(7 + len(method))
    n = 240
    sid = store.add_story(tagged_story(n))
    fake = ScriptedFakeModel(default=EchoMemory())
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scenes = []
    branch_marks: dict[int, list[tuple[int, str]]] = {}
    for start in (60, 150):  # two sibling scenes, each with its own lines
        scene = store.create_scene(sid, start_point=start, cast=["Ada", "Ben"], method=method)
        branch_marks[scene.branch_id] = []
        for k in range(3):
            t = store.add_turn(scene.id, character="Ben", text=f"Ben: br{scene.branch_id}t{start + k}x "
                               "about the gate.", source="user")
            branch_marks[scene.branch_id].append((t.idx, f"br{scene.branch_id}t{start + k}x"))
        scenes.append(scene)
    trunk = store.story(sid).trunk_id
    for _ in range(10):
        if rng.random() < 0.5:
            i, lineage, fork, own = rng.randint(12, n), Lineage.of(store, trunk), None, None
        else:
            scene = rng.choice(scenes)
            i = scene.start_point + rng.randint(1, 4)  # inside the scene (or its next line)
            lineage, fork, own = Lineage.of(store, scene.branch_id), scene.start_point, scene.branch_id
        before = len(fake.history)
        g = ground(store, llms["memory"], sid, i, method=method, lineage=lineage, space="story")
        run_sync(llms["actor"].text([{"role": "user", "content": g.text + " next line."}],
                                    purpose="act"))
        sent = "\n".join(m["content"] for r in fake.history[before:] for m in r.messages)
        leaked = [m for m in _forbidden(i, fork, branch_marks, own, n) if m in sent]
        assert not leaked, (method, i, fork, leaked[:5])


def test_no_reuse_ablation_is_measured_next_to_the_estimate(store):
    sid = store.add_story(generated_story(400))
    sections = [ADA_STATE, ADA_HABITS,
                {"title": "Harbour gate", "type": "concept", "subject": "harbour gate"}]
    at = [121, 201, 281, 361]  # Ada speaks at odd points
    runs = {}
    for method in ("bookmarks", "bookmarks-noreuse"):
        fake = ScriptedFakeModel(default=ScriptedMemory(sections=sections))
        runs[method] = run_sync(walk(store, {"memory": make_llm(fake, store),
                                             "actor": make_llm(fake, store, role="actor")},
                                     sid, method=method, at=at, predict=False, use_cache=False))
    reuse, fresh = runs["bookmarks"], runs["bookmarks-noreuse"]
    assert fresh.reused == 0 and fresh.initialized == reuse.initialized + reuse.reused
    assert fresh.actions_read == reuse.actions_read_without_reuse  # exact
    assert reuse.sync_calls_without_reuse > reuse.sync_calls
    # the estimate is close to what running without reuse really costs
    assert 0.6 <= fresh.tokens / reuse.tokens_without_reuse <= 1.5, (fresh.tokens,
                                                                      reuse.tokens_without_reuse)
    assert 0.6 <= fresh.sync_calls / reuse.sync_calls_without_reuse <= 1.5
    assert fresh.tokens > 2 * reuse.tokens


def test_the_panel_says_how_far_a_stalled_sync_got(store):
    from bookmarks.scenes.panel import turn_activity
    from ui.panel import activity_html

    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=[ADA_STATE])

    def reply(request):  # the block holding action 129 can never be read
        if script.kind(request) in ("state", "joint") and "[129]" in request.messages[-1]["content"]:
            return '{"decision": "append", "text": "' + "x" * 5000
        return script(request)

    fake = ScriptedFakeModel(default=reply, enforce_max_tokens=True)
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=200, cast=["Ada", "Ben"], method="bookmarks")
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada"))  # the actor still answers
    html = activity_html(turn_activity(store, turn.id))
    assert "synchronized to p 128, 72 actions behind" in html


def test_context_reported_by_the_server_is_used_over_real_http(store):
    """A vLLM-like server reports max_model_len 2,048 and answers HTTP 400 past it."""
    from bookmarks.models.transport import OpenAIChatModel
    from tests.fake_server import scripted_server

    sid = store.add_story(worst_case_story(3_000))
    script = ScriptedMemory(sections=[ADA_CONCEPT, ADA_STATE, ADA_HABITS])
    with scripted_server(script, context=2048) as url:
        model = OpenAIChatModel(model="scripted", base_url=url, api_key="k")
        llm = LLM(model=model, config=RoleConfig(role="memory"), log=store.log_call,
                  sleep=_no_sleep)
        g = ground(store, llm, sid, 2_990, commit=False)
    assert llm.context_tokens == 2048
    assert len(kinds(g, "synchronized")) == 3 and not kinds(g, "sync_stalled")
    failed = store.db.execute("SELECT COUNT(*) FROM llm_calls WHERE ok = 0").fetchone()[0]
    assert failed == 0


def test_a_decision_word_is_never_written_as_the_state(store):
    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=[ADA_STATE])

    def reply(request):  # "refine" with the decision word as its text, for every block
        if script.kind(request) == "state":
            return json.dumps({"decision": "refine", "text": "Unchanged."})
        if script.kind(request) == "joint":
            parts = script.joint(request)
            return json.dumps({k: {"decision": "refine", "text": "Unchanged."}
                               if "decision" in v else v for k, v in parts.items()})
        return script(request)

    fake = ScriptedFakeModel(default=reply)
    g = ground(store, make_llm(fake, store), sid, 250)
    (bm,) = visible_bookmarks(store, sid, "test", Lineage.of(store, store.story(sid).trunk_id), 300)
    assert [n.text for n in bm.content.nodes] == ["State after update 1."]
    assert bm.content.nodes[0].end == 249 and "Unchanged" not in g.text

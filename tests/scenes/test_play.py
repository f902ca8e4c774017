"""Scene operations: next speaker, undo, regenerate, edit, fork — and the panel data."""

from __future__ import annotations

import pytest

from bookmarks.errors import ModelError
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.panel import (
    bookmark_list,
    bookmark_timeline,
    cost_meter,
    edit_bookmark,
    scene_storyline,
    turn_activity,
)
from bookmarks.scenes.play import (
    add_user_turn,
    choose_speaker,
    fork_at,
    generate_turn,
    regenerate_last,
    round_robin,
    undo_last,
)
from tests.conftest import make_llm
from tests.engine_helpers import generated_story

SECTIONS = [{"title": "Harbour gate schedule", "type": "concept", "subject": "harbour gate"},
            {"title": "Ada's plans", "type": "state", "subject": "Ada"}]


@pytest.fixture
def setup(store):
    sid = store.add_story(generated_story(200))
    fake = ScriptedFakeModel(default=ScriptedMemory(sections=SECTIONS))
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    return store, llms, scene, fake


def test_two_turns_initialize_then_reuse_and_panel_shows_it(setup):
    store, llms, scene, _ = setup
    t1 = run_sync(generate_turn(store, llms, scene.id, "Ada"))
    t2 = run_sync(generate_turn(store, llms, scene.id, "Ben"))
    a1, a2 = turn_activity(store, t1.id), turn_activity(store, t2.id)
    assert [p["outcome"] for p in a1["proposed"]] == ["initialized", "initialized"]
    assert [p["outcome"] for p in a2["proposed"]] == ["reused", "reused"]
    assert a2["proposed"][0]["from_p"] == 150
    assert [(s["p_old"], s["p_new"]) for s in a2["syncs"]] == [(150, 151), (150, 151)]
    assert a1["grounding"] and a1["evidence"] and a1["calls"]["calls"] >= 3
    assert a1["state_changes"] and a1["state_changes"][0]["kind"] == "state_appended"
    meter = cost_meter(store, scene.id, t2.id)
    assert meter["scene"]["sync_tokens_without_reuse"] >= meter["scene"]["sync_tokens"] > 0
    assert meter["turn"]["saved"] > 0
    lines = scene_storyline(store, scene)
    assert [x["source"] for x in lines] == ["story"] * 3 + ["model", "model"]


def test_round_robin_and_model_choice(setup):
    store, llms, scene, fake = setup
    add_user_turn(store, scene.id, "Ada", "Hello.")
    assert round_robin(store, scene) == "Ben"
    assert round_robin(store, scene, user_character="Ada") == "Ben"
    fake.enqueue('{"speaker": "Nobody"}', '{"speaker": "Ada"}')
    assert run_sync(choose_speaker(store, llms["memory"], scene)) == "Ada"


def test_undo_regenerate_edit(setup):
    store, llms, scene, fake = setup
    t1 = run_sync(generate_turn(store, llms, scene.id, "Ada"))
    t2 = run_sync(regenerate_last(store, llms, scene.id))
    assert t2.idx == t1.idx and t2.text != t1.text and len(store.turns(scene.id)) == 1
    # a failing regeneration keeps the old line
    fake.default = ModelError("HTTP 401 bad key")
    with pytest.raises(ModelError):
        run_sync(regenerate_last(store, llms, scene.id))
    assert [t.text for t in store.turns(scene.id)] == [t2.text]
    assert undo_last(store, scene.id).id == t2.id and store.turns(scene.id) == []
    assert undo_last(store, scene.id) is None
    u = add_user_turn(store, scene.id, "Ben", "Original.")
    assert store.edit_turn(u.id, "Edited.").text == "Edited."


def test_fork_keeps_lines_and_memory_follows_the_branch(setup):
    store, llms, scene, _ = setup
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    t2 = run_sync(generate_turn(store, llms, scene.id, "Ben"))
    fork = fork_at(store, scene.id, t2.id)
    lines = scene_storyline(store, fork)
    assert [x["inherited"] for x in lines if x["turn_id"]] == [True, True]
    t3 = run_sync(generate_turn(store, llms, fork.id, "Ada"))
    assert t3.idx == t2.idx + 1 and store.turns(fork.id)[0].id == t3.id
    a3 = turn_activity(store, t3.id)
    assert [p["outcome"] for p in a3["proposed"]] == ["reused", "reused"]
    # the original scene never sees the fork's newer versions
    orig = {b["title"]: b["p"] for b in bookmark_list(store, scene)}
    forked = {b["title"]: b["p"] for b in bookmark_list(store, fork)}
    assert max(orig.values()) == t2.idx - 1 and max(forked.values()) == t3.idx - 1
    with pytest.raises(ValueError, match="forks"):
        store.delete_turn(t2.id)


def test_bookmark_edit_pin_and_timeline(setup):
    store, llms, scene, fake = setup
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    rows = bookmark_list(store, scene, kind="concept")
    (concept,) = rows
    edit_bookmark(store, scene, concept["id"], "The gate opens at low water only.", pinned=True)
    timeline = bookmark_timeline(store, scene, concept["id"])
    assert timeline["versions"][-1]["text"] == "The gate opens at low water only."
    assert "+The gate opens" in timeline["versions"][-1]["diff"]
    assert timeline["bookmark"]["pinned"] == 1
    add_user_turn(store, scene.id, "Ben", "The harbour gate creaks open.")
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    latest = bookmark_timeline(store, scene, concept["id"])["versions"][-1]["text"]
    assert latest.startswith("The gate opens at low water only.")  # the pinned text is kept
    assert bookmark_list(store, scene, title="nothing like it") == []


def test_unknown_character_is_a_clear_error(setup):
    from bookmarks.errors import NotFoundError
    from bookmarks.evaluation.walk import eligible_points

    store, llms, scene, _ = setup
    with pytest.raises(NotFoundError, match="'Nobody' is not a character"):
        run_sync(generate_turn(store, llms, scene.id, "Nobody"))
    with pytest.raises(NotFoundError, match="no character named 'Nobody'; its cast is Ada"):
        eligible_points(store, scene.story_id, ["Nobody"])


def test_fork_refuses_a_line_of_another_scene(setup):
    store, llms, scene, _ = setup
    other = store.create_scene(scene.story_id, start_point=120, cast=["Ada", "Ben"])
    foreign = add_user_turn(store, other.id, "Ada", "Elsewhere.")
    with pytest.raises(ValueError, match="not part of this scene"):
        fork_at(store, scene.id, foreign.id)


def test_panel_tells_this_turns_memory_from_everything_logged_since(store):
    """After a regenerate, the panel's memory figure is the turn's own (as in the cost
    meter); the calls logged since the previous line, discarded attempt included, are
    labelled as such."""
    from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
    from bookmarks.scenes.play import regenerate_last
    from tests.conftest import make_llm
    from tests.engine_helpers import generated_story
    from ui.panel import activity_html

    sid = store.add_story(generated_story(200))
    fake = ScriptedFakeModel(default=ScriptedMemory())
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    turn = run_sync(regenerate_last(store, llms, scene.id))
    act = turn_activity(store, turn.id)
    meter = cost_meter(store, scene.id, turn.id)
    own = act["usage"]["prompt_tokens"] + act["usage"]["completion_tokens"]
    assert own == meter["turn"]["memory_tokens"]
    assert act["calls"]["tokens"] > own  # the discarded first attempt is logged too
    html = activity_html(act)
    assert f"{own} tokens (as in the cost meter)" in html and "discarded attempts" in html


def test_a_turn_no_actor_try_gives_a_line_for_comes_as_a_stand_in_the_panel_names(store):
    """Degrade, never fail: the actor's every try is another speaker's line; the turn still
    comes, as a stand-in, and the panel shows it as a fallback of step `act` with why."""
    from ui.panel import activity_html

    sid = store.add_story(generated_story(200))
    script = ScriptedMemory(sections=SECTIONS)

    def other_speaker(request):
        return "Ben: not mine to say" if script.kind(request) == "act" else script(request)

    fake = ScriptedFakeModel(default=other_speaker)
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada"))
    assert turn.text == "[Ada hesitates and says nothing.]"
    act = turn_activity(store, turn.id)
    (fallback,) = [f for f in act["fallbacks"] if f["step"] == "act"]
    assert "spoke as 'Ben'" in fallback["reason"] and act["actor_tries"] == 4
    assert "a stand-in line" in activity_html(act)
    with pytest.raises(ModelError, match="no usable line for Ada"):  # the arena's way
        run_sync(generate_turn(store, llms, scene.id, "Ada", stand_in=False))

"""The store: schema from migrations, stories, scenes and turns that survive reopening."""

from __future__ import annotations

from bookmarks.errors import BookmarksError
from bookmarks.store import Store
from bookmarks.stories.importers import parse_story

STORY = parse_story(b"## One\nMARA: Hello.\nTOBIAS: Hi.\n[Rain.]\nMARA: Bye.\n", "s.txt")


def test_migrations_create_the_schema(tmp_path):
    store = Store(tmp_path / "a.db")
    db = store.db
    assert {"stories", "characters", "actions", "questions", "branches", "scenes", "turns",
            "turn_events", "bookmarks", "bookmark_versions", "llm_calls", "llm_cache",
            "settings"} <= set(db.table_names())
    assert db["actions"].pks == ["story_id", "idx"]
    assert set(db["bookmark_versions"].columns_dict) >= {"bookmark_id", "branch_id", "p", "content"}
    assert set(db["llm_calls"].columns_dict) >= {"role", "purpose", "model", "prompt_tokens",
                                                 "completion_tokens", "latency_ms", "ok", "error"}
    fks = {(fk.column, fk.other_table) for fk in db["turns"].foreign_keys}
    assert ("scene_id", "scenes") in fks and ("branch_id", "branches") in fks
    assert any(i.unique and i.columns == ["branch_id", "idx"] for i in db["turns"].indexes)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    applied = [r["name"] for r in db["_sqlite_migrations"].rows]
    assert applied[0] == "m001_initial"
    store.close()
    # reopening applies nothing twice
    again = Store(tmp_path / "a.db")
    assert [r["name"] for r in again.db["_sqlite_migrations"].rows] == applied


def test_story_round_trip_and_trunk(store):
    sid = store.add_story(STORY)
    info = store.story(sid)
    assert info.n_actions == 4 and info.trunk_id
    assert [a.character for a in store.actions(sid)] == ["Mara", "Tobias", "narration", "Mara"]
    assert store.actions(sid, 2, 3)[0].text == "Hi."
    assert store.action_counts(sid)["Mara"] == 2
    assert store.chapters(sid) == [("One", 1)]


def test_turns_persist_across_restart(tmp_path):
    path = tmp_path / "b.db"
    store = Store(path)
    sid = store.add_story(STORY)
    scene = store.create_scene(sid, start_point=2, cast=["Mara", "Tobias"])
    t1 = store.add_turn(scene.id, character="Mara", text="Wait.", source="user")
    t2 = store.add_turn(scene.id, character="Tobias", text="No.", source="model",
                        events=[{"kind": "grounded", "text": ""}])
    assert (t1.idx, t2.idx) == (3, 4)
    store.close()
    reopened = Store(path)
    turns = reopened.turns(scene.id)
    assert [(t.character, t.text, t.idx) for t in turns] == [("Mara", "Wait.", 3), ("Tobias", "No.", 4)]
    assert reopened.turn_events(turns[1].id) == [{"kind": "grounded", "text": ""}]
    assert reopened.list_scenes()[0].id == scene.id


def test_failed_turn_write_leaves_nothing(store):
    sid = store.add_story(STORY)
    scene = store.create_scene(sid, start_point=4, cast=["Mara"])
    try:
        store.add_turn(scene.id, character="Mara", text="x", source="model",
                       events=[{"no kind": 1}])
    except KeyError:
        pass
    assert store.turns(scene.id) == []
    assert store.db["turn_events"].count == 0


def test_merge_characters(store):
    sid = store.add_story(STORY)
    store.merge_characters(sid, "Mara", "Tobias")
    assert [c.name for c in store.characters(sid)] == ["Mara"]
    assert store.characters(sid)[0].aliases == ["Tobias"]
    assert store.action_counts(sid)["Mara"] == 3


def test_correct_a_lines_speaker_and_text(store):
    sid = store.add_story(STORY)
    assert store.correct_line(sid, 3, "tobias") == "Tobias"  # by any case of a name
    assert [a.character for a in store.actions(sid)] == ["Mara", "Tobias", "Tobias", "Mara"]
    assert store.correct_line(sid, 2, "Old  Ned", text=" Hi there. ") == "Old Ned"
    assert [c.name for c in store.characters(sid)] == ["Mara", "Tobias", "Old Ned"]
    assert store.actions(sid, 2, 2)[0].text == "Hi there."
    assert store.correct_line(sid, 4, "Narration") == "narration"
    assert store.action_counts(sid) == {"Mara": 1, "Tobias": 1, "Old Ned": 1, "narration": 1}
    presence = store.presence(sid)
    assert "Old Ned" in presence  # a speaker is present: derived again
    for bad, says in ((lambda: store.correct_line(sid, 9, "Mara"), "numbered 1 to 4"),
                      (lambda: store.correct_line(sid, 1, "  "), "Name the line"),
                      (lambda: store.correct_line(sid, 1, "Mara", text=" "), "cannot be empty")):
        try:
            bad()
        except BookmarksError as exc:
            assert says in str(exc)
        else:
            raise AssertionError(says)
    assert store.actions(sid, 1, 1)[0].character == "Mara"  # a refused correction changed nothing


def test_correcting_an_alias_gives_the_line_to_its_character(store):
    sid = store.add_story(STORY)
    store.merge_characters(sid, "Mara", "Tobias")  # Tobias is now an alias of Mara
    assert store.correct_line(sid, 3, "TOBIAS") == "Mara"
    assert [c.name for c in store.characters(sid)] == ["Mara"]


def test_delete_story_removes_everything(store):
    sid = store.add_story(STORY)
    scene = store.create_scene(sid, start_point=1, cast=["Mara"])
    store.add_turn(scene.id, character="Mara", text="x", source="user")
    store.delete_story(sid)
    assert store.list_stories() == [] and store.db["turns"].count == 0
    assert store.integrity_ok()


def test_settings_and_cache(store):
    store.set_setting("roles", {"actor": {"model": "m"}})
    assert store.get_setting("roles") == {"actor": {"model": "m"}}
    assert store.cache_get("k") is None
    store.cache_put("k", "m", "v")
    assert store.cache_get("k") == "v"

"""Read once, update many: a block of actions is read once for every bookmark that needs
it (one joint call, or consecutive calls with the block first), ranges are aligned to
absolute story positions, an invalid part of a joint reply is asked again alone, and the
block-major schedule commits the same versions as each bookmark on its own."""

from __future__ import annotations

import hashlib
import json

import pytest

from bookmarks.engine.joint_sync import SyncJob, bring_forward, ranges, resolve_mode
from bookmarks.engine.lineage import IndexedLine
from bookmarks.engine.sync import CostModel
from bookmarks.memory import Bookmark, StateContent, StateNode
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from tests.conftest import make_llm
from tests.engine import deterministic
from tests.engine_helpers import generated_story, ground, kinds

LINES = [IndexedLine("Ada" if i % 2 else "Ben",
                     f"Line {i}: the harbour gate." if i % 10 == 0 else f"Line {i} of talk.", i)
         for i in range(1, 301)]


def bookmark(n: int, kind: str = "state", p: int = 0, subject: str = "Ada") -> Bookmark:
    content = StateContent(nodes=[StateNode(text=f"Known at {p}.", start=1, end=p)]) \
        if kind == "state" and p else None
    return Bookmark(id=n, story_id=1, space="t", subject=subject, type=kind,
                    title=f"Section {n} about {subject}", p=p, content=content)


def job(bm: Bookmark, target: int, keys=("Ada",), emit=()) -> SyncJob:
    return SyncJob(bm, [ln for ln in LINES if bm.p < ln.index <= target], target, list(keys),
                   preceding=[ln for ln in LINES if ln.index <= bm.p][-2:], emit=tuple(emit),
                   mentioned_before=bm.p > 0)


def run(jobs, fake, mode, schedule="block", **kw):
    return run_sync(bring_forward(jobs, make_llm(fake), story="Generated", mode=mode,
                                  costs=CostModel(), schedule=schedule, **kw))


def test_ranges_are_aligned_to_story_positions_and_shared_cuts():
    assert ranges(0, 150, 64, set()) == [(1, 64), (65, 128), (129, 150)]
    # a bookmark behind catches up alone until it is aligned, then reads the same ranges
    assert ranges(40, 150, 64, set()) == [(41, 64), (65, 128), (129, 150)]
    assert ranges(100, 150, 64, {120}) == [(101, 120), (121, 128), (129, 150)]
    assert ranges(150, 150, 64, set()) == []


@pytest.mark.parametrize("n", [2, 4])
def test_a_block_is_requested_once_for_n_bookmarks(n):
    """The prompt tokens of one block for N bookmarks: joint ≈ one reading, separate ≈ N."""
    tokens = {}
    for mode in ("joint", "separate-like"):
        fake = ScriptedFakeModel(default=ScriptedMemory())
        if mode == "joint":
            run([job(bookmark(k, p=128), 192) for k in range(n)], fake, "joint")
            # every action of the block reached the model exactly once
            for ln in LINES[128:192]:
                assert sum(f"[{ln.index}] " in p for p in fake.prompts) == 1
        else:  # the same bookmarks, each read on its own
            for k in range(n):
                run([job(bookmark(k, p=128), 192)], fake, "joint")
        tokens[mode] = sum(sum(len(m["content"]) // 4 for m in r.messages) for r in fake.history)
        assert len(fake.history) == (1 if mode == "joint" else n)
    block = sum(len(f"[{ln.index}] {ln.character}: {ln.text}\n") for ln in LINES[128:192]) // 4
    assert tokens["separate-like"] - tokens["joint"] >= (n - 1) * block * 0.95
    assert tokens["joint"] < block + n * 250  # one block and a short part per bookmark


def test_prefix_mode_puts_the_block_first_in_consecutive_calls():
    fake = ScriptedFakeModel(default=ScriptedMemory())
    run([job(bookmark(k, p=128), 192) for k in range(3)], fake, "prefix")
    users = [r.messages[-1]["content"] for r in fake.history]
    head = users[0][:users[0].index("Section:")]
    assert len(users) == 3 and "[129] " in head and "[192] " in head
    assert all(u.startswith(head) for u in users)  # the longest common prefix is the block


def test_one_invalid_part_is_asked_again_alone():
    script = ScriptedMemory()

    def reply(request):
        if script.kind(request) == "joint":
            good = script.joint(request)
            good["s2"] = {"decision": "perhaps", "text": 7}  # invalid: only this part
            return json.dumps(good)
        return script(request)

    fake = ScriptedFakeModel(default=reply)
    jobs = [job(bookmark(1, p=128), 192), job(bookmark(2, p=128), 192),
            job(bookmark(3, "concept", p=128, subject="harbour gate"), 192, keys=["harbour gate"])]
    done = run(jobs, fake, "joint")
    kinds_asked = [script.kind(r) for r in fake.history]
    assert kinds_asked == ["joint", "state"]  # the second section alone, once
    assert "Section 2 about Ada" in fake.prompts[1] and "Section 1" not in fake.prompts[1]
    assert [d[-1].p_new for d in done] == [192, 192, 192]
    assert [d[-1].mode for d in done] == ["joint"] * 3
    reasked = [[e for e in d[-1].events if e["kind"] == "joint_part_reasked"] for d in done]
    assert [len(r) for r in reasked] == [0, 1, 0]
    # the costs add up to the calls really made
    assert sum(d[-1].calls for d in done) == 2
    assert sum(d[-1].prompt_tokens for d in done) == sum(
        sum(len(m["content"]) // 4 for m in r.messages) for r in fake.history)


def test_a_part_that_stays_invalid_keeps_that_bookmarks_last_good_version():
    script = ScriptedMemory()

    def reply(request):
        kind = script.kind(request)
        if kind == "joint":
            good = script.joint(request)
            for key in [k for k in good if k == "s1" or k.startswith("s1_")]:
                good[key] = {"decision": "perhaps"}  # every answer of the first section
            return json.dumps(good)
        if kind == "state" and "Section 1 about" in request.messages[1]["content"]:
            return '{"decision": "perhaps"'  # never valid, re-ask included
        return script(request)

    fake = ScriptedFakeModel(default=reply)
    done = run([job(bookmark(1, p=128), 250), job(bookmark(2, p=128), 250)], fake, "joint")
    first, second = done[0][-1], done[1][-1]
    assert (first.p_old, first.p_new) == (128, 128) and first.stalled
    assert first.content.nodes[-1].text == "Known at 128."  # its last good version
    assert second.p_new == 250 and not second.stalled
    assert any(e["kind"] == "sync_stalled" and e["behind"] == 122 for e in first.events)


def _deterministic(request) -> str:
    """Replies that are a function of the prompt alone, whatever the order of calls (a
    joint prompt's: of each section and block, see tests/engine/deterministic.py)."""
    text = request.messages[-1]["content"]
    if "Update each memory section below" in text:
        return deterministic.reply(request)
    h = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    if "Decide how the state changes" in text:
        return json.dumps({"decision": ("unchanged", "refine", "append")[h % 3],
                           "text": f"State {h % 997}."})
    if "Nothing is recorded for this section yet" in text:
        return json.dumps({"text": f"First state {h % 997}."})
    if "Write the updated description" in text:
        return f"Description {h % 997}."
    if "Which candidates are good examples" in text:
        return json.dumps({"keep": [1] if h % 2 else []})
    raise AssertionError(text[:200])


def _mixed_jobs():
    return [job(bookmark(1, p=0), 250), job(bookmark(2, p=40), 250),
            job(bookmark(3, p=100), 250),
            job(bookmark(4, "concept", p=60, subject="harbour gate"), 250,
                keys=["harbour gate"]),
            job(bookmark(5, "behavioral", p=0), 250)]


def test_block_major_commits_the_same_versions_as_the_per_bookmark_schedule():
    results = {}
    for schedule in ("block", "bookmark"):
        fake = ScriptedFakeModel(default=_deterministic)
        segments = run(_mixed_jobs(), fake, "prefix", schedule=schedule, concurrency=3)
        results[schedule] = [[(s.p_old, s.p_new, s.content.model_dump_json()) for s in d]
                             for d in segments]
        assert all(d[-1].p_new == 250 for d in segments)
    assert results["block"] == results["bookmark"]


def test_emit_points_keep_a_version_on_the_way():
    fake = ScriptedFakeModel(default=_deterministic)
    (segments,) = run([job(bookmark(1, p=0), 300, emit=(100, 200))], fake, "joint")
    assert [(s.p_old, s.p_new) for s in segments] == [(0, 100), (100, 200), (200, 300)]
    assert segments[0].content != segments[-1].content


def test_nearby_predictions_bring_every_reused_bookmark_forward_in_one_call(store):
    sid = store.add_story(generated_story())
    sections = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
                {"title": "Ben's plan for the gate", "type": "state", "subject": "Ben"},
                {"title": "The harbour gate", "type": "concept", "subject": "harbour gate"}]
    script = ScriptedMemory(sections=sections)
    fake = ScriptedFakeModel(default=script)
    llm = make_llm(fake)
    ground(store, llm, sid, 101)
    before = len(fake.history)
    g = ground(store, llm, sid, 104)  # three actions later, every section reused
    asked = [script.kind(r) for r in fake.history[before:]]
    assert asked == ["propose", "joint"]
    modes = {e["title"]: e["mode"] for e in kinds(g, "synchronized")}
    assert modes == {"Ada's standing with Ben": "joint", "Ben's plan for the gate": "joint",
                     "The harbour gate": "none"}  # not mentioned in 101–103: nothing to ask
    assert all(e["p_old"] == 100 and e["p_new"] == 103 for e in kinds(g, "synchronized"))


def test_the_mode_is_chosen_per_backend():
    fake = ScriptedFakeModel(default=ScriptedMemory())
    assert resolve_mode(make_llm(fake)) == "joint"
    assert resolve_mode(make_llm(fake), "prefix") == "prefix"
    fake.sync_mode = "separate"
    assert resolve_mode(make_llm(fake)) == "separate"


SECTIONS = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
            {"title": "Ben's plan for the gate", "type": "state", "subject": "Ben"},
            {"title": "The harbour gate", "type": "concept", "subject": "harbour gate"},
            {"title": "How Ada speaks", "type": "behavioral", "subject": "Ada"}]


def _story_memory(request) -> str:
    if "Update each memory section below" in request.messages[-1]["content"]:
        return json.dumps(ScriptedMemory().joint(request))
    if "Propose at most" in request.messages[-1]["content"]:
        return json.dumps({"sections": SECTIONS[:3] if "Ben acts next" in
                           request.messages[-1]["content"] else [SECTIONS[0], SECTIONS[3]]})
    return _deterministic(request)


def _versions(store, sid) -> list[tuple]:
    rows = {r["id"]: r["title"] for r in store.bookmarks(sid, "story")}
    return sorted((rows[v["bookmark_id"]], v["p"], v["content"])
                  for v in store.db["bookmark_versions"].rows)


def test_prepare_reads_the_story_once_for_every_character(store):
    from bookmarks.engine.read_once import prepare_read_once

    sid = store.add_story(generated_story(300))
    fake = ScriptedFakeModel(default=_story_memory, sync_mode="joint")
    record = run_sync(prepare_read_once(store, make_llm(fake, store), story_id=sid,
                                        characters=["Ada", "Ben"], points=[100, 200, 250]))
    assert record == {"done": 6, "last_point": 250, "mode": "joint"}
    syncs = [r for r in fake.history if "New actions:" in r.messages[-1]["content"]]
    for i in range(1, 251):  # every action read once, for four bookmarks of two characters
        assert sum(f"[{i}] " in r.messages[-1]["content"] for r in syncs) == 1, i
    versions = _versions(store, sid)
    assert {(t, p) for t, p, _ in versions} == {(s["title"], p) for s in SECTIONS
                                                for p in (100, 200, 250)}


def test_read_once_commits_the_same_versions_as_checkpoint_by_checkpoint(tmp_path):
    from bookmarks.engine.ground import ground_at
    from bookmarks.engine.lineage import Lineage
    from bookmarks.engine.read_once import prepare_read_once
    from bookmarks.store import Store

    # checkpoints on multiples of the block, where read-once cuts its gaps as a step does
    results = []
    for schedule in ("read once", "checkpoints"):
        store = Store(tmp_path / f"{schedule}.db")
        sid = store.add_story(generated_story(300))
        llm = make_llm(ScriptedFakeModel(default=_story_memory, sync_mode="prefix"), store)
        if schedule == "read once":
            run_sync(prepare_read_once(store, llm, story_id=sid, characters=["Ada", "Ben"],
                                       points=[128, 192, 256]))
        else:
            lineage = Lineage.of(store, store.story(sid).trunk_id)
            for point in (128, 192, 256):
                for who in ("Ada", "Ben"):
                    g, _ = run_sync(ground_at(store, llm, story_id=sid, lineage=lineage,
                                              position=point + 1, character=who,
                                              method="bookmarks"))
                    store.commit_memory(g.writes)
        results.append(_versions(store, sid))
        store.close()
    assert results[0] == results[1] and len(results[0]) == 12


def test_the_mode_is_said_in_walk_records_and_the_panel(store):
    from bookmarks.evaluation.walk import walk
    from bookmarks.scenes.panel import turn_activity
    from bookmarks.scenes.play import generate_turn

    sid = store.add_story(generated_story())
    fake = ScriptedFakeModel(default=ScriptedMemory(sections=SECTIONS[:2]))
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    seen = []
    summary = run_sync(walk(store, llms, sid, method="bookmarks", at=[101, 107], predict=False,
                            on_point=seen.append))
    assert summary.sync_modes == {"joint": 4}
    assert [s["mode"] for s in seen[1]["syncs"]] == ["joint", "joint"]
    scene = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada"))
    assert turn_activity(store, turn.id)["sync_modes"] == ["joint"]


def test_a_short_gap_across_a_block_boundary_is_still_one_call(store):
    sid = store.add_story(generated_story())
    script = ScriptedMemory(sections=SECTIONS[:2])
    fake = ScriptedFakeModel(default=script)
    llm = make_llm(fake)
    ground(store, llm, sid, 61)
    before = len(fake.history)
    g = ground(store, llm, sid, 67)  # reads 61–66, across 64
    assert [script.kind(r) for r in fake.history[before:]] == ["propose", "joint"]
    assert {(e["p_old"], e["p_new"]) for e in kinds(g, "synchronized")} == {(60, 66)}


def test_nap_records_the_mode_in_its_setup_records_and_summary(store):
    from bookmarks.evaluation.evaluate import run_nap

    sid = store.add_story(generated_story(120))
    fake = ScriptedFakeModel(default=ScriptedMemory(sections=SECTIONS[:2]))
    llms = {role: make_llm(fake, store, role=role) for role in ("memory", "actor", "judge")}
    run = run_sync(run_nap(store, llms, sid, characters=["Ada"], span=(101, 110),
                           judge_mode="single", use_cache=False))
    assert run["params"]["setup"]["sync_mode"] == "joint"
    records = store.records(run["id"])
    assert all(r["sync_modes"] == {"joint": 2} for r in records[1:])
    assert run["summary"]["sync_modes"]["joint"] == 2 * len(records)


def test_the_read_once_benchmarks_run_and_print_their_ratios(tmp_path):
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    def bench(*args: str) -> str:
        out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / args[0]), *args[1:]],
                             capture_output=True, text=True, timeout=600, cwd=ROOT,
                             env={**os.environ, "BOOKMARKS_DATA_DIR": str(tmp_path)})
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout

    out = bench("prepare_throughput.py", "--scripted", "--limit", "250", "--latency", "0",
                "--runs", "one-pass,joint,separate")
    assert "× pass (prompt)" in out and "sync:joint" in out
    out = bench("reuse_efficiency.py", "--story", "mystery", "--range", "11:60")
    assert "synchronization: tokens without reuse / with reuse" in out
    assert "model calls (memory + actor)" in out

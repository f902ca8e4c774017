"""A long gap in one call when it fits (issue 22, item 5): consecutive blocks the same
bookmarks need are read together, as many whole blocks as fit the context; each state
answers once per block (the paper's 64-action granularity), a description or examples once
for all; an invalid block decision is asked again for that section alone, from that block
on; a prompt never exceeds the context; the costs are what was spent — counted on the
scripted model's side."""

from __future__ import annotations

import json
import re

from bookmarks.config import RoleConfig
from bookmarks.engine.joint_sync import SyncJob, bring_forward
from bookmarks.engine.lineage import IndexedLine
from bookmarks.engine.sync import CostModel
from bookmarks.memory import Bookmark, StateContent, StateNode
from bookmarks.models.fitting import CUT_MARK, LINE_MARK, estimate_tokens
from bookmarks.models.llm import LLM, run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from tests.conftest import make_llm
from tests.engine import deterministic
from tests.engine_helpers import generated_story, ground, kinds

SECTIONS = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
            {"title": "Ben's plan for the gate", "type": "state", "subject": "Ben"},
            {"title": "How Ada speaks", "type": "behavioral", "subject": "Ada"}]


def _schema_keys(request) -> list[str]:
    return sorted(request.response_format["json_schema"]["schema"]["properties"])


def _two_points(store, reply, first: int = 101, second: int = 251):
    """Ground Ada at `first` (every section new), then at `second`: (grounding, requests
    of the second prediction)."""
    sid = store.add_story(generated_story())
    fake = ScriptedFakeModel(default=reply)
    llm = make_llm(fake)
    ground(store, llm, sid, first)
    before = len(fake.history)
    g = ground(store, llm, sid, second)
    return g, fake.history[before:]


def test_a_gap_of_three_blocks_is_one_joint_call_with_a_decision_per_block(store):
    script = ScriptedMemory(sections=SECTIONS)
    g, asked = _two_points(store, script)  # reads 101–250: 101–164, 165–228, 229–250
    assert [script.kind(r) for r in asked] == ["propose", "joint"]
    (call,) = asked[1:]
    assert _schema_keys(call) == ["s1_b1", "s1_b2", "s1_b3", "s2_b1", "s2_b2", "s2_b3", "s3"]
    text = call.messages[-1]["content"]
    heads = re.findall(r"^Block (\d) of 3 \(actions (\d+)–(\d+)\):$", text, re.MULTILINE)
    assert heads == [("1", "101", "164"), ("2", "165", "228"), ("3", "229", "250")]
    for i in range(101, 251):  # every action once
        assert text.count(f"[{i}] ") == 1
    syncs = kinds(g, "synchronized")
    assert {(e["p_old"], e["p_new"], e["mode"]) for e in syncs} == {(100, 250, "joint")}
    # each state decided once per block: the scripted model appends a node every time
    for e in kinds(g, "state_appended"):
        assert e["range"] in ([101, 164], [165, 228], [229, 250])
    assert len(kinds(g, "state_appended")) == 6
    # the costs are the one call's: its calls and prompt tokens split among the parts
    assert sum(e["calls"] for e in syncs) == 1
    assert sum(e["prompt_tokens"] for e in syncs) == sum(len(m["content"]) // 4
                                                         for m in call.messages)
    for e in syncs:
        assert e["calls_wo"] >= e["calls"] and e["tokens_wo"] > e["prompt_tokens"]


def test_an_invalid_block_decision_is_asked_again_for_that_section_alone(store):
    script = ScriptedMemory(sections=SECTIONS)

    def reply(request):
        if script.kind(request) == "joint" and "[165] " in request.messages[-1]["content"]:
            good = script.joint(request)
            good["s1_b2"] = {"decision": "perhaps", "text": 7}
            return json.dumps(good)
        return script(request)

    g, asked = _two_points(store, reply)
    assert [script.kind(r) for r in asked] == ["propose", "joint", "state", "state"]
    for r, (lo, hi) in zip(asked[2:], [(165, 228), (229, 250)], strict=True):
        prompt = r.messages[-1]["content"]  # the first section alone, the blocks from its 2nd
        assert "Ada's standing with Ben" in prompt and "Ben's plan" not in prompt
        assert f"[{lo}] " in prompt and f"[{hi}] " in prompt and f"[{lo - 1}] " not in prompt
    (reasked,) = kinds(g, "joint_part_reasked")
    assert reasked["title"] == "Ada's standing with Ben" and reasked["range"] == [165, 250]
    appended = {(e["title"], tuple(e["range"])) for e in kinds(g, "state_appended")}
    assert ("Ada's standing with Ben", (101, 164)) in appended  # its first block kept
    assert {(e["p_old"], e["p_new"]) for e in kinds(g, "synchronized")} == {(100, 250)}
    assert round(sum(e["calls"] for e in kinds(g, "synchronized")), 3) == 3


def test_a_block_decision_that_stays_invalid_stalls_at_the_block_before(store):
    script = ScriptedMemory(sections=SECTIONS)

    def reply(request):
        kind, text = script.kind(request), request.messages[-1]["content"]
        if kind == "joint" and "[165] " in text:
            good = script.joint(request)
            good["s1_b2"] = {"decision": "perhaps"}
            return json.dumps(good)
        if kind == "state" and "Ada's standing with Ben" in request.messages[1]["content"]:
            return '{"decision": "perhaps"'  # never valid, its re-ask included
        return script(request)

    g, _ = _two_points(store, reply)
    syncs = {e["title"]: e for e in kinds(g, "synchronized")}
    assert (syncs["Ada's standing with Ben"]["p_new"], syncs["Ben's plan for the gate"]["p_new"],
            syncs["How Ada speaks"]["p_new"]) == (164, 250, 250)
    assert syncs["Ada's standing with Ben"]["stalled"]
    (stalled,) = kinds(g, "sync_stalled")
    assert stalled["p"] == 164 and stalled["behind"] == 86


def test_no_prompt_exceeds_a_small_context_and_whole_blocks_fill_it():
    """A 4,096-token context: a call holds the whole blocks that fit (two of the five
    here), the rest follow. Every request fits the context as the app counts it, nothing
    cut to fit it."""
    lines = [IndexedLine("Ada" if i % 2 else "Ben", f"Line {i}: the tide and the gate.", i)
             for i in range(1, 321)]
    bms = [Bookmark(id=n, story_id=1, space="t", subject="Ada", type="state",
                    title=f"Section {n}", p=0, content=StateContent()) for n in (1, 2)]
    jobs = [SyncJob(bm, lines, 320, ["Ada"]) for bm in bms]
    fake = ScriptedFakeModel(default=ScriptedMemory())
    context = 4096
    llm = LLM(model=fake, config=RoleConfig(role="memory", context_tokens=context))
    done = run_sync(bring_forward(jobs, llm, story="Tides", mode="joint", costs=CostModel(),
                                  cuts=list(range(64, 321, 64)), align=False))
    for r in fake.history:
        assert estimate_tokens(r.messages) + r.max_tokens <= context
        text = r.messages[-1]["content"]
        assert CUT_MARK.split("{n}")[1].strip() not in text
        assert LINE_MARK.split("{n}")[1] not in text
    per_call = [len(re.findall(r"^Block \d+ of", r.messages[-1]["content"], re.MULTILINE)) or 1
                for r in fake.history]
    assert max(per_call) >= 2 and sum(per_call) == 5 and len(fake.history) < 5
    for segments in done:
        nodes = segments[-1].content.nodes
        assert segments[-1].p_new == 320 and [(n.start, n.end) for n in nodes] == [
            (1, 64), (65, 128), (129, 192), (193, 256), (257, 320)]


def _state(n: int, p: int) -> Bookmark:
    content = StateContent(nodes=[StateNode(text=f"Known at {p}.", start=1, end=p)]) if p \
        else StateContent()
    return Bookmark(id=n, story_id=1, space="t", subject="Ada", type="state",
                    title=f"Section {n} about Ada", p=p, content=content)


def test_block_major_and_per_bookmark_commit_the_same_state_versions_in_joint_mode():
    """Read together or alone, several blocks a call or one, a state decides once per
    block from its own text: the same blocks give the same versions (descriptions and
    examples answer once per read, so their versions follow how blocks are grouped)."""
    lines = [IndexedLine("Ada" if i % 2 else "Ben", f"Line {i} of talk.", i)
             for i in range(1, 301)]
    results, calls = {}, {}
    for schedule in ("block", "bookmark"):
        fake = ScriptedFakeModel(default=deterministic.reply)
        jobs = [SyncJob(bm, [ln for ln in lines if bm.p < ln.index <= 250], 250, ["Ada"],
                        emit=(200,)) for bm in (_state(1, 0), _state(2, 40), _state(3, 100))]
        done = run_sync(bring_forward(jobs, make_llm(fake), story="Generated", mode="joint",
                                      costs=CostModel(), schedule=schedule))
        results[schedule] = [[(s.p_old, s.p_new, s.content.model_dump_json()) for s in d]
                             for d in done]
        calls[schedule] = len(fake.history)
        assert all([s.p_new for s in d] == [200, 250] for d in done)
    assert results["block"] == results["bookmark"]
    assert calls["block"] < 3 * 6  # fewer calls than one per block and bookmark

"""Numbers: a cached reply counts at what it first cost (and apart), so "without reuse" and
efficiency figures are what the model would have to do, cache or not; `--no-cache` for
every evaluation; embedding requests fitted to the embedder's context; token estimates
aware of CJK text; prompt lines clipped so the last-resort cut keeps the newest line's
start; judge distinctness by model identity; grounding failures counted apart in NAP."""

from __future__ import annotations

import json
import threading

import pytest
from pydantic import BaseModel

from bookmarks.config import RoleConfig
from bookmarks.engine.lineage import IndexedLine
from bookmarks.evaluation.evaluate import dimension_messages, judge_warning, run_nap
from bookmarks.evaluation.mcq import mcq_messages
from bookmarks.models.fitting import estimate_tokens, fit_messages, text_tokens
from bookmarks.models.llm import LLM, run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.models.transport import OpenAIChatModel
from tests.conftest import make_llm
from tests.engine_helpers import generated_story, ground
from tests.fake_server import bag_of_words, make_handler, serving


class Verdict(BaseModel):
    decision: str


MSGS = [{"role": "user", "content": "decide " * 40}]


def test_a_cached_reply_counts_at_its_first_cost_and_apart(store):
    fake = ScriptedFakeModel(default='{"decision": "reuse"}')
    llm = make_llm(fake, store)
    first = llm.metered()
    run_sync(first.structured(MSGS, Verdict, purpose="match"))
    again = llm.metered()
    run_sync(again.structured(MSGS, Verdict, purpose="match"))
    assert len(fake.history) == 1  # the second was served by the cache
    cost = {k: first.usage[k] for k in ("calls", "prompt_tokens", "completion_tokens")}
    assert cost["calls"] == 1 and cost["prompt_tokens"] > 0
    assert {k: again.usage[k] for k in cost} == cost  # what the model would have to do
    assert again.usage["cached_calls"] == 1 and first.usage["cached_calls"] == 0
    assert again.usage["cached_tokens"] == cost["prompt_tokens"] + cost["completion_tokens"]
    rows = store._rows("SELECT cached, prompt_tokens FROM llm_calls ORDER BY id")
    assert [r["cached"] for r in rows] == [0, 1] and rows[0]["prompt_tokens"] == rows[1]["prompt_tokens"]
    spent_only = llm.metered()
    spent_only.count_cached = False  # Play: a turn's own spending, the cache told apart
    run_sync(spent_only.structured(MSGS, Verdict, purpose="match"))
    assert spent_only.usage["calls"] == 0 and spent_only.usage["cached_calls"] == 1


def test_without_reuse_costs_the_same_with_the_cache_as_without(store):
    sid = store.add_story(generated_story(200))
    script = ScriptedMemory(sections=[{"title": "Ada's standing with Ben", "type": "state",
                                       "subject": "Ada"}])
    llm = make_llm(ScriptedFakeModel(default=script), store)
    for space in ("cold", "warm"):  # the second walk's replies all come from the cache
        for position in (60, 120, 180):
            ground(store, llm, sid, position, method="bookmarks-noreuse", space=space)
    cold, warm = store.sync_costs(sid, "cold"), store.sync_costs(sid, "warm")

    def total(rows, key):
        return sum(r[key] for r in rows)

    assert store._one("SELECT COUNT(*) AS n FROM llm_calls WHERE cached = 1")["n"] > 0
    for key in ("calls", "prompt_tokens", "completion_tokens", "prompt_tokens_wo"):
        assert total(warm, key) == total(cold, key) > 0, key


def test_every_evaluation_can_run_without_the_cache_and_shows_cached_calls_apart(store):
    sid = store.add_story(generated_story(80))

    def nap(**kw):
        fake = ScriptedFakeModel(default=ScriptedMemory())
        llms = {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}
        return run_sync(run_nap(store, llms, sid, characters=["Ada"], points=3, **kw)), fake

    cold, fake_cold = nap(use_cache=False)
    assert store.db["llm_cache"].count == 0  # nothing read from or written to the cache
    assert cold["summary"]["model_use"]["memory"]["cached_calls"] == 0
    nap()  # fills the cache
    warm, fake_warm = nap()
    use = warm["summary"]["model_use"]["memory"]
    assert use["cached_calls"] > 0
    assert use["calls"] == cold["summary"]["model_use"]["memory"]["calls"]


def test_the_cli_has_no_cache_for_nap_and_mcq():
    from bookmarks.cli import build_parser

    parser = build_parser()
    for kind in ("nap", "mcq"):
        assert parser.parse_args(["eval", kind, "--story", "1", "--no-cache"]).no_cache


def test_grounding_failures_are_counted_apart_in_nap(store):
    from bookmarks.evaluation.evaluate import DIMENSIONS

    sid = store.add_story(generated_story(80))
    fake = ScriptedFakeModel(default=ScriptedMemory())
    llms = {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}
    run = run_sync(run_nap(store, llms, sid, characters=["Ada"], points=3))
    assert run["summary"]["grounding_failures"] == 0
    # a point whose memory could not be grounded (as run_nap records one): zero everywhere
    store.add_record(run["id"], "999", {
        "point": 999, "character": "Ada", "predictions": [None], "best": 0, "actual": "x",
        "scores": [dict.fromkeys(DIMENSIONS, 0)], "failures": ["grounding: invalid"],
        "grounding_failed": True})
    again = run_sync(run_nap(store, llms, run_id=run["id"]))["summary"]
    assert again["grounding_failures"] == 1 and again["items"] == 4
    assert again["best@1_mean_without_grounding_failures"] == run["summary"]["best@1"]["mean"]


def test_embedding_requests_fit_a_small_embedder():
    seen: list[int] = []
    lock = threading.Lock()
    base = make_handler(lambda req: "")

    class Handler(base):
        def do_POST(self):  # noqa: N802 - a 512-token embedder (about 4 characters a token)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            texts = body["input"]
            with lock:
                seen.append(max(len(t) for t in texts))
            if any(len(t) // 4 > 512 for t in texts):
                return self._send(400, {"error": {"message": "This model's maximum context "
                                                  "length is 512 tokens."}})
            return self._send(200, {"object": "list", "model": "e", "data": [
                {"object": "embedding", "index": n, "embedding": bag_of_words(t)}
                for n, t in enumerate(texts)]})

    with serving(Handler) as url:
        emb = LLM(model=OpenAIChatModel(model="e", base_url=url, api_key="k"),
                  config=RoleConfig(role="embedder"))
        scene = "\n".join(f"Ada: line {i} about the harbour gate and the tide" for i in range(200))
        vectors = run_sync(emb.embed([scene, "short"], purpose="ricl:embed"))
        assert len(vectors) == 2
        run_sync(emb.embed([scene + " again"], purpose="ricl:embed"))
    assert seen[0] > 512 * 4 and all(n // 4 <= 512 for n in seen[1:])
    assert len(seen) == 3  # refused once, then every request fits


def test_token_estimates_count_cjk_about_one_per_character():
    english, chinese = "the harbour gate " * 100, "港口的大门已经关上了" * 100
    assert text_tokens(chinese) >= len(chinese)
    assert text_tokens(english) <= len(english) // 3 + 1
    msgs = [{"role": "user", "content": chinese * 10}]
    assert estimate_tokens(fit_messages(msgs, 1000)) <= 1000


@pytest.mark.parametrize("build", ["actor", "judge", "mcq"])
def test_the_last_resort_cut_keeps_the_start_of_the_newest_line(build):
    from bookmarks.engine.actor import Line, actor_messages
    from bookmarks.engine.prompts import clip

    huge = "Ben: " + "the gate " * 3000
    scene = [IndexedLine("Ben", f"Old line {i} " + "word " * 300, i) for i in range(1, 9)]
    newest = IndexedLine("Ada", "NEWEST-START " + "tide " * 2000, 9)
    scene.append(newest)
    if build == "actor":  # as generate_turn shows a scene to the actor: lines clipped
        msgs = actor_messages(story_title="S", character="Ben", grounding=huge[:4000],
                              scene=[Line(x.character, clip(x.text)) for x in scene])
    elif build == "judge":
        msgs = dimension_messages(dimension="intent", story="S", character="Ben", scene=scene,
                                  reference=huge, prediction="Hello.")
    else:
        msgs = mcq_messages(story="S", character="Ben", grounding=huge[:4000], scene=scene,
                            question="Who opened the gate?", options={"A": "Ada", "B": "Ben"})
    fitted = fit_messages(msgs, 1200)
    text = fitted[-1]["content"]
    assert estimate_tokens(fitted) <= 1200
    assert "Ada: NEWEST-START" in text  # the newest line's start, with its speaker


def test_a_judge_is_the_actor_when_it_is_the_same_model_elsewhere():
    def llm(name, url):
        fake = ScriptedFakeModel(name=name)
        fake.base_url = url
        return make_llm(fake)

    same = {"actor": llm("Qwen/Qwen2.5-7B-Instruct", "http://a:8000/v1"),
            "judge": llm("qwen2.5-7b-instruct", "http://b:9000/v1")}
    assert judge_warning(same)
    other = {"actor": same["actor"], "judge": llm("Qwen/Qwen2.5-32B-Instruct", "http://a:8000/v1")}
    assert judge_warning(other) is None
    aliased = {"actor": same["actor"], "judge": llm("judge", "http://c/v1")}
    aliased["judge"].model.served_model = "Qwen/Qwen2.5-7B-Instruct"  # what it answered as
    assert judge_warning(aliased)

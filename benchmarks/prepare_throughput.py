"""Preparing every major character's memory, next to the floor: one pass over the story.

    python benchmarks/prepare_throughput.py [--limit 400] [--every 100] [--scripted]
        [--runs one-pass,joint,prefix,separate]

On the bundled long play (or --story), all major characters, a checkpoint every N
actions, each run in a fresh database with the reply cache off, on the same server in the
same process:

- `one-pass`: one summarizing call per block of 64 actions over the story up to the last
  checkpoint (what the preparation reads) — the floor;
- `joint` / `prefix`: `bookmarks prepare` reading the story once (engine/read_once.py) in
  that sync mode — one joint call per block for all bookmarks, or consecutive block-first
  calls for a prefix cache;
- `separate`: the per-bookmark schedule — checkpoint by checkpoint, character by
  character, each bookmark reading its own gap on its own.

Prints wall time, model calls, prompt and reply tokens of each run and its ratio to one
pass. By default the configured memory model (the embedded one unless a server is set);
`--scripted` answers from a scripted OpenAI-compatible server on 127.0.0.1 that charges
like a remote server without a prefix cache: `--latency` per call plus the time to
process every prompt token (`--prompt-rate` tokens/s) and write every reply token
(`--reply-rate` tokens/s). Its proposals keep each character's sections and add a new
one every 300 actions, so late checkpoints initialize bookmarks that read from the start.
`--limit N` prepares the first N actions only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bookmarks.config import load_settings
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.prompts import MEMORY_SYSTEM, lines_block, pack
from bookmarks.models.testing import ScriptedMemory, fake_tokens
from bookmarks.scenes.prepare import plan, prepare
from bookmarks.services import BUNDLED_STORIES, Services
from bookmarks.stories.importers import load_story

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.fake_server import scripted_server  # noqa: E402  (a test double, by design)

BLOCK = 64
ONE_PASS_TOKENS = 100


class RemoteLike(ScriptedMemory):
    """Scripted replies, charged in time like a remote server (test double)."""

    def __init__(self, latency: float, prompt_rate: float, reply_rate: float):
        super().__init__(sections=self.propose)
        self.latency, self.prompt_rate, self.reply_rate = latency, prompt_rate, reply_rate

    @staticmethod
    def propose(request) -> list[dict]:
        text = request.messages[-1]["content"]
        who = re.search(r"\n(.+?) acts next\.", text).group(1)
        point = max(int(x) for x in re.findall(r"^\[(\d+)\]", text, re.MULTILINE) or ["0"])
        return [{"title": f"{who}'s current goal", "type": "state", "subject": who},
                {"title": f"How {who} speaks", "type": "behavioral", "subject": who},
                {"title": f"{who}'s standing in part {point // 300 + 1}", "type": "state",
                 "subject": who}]

    def __call__(self, request) -> str:
        reply = super().__call__(request)
        if self.kind(request) == "eta_extract":  # one pass: a summary of about 60 words
            reply = " ".join(["The travellers argue over the debt and the bridge."] * 7)
        prompt = sum(fake_tokens(m["content"]) for m in request.messages)
        time.sleep(self.latency + prompt / self.prompt_rate + fake_tokens(reply) / self.reply_rate)
        return reply


def one_pass_messages(title: str, block) -> list[dict[str, str]]:
    user = (f'Story: "{title}". New actions:\n{lines_block(block)}\n\nSummarize what these '
            "actions show about the story's events in at most 60 words. Reply with the "
            "summary only.")
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def totals(services: Services) -> dict:
    rows = [r for r in services.store.db["llm_calls"].rows if r["ok"] and not r["cached"]]
    purposes: dict[str, list[int]] = {}
    for r in rows:
        p = purposes.setdefault(r["purpose"], [0, 0, 0])
        p[0] += 1
        p[1] += r["prompt_tokens"]
        p[2] += r["completion_tokens"]
    return {"calls": len(rows), "prompt": sum(r["prompt_tokens"] for r in rows),
            "reply": sum(r["completion_tokens"] for r in rows),
            "by_purpose": {k: dict(zip(("calls", "prompt", "reply"), v, strict=True))
                           for k, v in sorted(purposes.items())}}


async def one_run(env: dict, story, kind: str, every: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        mode = {"one-pass": "auto"}.get(kind, kind)
        services = Services.open(load_settings({**env, "BOOKMARKS_DATA_DIR": tmp,
                                                "BOOKMARKS_MEMORY_SYNC_MODE": mode}))
        memory = replace(services.llms["memory"], cache_get=None, cache_put=None)
        store = services.store
        sid = store.add_story(story)
        await memory.discover_context()
        t0 = time.perf_counter()
        if kind == "one-pass":  # over the actions the preparation reads: 1 … its last point
            last = plan(store, sid, every=every).points[-1]
            lines = Lineage.of(store, store.story(sid).trunk_id).lines(store, 1, last)
            chars = memory.prompt_chars(ONE_PASS_TOKENS)
            start = 0
            while start < len(lines):
                block = pack(lines[start:start + BLOCK], chars, newest=False)
                await memory.text(one_pass_messages(story.title, block), purpose="sync:one-pass",
                                  max_tokens=ONE_PASS_TOKENS, temperature=0)
                start += len(block)
            steps = 0
        else:
            the_plan = plan(store, sid, every=every)
            await prepare(store, memory, the_plan,
                          on_step=lambda s: print(f"    {kind}: step {s['step']}/{s['steps']} "
                                                  f"({s['character']} at {s['point']}), "
                                                  f"{time.perf_counter() - t0:.0f} s",
                                                  flush=True))
            steps = the_plan.steps
        wall = time.perf_counter() - t0
        out = {"run": kind, "wall": wall, "steps": steps, **totals(services),
               "model": memory.model.name}
        store.close()
        return out


async def main(args: argparse.Namespace) -> None:
    story = load_story(args.story)
    n = len(story.actions)
    if args.limit and args.limit < n:
        story = story.model_copy(update={
            "actions": story.actions[:args.limit],
            "questions": [q for q in story.questions if q.after < args.limit]})
    majors = [c.name for c in story.characters if c.major]
    env = dict(os.environ)
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    context = None
    if args.scripted:
        responder = RemoteLike(args.latency, args.prompt_rate, args.reply_rate)
        context = scripted_server(responder)
        url = context.__enter__()
        env.update({"BOOKMARKS_BASE_URL": url, "BOOKMARKS_API_KEY": "scripted",
                    "BOOKMARKS_MODEL": "scripted"})
    try:
        print(f"{story.title}: actions 1–{len(story.actions)} of {n}; {len(majors)} major "
              f"characters ({', '.join(majors)}); a checkpoint every {args.every} actions; "
              f"{'scripted remote-like server' if args.scripted else 'configured memory model'}"
              , flush=True)
        results = []
        for kind in runs:
            print(f"  running {kind} …", flush=True)
            results.append(await one_run(env, story, kind, args.every))
            r = results[-1]
            print(f"  {kind}: {r['wall']:.1f} s, {r['calls']} calls, {r['prompt']} prompt "
                  f"tokens, {r['reply']} reply tokens ({r['model']})", flush=True)
            for purpose, t in r["by_purpose"].items():
                print(f"      {purpose}: {t['calls']} calls, {t['prompt']} prompt, "
                      f"{t['reply']} reply tokens", flush=True)
    finally:
        if context is not None:
            context.__exit__(None, None, None)
    base = next((r for r in results if r["run"] == "one-pass"), None)
    print(f"\n{'run':>10} {'wall s':>8} {'calls':>6} {'prompt tok':>11} {'reply tok':>10} "
          f"{'× pass (time)':>14} {'× pass (prompt)':>16}")
    for r in results:
        time_x = f"{r['wall'] / base['wall']:.2f}" if base else "n/a"
        tok_x = f"{r['prompt'] / base['prompt']:.2f}" if base and base["prompt"] else "n/a"
        print(f"{r['run']:>10} {r['wall']:>8.1f} {r['calls']:>6} {r['prompt']:>11} "
              f"{r['reply']:>10} {time_x:>14} {tok_x:>16}")
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--story", default=str(BUNDLED_STORIES / "the_long_winter_at_harrowgate.txt"))
    parser.add_argument("--limit", type=int, default=0, help="prepare the first N actions only")
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--runs", default="one-pass,joint,prefix,separate")
    parser.add_argument("--scripted", action="store_true",
                        help="a scripted remote-like server instead of the configured model")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--prompt-rate", type=float, default=20000.0)
    parser.add_argument("--reply-rate", type=float, default=1000.0)
    parser.add_argument("--json", action="store_true")
    asyncio.run(main(parser.parse_args()))

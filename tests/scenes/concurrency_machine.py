"""A stateful model of Play under concurrency (Hypothesis `RuleBasedStateMachine`), shared by
`test_concurrency.py` (a few seconds in the suite) and `benchmarks/soak.py` (long, seeded).

Rules interleave what writers and the app do — turns (waiting for or overtaking prepared
steps, with or without partial memory), user lines, undo, edit, regenerate, fork, presence
corrections, a merge, pins and bookmark edits, card attach and detach, background
preparation (held at the server while the rest goes on) and `prepare` — against a scripted
server that is slow (held) and fails (HTTP 503s past the retries). After every step the
invariants hold:

1. no two bookmarks share an identity;
2. every stored version read only actions on its lineage as they are now, and, in a
   knower's memory, only actions that knower witnessed under the current presence (the
   scripted memory writes into each version which lines it read, and a checksum of each);
3. no actor prompt carried a removed line (undone, edited, regenerated) or, in witnessed
   knowledge, a line out of the actor's sight;
4. no background job runs untracked, and none is left when the machine stops.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import zlib
from collections import Counter

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from bookmarks.config import RoleConfig
from bookmarks.engine.cards import attach, detach
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.prompts import line_text
from bookmarks.engine.recall import memory_spaces, visible_bookmarks
from bookmarks.errors import BookmarksError
from bookmarks.memory import parse_content
from bookmarks.models.llm import LLM, run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.models.transport import TransientModelError
from bookmarks.scenes.background import Prefetcher
from bookmarks.scenes.panel import edit_bookmark
from bookmarks.scenes.play import add_user_turn, fork_at, generate_turn, regenerate_last, undo_last
from bookmarks.scenes.prepare import plan, prepare
from bookmarks.store import Store
from bookmarks.store.memory_rows import identity_key
from bookmarks.stories.sillytavern_card import read_card
from bookmarks.stories.story import Action, Character, Story

BACKGROUND = "bookmarks-background-sync"
START, STORY = 60, 90
SECTIONS = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
            {"title": "Harbour gate", "type": "concept", "subject": "harbour gate"},
            {"title": "How Ada speaks", "type": "behavioral", "subject": "Ada"}]
_LINE = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)
_READ = re.compile(r"\b(\d+):([0-9a-f]{6})\b")
_STORY_LINE = re.compile(r"\bLine (\d+)\b")


def crc(text: str) -> str:
    return f"{zlib.crc32(text.encode()) & 0xFFFFFF:06x}"


def story() -> Story:
    actions = []
    for i in range(1, STORY + 1):
        who = "narration" if i % 7 == 0 else ("Ada" if i % 2 else "Ben")
        if i % 11 == 0:
            who = "Cora"
        text = (f"Line {i}: the harbour gate creaks." if i % 5 == 0 else f"Line {i} of talk.")
        if i % 13 == 0:
            text = f"[Ada exits.] Line {i} goes on." if i % 26 else f"[Enter Ada.] Line {i}."
        actions.append(Action(index=i, character=who, text=text))
    cast = [Character(name="Ada", major=True), Character(name="Ben", major=True),
            Character(name="Cora")]
    return Story(title="Soak", characters=cast, actions=actions)


class Server(ScriptedFakeModel):
    """The scripted server: background calls wait while `held`; the next `failing` calls
    answer HTTP 503 (a call fails for good after the client's retries)."""

    def __init__(self) -> None:
        self.script = ScriptedMemory(sections=SECTIONS)
        super().__init__(default=self.reply)
        self.sync_mode = "separate"  # checkpoint by checkpoint
        self.hold = threading.Event()
        self.hold.set()
        self.failing = 0
        self.lock = threading.Lock()
        self.acted: list[str] = []  # every actor prompt, in order

    async def chat(self, request):
        if threading.current_thread().name == BACKGROUND and not self.hold.is_set():
            await asyncio.to_thread(self.hold.wait, 120)
        return await super().chat(request)

    def reply(self, request) -> str:
        with self.lock:
            if self.failing:
                self.failing -= 1
                raise TransientModelError("The model server answered HTTP 503: injected")
        kind = self.script.kind(request)
        text = request.messages[-1]["content"]
        if kind == "act":
            with self.lock:
                self.acted.append("\n".join(m["content"] for m in request.messages))
        if kind in ("concept", "state", "first_state"):  # say which lines were read
            block = text.split("Reply with one JSON", 1)[0]
            seen = " ".join(f"{i}:{crc(rest)}" for i, rest in _LINE.findall(block))
            said = f"read {seen or 'nothing'}"
            if kind == "concept":
                return said
            if kind == "state":
                return json.dumps({"decision": "append", "text": said})
            return json.dumps({"text": said})
        return self.script(request)


def _no_sleep(_: float):
    return asyncio.sleep(0)


class PlayMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = Store(":memory:")
        self.story_id = self.store.add_story(story())
        self.server = Server()
        self.llms = {role: LLM(model=self.server, config=RoleConfig(role=role),
                               log=self.store.log_call, cache_get=self.store.cache_get,
                               cache_put=self.store.cache_put, retries=1, sleep=_no_sleep)
                     for role in ("memory", "actor")}
        self.pre = Prefetcher(self.store, self.llms, state_block=16, concurrency=2,
                              wait_limit=60)
        self.scenes = [self.store.create_scene(self.story_id, start_point=START,
                                               cast=["Ada", "Ben"], method="bookmarks",
                                               settings={"knowledge": k}).id
                       for k in ("omniscient", "witnessed")]
        self.removed: set[str] = set()
        self.said = 0
        self.merged = False
        self.counts: Counter = Counter()

    # -- helpers ---------------------------------------------------------------------------
    def _scene(self, n: int) -> int:
        return self.scenes[n % len(self.scenes)]

    def _take(self, scene_id: int, who: str, partial: bool):
        async def go():
            step = self.pre.step_for(scene_id, who)
            prepared = await self.pre.take(scene_id, step, partial=50 if partial else 0)
            return await generate_turn(self.store, self.llms, scene_id, who, state_block=16,
                                       prepared=prepared, max_read=50 if partial else 0)
        return run_sync(go())

    def _last(self, scene_id: int):
        turns = self.store.turns(scene_id)
        return turns[-1] if turns else None

    # -- what writers and the app do -------------------------------------------------------
    @rule(n=st.integers(0, 9), who=st.sampled_from(["Ada", "Ben"]), partial=st.booleans())
    def turn(self, n, who, partial):
        scene_id = self._scene(n)
        seen = len(self.server.acted)
        held = not self.server.hold.is_set()
        try:  # a held preparation is never waited for: it would wait at the server
            self._take(scene_id, who, partial or held)
            self.counts["turns"] += 1
        except BookmarksError:
            self.counts["turns failed cleanly"] += 1
        self._check_actor_prompts(scene_id, who, self.server.acted[seen:])

    @rule(n=st.integers(0, 9), who=st.sampled_from(["Ada", "Ben"]), partial=st.booleans())
    def next_turn(self, n, who, partial):  # turns are what Play does most
        self.turn(n, who, partial)

    @rule(n=st.integers(0, 9), who=st.sampled_from(["Ada", "Ben", "narration"]))
    def user_line(self, n, who):
        self.said += 1
        add_user_turn(self.store, self._scene(n), who, f"User line {self.said} here.")
        self.counts["user lines"] += 1

    @rule(n=st.integers(0, 9))
    def undo(self, n):
        scene_id = self._scene(n)
        last = self._last(scene_id)
        try:
            if undo_last(self.store, scene_id) is not None:
                self.removed.add(last.text)
                self.counts["undos"] += 1
        except ValueError:  # a fork continues from it
            self.counts["undos refused"] += 1

    @rule(n=st.integers(0, 9))
    def edit(self, n):
        scene_id = self._scene(n)
        last = self._last(scene_id)
        if last is None:
            return
        self.said += 1
        try:
            self.store.edit_turn(last.id, f"Edited line {self.said} here.")
            self.removed.add(last.text)
            self.counts["edits"] += 1
        except ValueError:
            self.counts["edits refused"] += 1

    @rule(n=st.integers(0, 9))
    def regenerate(self, n):
        scene_id = self._scene(n)
        last = self._last(scene_id)
        seen = len(self.server.acted)
        try:
            run_sync(regenerate_last(self.store, self.llms, scene_id, state_block=16))
            self.removed.add(last.text)
            self.counts["regenerations"] += 1
        except (BookmarksError, ValueError):
            self.counts["regenerations refused or failed"] += 1
        if last is not None:
            self._check_actor_prompts(scene_id, last.character, self.server.acted[seen:])

    @precondition(lambda self: len(self.scenes) < 5)
    @rule(n=st.integers(0, 9))
    def fork(self, n):
        self.scenes.append(fork_at(self.store, self._scene(n)).id)
        self.counts["forks"] += 1

    @rule(who=st.sampled_from(["Ada", "Ben"]), first=st.integers(START - 24, START),
          length=st.integers(0, 12), present=st.booleans())  # near the scenes' windows
    def correct_presence(self, who, first, length, present):
        self.store.mark_presence(self.story_id, who, first, min(START, first + length), present)
        self.counts["presence corrections"] += 1

    @precondition(lambda self: not self.merged)
    @rule()
    def merge(self):
        self.store.merge_characters(self.story_id, "Ben", "Cora")
        self.merged = True
        self.counts["merges"] += 1

    @rule(index=st.integers(START - 24, START), who=st.sampled_from(["Ada", "Ben", "narration"]))
    def correct_line(self, index, who):  # the writer gives a line near the windows to another
        self.store.correct_line(self.story_id, index, who)
        self.counts["line corrections"] += 1

    @rule(n=st.integers(0, 9), k=st.integers(0, 20), edit=st.booleans())
    def pin(self, n, k, edit):
        scene = self.store.scene(self._scene(n))
        lineage = Lineage.of(self.store, scene.branch_id)
        marks = [b for space in memory_spaces(scene)
                 for b in visible_bookmarks(self.store, scene.story_id, space, lineage,
                                            lineage.length(self.store))
                 if b.type in ("concept", "state")]
        if not marks:
            return
        bm = marks[k % len(marks)]
        if edit:
            edit_bookmark(self.store, scene, bm.id, f"The writer says {k}.", pinned=True)
        else:
            self.store.set_override(bm.id, scene.branch_id, pinned=not bm.pinned)
        self.counts["pins and edits"] += 1

    @rule(n=st.integers(0, 9))
    def card(self, n):
        card = read_card(json.dumps({"spec": "chara_card_v2", "data": {
            "name": "Ada", "description": "A harbour pilot (card).",
            "personality": "Blunt."}}).encode(), "ada.json")
        attach(self.store, self._scene(n), card=card)
        self.counts["cards"] += 1

    @rule(n=st.integers(0, 9))
    def detach_card(self, n):
        self.counts["cards detached"] += detach(self.store, self._scene(n), card="Ada")

    @rule(n=st.integers(0, 9), who=st.sampled_from(["Ada", "Ben"]))
    def schedule(self, n, who):
        try:
            self.pre.schedule(self._scene(n), who)
            self.counts["background steps"] += 1
        except BookmarksError:
            pass

    @rule()
    def hold_background(self):
        self.server.hold.clear()

    @rule()
    def release_background(self):
        self.server.hold.set()

    @rule(calls=st.integers(1, 3))
    def server_fails(self, calls):
        with self.server.lock:
            self.server.failing = calls
        self.counts["503s injected"] += calls

    @rule(every=st.sampled_from([20, 30]))
    def prepare_story(self, every):
        try:
            run_sync(prepare(self.store, self.llms["memory"],
                             plan(self.store, self.story_id, characters=["Ada"], every=every)))
            self.counts["prepares"] += 1
        except BookmarksError:
            self.counts["prepares failed cleanly"] += 1

    # -- invariants ------------------------------------------------------------------------
    @invariant()
    def no_duplicate_identities(self):
        with self.store.transaction():  # the store's connection is used under its lock only
            rows = list(self.store.db["bookmarks"].rows)
        keys = Counter((r["story_id"], r["space"], r["type"], identity_key(r["subject"]),
                        identity_key(r["title"])) for r in rows)
        assert not keys or max(keys.values()) == 1, keys.most_common(1)

    @invariant()
    def versions_read_only_current_witnessed_lines(self):
        with self.store.transaction():  # one snapshot (the store's lock): commits wait
            self._check_versions()

    def _check_versions(self) -> None:
        presence = self.store.presence(self.story_id)
        spaces = {r["id"]: (r["space"], r["type"]) for r in self.store.db["bookmarks"].rows}
        lineages: dict[int, Lineage] = {}
        for v in self.store.db["bookmark_versions"].rows:
            space, kind = spaces[v["bookmark_id"]]
            knower = space.rsplit("@", 1)[1] if "@" in space else None
            lineage = lineages.get(v["branch_id"]) or lineages.setdefault(
                v["branch_id"], Lineage.of(self.store, v["branch_id"]))
            cutoff = lineage.cutoffs[lineage.trunk_id]
            for index, check in _reads(kind, v["content"]):
                assert index <= v["p"], (v, index)
                lines = lineage.lines(self.store, index, index)
                assert lines and check(lines[0]), f"version {v['id']} read a line now gone: {index}"
                if knower and index <= cutoff:
                    assert any(a <= index <= b for a, b in presence.get(knower, [])), \
                        f"version {v['id']} of {knower}'s memory read {index}, out of sight"

    @invariant()
    def no_job_untracked(self):
        assert self.pre.untracked() == 0
        self.counts["steps checked"] += 1

    def _check_actor_prompts(self, scene_id: int, who: str, prompts: list[str]) -> None:
        scene = self.store.scene(scene_id)
        witnessed = scene.settings.get("knowledge") == "witnessed"
        runs = self.store.presence(self.story_id).get(who, [])
        lineage = Lineage.of(self.store, scene.branch_id)
        trunk_end = lineage.cutoffs[lineage.trunk_id]
        for prompt in prompts:
            for text in self.removed:
                assert text not in prompt, f"an actor prompt carried a removed line: {text!r}"
            if witnessed:
                for i in map(int, _STORY_LINE.findall(prompt)):
                    assert i > trunk_end or any(a <= i <= b for a, b in runs), \
                        f"{who}'s prompt carried line {i}, out of {who}'s sight"

    def teardown(self):
        self.server.hold.set()
        try:
            assert self.pre.wait_idle(120), "background work did not end"
            assert self.pre.running() == [] and self.pre.untracked() == 0
        finally:
            self.pre.close()
            self.store.close()


def _reads(kind: str, content: str):
    """(index, check) for each line a version says it read: `check(line)` is whether the
    line at that index is still the one that was read."""
    value = parse_content(kind, content)
    if kind == "behavioral":
        for e in value.examples:  # type: ignore[attr-defined]
            if e.index:
                yield e.index, (lambda ln, action=e.action: ln.text == action)
        return
    texts = [value.description] if kind == "concept" else [n.text for n in value.nodes]  # type: ignore[attr-defined]
    for text in texts:
        for i, sum_ in _READ.findall(text):
            yield int(i), (lambda ln, sum_=sum_: crc(line_text(ln).split("] ", 1)[1]) == sum_)

"""Library tab, "Prepare memory": the characters to prepare, an estimate that says what
would make it cheaper, progress within a step (the bookmark synchronizing, block k of n,
actions read) and a Stop that stops within seconds.

Stop cancels the preparation's task: the model call in flight is abandoned at once and
the step in progress is not saved (each finished step is; the next run resumes from the
last one). Progress within a step comes from the engine's progress board, which every
synchronization reports to after each block (engine/progress.py)."""

from __future__ import annotations

import asyncio
import contextvars
import time
from dataclasses import dataclass

import gradio as gr

from bookmarks.engine.progress import BOARD, watch
from bookmarks.errors import BookmarksError
from bookmarks.scenes.prepare import Plan, plan, prepare
from bookmarks.services import Services

from .render import esc, message_of, parse_id

POLL = 0.3  # seconds between progress lines (and Stop checks)


@dataclass
class PrepareBox:
    characters: gr.CheckboxGroup
    every: gr.Number
    estimate_btn: gr.Button
    prepare_btn: gr.Button
    stop_btn: gr.Button
    status: gr.Markdown


def build_prepare_box() -> PrepareBox:
    with gr.Accordion("Prepare memory (scenes anywhere then start fast)", open=False,
                      elem_id="prepare-box"):
        gr.Markdown("Walks the story in order for the characters you choose and leaves memory "
                    "checkpoints every N actions; a scene started at any point reuses the "
                    "latest one before it. Resumes where it stopped.")
        characters = gr.CheckboxGroup([], label="Characters (the major ones unless you choose)",
                                      elem_id="prepare-characters")
        with gr.Row():
            every = gr.Number(value=100, precision=0, minimum=10, label="Every N actions",
                              elem_id="prepare-every", min_width=120)
            estimate_btn = gr.Button("Estimate", elem_id="prepare-estimate", min_width=90)
            prepare_btn = gr.Button("Prepare", variant="primary", elem_id="prepare-btn",
                                    min_width=90)
            stop_btn = gr.Button("Stop", elem_id="prepare-stop", min_width=70)
        status = gr.Markdown(elem_id="prepare-status")
    return PrepareBox(characters, every, estimate_btn, prepare_btn, stop_btn, status)


def cheaper(services: Services, the_plan: Plan) -> str:
    """What would make the preparation cheaper, with the estimates to compare."""
    store, budget = services.store, services.settings.budget
    tips = []
    if len(the_plan.characters) > 1:
        one = plan(store, the_plan.story_id, characters=the_plan.characters[:1],
                   every=the_plan.every, budget=budget)
        tips.append(f"fewer characters: each reads the whole story once (only "
                    f"{esc(the_plan.characters[0])}: about {one.calls} calls, {_time(one.seconds)})")
    if budget > 1:
        fewer = plan(store, the_plan.story_id, characters=the_plan.characters,
                     every=the_plan.every, budget=budget - 1)
        tips.append(f"a smaller bookmark budget K (Settings; K={budget - 1}: about "
                    f"{fewer.calls} calls, {_time(fewer.seconds)})")
    tips.append("a faster memory model (Settings)")
    return ("  \n*Cheaper:* " + "; ".join(tips) + ". Checkpoints further apart save little: "
            "every action is still read once per character, only the proposals are fewer.")


def _time(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def wire_prepare(services: Services, box: PrepareBox, story: gr.Dropdown, refresh: dict) -> None:
    store = services.store
    stopping: set[int] = set()
    running: set[int] = set()  # stories with a preparation in progress in this app

    def offer(label):
        if not label:
            return gr.update(choices=[], value=[])
        chars = store.characters(parse_id(label))
        names = [c.name for c in chars]
        return gr.update(choices=names, value=[c.name for c in chars if c.major] or names)

    def the_plan(label, characters, every) -> Plan:
        if not label:
            raise BookmarksError("Choose a story first.")
        return plan(store, parse_id(label), characters=list(characters or []) or None,
                    every=int(every or 100), budget=services.settings.budget)

    def do_estimate(label, characters, every):
        try:
            p = the_plan(label, characters, every)
            return esc(p.describe()) + cheaper(services, p)
        except (BookmarksError, ValueError, gr.Error) as exc:
            return f"**Not estimated.** {esc(message_of(exc))}"

    async def do_prepare(label, characters, every):
        try:
            p = the_plan(label, characters, every)
        except (BookmarksError, ValueError, gr.Error) as exc:
            yield f"**Not started.** {esc(message_of(exc))}"
            return
        key = f"prepare:{p.story_id}"
        stopping.discard(p.story_id)
        running.add(p.story_id)
        try:
            async for line in _run(p, key):
                yield line
        finally:
            running.discard(p.story_id)

    async def _run(p: Plan, key: str):
        done = {"steps": p.done}

        def on_step(step: dict) -> None:
            done["steps"] = step["step"]

        context = contextvars.copy_context()
        context.run(watch, key)  # the task's synchronizations report to this key
        task = asyncio.create_task(
            prepare(store, services.llms["memory"], p, budget=services.settings.budget,
                    on_step=on_step, should_stop=lambda: p.story_id in stopping),
            context=context)
        started, shown = time.monotonic(), None
        while not task.done():
            if p.story_id in stopping:
                yield "Stopping…"
                task.cancel()
                break
            line = _progress(p, done["steps"], BOARD.lines(key), time.monotonic() - started)
            if line != shown:
                shown = line
                yield line
            await asyncio.sleep(POLL)
        names = ", ".join(esc(c) for c in p.characters)
        try:
            rec = await task
        except asyncio.CancelledError:
            BOARD.clear(key)
            if p.story_id not in stopping:  # the page went away: not ours to swallow
                raise
            yield (f"Stopped: {done['steps']} of {p.steps} steps saved for {names}; the step "
                   "in progress was dropped. Prepare resumes from there.")
            return
        except BookmarksError as exc:
            BOARD.clear(key)
            yield (f"**Preparation stopped:** {esc(message_of(exc))} It resumes from step "
                   f"{done['steps'] + 1} next time.")
            return
        BOARD.clear(key)
        verb = "Stopped" if rec["done"] < rec["steps"] else "Prepared"
        yield (f"{verb}: {rec['done']} of {rec['steps']} steps, memory up to action "
               f"{rec['last_point']} for {names}.")

    def do_stop(label):
        """Asks the running preparation to stop. Its own generator writes "Stopping…" and
        "Stopped: …" to the status; this handler leaves the status alone while one runs, or
        its late reply could overwrite "Stopped" (the two events race for the same box)."""
        if not label:
            return "Nothing to stop: choose the story being prepared."
        story_id = parse_id(label)
        if story_id not in running:
            return "Nothing to stop: no preparation of this story is running."
        stopping.add(story_id)
        return gr.update()

    story.change(offer, [story], [box.characters])
    box.estimate_btn.click(do_estimate, [story, box.characters, box.every], [box.status])
    box.prepare_btn.click(do_prepare, [story, box.characters, box.every],
                          [box.status]).then(**refresh)
    box.stop_btn.click(do_stop, [story], [box.status])


def _progress(p: Plan, done: int, work: list[str], seconds: float) -> str:
    """Step k of n (checkpoint, character), and what its synchronizations are doing."""
    step = min(done + 1, p.steps)
    per = len(p.characters)
    point, who = p.points[(step - 1) // per], p.characters[(step - 1) % per]
    lines = "".join(f"  \n· {esc(w)}" for w in work) or "  \n· proposing sections…"
    return (f"Preparing: step {step} of {p.steps} — checkpoint {point} for {esc(who)} "
            f"({done} done, {seconds:.0f} s so far){lines}")

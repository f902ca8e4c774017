"""Play tab: start or resume a scene, add your own lines, let the model speak."""

from __future__ import annotations

import gradio as gr

from bookmarks.errors import BookmarksError
from bookmarks.play import add_user_turn, generate_turn
from bookmarks.services import Services

from .library import story_choices
from .render import chat_messages, parse_id, scene_label, user_errors

TRUNK_CONTEXT = 3  # story lines shown above a scene's first turn


def scene_choices(services: Services) -> list[str]:
    return [scene_label(s) for s in services.store.list_scenes()]


def build_play_tab(services: Services) -> dict:
    with gr.Tab("Play", id="play"):
        with gr.Row():
            with gr.Column(scale=1):
                gr.Markdown("### New scene")
                story = gr.Dropdown(story_choices(services), label="Story", elem_id="play-story")
                point = gr.Number(label="Story point (start after action…)", precision=0,
                                  minimum=0)
                cast = gr.CheckboxGroup([], label="Cast")
                setting = gr.Textbox(label="Setting (optional)", lines=2)
                start_btn = gr.Button("Start scene", variant="primary", elem_id="start-scene")
                gr.Markdown("### Past scenes")
                scenes = gr.Dropdown(scene_choices(services), label="Resume a scene",
                                     elem_id="play-scenes")
                backend = gr.Markdown("\n\n".join(
                    f"`{services.settings.role(r).describe()}`" for r in ("actor",)))
            with gr.Column(scale=2):
                title = gr.Markdown(elem_id="scene-title")
                chat = gr.Chatbot(label="Scene", height=480, elem_id="scene-chat")
                with gr.Row():
                    speaker = gr.Dropdown([], label="Next speaker (model)", scale=2,
                                          elem_id="next-speaker")
                    next_btn = gr.Button("Next line ▶", variant="primary", scale=1,
                                         elem_id="next-line")
                with gr.Row():
                    as_who = gr.Dropdown([], label="Speak as", allow_custom_value=True, scale=1)
                    line = gr.Textbox(label="Your line", scale=3, elem_id="user-line")
                    say_btn = gr.Button("Add my line", scale=1)
    scene_id = gr.State(None)

    @user_errors
    def pick_story(label: str | None):
        if not label:
            return gr.update(), gr.update(choices=[])
        story_id = parse_id(label)
        info = services.store.story(story_id)
        names = [c.name for c in services.store.characters(story_id)]
        major = [c.name for c in services.store.characters(story_id) if c.major][:2]
        return gr.update(value=info.n_actions, maximum=info.n_actions), \
            gr.update(choices=names, value=major)

    def view(sid: int):
        scene = services.store.scene(sid)
        trunk = services.store.actions(scene.story_id, max(1, scene.start_point - TRUNK_CONTEXT + 1),
                                       scene.start_point)
        turns = services.store.turns(sid)
        msgs = chat_messages(turns, [(a.character, a.text) for a in trunk])
        who = gr.update(choices=scene.cast, value=scene.cast[0] if scene.cast else None)
        heading = f"### {scene.title}"
        return sid, heading, msgs, who, gr.update(choices=scene.cast), \
            gr.update(choices=scene_choices(services), value=scene_label(scene))

    @user_errors
    def start(label: str | None, point_: float | None, cast_: list[str], setting_: str):
        story_id = parse_id(label)
        info = services.store.story(story_id)
        if not cast_:
            raise gr.Error("Choose at least one character for the cast.")
        p = info.n_actions if point_ is None else int(point_)
        if not 0 <= p <= info.n_actions:
            raise gr.Error(f"The story point must be between 0 and {info.n_actions}.")
        scene = services.store.create_scene(story_id, start_point=p, cast=list(cast_),
                                            setting=setting_.strip(), method="vanilla")
        return view(scene.id)

    @user_errors
    def resume(label: str | None):
        if not label:
            raise gr.Error("Choose a scene to resume.")
        return view(parse_id(label, "scene"))

    async def next_line(sid: int | None, who: str | None):
        if sid is None:
            raise gr.Error("Start or resume a scene first.")
        if not who:
            raise gr.Error("Choose who speaks next.")
        try:
            await generate_turn(services.store, services.llms, sid, who,
                                window=services.settings.scene_window)
        except BookmarksError as exc:
            raise gr.Error(str(exc)) from None
        return view(sid)

    @user_errors
    def say(sid: int | None, who: str | None, text: str):
        if sid is None:
            raise gr.Error("Start or resume a scene first.")
        add_user_turn(services.store, sid, who or "narration", text)
        return (*view(sid), "")

    outputs = [scene_id, title, chat, speaker, as_who, scenes]
    story.change(pick_story, [story], [point, cast])
    start_btn.click(start, [story, point, cast, setting], outputs)
    scenes.input(resume, [scenes], outputs)
    next_btn.click(next_line, [scene_id, speaker], outputs, concurrency_id="actor-model")
    say_btn.click(say, [scene_id, as_who, line], [*outputs, line])
    line.submit(say, [scene_id, as_who, line], [*outputs, line])
    return {"story": story, "backend": backend}

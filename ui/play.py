"""Play tab: start or resume a scene, play a character or direct, let the model speak,
and watch the memory side panel. Handlers are thin: all logic is in `bookmarks/`.

Three columns, each its own module: the New-scene form (play_form.py), the open scene
(play_scene.py) and its memory (play_memory.py). The form and the open scene share no
component: choosing a story or a character for a new scene never touches the open one.
On a phone the scene comes first, then its memory, then the form (see style.py)."""

from __future__ import annotations

import gradio as gr

from bookmarks.services import Services

from .library import story_choices
from .play_form import build_form, wire_form
from .play_memory import build_memory_column, wire_memory
from .play_scene import (
    DIRECTOR,
    ScenePage,
    build_scene_column,
    messages,
    scene_choices,
    wire_scene,
)

__all__ = ["DIRECTOR", "build_play_tab", "messages", "scene_choices"]


def build_play_tab(services: Services) -> dict:
    with gr.Tab("Play") as tab:
        scene_id = gr.State(None)
        with gr.Row(elem_id="play-row"):
            with gr.Column(scale=1, min_width=260, elem_id="play-form-col"):
                form = build_form(services)
            with gr.Column(scale=3, min_width=340, elem_id="play-scene-col"):
                scenes = gr.Dropdown(scene_choices(services), label="Open scene (resume one)",
                                     elem_id="play-scenes", value=None)
                sc = build_scene_column()
            with gr.Column(scale=2, min_width=300, elem_id="play-memory-col"):
                mem = build_memory_column()
    page = ScenePage(services, scene_id, sc, mem, scenes)
    wire_scene(services, page)
    wire_form(services, form, page)
    wire_memory(services, mem, scene_id)

    def refresh_lists():
        return {form.story: gr.update(choices=story_choices(services)),
                scenes: gr.update(choices=scene_choices(services))}

    tab.select(refresh_lists, None, [form.story, scenes])
    return {"story": form.story, "scene_id": scene_id, "scenes": scenes}

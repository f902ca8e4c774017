"""Settings tab: model endpoint per role, connection test. Keys are never shown back."""

from __future__ import annotations

import gradio as gr

from bookmarks import model_settings
from bookmarks.config import ROLES
from bookmarks.services import Services

from .render import esc, user_errors


def build_settings_tab(services: Services) -> None:
    with gr.Tab("Settings"):
        gr.Markdown("Each role can use its own OpenAI-compatible server. Leave base URL and key "
                    "empty to use the embedded local model. An empty key field keeps the stored "
                    "key; type `-` to clear it.")
        status = gr.Markdown(elem_id="settings-status")
        fields: dict[str, dict] = {}
        now = model_settings.current(services)
        for role in ROLES:
            with gr.Group():
                gr.Markdown(f"#### {role.capitalize()}")
                with gr.Row():
                    fields[role] = {
                        "base_url": gr.Textbox(now[role]["base_url"], label="Base URL",
                                               placeholder="embedded local model"),
                        "api_key": gr.Textbox("", label="API key", type="password",
                                              placeholder=f"stored: {now[role]['api_key_masked']}"),
                        "model": gr.Textbox(now[role]["model"], label="Model",
                                            elem_id=f"{role}-model"),
                        "temperature": gr.Number(now[role]["temperature"], label="Temperature",
                                                 minimum=0, maximum=2),
                    }
                    test = gr.Button(f"Test {role}", scale=0)
                test.click(user_errors(lambda r=role: model_settings.test_connection(services, r)),
                           None, status, concurrency_id="models", api_visibility="private")
        with gr.Group():
            gr.Markdown("#### Memory engine")
            with gr.Row():
                budget = gr.Number(services.settings.budget, precision=0, minimum=1, maximum=8,
                                   label="Default bookmark budget K (1-8)")
                block = gr.Number(services.settings.state_block, precision=0, minimum=8,
                                  maximum=512, label="State block size (actions)")
                window = gr.Number(services.settings.scene_window, precision=0, minimum=2,
                                   maximum=50, label="Scene window (actions)")
                partial = gr.Number(services.settings.partial_after, precision=0, minimum=0,
                                    label="Play: answer with the memory that is ready when a "
                                          "sync would read more than N actions (0: always wait)")
                engine_btn = gr.Button("Save engine settings", scale=0)

        @user_errors
        def do_engine(b, k, w, n):
            model_settings.save_engine(services, {"budget": b, "state_block": k,
                                                  "scene_window": w, "partial_after": n})
            return "Engine settings saved."

        engine_btn.click(do_engine, [budget, block, window, partial], status,
                         api_visibility="private")
        save = gr.Button("Save settings", variant="primary", elem_id="save-settings")
        inputs = [fields[r][k] for r in ROLES for k in model_settings.FIELDS]

        @user_errors
        def do_save(*values):
            it = iter(values)
            form = {r: {k: next(it) for k in model_settings.FIELDS} for r in ROLES}
            model_settings.save(services, form)
            lines = [esc(services.settings.role(r).describe()) for r in ROLES]
            return "Saved.  \n" + "  \n".join(lines), *[""] * len(ROLES)

        # settings change only through this page, never through the HTTP API
        save.click(do_save, inputs, [status, *[fields[r]["api_key"] for r in ROLES]],
                   api_visibility="private")

"""Turning stored data into what components show. Story text, bookmark text and model
output are untrusted: everything is HTML-escaped before it reaches the page."""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from typing import Any

import gradio as gr

from bookmarks.errors import BookmarksError
from bookmarks.store import SceneInfo, StoryInfo


def esc(text: str | None) -> str:
    return html.escape(text or "", quote=True)


def story_label(s: StoryInfo) -> str:
    return f"{s.id}: {s.title} ({s.n_actions} actions)"


def scene_label(s: SceneInfo) -> str:
    return f"{s.id}: {s.title} [{s.method}] — {s.updated_at[:16].replace('T', ' ')}"


def parse_id(label: str | int | None, what: str = "story") -> int:
    if isinstance(label, int):
        return label
    if not label:
        raise gr.Error(f"Choose a {what} first.")
    try:
        return int(str(label).split(":", 1)[0])
    except ValueError:
        raise gr.Error(f"Choose a {what} from the list.") from None


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Show the project's errors as Gradio error messages, never as tracebacks."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except (BookmarksError, ValueError) as exc:
            raise gr.Error(str(exc)) from None

    return wrapper

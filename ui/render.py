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


def message_of(exc: BaseException) -> str:
    return str(getattr(exc, "message", None) or exc)


def nothing(components) -> dict:
    """Leave these components as they are (an event's outputs it does not change)."""
    return {c: gr.update() for c in components}


def said(status: gr.components.Component, outputs=()) -> Callable[[Callable], Callable]:
    """A handler whose errors the writer can act on (no story chosen, an empty line, a
    model that failed) says them once, in `status`, and leaves every other output as it
    is: Gradio puts an error badge on each output of an event that raises `gr.Error`,
    replacing dropdowns and keeping the badge on files. The handler returns a dict of
    updates; on success `status` is cleared unless the handler set it."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                result = fn(*args, **kwargs)
            except (gr.Error, BookmarksError, ValueError) as exc:
                return {**nothing(outputs), status: note(message_of(exc))}
            return {status: "", **result}

        return wrapper

    return decorate


def note(text: str) -> str:
    """A status line: one sentence for the writer, escaped."""
    return f"<span class='bm-note'>{esc(text)}</span>" if text else ""


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

"""The project's error types.

Every error a user can cause or meet is one of these, with a message written as a
complete sentence that says what went wrong and what to do. The UI turns them into
`gr.Error`, the CLI into a one-line message and a non-zero exit.
"""

from __future__ import annotations


class BookmarksError(Exception):
    """Base class of every error the project raises on purpose."""


class StoryFormatError(BookmarksError):
    """A story file could not be read; names the file and, where known, the line."""

    def __init__(self, reason: str, *, file: str | None = None, line: int | None = None):
        self.reason = reason
        self.file = file
        self.line = line
        where = file or "story"
        if line is not None:
            where = f"{where}, line {line}"
        super().__init__(f"{where}: {reason}")


class NotFoundError(BookmarksError, KeyError):
    """A story, character, scene or bookmark that does not exist was asked for."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "Not found."


class ModelError(BookmarksError):
    """A model call failed (server unreachable, HTTP error, timeout, refused)."""


class ModelUnavailableError(ModelError):
    """No model backend can be used (e.g. the embedded model is not installed)."""


class StructuredOutputError(ModelError):
    """A model's structured reply stayed invalid after the repair re-ask."""


class NoUsableLineError(ModelError):
    """The actor gave no usable line for the character within its tries."""


class ConfigError(BookmarksError):
    """A setting or configuration file is invalid."""


class StaleMemoryError(BookmarksError):
    """Memory prepared for a storyline that has changed since (undo, edit) was not saved."""

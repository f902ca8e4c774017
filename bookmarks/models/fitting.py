"""Request fitting: a conservative estimate of a prompt's size and the last guard that cuts
an over-long prompt to the model's context (visibly marked). Prompt builders pack their
content to a budget first; `fit_messages` is what stands between them and an HTTP 400."""

from __future__ import annotations

# Prompt sizes are estimated, not tokenized (a server's tokenizer is not at hand): English
# prose runs ~4 characters a token; 3 leaves room for names, numbers and punctuation.
CHARS_PER_TOKEN = 3
MESSAGE_TOKENS = 8  # the chat template's own tokens per message
REPLY_MARGIN = 32
CUT_MARK = "\n[… {n} characters cut here to fit the model's context …]\n"


def estimate_tokens(messages: list[dict[str, str]]) -> int:
    """A conservative estimate of a prompt's size in tokens."""
    return sum(len(m["content"]) // CHARS_PER_TOKEN + MESSAGE_TOKENS for m in messages)


def fit_messages(messages: list[dict[str, str]], limit: int) -> list[dict[str, str]]:
    """The messages, cut to at most `limit` estimated tokens: the longest message loses
    the middle of its text (its beginning and its final instruction stay), visibly marked.
    Prompt builders pack their content to a budget first; this is the last guard."""
    over = estimate_tokens(messages) - limit
    if over <= 0:
        return messages
    msgs = [dict(m) for m in messages]
    longest = max(msgs, key=lambda m: len(m["content"]))
    text = longest["content"]
    drop = min(len(text), over * CHARS_PER_TOKEN + len(CUT_MARK) + 16)
    keep = len(text) - drop
    head, tail = text[: keep * 2 // 3], text[len(text) - keep // 3:] if keep // 3 else ""
    longest["content"] = head + CUT_MARK.format(n=drop) + tail
    return msgs

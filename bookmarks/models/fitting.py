"""Request fitting: a conservative estimate of a prompt's size and the last guard that cuts
an over-long prompt to the model's context (visibly marked). Prompt builders pack their
content to a budget first; `fit_messages` is what stands between them and an HTTP 400."""

from __future__ import annotations

import re

# Prompt sizes are estimated, not tokenized (a server's tokenizer is not at hand): English
# prose runs ~4 characters a token; 3 leaves room for names, numbers and punctuation.
# Chinese, Japanese and Korean text runs about one token per character (often more for
# rare characters): each such character counts one token.
CHARS_PER_TOKEN = 3
MESSAGE_TOKENS = 8  # the chat template's own tokens per message
REPLY_MARGIN = 32
CUT_MARK = "\n[… {n} characters cut here to fit the model's context …]\n"
LINE_MARK = " […{n} more characters cut]"
_WIDE = re.compile("[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff"
                   "\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]")


def text_tokens(text: str) -> int:
    """A conservative estimate of a text's size in tokens (CJK-aware)."""
    wide = len(_WIDE.findall(text))
    return wide + (len(text) - wide) // CHARS_PER_TOKEN


def estimate_tokens(messages: list[dict[str, str]]) -> int:
    """A conservative estimate of a prompt's size in tokens."""
    return sum(text_tokens(m["content"]) + MESSAGE_TOKENS for m in messages)


def clip_text(text: str, tokens: int, *, keep: str = "start") -> str:
    """`text` within about `tokens` tokens: its start (or its end, `keep="end"`) kept,
    the cut marked. Used for inputs with a hard limit of their own (an embedder's)."""
    if text_tokens(text) <= tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix (suffix) within the budget
        mid = (lo + hi + 1) // 2
        part = text[:mid] if keep == "start" else text[len(text) - mid:]
        if text_tokens(part) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] if keep == "start" else text[len(text) - lo:]


def fit_messages(messages: list[dict[str, str]], limit: int) -> list[dict[str, str]]:
    """The messages, cut to at most `limit` estimated tokens, visibly marked. The longest
    message is cut: first its over-long lines lose their ends (a line's start says who
    speaks and what they do), then older lines go from its middle — its beginning (what the
    prompt is) and its last lines (the newest line and the final instruction) stay whole
    as long as they fit. Prompt builders pack their content to a budget first; this is the
    last guard."""
    if estimate_tokens(messages) <= limit:
        return messages
    msgs = [dict(m) for m in messages]
    longest = max(msgs, key=lambda m: text_tokens(m["content"]))
    others = estimate_tokens(msgs) - text_tokens(longest["content"])
    longest["content"] = _fit_text(longest["content"], max(16, limit - others))
    return msgs


def _fit_text(text: str, budget: int) -> str:
    lines = text.split("\n")
    # 1. over-long lines keep their start: each at most an equal share of the budget
    cap = max(24, (budget - 16) // max(1, min(len(lines), 12)))
    lines = [ln if text_tokens(ln) <= cap else
             clip_text(ln, cap) + LINE_MARK.format(n=len(ln) - len(clip_text(ln, cap)))
             for ln in lines]
    if _size(lines) <= budget:
        return "\n".join(lines)
    # 2. whole lines go from the middle: the last lines (the newest line, the final
    # instruction) are kept first, up to two thirds of the budget; then the first lines
    # (what the prompt is); then, with room left, more of the last lines
    mark = text_tokens(CUT_MARK) + 1
    n_tail = _take(lines[::-1], (budget - mark) * 2 // 3, at_least=1)
    n_head = _take(lines[:len(lines) - n_tail], budget - mark - _size(lines[len(lines) - n_tail:]))
    n_tail += _take(lines[n_head:len(lines) - n_tail][::-1],
                    budget - mark - _size(lines[:n_head]) - _size(lines[len(lines) - n_tail:]))
    head, tail = lines[:n_head], lines[len(lines) - n_tail:]
    cut = sum(len(ln) + 1 for ln in lines[n_head:len(lines) - n_tail])
    out = "\n".join(head) + CUT_MARK.format(n=cut) + "\n".join(tail)
    if text_tokens(out) > budget:  # a tiny budget: the start stays
        out = clip_text(out, max(1, budget - mark)) + CUT_MARK.format(n=len(out))
    return out


def _take(lines: list[str], budget: int, at_least: int = 0) -> int:
    """How many of `lines`, from the first, fit in `budget` tokens (at least `at_least`)."""
    used = n = 0
    for ln in lines:
        used += text_tokens(ln) + 1
        if used > budget and n >= at_least:
            break
        n += 1
    return n


def _size(lines: list[str]) -> int:
    return sum(text_tokens(ln) + 1 for ln in lines)

"""HTML for the memory side panel. Every story, bookmark and model text is escaped."""

from __future__ import annotations

from .render import esc

BADGE = ('<span class="bm-badge bm-{kind}" style="display:inline-block;padding:0 6px;'
         'border-radius:8px;font-size:0.8em;margin-right:4px;background:{bg};color:#fff">'
         '{label}</span>')
# a card or lore entry at a turn: badge kind and label per status (see lore_report.py)
LORE = {"grounded": ("reused", "grounded"), "dropped": ("collapsed", "dropped"),
        "unused": ("?", "not used")}
COLORS = {"reused": "#2e7d32", "initialized": "#1565c0", "collapsed": "#6d4c41", "?": "#757575",
          "fallback": "#ef6c00"}


def badge(kind: str, label: str | None = None) -> str:
    return BADGE.format(kind=esc(kind), bg=COLORS.get(kind, "#757575"), label=esc(label or kind))


def activity_html(act: dict | None, turn_label: str = "") -> str:
    if not act:
        return "<p><em>Select a model turn to see what the memory did.</em></p>"
    parts = [f"<h4>Turn {esc(turn_label)}</h4>"]
    if act.get("knowledge"):
        k = act["knowledge"]
        parts.append(f'<p class="knowledge"><b>Witnessed knowledge of {esc(k["knower"])}</b>: '
                     f'memory and scene hold only what {esc(k["knower"])} was present for; '
                     f'{k["unseen"]} actions of the story were out of their sight.</p>')
    if act["proposed"]:
        parts.append("<b>Proposed sections</b><ul>")
        for p in act["proposed"]:
            detail = ""
            if p["outcome"] == "reused":
                same = p["matched_title"] == p["title"]
                detail = (f" — bookmark #{p['bookmark']} from checkpoint p={p['from_p']}"
                          + ("" if same else f" (“{esc(p['matched_title'])}”)"))
            elif p["outcome"] == "initialized":
                detail = f" — new bookmark #{p['bookmark']} at p=0"
            parts.append(f"<li>{badge(p['outcome'])}<b>{esc(p['title'])}</b> "
                         f"<small>[{esc(p['type'])}, about {esc(p['subject'])}]</small>{detail}</li>")
        parts.append("</ul>")
    elif act["reused_profiles"]:
        parts.append("<b>Profile sections</b><ul>" + "".join(
            f"<li>{badge(e['kind'])}{esc(e['title'])}</li>" for e in act["reused_profiles"])
            + "</ul>")
    if act.get("fallbacks"):
        parts.append("<b>Fallbacks</b> <small>(the memory model's reply stayed invalid; the "
                     "turn went on without it)</small><ul>")
        parts += [f'<li class="fallback">{badge("fallback", f["step"])}{esc(f["outcome"])} '
                  f'<small>({esc(f["reason"][:200])})</small></li>' for f in act["fallbacks"]]
        parts.append("</ul>")
    if act["syncs"]:
        parts.append("<b>Synchronization</b><ul>")
        for s in act["syncs"]:
            parts.append(
                f"<li>{esc(s['title'])}: p {s['p_old']} → {s['p_new']}, "
                f"read {count(s['actions_read'], 'action')} (without reuse "
                f"{s['actions_read_wo']}), {count(s['calls'], 'call')}, "
                f"{s['prompt_tokens'] + s['completion_tokens']} tokens "
                f"(without reuse ≈{round(s['tokens_wo'])}){_cached(s.get('cached'))}"
                f"{_stall(act['stalls'].get(s['bookmark']))}</li>")
        parts.append("</ul>")
    if act.get("lore"):
        parts.append("<b>Card and lore memory</b><ul>")
        parts += [f'<li class="lore lore-{e["status"]}">{badge(LORE[e["status"]][0], LORE[e["status"]][1])}'
                  f'<b>{esc(e["title"])}</b> <small>({esc(e["why"])})</small></li>'
                  for e in act["lore"]]
        parts.append("</ul>")
    if act["state_changes"]:
        parts.append("<b>State traces</b><ul>")
        for c in act["state_changes"]:
            verb = "refined" if c["kind"] == "state_refined" else "appended"
            before = f"<del>{esc(c['before'])}</del> → " if c["before"] else ""
            parts.append(f"<li><i>{esc(c['title'])}</i> {verb} (actions {c['range'][0]}–"
                         f"{c['range'][1]}): {before}<ins>{esc(c['after'])}</ins></li>")
        parts.append("</ul>")
    calls, usage = act["calls"], act.get("usage") or {}
    memory_tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    parts.append(f"<p><small>This turn's memory: {count(usage.get('calls', 0), 'model call')}, "
                 f"{memory_tokens} tokens (as in the cost meter); "
                 + (f"actor tries: {act['actor_tries']}" if act["actor_tries"] is not None
                    else "no actor call (a greeting or a line written by hand)")
                 + f". Logged since the previous line: {count(calls['calls'], 'model call')}, "
                 f"{calls['tokens']} tokens, {calls['latency_ms'] / 1000:.1f} s of model "
                 "time — this includes discarded attempts (a regenerated line) and background "
                 "work for other speakers.</small></p>")
    if act["grounding"]:
        pieces = "".join(
            f"<li>{esc(_label(p))}: actions {esc(', '.join(map(str, p['evidence'][:12])))}</li>"
            for p in act["pieces"] if p.get("evidence"))
        parts.append("<details open><summary><b>Grounding the actor saw</b></summary>"
                     f"<pre style='white-space:pre-wrap'>{esc(act['grounding'])}</pre>"
                     + (f"<b>Evidence</b><ul>{pieces}</ul>" if pieces else "") + "</details>")
    else:
        parts.append("<p><i>No grounding (Vanilla, or nothing relevant yet).</i></p>")
    return "\n".join(parts)


def cost_html(meter: dict) -> str:
    t, s = meter["turn"], meter["scene"]
    return (
        "<div class='bm-cost'><b>Cost meter</b><br>"
        f"This turn: {t['memory_tokens']} memory tokens; sync {t['sync_tokens']} "
        f"(≈{t['sync_tokens_without_reuse']} without reuse)<br>"
        f"Scene so far: {s['memory_tokens']} memory tokens; sync {s['sync_tokens']} "
        f"(≈{s['sync_tokens_without_reuse']} without reuse) — <b>saved ≈{s['saved']} tokens by "
        "reuse</b>"
        + (f"; ≈{s['from_cache']} tokens of work served from the reply cache"
           if s.get("from_cache") else "") + "</div>")


def passage_md(lines: list[dict]) -> str:
    out = []
    for ln in lines:
        text = f"[{ln['index']}] {esc(ln['character'])}: {esc(ln['text'])}"
        out.append(f"**{text}**" if ln["focus"] else text)
    return "  \n".join(out)


def timeline_html(timeline: dict) -> str:
    bm = timeline["bookmark"]
    pin = " 📌 pinned" if bm["pinned"] else ""
    parts = [f"<h4>#{bm['id']} {esc(bm['title'])}</h4><small>{esc(bm['type'])}, about "
             f"{esc(bm['subject'])}{pin}</small><ol>"]
    for v in timeline["versions"]:
        diff = "".join(
            f"<div style='color:{'#2e7d32' if ln.startswith('+') else '#c62828'}'>{esc(ln)}</div>"
            for ln in v["diff"].splitlines() if ln[:1] in "+-")
        parts.append(f"<li>p={v['p']} (branch {v['branch_id']})<pre style='white-space:pre-wrap'>"
                     f"{esc(v['text'])}</pre>{diff}</li>")
    parts.append("</ol>")
    return "".join(parts)


def count(n: float, word: str) -> str:
    """`1 call`, `2 calls`, `0.5 calls` (a share of a joint call)."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _cached(cached: dict | None) -> str:
    """A synchronization the reply cache served: what the same work cost the first time."""
    if not cached:
        return ""
    return (f' — <b class="from-cache">from cache</b>: this work first took '
            f'{count(cached["calls"], "call")}, {cached["tokens"]} tokens')


def _stall(stall: dict | None) -> str:
    """A sync that stopped early: how far it got and why (the next turn continues)."""
    if not stall:
        return ""
    if stall["kind"] == "sync_deferred":
        return (f' — <b class="stalled">partial memory: as of p {stall["p"]}, {stall["behind"]} '
                "actions behind</b> <small>(not waited for; it catches up in the "
                "background)</small>")
    return (f' — <b class="stalled">synchronized to p {stall["p"]}, {stall["behind"]} actions '
            f'behind</b> <small>({esc(stall["reason"][:200])}; the next turn continues from '
            "there)</small>")


def _label(piece: dict) -> str:
    """A grounding piece's label with its bookmark's id, known once the turn committed (the
    actor saw "#new" for a bookmark initialized in that turn)."""
    if piece.get("bookmark_id") is not None:
        return piece["label"].replace("(#new,", f"(#{piece['bookmark_id']},")
    return piece["label"]

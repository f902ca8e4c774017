"""The page's own CSS: a spinner for waiting lines (no emoji: Debian's Chromium has no
emoji font), status lines, a line's place in its file in a fixed-width font (its numbers
aligned, its hard wraps as in the file), and the order of the Play columns on a phone (the
scene first, then its memory, then the New-scene form)."""

CSS = """
.bm-spinner { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.4em;
  border: 2px solid currentColor; border-right-color: transparent; border-radius: 50%;
  vertical-align: -0.1em; animation: bm-spin 0.8s linear infinite; }
@keyframes bm-spin { to { transform: rotate(360deg); } }
.bm-note { font-weight: 600; }
#play-status:empty, #form-status:empty { display: none; }
#start-here { border-left: 4px solid var(--color-accent); padding: 4px 12px; }
#library-stories table { table-layout: fixed; }
#library-stories td, #library-stories th { overflow-wrap: anywhere; }
#line-source textarea { font-family: var(--font-mono), monospace; font-size: 0.85em;
  white-space: pre-wrap; }
@media (max-width: 820px) {
  #play-scene-col { order: -2; }
  #play-memory-col { order: -1; }
  #scene-chat { height: 50vh !important; max-height: 50vh; }
}
"""

"""Bookmarks: role-play with story characters, grounded by checkpointed memory.

The code is laid out by part of the architecture; imports run one way only, downwards:

    ui/  →  cli, services, model_settings  →  evaluation  →  scenes  →  engine
         →  models  →  store  →  stories  →  config, errors, memory (shared small types)

- `stories/`     readers and writers of every story, card and lorebook format; presence.
- `store/`       the SQLite database and its migrations: the only package that speaks SQL.
- `models/`      the only code that talks to a model server; the embedded server; scripted
                 test models.
- `engine/`      the memory engine and the methods (Bookmarks, baselines, ablations), the
                 actor, and `ground_at`, the one entry point for grounding a prediction.
- `scenes/`      turns of a scene, background preparation, prepared story memory, panel events.
- `evaluation/`  walks, NAP, MCQ, the arena, statistics, reports and exports.

`tests/test_layout.py` checks the direction, that there are no import circles and that no
file is over 500 lines.
"""

__version__ = "0.1.0"

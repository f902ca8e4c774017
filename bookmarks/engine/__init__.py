"""Engine: the memory engine and the methods — lineage, recall, matching, synchronization,
grounding, memory prompts, Bookmarks, the baselines (Vanilla, RICL, ETA, 3-way ETA) and the
ablations — plus the actor (the role-playing call), card memory and model-assisted
attribution. `ground.ground_at` grounds one prediction at a story point.

May import: models, store, stories, `bookmarks.config/errors/memory`. It knows no UI, no
scenes and no evaluation.
"""

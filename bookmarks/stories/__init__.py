"""Stories: readers and writers of every story, card and lorebook format (JSONL, script,
prose, Project Gutenberg plays and novels, Fountain, SillyTavern cards and World Info),
the storyline's types, and presence (who could perceive each action).

May import: `bookmarks.errors` and this package. Nothing above it: the story readers know
no database, no model and no engine.
"""

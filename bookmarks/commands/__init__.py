"""Subcommands of the `bookmarks` command that outgrew cli.py: a whole story out
(`export --story`), character cards and World Info in (`card add`, `lore add`), one
line of a storyline shown or corrected (`line`).

Same rank as `bookmarks.cli` (it may import anything below); errors the user can act on
are `BookmarksError`s, printed by cli.main as one line.
"""

"""Bookmarks: role-play with story characters, grounded by checkpointed memory.

The engine lives in this package and never imports the UI (`ui/`).
"""

__version__ = "0.1.0"

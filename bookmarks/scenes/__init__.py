"""Scenes: turns of a scene (generate, user lines, undo, regenerate, fork), background
preparation of the next step, prepared story memory (`prepare`), the memory panel's data
and scene exports.

May import: engine and everything below it. Not evaluation, not the UI.
"""

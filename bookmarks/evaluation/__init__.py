"""Evaluation: walks over story points, next-action prediction with the 5-dimension judge
and Best@k, multiple-choice questions, the open-domain arena and its votes, statistics,
reports and exports.

May import: scenes (the arena plays scenes), engine and everything below. Not the UI.
"""

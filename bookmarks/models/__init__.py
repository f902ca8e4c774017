"""Models: the only code that talks to a model server (any OpenAI-compatible endpoint),
with request fitting, structured output, the reply cache and call log hooks; the embedded
llama.cpp server; scripted models for tests (clearly named test doubles).

May import: `bookmarks.config`, `bookmarks.errors`, `bookmarks.store` (the call log and
reply cache) and this package.
"""

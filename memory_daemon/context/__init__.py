"""Search over every kind (memories, facts, episodes, decisions) and what is built on it: compile_context's
token-budgeted, cited context and the briefing prompts.

May import `core`, `store`, `retrieval` and the domains (`memory`, `graph`, `journal`).
"""

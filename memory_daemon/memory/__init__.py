"""The memory domain: validates, saves, finds, opens, reinforces, promotes, archives and imports memories.

May import `core`, `store`, `activation` and `retrieval`.
"""

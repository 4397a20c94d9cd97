"""The knowledge graph: entities, bi-temporal facts with supersession and time travel, the traversable edges in RAM,
and the valid-time timeline planner.

May import `core`, `store` and `memory`.
"""

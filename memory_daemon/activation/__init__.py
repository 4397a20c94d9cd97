"""Conversational activation inside the daemon: loads the `preprocessing` models once and turns a message into
signals (save or recall request, intent, entities, importance, tags), degrading stage by stage.

May import `core` and `preprocessing`; never the store, retrieval or the API.
"""

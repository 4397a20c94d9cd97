"""What happened while working: the decision log, each session's working memory and summary, and tool calls the
proxies observed (passive capture).

May import `core`, `store`, `memory` and `graph`.
"""

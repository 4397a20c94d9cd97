"""The search engines and their fusion: each namespace's BM25 index, embeddings and vector graph, the row cache, the
item index over facts, episodes and decisions, and the hybrid retriever that fuses their signals.

May import `core` and `store`; the domains above (memory, graph, context) call into it, never the reverse.
"""

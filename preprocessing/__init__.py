"""Conversational activation: pure text analysis (phrases, entities, embeddings, intents), with no store and no gRPC."""

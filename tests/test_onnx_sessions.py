"""Every ONNX model session leaves its idle threads asleep (the daemon's background-priority imports wait on them)
and keeps no memory arena (one would hold the peak of the largest batch for the daemon's life)."""

from preprocessing.encoder import SentenceEncoder
from preprocessing.intent_model import IntentModel
from preprocessing.relation_model import RelationModel
from preprocessing.relevance_model import RelevanceModel


def test_every_model_session_runs_without_spinning_threads():
    sessions = [SentenceEncoder.from_registry()._session, IntentModel.from_registry()._session,
                RelationModel.load()._session, RelevanceModel.load()._pairs._session]
    for session in sessions:
        options = session.get_session_options()
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert options.enable_cpu_mem_arena is False

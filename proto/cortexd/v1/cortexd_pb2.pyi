from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
MCP_TOOL_FIELD_NUMBER: _ClassVar[int]
mcp_tool: _descriptor.FieldDescriptor
WRITES_FIELD_NUMBER: _ClassVar[int]
writes: _descriptor.FieldDescriptor
TOOL_TITLE_FIELD_NUMBER: _ClassVar[int]
tool_title: _descriptor.FieldDescriptor
EVERYDAY_FIELD_NUMBER: _ClassVar[int]
everyday: _descriptor.FieldDescriptor
DESTRUCTIVE_FIELD_NUMBER: _ClassVar[int]
destructive: _descriptor.FieldDescriptor
IDEMPOTENT_FIELD_NUMBER: _ClassVar[int]
idempotent: _descriptor.FieldDescriptor
REQUIRED_FIELD_NUMBER: _ClassVar[int]
required: _descriptor.FieldDescriptor
CHOICES_FIELD_NUMBER: _ClassVar[int]
choices: _descriptor.FieldDescriptor
ADVANCED_FIELD_NUMBER: _ClassVar[int]
advanced: _descriptor.FieldDescriptor

class Memory(_message.Message):
    __slots__ = ("id", "content", "tags", "entities", "strength", "created_at", "last_used_at", "use_count", "source", "context", "session_id", "namespace", "meta", "external_id", "superseded_by", "superseded_at", "long_term", "archived_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_AT_FIELD_NUMBER: _ClassVar[int]
    USE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    META_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_AT_FIELD_NUMBER: _ClassVar[int]
    LONG_TERM_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    content: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    entities: _containers.RepeatedScalarFieldContainer[str]
    strength: float
    created_at: str
    last_used_at: str
    use_count: int
    source: str
    context: str
    session_id: str
    namespace: str
    meta: _struct_pb2.Struct
    external_id: str
    superseded_by: str
    superseded_at: str
    long_term: bool
    archived_at: str
    def __init__(self, id: _Optional[str] = ..., content: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., entities: _Optional[_Iterable[str]] = ..., strength: _Optional[float] = ..., created_at: _Optional[str] = ..., last_used_at: _Optional[str] = ..., use_count: _Optional[int] = ..., source: _Optional[str] = ..., context: _Optional[str] = ..., session_id: _Optional[str] = ..., namespace: _Optional[str] = ..., meta: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., external_id: _Optional[str] = ..., superseded_by: _Optional[str] = ..., superseded_at: _Optional[str] = ..., long_term: _Optional[bool] = ..., archived_at: _Optional[str] = ...) -> None: ...

class SaveMemoryRequest(_message.Message):
    __slots__ = ("content", "tags", "entities", "strength", "source", "context", "session_id", "meta", "extract_facts", "supersedes")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    META_FIELD_NUMBER: _ClassVar[int]
    EXTRACT_FACTS_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDES_FIELD_NUMBER: _ClassVar[int]
    content: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    entities: _containers.RepeatedScalarFieldContainer[str]
    strength: float
    source: str
    context: str
    session_id: str
    meta: _struct_pb2.Struct
    extract_facts: bool
    supersedes: str
    def __init__(self, content: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., entities: _Optional[_Iterable[str]] = ..., strength: _Optional[float] = ..., source: _Optional[str] = ..., context: _Optional[str] = ..., session_id: _Optional[str] = ..., meta: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., extract_facts: _Optional[bool] = ..., supersedes: _Optional[str] = ...) -> None: ...

class SaveMemoryReply(_message.Message):
    __slots__ = ("memory", "auto_filled", "deduplication", "merged", "degraded", "facts", "superseded_facts", "superseded_memories")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    AUTO_FILLED_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATION_FIELD_NUMBER: _ClassVar[int]
    MERGED_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FACTS_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_MEMORIES_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    auto_filled: _containers.RepeatedScalarFieldContainer[str]
    deduplication: Deduplication
    merged: bool
    degraded: _containers.RepeatedScalarFieldContainer[str]
    facts: _containers.RepeatedCompositeFieldContainer[Fact]
    superseded_facts: _containers.RepeatedCompositeFieldContainer[Fact]
    superseded_memories: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ..., auto_filled: _Optional[_Iterable[str]] = ..., deduplication: _Optional[_Union[Deduplication, _Mapping]] = ..., merged: _Optional[bool] = ..., degraded: _Optional[_Iterable[str]] = ..., facts: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., superseded_facts: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., superseded_memories: _Optional[_Iterable[str]] = ...) -> None: ...

class AnalyzeMessageRequest(_message.Message):
    __slots__ = ("message", "session_id", "namespace")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    message: str
    session_id: str
    namespace: str
    def __init__(self, message: _Optional[str] = ..., session_id: _Optional[str] = ..., namespace: _Optional[str] = ...) -> None: ...

class PhraseSignals(_message.Message):
    __slots__ = ("save_request", "recall_request", "importance_marker", "matched_phrases")
    SAVE_REQUEST_FIELD_NUMBER: _ClassVar[int]
    RECALL_REQUEST_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_MARKER_FIELD_NUMBER: _ClassVar[int]
    MATCHED_PHRASES_FIELD_NUMBER: _ClassVar[int]
    save_request: bool
    recall_request: bool
    importance_marker: bool
    matched_phrases: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, save_request: _Optional[bool] = ..., recall_request: _Optional[bool] = ..., importance_marker: _Optional[bool] = ..., matched_phrases: _Optional[_Iterable[str]] = ...) -> None: ...

class SuggestedEntity(_message.Message):
    __slots__ = ("text", "label", "key")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    text: str
    label: str
    key: str
    def __init__(self, text: _Optional[str] = ..., label: _Optional[str] = ..., key: _Optional[str] = ...) -> None: ...

class Deduplication(_message.Message):
    __slots__ = ("action", "memory_id", "memory_content", "similarity", "reasons")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_CONTENT_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    action: str
    memory_id: str
    memory_content: str
    similarity: float
    reasons: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, action: _Optional[str] = ..., memory_id: _Optional[str] = ..., memory_content: _Optional[str] = ..., similarity: _Optional[float] = ..., reasons: _Optional[_Iterable[str]] = ...) -> None: ...

class AnalyzeMessageReply(_message.Message):
    __slots__ = ("signals", "should_save", "action_recommendation", "confidence", "intent", "intent_source", "intent_probabilities", "suggested_entities", "suggested_tags", "suggested_strength", "deduplication", "reasoning", "context_used", "timings_ms", "degraded", "id", "suggested_content", "suggested_facts")
    class IntentProbabilitiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class TimingsMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    SIGNALS_FIELD_NUMBER: _ClassVar[int]
    SHOULD_SAVE_FIELD_NUMBER: _ClassVar[int]
    ACTION_RECOMMENDATION_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    INTENT_SOURCE_FIELD_NUMBER: _ClassVar[int]
    INTENT_PROBABILITIES_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_ENTITIES_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_TAGS_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_STRENGTH_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATION_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_USED_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_CONTENT_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_FACTS_FIELD_NUMBER: _ClassVar[int]
    signals: PhraseSignals
    should_save: bool
    action_recommendation: str
    confidence: float
    intent: str
    intent_source: str
    intent_probabilities: _containers.ScalarMap[str, float]
    suggested_entities: _containers.RepeatedCompositeFieldContainer[SuggestedEntity]
    suggested_tags: _containers.RepeatedScalarFieldContainer[str]
    suggested_strength: float
    deduplication: Deduplication
    reasoning: _containers.RepeatedScalarFieldContainer[str]
    context_used: _containers.RepeatedScalarFieldContainer[str]
    timings_ms: _containers.ScalarMap[str, float]
    degraded: _containers.RepeatedScalarFieldContainer[str]
    id: str
    suggested_content: str
    suggested_facts: _containers.RepeatedCompositeFieldContainer[SuggestedFact]
    def __init__(self, signals: _Optional[_Union[PhraseSignals, _Mapping]] = ..., should_save: _Optional[bool] = ..., action_recommendation: _Optional[str] = ..., confidence: _Optional[float] = ..., intent: _Optional[str] = ..., intent_source: _Optional[str] = ..., intent_probabilities: _Optional[_Mapping[str, float]] = ..., suggested_entities: _Optional[_Iterable[_Union[SuggestedEntity, _Mapping]]] = ..., suggested_tags: _Optional[_Iterable[str]] = ..., suggested_strength: _Optional[float] = ..., deduplication: _Optional[_Union[Deduplication, _Mapping]] = ..., reasoning: _Optional[_Iterable[str]] = ..., context_used: _Optional[_Iterable[str]] = ..., timings_ms: _Optional[_Mapping[str, float]] = ..., degraded: _Optional[_Iterable[str]] = ..., id: _Optional[str] = ..., suggested_content: _Optional[str] = ..., suggested_facts: _Optional[_Iterable[_Union[SuggestedFact, _Mapping]]] = ...) -> None: ...

class SuggestedFact(_message.Message):
    __slots__ = ("subject", "predicate", "object", "singular", "change", "previous_object")
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    SINGULAR_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_OBJECT_FIELD_NUMBER: _ClassVar[int]
    subject: str
    predicate: str
    object: str
    singular: bool
    change: str
    previous_object: str
    def __init__(self, subject: _Optional[str] = ..., predicate: _Optional[str] = ..., object: _Optional[str] = ..., singular: _Optional[bool] = ..., change: _Optional[str] = ..., previous_object: _Optional[str] = ...) -> None: ...

class AnalyzeItem(_message.Message):
    __slots__ = ("id", "message", "session_id", "namespace")
    ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    id: str
    message: str
    session_id: str
    namespace: str
    def __init__(self, id: _Optional[str] = ..., message: _Optional[str] = ..., session_id: _Optional[str] = ..., namespace: _Optional[str] = ...) -> None: ...

class AnalyzeMessagesRequest(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[AnalyzeItem]
    def __init__(self, items: _Optional[_Iterable[_Union[AnalyzeItem, _Mapping]]] = ...) -> None: ...

class AnalyzeMessagesReply(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[AnalyzeMessageReply]
    def __init__(self, results: _Optional[_Iterable[_Union[AnalyzeMessageReply, _Mapping]]] = ...) -> None: ...

class GetModelStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ModelStatus(_message.Message):
    __slots__ = ("name", "path", "ok", "detail", "sha256", "load_ms")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    LOAD_MS_FIELD_NUMBER: _ClassVar[int]
    name: str
    path: str
    ok: bool
    detail: str
    sha256: str
    load_ms: float
    def __init__(self, name: _Optional[str] = ..., path: _Optional[str] = ..., ok: _Optional[bool] = ..., detail: _Optional[str] = ..., sha256: _Optional[str] = ..., load_ms: _Optional[float] = ...) -> None: ...

class GetModelStatusReply(_message.Message):
    __slots__ = ("models", "degraded")
    MODELS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedCompositeFieldContainer[ModelStatus]
    degraded: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, models: _Optional[_Iterable[_Union[ModelStatus, _Mapping]]] = ..., degraded: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchMemoryRequest(_message.Message):
    __slots__ = ("query", "limit", "tags", "since", "until", "signals", "include_history", "session_id", "entity", "kinds")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    SIGNALS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HISTORY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    query: str
    limit: int
    tags: _containers.RepeatedScalarFieldContainer[str]
    since: str
    until: str
    signals: _containers.RepeatedScalarFieldContainer[str]
    include_history: bool
    session_id: str
    entity: str
    kinds: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, query: _Optional[str] = ..., limit: _Optional[int] = ..., tags: _Optional[_Iterable[str]] = ..., since: _Optional[str] = ..., until: _Optional[str] = ..., signals: _Optional[_Iterable[str]] = ..., include_history: _Optional[bool] = ..., session_id: _Optional[str] = ..., entity: _Optional[str] = ..., kinds: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("memory", "fact", "episode", "decision", "score", "signal_scores", "kind")
    class SignalScoresEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    FACT_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_SCORES_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    fact: Fact
    episode: Episode
    decision: Decision
    score: float
    signal_scores: _containers.ScalarMap[str, float]
    kind: str
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ..., fact: _Optional[_Union[Fact, _Mapping]] = ..., episode: _Optional[_Union[Episode, _Mapping]] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ..., score: _Optional[float] = ..., signal_scores: _Optional[_Mapping[str, float]] = ..., kind: _Optional[str] = ...) -> None: ...

class SearchMemoryReply(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ...) -> None: ...

class OpenMemoriesRequest(_message.Message):
    __slots__ = ("ids",)
    IDS_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ids: _Optional[_Iterable[str]] = ...) -> None: ...

class OpenMemoriesReply(_message.Message):
    __slots__ = ("memories",)
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    def __init__(self, memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ...) -> None: ...

class TouchMemoryRequest(_message.Message):
    __slots__ = ("id", "boost_strength")
    ID_FIELD_NUMBER: _ClassVar[int]
    BOOST_STRENGTH_FIELD_NUMBER: _ClassVar[int]
    id: str
    boost_strength: bool
    def __init__(self, id: _Optional[str] = ..., boost_strength: _Optional[bool] = ...) -> None: ...

class TouchMemoryReply(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ...) -> None: ...

class ImportRecord(_message.Message):
    __slots__ = ("id", "text", "namespace", "timestamp", "speaker", "session")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    namespace: str
    timestamp: str
    speaker: str
    session: str
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., namespace: _Optional[str] = ..., timestamp: _Optional[str] = ..., speaker: _Optional[str] = ..., session: _Optional[str] = ...) -> None: ...

class ImportReply(_message.Message):
    __slots__ = ("imported", "skipped", "errors", "update_checks_pending")
    IMPORTED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_CHECKS_PENDING_FIELD_NUMBER: _ClassVar[int]
    imported: int
    skipped: int
    errors: _containers.RepeatedScalarFieldContainer[str]
    update_checks_pending: int
    def __init__(self, imported: _Optional[int] = ..., skipped: _Optional[int] = ..., errors: _Optional[_Iterable[str]] = ..., update_checks_pending: _Optional[int] = ...) -> None: ...

class GetStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStatusReply(_message.Message):
    __slots__ = ("version", "pid", "uptime_seconds", "data_dir", "database_path", "schema_version", "memory_count", "listen_address", "namespace", "proxies", "models", "degraded_models", "wal_bytes", "indexes", "update_checks", "holder_readings_pending")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    UPTIME_SECONDS_FIELD_NUMBER: _ClassVar[int]
    DATA_DIR_FIELD_NUMBER: _ClassVar[int]
    DATABASE_PATH_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_COUNT_FIELD_NUMBER: _ClassVar[int]
    LISTEN_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    PROXIES_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_MODELS_FIELD_NUMBER: _ClassVar[int]
    WAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    INDEXES_FIELD_NUMBER: _ClassVar[int]
    UPDATE_CHECKS_FIELD_NUMBER: _ClassVar[int]
    HOLDER_READINGS_PENDING_FIELD_NUMBER: _ClassVar[int]
    version: str
    pid: int
    uptime_seconds: float
    data_dir: str
    database_path: str
    schema_version: int
    memory_count: int
    listen_address: str
    namespace: str
    proxies: _containers.RepeatedCompositeFieldContainer[ProxyHealth]
    models: str
    degraded_models: _containers.RepeatedScalarFieldContainer[str]
    wal_bytes: int
    indexes: _containers.RepeatedCompositeFieldContainer[IndexStatus]
    update_checks: _containers.RepeatedCompositeFieldContainer[UpdateChecksPending]
    holder_readings_pending: int
    def __init__(self, version: _Optional[str] = ..., pid: _Optional[int] = ..., uptime_seconds: _Optional[float] = ..., data_dir: _Optional[str] = ..., database_path: _Optional[str] = ..., schema_version: _Optional[int] = ..., memory_count: _Optional[int] = ..., listen_address: _Optional[str] = ..., namespace: _Optional[str] = ..., proxies: _Optional[_Iterable[_Union[ProxyHealth, _Mapping]]] = ..., models: _Optional[str] = ..., degraded_models: _Optional[_Iterable[str]] = ..., wal_bytes: _Optional[int] = ..., indexes: _Optional[_Iterable[_Union[IndexStatus, _Mapping]]] = ..., update_checks: _Optional[_Iterable[_Union[UpdateChecksPending, _Mapping]]] = ..., holder_readings_pending: _Optional[int] = ...) -> None: ...

class UpdateChecksPending(_message.Message):
    __slots__ = ("namespace", "pending")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    pending: int
    def __init__(self, namespace: _Optional[str] = ..., pending: _Optional[int] = ...) -> None: ...

class IndexStatus(_message.Message):
    __slots__ = ("namespace", "mode", "rows", "unsaved")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    UNSAVED_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    mode: str
    rows: int
    unsaved: int
    def __init__(self, namespace: _Optional[str] = ..., mode: _Optional[str] = ..., rows: _Optional[int] = ..., unsaved: _Optional[int] = ...) -> None: ...

class RebuildIndexesRequest(_message.Message):
    __slots__ = ("target_namespace",)
    TARGET_NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    target_namespace: str
    def __init__(self, target_namespace: _Optional[str] = ...) -> None: ...

class RebuildIndexesReply(_message.Message):
    __slots__ = ("namespace", "mode")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    mode: str
    def __init__(self, namespace: _Optional[str] = ..., mode: _Optional[str] = ...) -> None: ...

class RecordObservationRequest(_message.Message):
    __slots__ = ("upstream", "tool", "arguments_json", "result_text", "is_error")
    UPSTREAM_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    RESULT_TEXT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    upstream: str
    tool: str
    arguments_json: str
    result_text: str
    is_error: bool
    def __init__(self, upstream: _Optional[str] = ..., tool: _Optional[str] = ..., arguments_json: _Optional[str] = ..., result_text: _Optional[str] = ..., is_error: _Optional[bool] = ...) -> None: ...

class RecordObservationReply(_message.Message):
    __slots__ = ("episode_id", "memories", "degraded")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    degraded: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, episode_id: _Optional[str] = ..., memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ..., degraded: _Optional[_Iterable[str]] = ...) -> None: ...

class UpstreamHealth(_message.Message):
    __slots__ = ("name", "transport", "state", "last_error", "tool_count", "state_since", "capture", "calls", "failed_calls", "observations_dropped")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    TOOL_COUNT_FIELD_NUMBER: _ClassVar[int]
    STATE_SINCE_FIELD_NUMBER: _ClassVar[int]
    CAPTURE_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    FAILED_CALLS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_DROPPED_FIELD_NUMBER: _ClassVar[int]
    name: str
    transport: str
    state: str
    last_error: str
    tool_count: int
    state_since: str
    capture: bool
    calls: int
    failed_calls: int
    observations_dropped: int
    def __init__(self, name: _Optional[str] = ..., transport: _Optional[str] = ..., state: _Optional[str] = ..., last_error: _Optional[str] = ..., tool_count: _Optional[int] = ..., state_since: _Optional[str] = ..., capture: _Optional[bool] = ..., calls: _Optional[int] = ..., failed_calls: _Optional[int] = ..., observations_dropped: _Optional[int] = ...) -> None: ...

class ProxyHealth(_message.Message):
    __slots__ = ("proxy_id", "pid", "namespace", "upstreams", "reported_at")
    PROXY_ID_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    UPSTREAMS_FIELD_NUMBER: _ClassVar[int]
    REPORTED_AT_FIELD_NUMBER: _ClassVar[int]
    proxy_id: str
    pid: int
    namespace: str
    upstreams: _containers.RepeatedCompositeFieldContainer[UpstreamHealth]
    reported_at: str
    def __init__(self, proxy_id: _Optional[str] = ..., pid: _Optional[int] = ..., namespace: _Optional[str] = ..., upstreams: _Optional[_Iterable[_Union[UpstreamHealth, _Mapping]]] = ..., reported_at: _Optional[str] = ...) -> None: ...

class ReportProxyHealthRequest(_message.Message):
    __slots__ = ("proxy",)
    PROXY_FIELD_NUMBER: _ClassVar[int]
    proxy: ProxyHealth
    def __init__(self, proxy: _Optional[_Union[ProxyHealth, _Mapping]] = ...) -> None: ...

class ReportProxyHealthReply(_message.Message):
    __slots__ = ("report_within_seconds",)
    REPORT_WITHIN_SECONDS_FIELD_NUMBER: _ClassVar[int]
    report_within_seconds: float
    def __init__(self, report_within_seconds: _Optional[float] = ...) -> None: ...

class ToolSpec(_message.Message):
    __slots__ = ("name", "description", "input_schema_json", "title", "read_only", "destructive", "idempotent", "everyday")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    DESTRUCTIVE_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENT_FIELD_NUMBER: _ClassVar[int]
    EVERYDAY_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema_json: str
    title: str
    read_only: bool
    destructive: bool
    idempotent: bool
    everyday: bool
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema_json: _Optional[str] = ..., title: _Optional[str] = ..., read_only: _Optional[bool] = ..., destructive: _Optional[bool] = ..., idempotent: _Optional[bool] = ..., everyday: _Optional[bool] = ...) -> None: ...

class ListToolsRequest(_message.Message):
    __slots__ = ("profile",)
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    profile: str
    def __init__(self, profile: _Optional[str] = ...) -> None: ...

class ListToolsReply(_message.Message):
    __slots__ = ("tools",)
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[ToolSpec]
    def __init__(self, tools: _Optional[_Iterable[_Union[ToolSpec, _Mapping]]] = ...) -> None: ...

class CallToolRequest(_message.Message):
    __slots__ = ("name", "arguments_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    arguments_json: str
    def __init__(self, name: _Optional[str] = ..., arguments_json: _Optional[str] = ...) -> None: ...

class CallToolReply(_message.Message):
    __slots__ = ("result_json",)
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    result_json: str
    def __init__(self, result_json: _Optional[str] = ...) -> None: ...

class ResourceSpec(_message.Message):
    __slots__ = ("uri", "name", "description", "mime_type")
    URI_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    uri: str
    name: str
    description: str
    mime_type: str
    def __init__(self, uri: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., mime_type: _Optional[str] = ...) -> None: ...

class ListResourcesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListResourcesReply(_message.Message):
    __slots__ = ("resources",)
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    resources: _containers.RepeatedCompositeFieldContainer[ResourceSpec]
    def __init__(self, resources: _Optional[_Iterable[_Union[ResourceSpec, _Mapping]]] = ...) -> None: ...

class ReadResourceRequest(_message.Message):
    __slots__ = ("uri",)
    URI_FIELD_NUMBER: _ClassVar[int]
    uri: str
    def __init__(self, uri: _Optional[str] = ...) -> None: ...

class ReadResourceReply(_message.Message):
    __slots__ = ("uri", "mime_type", "text")
    URI_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    uri: str
    mime_type: str
    text: str
    def __init__(self, uri: _Optional[str] = ..., mime_type: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class PromptArgumentSpec(_message.Message):
    __slots__ = ("name", "description", "required")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    required: bool
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., required: _Optional[bool] = ...) -> None: ...

class PromptSpec(_message.Message):
    __slots__ = ("name", "description", "arguments")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    arguments: _containers.RepeatedCompositeFieldContainer[PromptArgumentSpec]
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., arguments: _Optional[_Iterable[_Union[PromptArgumentSpec, _Mapping]]] = ...) -> None: ...

class ListPromptsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListPromptsReply(_message.Message):
    __slots__ = ("prompts",)
    PROMPTS_FIELD_NUMBER: _ClassVar[int]
    prompts: _containers.RepeatedCompositeFieldContainer[PromptSpec]
    def __init__(self, prompts: _Optional[_Iterable[_Union[PromptSpec, _Mapping]]] = ...) -> None: ...

class GetPromptRequest(_message.Message):
    __slots__ = ("name", "arguments")
    class ArgumentsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    arguments: _containers.ScalarMap[str, str]
    def __init__(self, name: _Optional[str] = ..., arguments: _Optional[_Mapping[str, str]] = ...) -> None: ...

class PromptMessage(_message.Message):
    __slots__ = ("role", "text")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    role: str
    text: str
    def __init__(self, role: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class GetPromptReply(_message.Message):
    __slots__ = ("description", "messages")
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    description: str
    messages: _containers.RepeatedCompositeFieldContainer[PromptMessage]
    def __init__(self, description: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[PromptMessage, _Mapping]]] = ...) -> None: ...

class Entity(_message.Message):
    __slots__ = ("id", "name", "key", "type", "aliases", "namespace", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ALIASES_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    key: str
    type: str
    aliases: _containers.RepeatedScalarFieldContainer[str]
    namespace: str
    created_at: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., key: _Optional[str] = ..., type: _Optional[str] = ..., aliases: _Optional[_Iterable[str]] = ..., namespace: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...

class Fact(_message.Message):
    __slots__ = ("id", "subject_id", "subject", "predicate", "object_id", "object", "valid_from", "valid_to", "recorded_at", "retracted_at", "superseded_by", "replaces", "singular", "confidence", "source", "namespace", "status", "sha256")
    ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    VALID_FROM_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    RETRACTED_AT_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    REPLACES_FIELD_NUMBER: _ClassVar[int]
    SINGULAR_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    id: str
    subject_id: str
    subject: str
    predicate: str
    object_id: str
    object: str
    valid_from: str
    valid_to: str
    recorded_at: str
    retracted_at: str
    superseded_by: str
    replaces: str
    singular: bool
    confidence: float
    source: str
    namespace: str
    status: str
    sha256: str
    def __init__(self, id: _Optional[str] = ..., subject_id: _Optional[str] = ..., subject: _Optional[str] = ..., predicate: _Optional[str] = ..., object_id: _Optional[str] = ..., object: _Optional[str] = ..., valid_from: _Optional[str] = ..., valid_to: _Optional[str] = ..., recorded_at: _Optional[str] = ..., retracted_at: _Optional[str] = ..., superseded_by: _Optional[str] = ..., replaces: _Optional[str] = ..., singular: _Optional[bool] = ..., confidence: _Optional[float] = ..., source: _Optional[str] = ..., namespace: _Optional[str] = ..., status: _Optional[str] = ..., sha256: _Optional[str] = ...) -> None: ...

class Episode(_message.Message):
    __slots__ = ("id", "kind", "title", "body", "files", "entity_ids", "entities", "occurred_at", "recorded_at", "namespace", "sha256")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    ENTITY_IDS_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: str
    title: str
    body: str
    files: _containers.RepeatedScalarFieldContainer[str]
    entity_ids: _containers.RepeatedScalarFieldContainer[str]
    entities: _containers.RepeatedScalarFieldContainer[str]
    occurred_at: str
    recorded_at: str
    namespace: str
    sha256: str
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[str] = ..., title: _Optional[str] = ..., body: _Optional[str] = ..., files: _Optional[_Iterable[str]] = ..., entity_ids: _Optional[_Iterable[str]] = ..., entities: _Optional[_Iterable[str]] = ..., occurred_at: _Optional[str] = ..., recorded_at: _Optional[str] = ..., namespace: _Optional[str] = ..., sha256: _Optional[str] = ...) -> None: ...

class Relation(_message.Message):
    __slots__ = ("id", "from_id", "relation", "to_id", "strength", "created_at", "namespace")
    ID_FIELD_NUMBER: _ClassVar[int]
    FROM_ID_FIELD_NUMBER: _ClassVar[int]
    RELATION_FIELD_NUMBER: _ClassVar[int]
    TO_ID_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    id: str
    from_id: str
    relation: str
    to_id: str
    strength: float
    created_at: str
    namespace: str
    def __init__(self, id: _Optional[str] = ..., from_id: _Optional[str] = ..., relation: _Optional[str] = ..., to_id: _Optional[str] = ..., strength: _Optional[float] = ..., created_at: _Optional[str] = ..., namespace: _Optional[str] = ...) -> None: ...

class UpsertFactRequest(_message.Message):
    __slots__ = ("subject", "predicate", "object", "object_kind", "valid_from", "valid_to", "correction", "corrects", "singular", "confidence", "source", "create_entities")
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    OBJECT_KIND_FIELD_NUMBER: _ClassVar[int]
    VALID_FROM_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_FIELD_NUMBER: _ClassVar[int]
    CORRECTS_FIELD_NUMBER: _ClassVar[int]
    SINGULAR_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CREATE_ENTITIES_FIELD_NUMBER: _ClassVar[int]
    subject: str
    predicate: str
    object: str
    object_kind: str
    valid_from: str
    valid_to: str
    correction: bool
    corrects: str
    singular: bool
    confidence: float
    source: str
    create_entities: bool
    def __init__(self, subject: _Optional[str] = ..., predicate: _Optional[str] = ..., object: _Optional[str] = ..., object_kind: _Optional[str] = ..., valid_from: _Optional[str] = ..., valid_to: _Optional[str] = ..., correction: _Optional[bool] = ..., corrects: _Optional[str] = ..., singular: _Optional[bool] = ..., confidence: _Optional[float] = ..., source: _Optional[str] = ..., create_entities: _Optional[bool] = ...) -> None: ...

class UpsertFactReply(_message.Message):
    __slots__ = ("fact", "status", "superseded", "retracted_ids", "created_entities")
    FACT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    RETRACTED_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATED_ENTITIES_FIELD_NUMBER: _ClassVar[int]
    fact: Fact
    status: str
    superseded: _containers.RepeatedCompositeFieldContainer[Fact]
    retracted_ids: _containers.RepeatedScalarFieldContainer[str]
    created_entities: _containers.RepeatedCompositeFieldContainer[Entity]
    def __init__(self, fact: _Optional[_Union[Fact, _Mapping]] = ..., status: _Optional[str] = ..., superseded: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., retracted_ids: _Optional[_Iterable[str]] = ..., created_entities: _Optional[_Iterable[_Union[Entity, _Mapping]]] = ...) -> None: ...

class RetireFactRequest(_message.Message):
    __slots__ = ("fact_id", "valid_to")
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    fact_id: str
    valid_to: str
    def __init__(self, fact_id: _Optional[str] = ..., valid_to: _Optional[str] = ...) -> None: ...

class RetireFactReply(_message.Message):
    __slots__ = ("fact", "retracted_ids")
    FACT_FIELD_NUMBER: _ClassVar[int]
    RETRACTED_IDS_FIELD_NUMBER: _ClassVar[int]
    fact: Fact
    retracted_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, fact: _Optional[_Union[Fact, _Mapping]] = ..., retracted_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class RecordEpisodeRequest(_message.Message):
    __slots__ = ("kind", "title", "body", "files", "entities", "occurred_at", "create_entities")
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATE_ENTITIES_FIELD_NUMBER: _ClassVar[int]
    kind: str
    title: str
    body: str
    files: _containers.RepeatedScalarFieldContainer[str]
    entities: _containers.RepeatedScalarFieldContainer[str]
    occurred_at: str
    create_entities: bool
    def __init__(self, kind: _Optional[str] = ..., title: _Optional[str] = ..., body: _Optional[str] = ..., files: _Optional[_Iterable[str]] = ..., entities: _Optional[_Iterable[str]] = ..., occurred_at: _Optional[str] = ..., create_entities: _Optional[bool] = ...) -> None: ...

class RecordEpisodeReply(_message.Message):
    __slots__ = ("episode", "created_entities")
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    CREATED_ENTITIES_FIELD_NUMBER: _ClassVar[int]
    episode: Episode
    created_entities: _containers.RepeatedCompositeFieldContainer[Entity]
    def __init__(self, episode: _Optional[_Union[Episode, _Mapping]] = ..., created_entities: _Optional[_Iterable[_Union[Entity, _Mapping]]] = ...) -> None: ...

class QueryEntityRequest(_message.Message):
    __slots__ = ("entity", "hops", "include_retracted")
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    HOPS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RETRACTED_FIELD_NUMBER: _ClassVar[int]
    entity: str
    hops: int
    include_retracted: bool
    def __init__(self, entity: _Optional[str] = ..., hops: _Optional[int] = ..., include_retracted: _Optional[bool] = ...) -> None: ...

class GraphNode(_message.Message):
    __slots__ = ("entity", "hops")
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    HOPS_FIELD_NUMBER: _ClassVar[int]
    entity: Entity
    hops: int
    def __init__(self, entity: _Optional[_Union[Entity, _Mapping]] = ..., hops: _Optional[int] = ...) -> None: ...

class QueryEntityReply(_message.Message):
    __slots__ = ("entity", "active", "history", "episodes", "neighbourhood", "edges")
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    NEIGHBOURHOOD_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    entity: Entity
    active: _containers.RepeatedCompositeFieldContainer[Fact]
    history: _containers.RepeatedCompositeFieldContainer[Fact]
    episodes: _containers.RepeatedCompositeFieldContainer[Episode]
    neighbourhood: _containers.RepeatedCompositeFieldContainer[GraphNode]
    edges: _containers.RepeatedCompositeFieldContainer[Fact]
    def __init__(self, entity: _Optional[_Union[Entity, _Mapping]] = ..., active: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., episodes: _Optional[_Iterable[_Union[Episode, _Mapping]]] = ..., neighbourhood: _Optional[_Iterable[_Union[GraphNode, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ...) -> None: ...

class TimeTravelRequest(_message.Message):
    __slots__ = ("valid_at", "known_at", "entity", "limit")
    VALID_AT_FIELD_NUMBER: _ClassVar[int]
    KNOWN_AT_FIELD_NUMBER: _ClassVar[int]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    valid_at: str
    known_at: str
    entity: str
    limit: int
    def __init__(self, valid_at: _Optional[str] = ..., known_at: _Optional[str] = ..., entity: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class TimeTravelReply(_message.Message):
    __slots__ = ("valid_at", "known_at", "facts", "episodes")
    VALID_AT_FIELD_NUMBER: _ClassVar[int]
    KNOWN_AT_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    valid_at: str
    known_at: str
    facts: _containers.RepeatedCompositeFieldContainer[Fact]
    episodes: _containers.RepeatedCompositeFieldContainer[Episode]
    def __init__(self, valid_at: _Optional[str] = ..., known_at: _Optional[str] = ..., facts: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., episodes: _Optional[_Iterable[_Union[Episode, _Mapping]]] = ...) -> None: ...

class PurgeRecordsRequest(_message.Message):
    __slots__ = ("ids", "reason")
    IDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    reason: str
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ...) -> None: ...

class PurgedRecord(_message.Message):
    __slots__ = ("id", "kind", "purged_at", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PURGED_AT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: str
    purged_at: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[str] = ..., purged_at: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class PurgeRecordsReply(_message.Message):
    __slots__ = ("purged", "integrity")
    PURGED_FIELD_NUMBER: _ClassVar[int]
    INTEGRITY_FIELD_NUMBER: _ClassVar[int]
    purged: _containers.RepeatedCompositeFieldContainer[PurgedRecord]
    integrity: VerifyIntegrityReply
    def __init__(self, purged: _Optional[_Iterable[_Union[PurgedRecord, _Mapping]]] = ..., integrity: _Optional[_Union[VerifyIntegrityReply, _Mapping]] = ...) -> None: ...

class VerifyIntegrityRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class IntegrityProblem(_message.Message):
    __slots__ = ("table", "id", "stored_sha256", "computed_sha256")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    STORED_SHA256_FIELD_NUMBER: _ClassVar[int]
    COMPUTED_SHA256_FIELD_NUMBER: _ClassVar[int]
    table: str
    id: str
    stored_sha256: str
    computed_sha256: str
    def __init__(self, table: _Optional[str] = ..., id: _Optional[str] = ..., stored_sha256: _Optional[str] = ..., computed_sha256: _Optional[str] = ...) -> None: ...

class VerifyIntegrityReply(_message.Message):
    __slots__ = ("ok", "rows_checked", "merkle_root", "problems", "elapsed_ms", "purges")
    OK_FIELD_NUMBER: _ClassVar[int]
    ROWS_CHECKED_FIELD_NUMBER: _ClassVar[int]
    MERKLE_ROOT_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_MS_FIELD_NUMBER: _ClassVar[int]
    PURGES_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    rows_checked: int
    merkle_root: str
    problems: _containers.RepeatedCompositeFieldContainer[IntegrityProblem]
    elapsed_ms: float
    purges: _containers.RepeatedCompositeFieldContainer[PurgedRecord]
    def __init__(self, ok: _Optional[bool] = ..., rows_checked: _Optional[int] = ..., merkle_root: _Optional[str] = ..., problems: _Optional[_Iterable[_Union[IntegrityProblem, _Mapping]]] = ..., elapsed_ms: _Optional[float] = ..., purges: _Optional[_Iterable[_Union[PurgedRecord, _Mapping]]] = ...) -> None: ...

class CreateRelationRequest(_message.Message):
    __slots__ = ("from_id", "relation", "to_id", "strength")
    FROM_ID_FIELD_NUMBER: _ClassVar[int]
    RELATION_FIELD_NUMBER: _ClassVar[int]
    TO_ID_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    from_id: str
    relation: str
    to_id: str
    strength: float
    def __init__(self, from_id: _Optional[str] = ..., relation: _Optional[str] = ..., to_id: _Optional[str] = ..., strength: _Optional[float] = ...) -> None: ...

class CreateRelationReply(_message.Message):
    __slots__ = ("relation",)
    RELATION_FIELD_NUMBER: _ClassVar[int]
    relation: Relation
    def __init__(self, relation: _Optional[_Union[Relation, _Mapping]] = ...) -> None: ...

class ReadGraphRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: int
    def __init__(self, limit: _Optional[int] = ...) -> None: ...

class ReadGraphReply(_message.Message):
    __slots__ = ("entities", "facts", "relations")
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    RELATIONS_FIELD_NUMBER: _ClassVar[int]
    entities: _containers.RepeatedCompositeFieldContainer[Entity]
    facts: _containers.RepeatedCompositeFieldContainer[Fact]
    relations: _containers.RepeatedCompositeFieldContainer[Relation]
    def __init__(self, entities: _Optional[_Iterable[_Union[Entity, _Mapping]]] = ..., facts: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., relations: _Optional[_Iterable[_Union[Relation, _Mapping]]] = ...) -> None: ...

class DecisionOutcome(_message.Message):
    __slots__ = ("recorded", "was_successful", "impact_score", "learnings", "recorded_at")
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    WAS_SUCCESSFUL_FIELD_NUMBER: _ClassVar[int]
    IMPACT_SCORE_FIELD_NUMBER: _ClassVar[int]
    LEARNINGS_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    recorded: bool
    was_successful: bool
    impact_score: float
    learnings: str
    recorded_at: str
    def __init__(self, recorded: _Optional[bool] = ..., was_successful: _Optional[bool] = ..., impact_score: _Optional[float] = ..., learnings: _Optional[str] = ..., recorded_at: _Optional[str] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("id", "type", "question", "options", "chosen", "reasoning", "confidence", "session_id", "summary", "key_choice", "tier", "created_at", "last_accessed_at", "access_count", "outcome", "namespace")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CHOSEN_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    KEY_CHOICE_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_ACCESSED_AT_FIELD_NUMBER: _ClassVar[int]
    ACCESS_COUNT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    question: str
    options: _containers.RepeatedScalarFieldContainer[str]
    chosen: str
    reasoning: str
    confidence: float
    session_id: str
    summary: str
    key_choice: str
    tier: str
    created_at: str
    last_accessed_at: str
    access_count: int
    outcome: DecisionOutcome
    namespace: str
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., question: _Optional[str] = ..., options: _Optional[_Iterable[str]] = ..., chosen: _Optional[str] = ..., reasoning: _Optional[str] = ..., confidence: _Optional[float] = ..., session_id: _Optional[str] = ..., summary: _Optional[str] = ..., key_choice: _Optional[str] = ..., tier: _Optional[str] = ..., created_at: _Optional[str] = ..., last_accessed_at: _Optional[str] = ..., access_count: _Optional[int] = ..., outcome: _Optional[_Union[DecisionOutcome, _Mapping]] = ..., namespace: _Optional[str] = ...) -> None: ...

class LogDecisionRequest(_message.Message):
    __slots__ = ("type", "question", "options", "chosen", "reasoning", "confidence", "session_id")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CHOSEN_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    type: str
    question: str
    options: _containers.RepeatedScalarFieldContainer[str]
    chosen: str
    reasoning: str
    confidence: float
    session_id: str
    def __init__(self, type: _Optional[str] = ..., question: _Optional[str] = ..., options: _Optional[_Iterable[str]] = ..., chosen: _Optional[str] = ..., reasoning: _Optional[str] = ..., confidence: _Optional[float] = ..., session_id: _Optional[str] = ...) -> None: ...

class LogDecisionReply(_message.Message):
    __slots__ = ("decision",)
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: Decision
    def __init__(self, decision: _Optional[_Union[Decision, _Mapping]] = ...) -> None: ...

class RecordOutcomeRequest(_message.Message):
    __slots__ = ("decision_id", "was_successful", "impact_score", "learnings")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    WAS_SUCCESSFUL_FIELD_NUMBER: _ClassVar[int]
    IMPACT_SCORE_FIELD_NUMBER: _ClassVar[int]
    LEARNINGS_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    was_successful: bool
    impact_score: float
    learnings: str
    def __init__(self, decision_id: _Optional[str] = ..., was_successful: _Optional[bool] = ..., impact_score: _Optional[float] = ..., learnings: _Optional[str] = ...) -> None: ...

class RecordOutcomeReply(_message.Message):
    __slots__ = ("decision",)
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: Decision
    def __init__(self, decision: _Optional[_Union[Decision, _Mapping]] = ...) -> None: ...

class ListDecisionsRequest(_message.Message):
    __slots__ = ("session_id", "type", "tier", "limit")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    type: str
    tier: str
    limit: int
    def __init__(self, session_id: _Optional[str] = ..., type: _Optional[str] = ..., tier: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ListDecisionsReply(_message.Message):
    __slots__ = ("decisions",)
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedCompositeFieldContainer[Decision]
    def __init__(self, decisions: _Optional[_Iterable[_Union[Decision, _Mapping]]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class WorkingItem(_message.Message):
    __slots__ = ("kind", "id", "text", "at")
    KIND_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    kind: str
    id: str
    text: str
    at: str
    def __init__(self, kind: _Optional[str] = ..., id: _Optional[str] = ..., text: _Optional[str] = ..., at: _Optional[str] = ...) -> None: ...

class SessionSummary(_message.Message):
    __slots__ = ("decisions", "decisions_by_type", "outcomes_recorded", "success_rate", "text")
    class DecisionsByTypeEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_BY_TYPE_FIELD_NUMBER: _ClassVar[int]
    OUTCOMES_RECORDED_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_RATE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    decisions: int
    decisions_by_type: _containers.ScalarMap[str, int]
    outcomes_recorded: int
    success_rate: float
    text: str
    def __init__(self, decisions: _Optional[int] = ..., decisions_by_type: _Optional[_Mapping[str, int]] = ..., outcomes_recorded: _Optional[int] = ..., success_rate: _Optional[float] = ..., text: _Optional[str] = ...) -> None: ...

class GetSessionReply(_message.Message):
    __slots__ = ("session_id", "working_memory", "summary")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKING_MEMORY_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    working_memory: _containers.RepeatedCompositeFieldContainer[WorkingItem]
    summary: SessionSummary
    def __init__(self, session_id: _Optional[str] = ..., working_memory: _Optional[_Iterable[_Union[WorkingItem, _Mapping]]] = ..., summary: _Optional[_Union[SessionSummary, _Mapping]] = ...) -> None: ...

class CompileContextRequest(_message.Message):
    __slots__ = ("task", "session_id", "max_tokens")
    TASK_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    task: str
    session_id: str
    max_tokens: int
    def __init__(self, task: _Optional[str] = ..., session_id: _Optional[str] = ..., max_tokens: _Optional[int] = ...) -> None: ...

class ContextItem(_message.Message):
    __slots__ = ("tier", "kind", "id", "text", "tokens", "relevance")
    TIER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    tier: int
    kind: str
    id: str
    text: str
    tokens: int
    relevance: float
    def __init__(self, tier: _Optional[int] = ..., kind: _Optional[str] = ..., id: _Optional[str] = ..., text: _Optional[str] = ..., tokens: _Optional[int] = ..., relevance: _Optional[float] = ...) -> None: ...

class CompileContextReply(_message.Message):
    __slots__ = ("markdown", "items", "tokens_used", "max_tokens", "token_estimator", "left_out")
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATOR_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    markdown: str
    items: _containers.RepeatedCompositeFieldContainer[ContextItem]
    tokens_used: int
    max_tokens: int
    token_estimator: str
    left_out: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, markdown: _Optional[str] = ..., items: _Optional[_Iterable[_Union[ContextItem, _Mapping]]] = ..., tokens_used: _Optional[int] = ..., max_tokens: _Optional[int] = ..., token_estimator: _Optional[str] = ..., left_out: _Optional[_Iterable[str]] = ...) -> None: ...

class ObserveMemoryUsageRequest(_message.Message):
    __slots__ = ("ids", "response")
    IDS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    response: str
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., response: _Optional[str] = ...) -> None: ...

class ObserveMemoryUsageReply(_message.Message):
    __slots__ = ("used", "unused")
    USED_FIELD_NUMBER: _ClassVar[int]
    UNUSED_FIELD_NUMBER: _ClassVar[int]
    used: _containers.RepeatedCompositeFieldContainer[Memory]
    unused: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, used: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ..., unused: _Optional[_Iterable[str]] = ...) -> None: ...

class PromoteMemoryRequest(_message.Message):
    __slots__ = ("ids", "auto")
    IDS_FIELD_NUMBER: _ClassVar[int]
    AUTO_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    auto: bool
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., auto: _Optional[bool] = ...) -> None: ...

class PromoteMemoryReply(_message.Message):
    __slots__ = ("promoted",)
    PROMOTED_FIELD_NUMBER: _ClassVar[int]
    promoted: _containers.RepeatedCompositeFieldContainer[Memory]
    def __init__(self, promoted: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ...) -> None: ...

class CollectGarbageRequest(_message.Message):
    __slots__ = ("forget_threshold", "apply", "grace_days")
    FORGET_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    APPLY_FIELD_NUMBER: _ClassVar[int]
    GRACE_DAYS_FIELD_NUMBER: _ClassVar[int]
    forget_threshold: float
    apply: bool
    grace_days: float
    def __init__(self, forget_threshold: _Optional[float] = ..., apply: _Optional[bool] = ..., grace_days: _Optional[float] = ...) -> None: ...

class CollectGarbageReply(_message.Message):
    __slots__ = ("archived", "checked", "long_term_kept", "applied", "within_grace")
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    CHECKED_FIELD_NUMBER: _ClassVar[int]
    LONG_TERM_KEPT_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    WITHIN_GRACE_FIELD_NUMBER: _ClassVar[int]
    archived: _containers.RepeatedScalarFieldContainer[str]
    checked: int
    long_term_kept: int
    applied: bool
    within_grace: int
    def __init__(self, archived: _Optional[_Iterable[str]] = ..., checked: _Optional[int] = ..., long_term_kept: _Optional[int] = ..., applied: _Optional[bool] = ..., within_grace: _Optional[int] = ...) -> None: ...

class ForgetMemoryRequest(_message.Message):
    __slots__ = ("ids", "query", "confirm", "limit", "purge", "reason")
    IDS_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    CONFIRM_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PURGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    query: str
    confirm: bool
    limit: int
    purge: bool
    reason: str
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., query: _Optional[str] = ..., confirm: _Optional[bool] = ..., limit: _Optional[int] = ..., purge: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class ForgottenMemory(_message.Message):
    __slots__ = ("id", "preview")
    ID_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    id: str
    preview: str
    def __init__(self, id: _Optional[str] = ..., preview: _Optional[str] = ...) -> None: ...

class ForgetMemoryReply(_message.Message):
    __slots__ = ("memories", "previewed", "facts_removed", "replies_removed", "contexts_cleared", "purged")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    PREVIEWED_FIELD_NUMBER: _ClassVar[int]
    FACTS_REMOVED_FIELD_NUMBER: _ClassVar[int]
    REPLIES_REMOVED_FIELD_NUMBER: _ClassVar[int]
    CONTEXTS_CLEARED_FIELD_NUMBER: _ClassVar[int]
    PURGED_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[ForgottenMemory]
    previewed: bool
    facts_removed: int
    replies_removed: int
    contexts_cleared: int
    purged: bool
    def __init__(self, memories: _Optional[_Iterable[_Union[ForgottenMemory, _Mapping]]] = ..., previewed: _Optional[bool] = ..., facts_removed: _Optional[int] = ..., replies_removed: _Optional[int] = ..., contexts_cleared: _Optional[int] = ..., purged: _Optional[bool] = ...) -> None: ...

class EditMemoryRequest(_message.Message):
    __slots__ = ("id", "content", "reason", "drop_history")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DROP_HISTORY_FIELD_NUMBER: _ClassVar[int]
    id: str
    content: str
    reason: str
    drop_history: bool
    def __init__(self, id: _Optional[str] = ..., content: _Optional[str] = ..., reason: _Optional[str] = ..., drop_history: _Optional[bool] = ...) -> None: ...

class EditMemoryReply(_message.Message):
    __slots__ = ("memory", "history_versions")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    HISTORY_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    history_versions: int
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ..., history_versions: _Optional[int] = ...) -> None: ...

class UnarchiveMemoryRequest(_message.Message):
    __slots__ = ("ids",)
    IDS_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ids: _Optional[_Iterable[str]] = ...) -> None: ...

class UnarchiveMemoryReply(_message.Message):
    __slots__ = ("unarchived",)
    UNARCHIVED_FIELD_NUMBER: _ClassVar[int]
    unarchived: _containers.RepeatedCompositeFieldContainer[Memory]
    def __init__(self, unarchived: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ...) -> None: ...

class ListNamespacesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NamespaceCounts(_message.Message):
    __slots__ = ("namespace", "memories", "facts", "episodes", "decisions")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    memories: int
    facts: int
    episodes: int
    decisions: int
    def __init__(self, namespace: _Optional[str] = ..., memories: _Optional[int] = ..., facts: _Optional[int] = ..., episodes: _Optional[int] = ..., decisions: _Optional[int] = ...) -> None: ...

class ListNamespacesReply(_message.Message):
    __slots__ = ("namespaces",)
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    namespaces: _containers.RepeatedCompositeFieldContainer[NamespaceCounts]
    def __init__(self, namespaces: _Optional[_Iterable[_Union[NamespaceCounts, _Mapping]]] = ...) -> None: ...

class ClusterMemoriesRequest(_message.Message):
    __slots__ = ("similarity", "limit")
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    similarity: float
    limit: int
    def __init__(self, similarity: _Optional[float] = ..., limit: _Optional[int] = ...) -> None: ...

class MemoryCluster(_message.Message):
    __slots__ = ("ids", "contents", "mean_similarity")
    IDS_FIELD_NUMBER: _ClassVar[int]
    CONTENTS_FIELD_NUMBER: _ClassVar[int]
    MEAN_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    contents: _containers.RepeatedScalarFieldContainer[str]
    mean_similarity: float
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., contents: _Optional[_Iterable[str]] = ..., mean_similarity: _Optional[float] = ...) -> None: ...

class ClusterMemoriesReply(_message.Message):
    __slots__ = ("clusters",)
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    clusters: _containers.RepeatedCompositeFieldContainer[MemoryCluster]
    def __init__(self, clusters: _Optional[_Iterable[_Union[MemoryCluster, _Mapping]]] = ...) -> None: ...

class ConsolidateMemoriesRequest(_message.Message):
    __slots__ = ("ids", "content")
    IDS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    content: str
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., content: _Optional[str] = ...) -> None: ...

class ConsolidateMemoriesReply(_message.Message):
    __slots__ = ("memory", "merged")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    MERGED_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    merged: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ..., merged: _Optional[_Iterable[str]] = ...) -> None: ...

class ExportMemoriesRequest(_message.Message):
    __slots__ = ("offset", "limit")
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    offset: int
    limit: int
    def __init__(self, offset: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class ExportMemoriesReply(_message.Message):
    __slots__ = ("memories", "next_offset")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    next_offset: int
    def __init__(self, memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ..., next_offset: _Optional[int] = ...) -> None: ...

class ExportStoreRequest(_message.Message):
    __slots__ = ("all_namespaces",)
    ALL_NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    all_namespaces: bool
    def __init__(self, all_namespaces: _Optional[bool] = ...) -> None: ...

class DumpChunk(_message.Message):
    __slots__ = ("lines",)
    LINES_FIELD_NUMBER: _ClassVar[int]
    lines: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, lines: _Optional[_Iterable[str]] = ...) -> None: ...

class RestoreStoreReply(_message.Message):
    __slots__ = ("restored", "skipped")
    class RestoredEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class SkippedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    RESTORED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    restored: _containers.ScalarMap[str, int]
    skipped: _containers.ScalarMap[str, int]
    def __init__(self, restored: _Optional[_Mapping[str, int]] = ..., skipped: _Optional[_Mapping[str, int]] = ...) -> None: ...

class BackupStoreRequest(_message.Message):
    __slots__ = ("dest",)
    DEST_FIELD_NUMBER: _ClassVar[int]
    dest: str
    def __init__(self, dest: _Optional[str] = ...) -> None: ...

class BackupStoreReply(_message.Message):
    __slots__ = ("path", "size_bytes", "rows")
    class RowsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    path: str
    size_bytes: int
    rows: _containers.ScalarMap[str, int]
    def __init__(self, path: _Optional[str] = ..., size_bytes: _Optional[int] = ..., rows: _Optional[_Mapping[str, int]] = ...) -> None: ...

import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AbandonCause(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ABANDON_CAUSE_UNSPECIFIED: _ClassVar[AbandonCause]
    ABANDON_CAUSE_GAME_SERVER_LOST: _ClassVar[AbandonCause]
    ABANDON_CAUSE_ABANDONED_ON_SERVER: _ClassVar[AbandonCause]

class SubmissionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUBMISSION_STATE_UNSPECIFIED: _ClassVar[SubmissionState]
    SUBMISSION_STATE_BUILDING: _ClassVar[SubmissionState]
    SUBMISSION_STATE_READY: _ClassVar[SubmissionState]
    SUBMISSION_STATE_FAILED: _ClassVar[SubmissionState]
ABANDON_CAUSE_UNSPECIFIED: AbandonCause
ABANDON_CAUSE_GAME_SERVER_LOST: AbandonCause
ABANDON_CAUSE_ABANDONED_ON_SERVER: AbandonCause
SUBMISSION_STATE_UNSPECIFIED: SubmissionState
SUBMISSION_STATE_BUILDING: SubmissionState
SUBMISSION_STATE_READY: SubmissionState
SUBMISSION_STATE_FAILED: SubmissionState

class RegisterBotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RegisterBotResponse(_message.Message):
    __slots__ = ("name", "api_key")
    NAME_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    name: str
    api_key: str
    def __init__(self, name: _Optional[str] = ..., api_key: _Optional[str] = ...) -> None: ...

class RotateKeyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RotateKeyResponse(_message.Message):
    __slots__ = ("api_key",)
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    api_key: str
    def __init__(self, api_key: _Optional[str] = ...) -> None: ...

class RevokeKeyRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RevokeKeyResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Pool(_message.Message):
    __slots__ = ("name", "players", "decision_time", "time_bank")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DECISION_TIME_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_FIELD_NUMBER: _ClassVar[int]
    name: str
    players: int
    decision_time: _duration_pb2.Duration
    time_bank: _duration_pb2.Duration
    def __init__(self, name: _Optional[str] = ..., players: _Optional[int] = ..., decision_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., time_bank: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class SeekRequest(_message.Message):
    __slots__ = ("pool",)
    POOL_FIELD_NUMBER: _ClassVar[int]
    pool: str
    def __init__(self, pool: _Optional[str] = ...) -> None: ...

class SeekWaiting(_message.Message):
    __slots__ = ("pool", "tickets_waiting", "waited")
    POOL_FIELD_NUMBER: _ClassVar[int]
    TICKETS_WAITING_FIELD_NUMBER: _ClassVar[int]
    WAITED_FIELD_NUMBER: _ClassVar[int]
    pool: str
    tickets_waiting: int
    waited: _duration_pb2.Duration
    def __init__(self, pool: _Optional[str] = ..., tickets_waiting: _Optional[int] = ..., waited: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class SeekMatched(_message.Message):
    __slots__ = ("pool", "server_address", "game_id", "seat", "seat_token", "seat_names")
    POOL_FIELD_NUMBER: _ClassVar[int]
    SERVER_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    pool: str
    server_address: str
    game_id: str
    seat: int
    seat_token: str
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, pool: _Optional[str] = ..., server_address: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., seat_names: _Optional[_Iterable[str]] = ...) -> None: ...

class SeekResponse(_message.Message):
    __slots__ = ("waiting", "matched")
    WAITING_FIELD_NUMBER: _ClassVar[int]
    MATCHED_FIELD_NUMBER: _ClassVar[int]
    waiting: SeekWaiting
    matched: SeekMatched
    def __init__(self, waiting: _Optional[_Union[SeekWaiting, _Mapping]] = ..., matched: _Optional[_Union[SeekMatched, _Mapping]] = ...) -> None: ...

class ListPoolsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListPoolsResponse(_message.Message):
    __slots__ = ("pools",)
    POOLS_FIELD_NUMBER: _ClassVar[int]
    pools: _containers.RepeatedCompositeFieldContainer[Pool]
    def __init__(self, pools: _Optional[_Iterable[_Union[Pool, _Mapping]]] = ...) -> None: ...

class PoolRating(_message.Message):
    __slots__ = ("pool", "mu", "sigma", "conservative", "games", "wins")
    POOL_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    CONSERVATIVE_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    pool: str
    mu: float
    sigma: float
    conservative: float
    games: int
    wins: int
    def __init__(self, pool: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., conservative: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ...) -> None: ...

class GetLeaderboardRequest(_message.Message):
    __slots__ = ("pool", "page", "page_size")
    POOL_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    pool: str
    page: int
    page_size: int
    def __init__(self, pool: _Optional[str] = ..., page: _Optional[int] = ..., page_size: _Optional[int] = ...) -> None: ...

class LeaderboardEntry(_message.Message):
    __slots__ = ("rank", "name", "rating", "house", "hosted", "hosted_version")
    RANK_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    HOSTED_FIELD_NUMBER: _ClassVar[int]
    HOSTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    rank: int
    name: str
    rating: PoolRating
    house: bool
    hosted: bool
    hosted_version: int
    def __init__(self, rank: _Optional[int] = ..., name: _Optional[str] = ..., rating: _Optional[_Union[PoolRating, _Mapping]] = ..., house: _Optional[bool] = ..., hosted: _Optional[bool] = ..., hosted_version: _Optional[int] = ...) -> None: ...

class GetLeaderboardResponse(_message.Message):
    __slots__ = ("entries", "total")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[LeaderboardEntry]
    total: int
    def __init__(self, entries: _Optional[_Iterable[_Union[LeaderboardEntry, _Mapping]]] = ..., total: _Optional[int] = ...) -> None: ...

class GetBotProfileRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RatingPoint(_message.Message):
    __slots__ = ("pool", "game_id", "mu", "sigma", "rated_at")
    POOL_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    RATED_AT_FIELD_NUMBER: _ClassVar[int]
    pool: str
    game_id: str
    mu: float
    sigma: float
    rated_at: _timestamp_pb2.Timestamp
    def __init__(self, pool: _Optional[str] = ..., game_id: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., rated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ArenaGame(_message.Message):
    __slots__ = ("game_id", "pool", "server_address", "seat", "seat_names", "status", "place", "created_at")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    SERVER_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    pool: str
    server_address: str
    seat: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    status: str
    place: int
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, game_id: _Optional[str] = ..., pool: _Optional[str] = ..., server_address: _Optional[str] = ..., seat: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ..., status: _Optional[str] = ..., place: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetBotProfileResponse(_message.Message):
    __slots__ = ("name", "house", "revoked", "ratings", "history", "recent_games", "registered_at", "hosted", "hosted_version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    RECENT_GAMES_FIELD_NUMBER: _ClassVar[int]
    REGISTERED_AT_FIELD_NUMBER: _ClassVar[int]
    HOSTED_FIELD_NUMBER: _ClassVar[int]
    HOSTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    house: bool
    revoked: bool
    ratings: _containers.RepeatedCompositeFieldContainer[PoolRating]
    history: _containers.RepeatedCompositeFieldContainer[RatingPoint]
    recent_games: _containers.RepeatedCompositeFieldContainer[ArenaGame]
    registered_at: _timestamp_pb2.Timestamp
    hosted: bool
    hosted_version: int
    def __init__(self, name: _Optional[str] = ..., house: _Optional[bool] = ..., revoked: _Optional[bool] = ..., ratings: _Optional[_Iterable[_Union[PoolRating, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[RatingPoint, _Mapping]]] = ..., recent_games: _Optional[_Iterable[_Union[ArenaGame, _Mapping]]] = ..., registered_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., hosted: _Optional[bool] = ..., hosted_version: _Optional[int] = ...) -> None: ...

class StreamEventsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BotGameStarted(_message.Message):
    __slots__ = ("pool", "server_address", "game_id", "seat", "seat_names")
    POOL_FIELD_NUMBER: _ClassVar[int]
    SERVER_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    pool: str
    server_address: str
    game_id: str
    seat: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, pool: _Optional[str] = ..., server_address: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ...) -> None: ...

class BotGameFinished(_message.Message):
    __slots__ = ("pool", "game_id", "seat", "place", "rating_before", "rating_after")
    POOL_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    RATING_BEFORE_FIELD_NUMBER: _ClassVar[int]
    RATING_AFTER_FIELD_NUMBER: _ClassVar[int]
    pool: str
    game_id: str
    seat: int
    place: int
    rating_before: PoolRating
    rating_after: PoolRating
    def __init__(self, pool: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ..., place: _Optional[int] = ..., rating_before: _Optional[_Union[PoolRating, _Mapping]] = ..., rating_after: _Optional[_Union[PoolRating, _Mapping]] = ...) -> None: ...

class BotGameAbandoned(_message.Message):
    __slots__ = ("pool", "game_id", "seat", "cause", "message")
    POOL_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    pool: str
    game_id: str
    seat: int
    cause: AbandonCause
    message: str
    def __init__(self, pool: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ..., cause: _Optional[_Union[AbandonCause, str]] = ..., message: _Optional[str] = ...) -> None: ...

class StreamEventsResponse(_message.Message):
    __slots__ = ("started", "finished", "abandoned", "recorded_at")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    ABANDONED_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    started: BotGameStarted
    finished: BotGameFinished
    abandoned: BotGameAbandoned
    recorded_at: _timestamp_pb2.Timestamp
    def __init__(self, started: _Optional[_Union[BotGameStarted, _Mapping]] = ..., finished: _Optional[_Union[BotGameFinished, _Mapping]] = ..., abandoned: _Optional[_Union[BotGameAbandoned, _Mapping]] = ..., recorded_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Submission(_message.Message):
    __slots__ = ("version", "digest", "size_bytes", "language", "submitted_at", "state", "reason", "playing", "games")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PLAYING_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    version: int
    digest: str
    size_bytes: int
    language: str
    submitted_at: _timestamp_pb2.Timestamp
    state: SubmissionState
    reason: str
    playing: bool
    games: int
    def __init__(self, version: _Optional[int] = ..., digest: _Optional[str] = ..., size_bytes: _Optional[int] = ..., language: _Optional[str] = ..., submitted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., state: _Optional[_Union[SubmissionState, str]] = ..., reason: _Optional[str] = ..., playing: _Optional[bool] = ..., games: _Optional[int] = ...) -> None: ...

class SubmitBotRequest(_message.Message):
    __slots__ = ("archive", "pools")
    ARCHIVE_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    archive: bytes
    pools: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, archive: _Optional[bytes] = ..., pools: _Optional[_Iterable[str]] = ...) -> None: ...

class SubmitBotResponse(_message.Message):
    __slots__ = ("submission", "created")
    SUBMISSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    submission: Submission
    created: bool
    def __init__(self, submission: _Optional[_Union[Submission, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class ListSubmissionsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListSubmissionsResponse(_message.Message):
    __slots__ = ("submissions", "paused", "paused_reason", "pools", "name")
    SUBMISSIONS_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    PAUSED_REASON_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    submissions: _containers.RepeatedCompositeFieldContainer[Submission]
    paused: bool
    paused_reason: str
    pools: _containers.RepeatedScalarFieldContainer[str]
    name: str
    def __init__(self, submissions: _Optional[_Iterable[_Union[Submission, _Mapping]]] = ..., paused: _Optional[bool] = ..., paused_reason: _Optional[str] = ..., pools: _Optional[_Iterable[str]] = ..., name: _Optional[str] = ...) -> None: ...

class GetSubmissionRequest(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: int
    def __init__(self, version: _Optional[int] = ...) -> None: ...

class GetSubmissionResponse(_message.Message):
    __slots__ = ("submission", "build_log")
    SUBMISSION_FIELD_NUMBER: _ClassVar[int]
    BUILD_LOG_FIELD_NUMBER: _ClassVar[int]
    submission: Submission
    build_log: str
    def __init__(self, submission: _Optional[_Union[Submission, _Mapping]] = ..., build_log: _Optional[str] = ...) -> None: ...

class GetSeatLogRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class GetSeatLogResponse(_message.Message):
    __slots__ = ("game_id", "seat", "version", "log", "truncated", "outcome")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    version: int
    log: str
    truncated: bool
    outcome: str
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., version: _Optional[int] = ..., log: _Optional[str] = ..., truncated: _Optional[bool] = ..., outcome: _Optional[str] = ...) -> None: ...

class SetHostingRequest(_message.Message):
    __slots__ = ("paused",)
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    paused: bool
    def __init__(self, paused: _Optional[bool] = ...) -> None: ...

class SetHostingResponse(_message.Message):
    __slots__ = ("paused",)
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    paused: bool
    def __init__(self, paused: _Optional[bool] = ...) -> None: ...

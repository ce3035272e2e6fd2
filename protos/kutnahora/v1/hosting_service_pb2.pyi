import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SeatOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEAT_OUTCOME_UNSPECIFIED: _ClassVar[SeatOutcome]
    SEAT_OUTCOME_STARTED: _ClassVar[SeatOutcome]
    SEAT_OUTCOME_FINISHED: _ClassVar[SeatOutcome]
    SEAT_OUTCOME_FAILED: _ClassVar[SeatOutcome]
SEAT_OUTCOME_UNSPECIFIED: SeatOutcome
SEAT_OUTCOME_STARTED: SeatOutcome
SEAT_OUTCOME_FINISHED: SeatOutcome
SEAT_OUTCOME_FAILED: SeatOutcome

class LeaseWorkRequest(_message.Message):
    __slots__ = ("worker", "can_build", "can_host")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    CAN_BUILD_FIELD_NUMBER: _ClassVar[int]
    CAN_HOST_FIELD_NUMBER: _ClassVar[int]
    worker: str
    can_build: bool
    can_host: bool
    def __init__(self, worker: _Optional[str] = ..., can_build: _Optional[bool] = ..., can_host: _Optional[bool] = ...) -> None: ...

class BuildJob(_message.Message):
    __slots__ = ("bot_name", "version", "digest", "built_max_bytes")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    BUILT_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    version: int
    digest: str
    built_max_bytes: int
    def __init__(self, bot_name: _Optional[str] = ..., version: _Optional[int] = ..., digest: _Optional[str] = ..., built_max_bytes: _Optional[int] = ...) -> None: ...

class SeatToResume(_message.Message):
    __slots__ = ("server_address", "game_id", "seat", "seat_token")
    SERVER_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    server_address: str
    game_id: str
    seat: int
    seat_token: str
    def __init__(self, server_address: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ...) -> None: ...

class HostJob(_message.Message):
    __slots__ = ("bot_name", "version", "digest", "seek_key", "pools", "resume", "games_left", "built")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    SEEK_KEY_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    GAMES_LEFT_FIELD_NUMBER: _ClassVar[int]
    BUILT_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    version: int
    digest: str
    seek_key: str
    pools: _containers.RepeatedScalarFieldContainer[str]
    resume: SeatToResume
    games_left: int
    built: BuiltArtifact
    def __init__(self, bot_name: _Optional[str] = ..., version: _Optional[int] = ..., digest: _Optional[str] = ..., seek_key: _Optional[str] = ..., pools: _Optional[_Iterable[str]] = ..., resume: _Optional[_Union[SeatToResume, _Mapping]] = ..., games_left: _Optional[int] = ..., built: _Optional[_Union[BuiltArtifact, _Mapping]] = ...) -> None: ...

class BuiltArtifact(_message.Message):
    __slots__ = ("digest", "size_bytes", "platform")
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    digest: str
    size_bytes: int
    platform: str
    def __init__(self, digest: _Optional[str] = ..., size_bytes: _Optional[int] = ..., platform: _Optional[str] = ...) -> None: ...

class LeaseWorkResponse(_message.Message):
    __slots__ = ("lease_id", "lease_time", "build", "host", "retry_after")
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TIME_FIELD_NUMBER: _ClassVar[int]
    BUILD_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    lease_time: _duration_pb2.Duration
    build: BuildJob
    host: HostJob
    retry_after: _duration_pb2.Duration
    def __init__(self, lease_id: _Optional[str] = ..., lease_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., build: _Optional[_Union[BuildJob, _Mapping]] = ..., host: _Optional[_Union[HostJob, _Mapping]] = ..., retry_after: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class RenewLeaseRequest(_message.Message):
    __slots__ = ("lease_id",)
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    def __init__(self, lease_id: _Optional[str] = ...) -> None: ...

class RenewLeaseResponse(_message.Message):
    __slots__ = ("lease_time", "wind_down", "reason")
    LEASE_TIME_FIELD_NUMBER: _ClassVar[int]
    WIND_DOWN_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    lease_time: _duration_pb2.Duration
    wind_down: bool
    reason: str
    def __init__(self, lease_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., wind_down: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class GetArchiveRequest(_message.Message):
    __slots__ = ("digest",)
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    digest: str
    def __init__(self, digest: _Optional[str] = ...) -> None: ...

class GetArchiveResponse(_message.Message):
    __slots__ = ("archive",)
    ARCHIVE_FIELD_NUMBER: _ClassVar[int]
    archive: bytes
    def __init__(self, archive: _Optional[bytes] = ...) -> None: ...

class ReportBuildRequest(_message.Message):
    __slots__ = ("lease_id", "ok", "reason", "log", "built_digest")
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    BUILT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    ok: bool
    reason: str
    log: bytes
    built_digest: str
    def __init__(self, lease_id: _Optional[str] = ..., ok: _Optional[bool] = ..., reason: _Optional[str] = ..., log: _Optional[bytes] = ..., built_digest: _Optional[str] = ...) -> None: ...

class ReportBuildResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReportSeatRequest(_message.Message):
    __slots__ = ("lease_id", "server_address", "game_id", "seat", "seat_token", "outcome", "reason", "log", "log_truncated")
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    LOG_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    server_address: str
    game_id: str
    seat: int
    seat_token: str
    outcome: SeatOutcome
    reason: str
    log: bytes
    log_truncated: bool
    def __init__(self, lease_id: _Optional[str] = ..., server_address: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., outcome: _Optional[_Union[SeatOutcome, str]] = ..., reason: _Optional[str] = ..., log: _Optional[bytes] = ..., log_truncated: _Optional[bool] = ...) -> None: ...

class ReportSeatResponse(_message.Message):
    __slots__ = ("paused",)
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    paused: bool
    def __init__(self, paused: _Optional[bool] = ...) -> None: ...

class ReleaseLeaseRequest(_message.Message):
    __slots__ = ("lease_id", "reason")
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    reason: str
    def __init__(self, lease_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ReleaseLeaseResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutBuiltRequest(_message.Message):
    __slots__ = ("lease_id", "artifact", "chunk")
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    artifact: BuiltArtifact
    chunk: bytes
    def __init__(self, lease_id: _Optional[str] = ..., artifact: _Optional[_Union[BuiltArtifact, _Mapping]] = ..., chunk: _Optional[bytes] = ...) -> None: ...

class PutBuiltResponse(_message.Message):
    __slots__ = ("existed",)
    EXISTED_FIELD_NUMBER: _ClassVar[int]
    existed: bool
    def __init__(self, existed: _Optional[bool] = ...) -> None: ...

class GetBuiltRequest(_message.Message):
    __slots__ = ("digest",)
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    digest: str
    def __init__(self, digest: _Optional[str] = ...) -> None: ...

class GetBuiltResponse(_message.Message):
    __slots__ = ("artifact", "chunk")
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    artifact: BuiltArtifact
    chunk: bytes
    def __init__(self, artifact: _Optional[_Union[BuiltArtifact, _Mapping]] = ..., chunk: _Optional[bytes] = ...) -> None: ...

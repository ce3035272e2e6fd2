import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from kutnahora.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetServerInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GameCount(_message.Message):
    __slots__ = ("status", "count")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    status: _game_pb2.GameStatus
    count: int
    def __init__(self, status: _Optional[_Union[_game_pb2.GameStatus, str]] = ..., count: _Optional[int] = ...) -> None: ...

class ServerLimits(_message.Message):
    __slots__ = ("max_message_bytes", "max_games", "max_watchers", "rate_per_second", "rate_burst")
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_GAMES_FIELD_NUMBER: _ClassVar[int]
    MAX_WATCHERS_FIELD_NUMBER: _ClassVar[int]
    RATE_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    RATE_BURST_FIELD_NUMBER: _ClassVar[int]
    max_message_bytes: int
    max_games: int
    max_watchers: int
    rate_per_second: float
    rate_burst: int
    def __init__(self, max_message_bytes: _Optional[int] = ..., max_games: _Optional[int] = ..., max_watchers: _Optional[int] = ..., rate_per_second: _Optional[float] = ..., rate_burst: _Optional[int] = ...) -> None: ...

class GetServerInfoResponse(_message.Message):
    __slots__ = ("server_version", "rules_version", "limits", "games", "uptime", "store", "watchers", "players", "rules_engine", "native_core")
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    UPTIME_FIELD_NUMBER: _ClassVar[int]
    STORE_FIELD_NUMBER: _ClassVar[int]
    WATCHERS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULES_ENGINE_FIELD_NUMBER: _ClassVar[int]
    NATIVE_CORE_FIELD_NUMBER: _ClassVar[int]
    server_version: str
    rules_version: int
    limits: ServerLimits
    games: _containers.RepeatedCompositeFieldContainer[GameCount]
    uptime: _duration_pb2.Duration
    store: str
    watchers: int
    players: int
    rules_engine: str
    native_core: bool
    def __init__(self, server_version: _Optional[str] = ..., rules_version: _Optional[int] = ..., limits: _Optional[_Union[ServerLimits, _Mapping]] = ..., games: _Optional[_Iterable[_Union[GameCount, _Mapping]]] = ..., uptime: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., store: _Optional[str] = ..., watchers: _Optional[int] = ..., players: _Optional[int] = ..., rules_engine: _Optional[str] = ..., native_core: _Optional[bool] = ...) -> None: ...

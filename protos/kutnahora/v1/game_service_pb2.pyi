from kutnahora.v1 import components_pb2 as _components_pb2
from kutnahora.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateGameRequest(_message.Message):
    __slots__ = ("options", "seed", "clock", "label", "seat_names", "request_id")
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    options: _game_pb2.GameOptions
    seed: int
    clock: _game_pb2.ClockSettings
    label: str
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    request_id: str
    def __init__(self, options: _Optional[_Union[_game_pb2.GameOptions, _Mapping]] = ..., seed: _Optional[int] = ..., clock: _Optional[_Union[_game_pb2.ClockSettings, _Mapping]] = ..., label: _Optional[str] = ..., seat_names: _Optional[_Iterable[str]] = ..., request_id: _Optional[str] = ...) -> None: ...

class CreateGameResponse(_message.Message):
    __slots__ = ("game", "game_token", "seat_tokens")
    GAME_FIELD_NUMBER: _ClassVar[int]
    GAME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.GameSummary
    game_token: str
    seat_tokens: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game: _Optional[_Union[_game_pb2.GameSummary, _Mapping]] = ..., game_token: _Optional[str] = ..., seat_tokens: _Optional[_Iterable[str]] = ...) -> None: ...

class JoinGameRequest(_message.Message):
    __slots__ = ("game_id", "seat", "name", "request_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    name: str
    request_id: str
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., name: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class JoinGameResponse(_message.Message):
    __slots__ = ("seat", "seat_token", "game")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    seat_token: str
    game: _game_pb2.GameSummary
    def __init__(self, seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., game: _Optional[_Union[_game_pb2.GameSummary, _Mapping]] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ("status", "page_size", "page_token", "label")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    status: _game_pb2.GameStatus
    page_size: int
    page_token: str
    label: str
    def __init__(self, status: _Optional[_Union[_game_pb2.GameStatus, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., label: _Optional[str] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games", "next_page_token")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[_game_pb2.GameSummary]
    next_page_token: str
    def __init__(self, games: _Optional[_Iterable[_Union[_game_pb2.GameSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetGameRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class GetGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.GameSummary
    def __init__(self, game: _Optional[_Union[_game_pb2.GameSummary, _Mapping]] = ...) -> None: ...

class GetComponentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetComponentsResponse(_message.Message):
    __slots__ = ("components", "rules_version", "components_hash")
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_HASH_FIELD_NUMBER: _ClassVar[int]
    components: _components_pb2.ComponentSet
    rules_version: int
    components_hash: str
    def __init__(self, components: _Optional[_Union[_components_pb2.ComponentSet, _Mapping]] = ..., rules_version: _Optional[int] = ..., components_hash: _Optional[str] = ...) -> None: ...

class ResignSeatRequest(_message.Message):
    __slots__ = ("game_id", "seat", "request_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    request_id: str
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., request_id: _Optional[str] = ...) -> None: ...

class ResignSeatResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.GameSummary
    def __init__(self, game: _Optional[_Union[_game_pb2.GameSummary, _Mapping]] = ...) -> None: ...

class AbandonGameRequest(_message.Message):
    __slots__ = ("game_id", "reason")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    reason: str
    def __init__(self, game_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class AbandonGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.GameSummary
    def __init__(self, game: _Optional[_Union[_game_pb2.GameSummary, _Mapping]] = ...) -> None: ...

from kutnahora.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetReplayRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class GetReplayResponse(_message.Message):
    __slots__ = ("game", "seed", "decisions", "state_hash")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    STATE_HASH_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.GameSummary
    seed: int
    decisions: _containers.RepeatedCompositeFieldContainer[_game_pb2.DecisionRecord]
    state_hash: str
    def __init__(self, game: _Optional[_Union[_game_pb2.GameSummary, _Mapping]] = ..., seed: _Optional[int] = ..., decisions: _Optional[_Iterable[_Union[_game_pb2.DecisionRecord, _Mapping]]] = ..., state_hash: _Optional[str] = ...) -> None: ...

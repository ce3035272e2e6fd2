from kutnahora.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetObservationRequest(_message.Message):
    __slots__ = ("game_id", "seat")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class GetObservationResponse(_message.Message):
    __slots__ = ("observation", "status", "clock")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    observation: _game_pb2.Observation
    status: _game_pb2.GameStatus
    clock: _game_pb2.Clock
    def __init__(self, observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ..., status: _Optional[_Union[_game_pb2.GameStatus, str]] = ..., clock: _Optional[_Union[_game_pb2.Clock, _Mapping]] = ...) -> None: ...

class SubmitDecisionRequest(_message.Message):
    __slots__ = ("game_id", "seat", "version", "answer")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    version: int
    answer: _game_pb2.Answer
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., version: _Optional[int] = ..., answer: _Optional[_Union[_game_pb2.Answer, _Mapping]] = ...) -> None: ...

class SubmitDecisionResponse(_message.Message):
    __slots__ = ("decision", "version", "events", "game_over")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    decision: _game_pb2.DecisionRecord
    version: int
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    game_over: bool
    def __init__(self, decision: _Optional[_Union[_game_pb2.DecisionRecord, _Mapping]] = ..., version: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., game_over: _Optional[bool] = ...) -> None: ...

class WatchGameRequest(_message.Message):
    __slots__ = ("game_id", "seat", "from_version")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    from_version: int
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., from_version: _Optional[int] = ...) -> None: ...

class WatchGameResponse(_message.Message):
    __slots__ = ("observation", "decision", "events", "status", "result", "seats", "joined_seat")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    JOINED_SEAT_FIELD_NUMBER: _ClassVar[int]
    observation: _game_pb2.Observation
    decision: _game_pb2.DecisionRecord
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    status: _game_pb2.GameStatus
    result: _game_pb2.GameResult
    seats: _containers.RepeatedCompositeFieldContainer[_game_pb2.SeatInfo]
    joined_seat: int
    def __init__(self, observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ..., decision: _Optional[_Union[_game_pb2.DecisionRecord, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., status: _Optional[_Union[_game_pb2.GameStatus, str]] = ..., result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[_game_pb2.SeatInfo, _Mapping]]] = ..., joined_seat: _Optional[int] = ...) -> None: ...

class PlayStart(_message.Message):
    __slots__ = ("game_id", "seat", "acknowledge")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACKNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    acknowledge: bool
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., acknowledge: _Optional[bool] = ...) -> None: ...

class PlayDecision(_message.Message):
    __slots__ = ("version", "answer")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    version: int
    answer: _game_pb2.Answer
    def __init__(self, version: _Optional[int] = ..., answer: _Optional[_Union[_game_pb2.Answer, _Mapping]] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("start", "decision")
    START_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    start: PlayStart
    decision: PlayDecision
    def __init__(self, start: _Optional[_Union[PlayStart, _Mapping]] = ..., decision: _Optional[_Union[PlayDecision, _Mapping]] = ...) -> None: ...

class YourTurn(_message.Message):
    __slots__ = ("observation", "clock")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    observation: _game_pb2.Observation
    clock: _game_pb2.Clock
    def __init__(self, observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ..., clock: _Optional[_Union[_game_pb2.Clock, _Mapping]] = ...) -> None: ...

class DecisionRejected(_message.Message):
    __slots__ = ("reason", "code", "message", "version")
    REASON_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    reason: _game_pb2.RejectReason
    code: int
    message: str
    version: int
    def __init__(self, reason: _Optional[_Union[_game_pb2.RejectReason, str]] = ..., code: _Optional[int] = ..., message: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class DecisionAccepted(_message.Message):
    __slots__ = ("version", "next_version")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NEXT_VERSION_FIELD_NUMBER: _ClassVar[int]
    version: int
    next_version: int
    def __init__(self, version: _Optional[int] = ..., next_version: _Optional[int] = ...) -> None: ...

class GameEnded(_message.Message):
    __slots__ = ("status", "result", "observation")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    status: _game_pb2.GameStatus
    result: _game_pb2.GameResult
    observation: _game_pb2.Observation
    def __init__(self, status: _Optional[_Union[_game_pb2.GameStatus, str]] = ..., result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("your_turn", "rejected", "accepted", "game_ended")
    YOUR_TURN_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    your_turn: YourTurn
    rejected: DecisionRejected
    accepted: DecisionAccepted
    game_ended: GameEnded
    def __init__(self, your_turn: _Optional[_Union[YourTurn, _Mapping]] = ..., rejected: _Optional[_Union[DecisionRejected, _Mapping]] = ..., accepted: _Optional[_Union[DecisionAccepted, _Mapping]] = ..., game_ended: _Optional[_Union[GameEnded, _Mapping]] = ...) -> None: ...

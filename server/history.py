"""A game's decision history, kept small in memory.

The most recent :data:`DETAIL_WINDOW` decisions are kept whole, as :class:`AppliedDecision` records with the
options that were listed and the events they caused (an exact retry and a lagging watcher need them). An
older decision drops its options and events and is packed into columns: its option and text as references,
its seat, source and kind as one byte each, its thinking time and its time as machine numbers. Reading it
builds its record again. A record costs about 150 bytes; a packed decision about 35.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from kutnahora.engine import Option
from kutnahora.engine.options import DecisionKind
from kutnahora.server.records import AppliedDecision, DecisionSource

DETAIL_WINDOW = 16
"""How many recent decisions keep their listed options and events in memory (for exact retries)."""

_SOURCES: tuple[DecisionSource, ...] = tuple(DecisionSource)
_SOURCE_CODE = {source: code for code, source in enumerate(_SOURCES)}
_KINDS: tuple[DecisionKind | None, ...] = (None, *DecisionKind)
_KIND_CODE = {kind: code for code, kind in enumerate(_KINDS)}
_GAME_OVER = 0x80  # the flag beside the seat in a packed decision's seat byte


class DecisionHistory(Sequence[AppliedDecision]):
    """A game's applied decisions, by version: ``history[n]`` is the decision applied at version ``n``."""

    __slots__ = (
        "_applied_at",
        "_kinds",
        "_options",
        "_recent",
        "_seats",
        "_sources",
        "_texts",
        "_think_ms",
        "_window",
    )

    def __init__(self, records: Iterable[AppliedDecision] = (), window: int = DETAIL_WINDOW) -> None:
        if window < 1:
            raise ValueError(f"the detail window must keep at least one decision, not {window}")
        self._window = window
        # The version of the first whole record, and the whole records. Replays in worker threads read the
        # history while the event loop appends, so the pair is replaced as one, after the columns have
        # taken the record that leaves the window: a reader always finds every version below the first.
        self._recent: tuple[int, list[AppliedDecision]] = (0, [])
        self._options: list[Option] = []
        self._texts: list[str] = []
        self._seats = bytearray()
        self._sources = bytearray()
        self._kinds = bytearray()
        self._think_ms = array("q")
        self._applied_at = array("d")
        for record in records:
            self.append(record)

    def append(self, record: AppliedDecision) -> None:
        """Add the decision applied at the next version; the one leaving the window is packed."""
        first, recent = self._recent
        if record.version != first + len(recent):
            raise ValueError(f"decision {record.version} cannot follow a history of {len(self)} decisions")
        recent.append(record)
        if len(recent) > self._window:
            self._pack(recent[0])
            self._recent = (first + 1, recent[1:])

    def _pack(self, record: AppliedDecision) -> None:
        self._options.append(record.option)
        self._texts.append(record.text)
        self._seats.append(record.seat | (_GAME_OVER if record.game_over else 0))
        self._sources.append(_SOURCE_CODE[record.source])
        self._kinds.append(_KIND_CODE[record.kind])
        self._think_ms.append(record.think_ms)
        self._applied_at.append(record.applied_at)

    def _unpack(self, version: int) -> AppliedDecision:
        seat = self._seats[version]
        return AppliedDecision(
            version=version,
            seat=seat & ~_GAME_OVER,
            option=self._options[version],
            text=self._texts[version],
            source=_SOURCES[self._sources[version]],
            think_ms=self._think_ms[version],
            applied_at=self._applied_at[version],
            game_over=bool(seat & _GAME_OVER),
            kind=_KINDS[self._kinds[version]],
        )

    def __len__(self) -> int:
        first, recent = self._recent
        return first + len(recent)

    @overload
    def __getitem__(self, index: int) -> AppliedDecision: ...

    @overload
    def __getitem__(self, index: slice) -> list[AppliedDecision]: ...

    def __getitem__(self, index: int | slice) -> AppliedDecision | list[AppliedDecision]:
        if isinstance(index, slice):
            return [self[version] for version in range(*index.indices(len(self)))]
        first, recent = self._recent
        size = first + len(recent)
        version = index + size if index < 0 else index
        if not 0 <= version < size:
            raise IndexError(f"no decision {index} in a history of {size}")
        if version >= first:
            return recent[version - first]
        return self._unpack(version)

    def __iter__(self) -> Iterator[AppliedDecision]:
        first, recent = self._recent
        for version in range(first):
            yield self._unpack(version)
        yield from recent

    def __repr__(self) -> str:
        first, recent = self._recent
        return f"DecisionHistory({first + len(recent)} decisions, {len(recent)} whole)"

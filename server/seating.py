"""A game's seats: taking one, the tokens that prove a seat or the game, and their stored records.

A seat keeps only its token's hash (:mod:`kutnahora.plumbing.auth`). The checks here refuse a call with a
clear status: a seat number outside the game (INVALID_ARGUMENT), no token or one of no seat
(UNAUTHENTICATED), another seat's token or a seat token where the game's is needed (PERMISSION_DENIED).
"""

from __future__ import annotations

from collections.abc import Sequence

from kutnahora.plumbing import auth
from kutnahora.plumbing.errors import denied, invalid, unauthenticated
from kutnahora.server.config import ClockConfig
from kutnahora.server.records import SeatState
from kutnahora.server.store import GameRow, SeatRow


def taken_seat(seat: int, name: str, bank_ms: int, now: float) -> tuple[SeatState, str]:
    """A seat taken by ``name`` now, and the new token that proves it (the seat keeps only its hash)."""
    token = auth.new_token()
    return SeatState(seat, name, auth.token_hash(token), joined_at=now, bank_ms=bank_ms), token


def seat_row(seat: SeatState) -> SeatRow:
    """The store's record of a seat."""
    return SeatRow(seat.seat, seat.name, seat.token_hash, seat.resigned, seat.joined_at)


def stored_seats(row: GameRow, rows: Sequence[SeatRow]) -> list[SeatState]:
    """A stored game's seats, each with a full time bank (its log's decisions are charged as replayed)."""
    clock = ClockConfig.from_json(row.clock)
    seats = [SeatState(seat=i, bank_ms=clock.bank_ms) for i in range(row.players)]
    for seat_row in rows:
        if 0 <= seat_row.seat < row.players:
            seats[seat_row.seat] = SeatState(
                seat=seat_row.seat,
                name=seat_row.name,
                token_hash=seat_row.token_hash,
                resigned=seat_row.resigned,
                joined_at=seat_row.joined_at,
                bank_ms=clock.bank_ms,
            )
    return seats


def read_seats(seats: list[SeatState], rows: Sequence[SeatRow]) -> list[SeatRow]:
    """Take into ``seats`` the stored seats that differ from those held (another replica seated or
    resigned them), keeping each seat's clock; the rows taken."""
    taken: list[SeatRow] = []
    for row in rows:
        if not 0 <= row.seat < len(seats):
            continue
        seat = seats[row.seat]
        if (seat.name, seat.token_hash, seat.resigned, seat.joined_at) != (
            row.name,
            row.token_hash,
            row.resigned,
            row.joined_at,
        ):
            seats[row.seat] = SeatState(
                seat=row.seat,
                name=row.name,
                token_hash=row.token_hash,
                resigned=row.resigned,
                joined_at=row.joined_at,
                bank_ms=seat.bank_ms,
                strikes=seat.strikes,
            )
            taken.append(row)
    return taken


def check_seat(game_id: str, seats: Sequence[SeatState], seat: int) -> None:
    """Refuse a seat number outside the game."""
    if not 0 <= seat < len(seats):
        raise invalid(f"seat must be 0..{len(seats) - 1} in game {game_id}, not {seat}")


def authorize_seat(game_id: str, seats: Sequence[SeatState], seat: int, token: str | None) -> None:
    """Refuse a call for ``seat`` without that seat's token (UNAUTHENTICATED / PERMISSION_DENIED)."""
    check_seat(game_id, seats, seat)
    if not token:
        raise unauthenticated(
            f"acting for seat {seat} needs the seat's token in the 'authorization' metadata (Bearer <token>)"
        )
    owner = auth.matching_seat(token, [s.token_hash for s in seats])
    if owner is None:
        raise unauthenticated(f"the token is not valid for any seat of game {game_id}")
    if owner != seat:
        raise denied(f"the token belongs to seat {owner}, not seat {seat}")


def authorize_admin(
    game_id: str, seats: Sequence[SeatState], game_token_hash: str, token: str | None, admin_token: str
) -> None:
    """Refuse a game-wide action without the game token or the server's admin token."""
    if not token:
        raise unauthenticated(
            "this call needs the game token or the admin token in the 'authorization' metadata"
        )
    if auth.matches(token, game_token_hash):
        return
    if admin_token and auth.matches(token, auth.token_hash(admin_token)):
        return
    if auth.matching_seat(token, [s.token_hash for s in seats]) is not None:
        raise denied("a seat token cannot do this; it needs the game token or the admin token")
    raise unauthenticated(f"the token is neither game {game_id}'s token nor the admin token")

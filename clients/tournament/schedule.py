"""The schedule of a tournament: which bots sit where in every game, and every game's seed.

Line-ups: with no more bots than seats, every game seats every bot, the seats left over filled with
copies (two greedy and two random for ``random,greedy`` on four seats; when the seats do not divide
evenly, which bots get the extra copies rotates from line-up to line-up). With more bots than seats, the
line-ups are every combination of bots, in turn (a round robin).

Seatings: each line-up is played in every distinct seating, grouped so that each group of consecutive
seatings is the rotations of one seating. After every complete group each bot has had each seat equally
often, and over the whole cycle every order of bots around the table appears.

Seeds: game ``i`` of a tournament with seed ``s`` is seeded from a hash of ``(s, i)``, and so are its
bots, so a rerun of the same command plays the same games.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

SEED_BITS = 63  # the wire seed is an int64; stay positive


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of the schedule: its position, its seed and the bot on each seat."""

    index: int
    seed: int
    bots: tuple[str, ...]

    def bot_seed(self, seat: int) -> int:
        """The seed of the bot on ``seat`` in this game."""
        return derive_seed(self.seed, "bot", seat)


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts, stable across runs, machines and Python versions."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def split_copies(entry: str) -> tuple[str, int]:
    """A ``--bots`` entry as a bot name and a number of seats: ``greedy*3`` is three seats of greedy."""
    name, sep, count = entry.rpartition("*")
    if not sep:
        return entry, 0
    if not name or not count.isdigit() or int(count) < 1:
        raise ValueError(f"{entry!r}: write NAME*N for N seats of one bot, such as greedy*3")
    return name, int(count)


def lineups(bots: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """Every line-up (a multiset of bots, one per seat), in the order the schedule cycles through them.

    Entries written ``NAME*N`` fix how many seats a bot takes; when any entry does, the others take one
    seat each and the seats must add up to ``players`` (``mcts,greedy*3``: one line-up, played in every
    seating).
    """
    if not bots:
        raise ValueError("a tournament needs at least one bot")
    counted = [split_copies(entry) for entry in bots]
    names = [name for name, _ in counted]
    if len(set(names)) != len(names):
        raise ValueError("name each bot once; seats are filled with copies automatically")
    if any(count for _, count in counted):
        seats = sum(max(1, count) for _, count in counted)
        if seats != players:
            raise ValueError(f"the bots' seats add up to {seats}, not to the {players} seats of a game")
        return [tuple(name for name, count in counted for _ in range(max(1, count)))]
    if len(bots) <= players:
        copies, extra = divmod(players, len(bots))
        result = []
        for favoured in itertools.combinations(bots, extra):
            lineup: list[str] = []
            for bot in bots:
                lineup += [bot] * (copies + (1 if bot in favoured else 0))
            result.append(tuple(lineup))
        return result
    return [tuple(combo) for combo in itertools.combinations(bots, players)]


def seatings(lineup: Sequence[str]) -> list[tuple[str, ...]]:
    """Every distinct seating of a line-up, each seating followed by its rotations."""
    seen: set[tuple[str, ...]] = set()
    result: list[tuple[str, ...]] = []
    for seating in sorted(set(itertools.permutations(lineup))):
        if seating in seen:
            continue
        for shift in range(len(seating)):
            rotated = seating[shift:] + seating[:shift]
            if rotated not in seen:
                seen.add(rotated)
                result.append(rotated)
    return result


def schedule(bots: Sequence[str], players: int, games: int, seed: int) -> list[ScheduledGame]:
    """The whole schedule: ``games`` games cycling through line-ups, then through their seatings."""
    if not 2 <= players <= 4:
        raise ValueError("a game has 2, 3 or 4 players")
    if games < 1:
        raise ValueError("a tournament plays at least one game")
    all_lineups = lineups(bots, players)
    all_seatings = [seatings(lineup) for lineup in all_lineups]
    result = []
    for index in range(games):
        which = index % len(all_lineups)
        options = all_seatings[which]
        seating = options[(index // len(all_lineups)) % len(options)]
        result.append(ScheduledGame(index, derive_seed("kutnahora-tournament", seed, index), seating))
    return result

"""``kutnahora-play``: play Kutná Hora in a terminal against bots or other people, or watch a game.

Examples::

    kutnahora-play --server localhost:50051                          # pick a waiting game, or play bots
    kutnahora-play --server localhost:50051 --create --players 3 --opponents greedy,random
    kutnahora-play --server localhost:50051 --game 5f0c2a9e          # join a game someone created
    kutnahora-play --server localhost:50051 --watch 5f0c2a9e         # watch as a spectator

On each of your decisions the client draws the whole visible game (prices, town hall, the city, the
mines, St. Barbara and the council, every player's board), lists what the other seats did since your
last decision, and numbers your legal options with what each costs; the round, the turn and who is to
play are repeated just above the question, so they stay on screen. Type a number. Type ``b`` to draw
the board again, ``?`` for help, ``q`` to resign and leave. A refused input is explained and asked again;
nothing is lost. A decision with a single legal option is taken for you and said so in the log, unless
you pass ``--confirm-forced``.

The game is played through the same protocol as the bots (WatchGame for what happens, SubmitDecision for
your answers); the opponents started by ``--opponents`` are reference bots in this process. A game you
create here has no clock, so take your time.

Exit status: 0 when the game ended, 1 when it could not be played, 2 for a usage error or when the server
cannot be reached, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import threading
from collections.abc import Sequence

import grpc
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from kutnahora.clients.bots import BOTS, make_bot
from kutnahora.clients.help_format import DefaultsHelpFormatter
from kutnahora.clients.render import (
    Names,
    describe_option,
    game_screen,
    move_line,
    options_table,
    readable,
    result_table,
    status_line,
    unavailable_note,
)
from kutnahora.clients.sdk import Client, ClientError, ConnectError, SeatCredentials, status_name
from kutnahora.v1 import game_pb2, play_service_pb2
from kutnahora.v1.game_pb2 import Observation

HELP = """Type the number in front of an option and press Enter.
  b or board   draw the whole game again
  ? or help    this help
  q or quit    resign (the server plays your seat to the end) and leave"""


def help_text(obs: Observation) -> str:
    """The help, its example of a short form taken from the decision being asked."""
    examples = [f'"{option.text}"' for option in obs.pending.options[:2] if option.text]
    if not examples:
        return HELP
    return f"{HELP}\nYou may also type an option's short form, such as {' or '.join(examples)}."


def nothing_to_pay(obs: Observation) -> int | None:
    """The index of "pay the tax" when paying it costs nothing (the tax is 0): no question to ask."""
    if obs.pending.kind != game_pb2.DECISION_KIND_TAX:
        return None
    for option in obs.pending.options:
        which = option.decision.WhichOneof("choice")
        if which == "confirm" and option.decision.confirm.yes and not option.cost.groschen:
            return int(option.index)
    return None


SHORT_FORM_HEADS = frozenset(
    ("play", "action", "set", "rows", "tile", "square", "guild", "patrician", "yes", "no", "skip")
)


class Quit(Exception):
    """The player chose to leave."""


async def ask(console: Console, prompt: str) -> str:
    """Read a line without blocking the event loop.

    The read runs in a daemon thread, so that Ctrl-C (or the end of the game) can end the program while
    a question is open: a worker thread of the default executor would keep the process alive until the
    person pressed Enter.
    """
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            line = console.input(prompt)
        except BaseException as error:  # EOFError and friends reach the awaiting task
            loop.call_soon_threadsafe(_settle, answer, None, error)
        else:
            loop.call_soon_threadsafe(_settle, answer, line, None)

    threading.Thread(target=read, name="kutnahora-play-input", daemon=True).start()
    return await answer


def _settle(future: asyncio.Future[str], line: str | None, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert line is not None
        future.set_result(line)


class HumanSeat:
    """One person playing one seat: watch the game, draw it, ask for numbers, submit them."""

    def __init__(
        self,
        client: Client,
        seat: SeatCredentials,
        console: Console,
        names: Names,
        *,
        confirm_forced: bool = False,
    ) -> None:
        self.client = client
        self.seat = seat
        self.console = console
        self.names = names
        self.confirm_forced = confirm_forced
        self._moved_on = False
        self.moves: list[Text] = []
        self.last_kind = game_pb2.DECISION_KIND_UNSPECIFIED  # what the previous version asked

    async def run(self) -> play_service_pb2.WatchGameResponse | None:
        """Play until the game ends; returns its last watch message."""
        waiting_shown = -1
        names_known = False
        last: play_service_pb2.WatchGameResponse | None = None
        async for message in self.client.watch(self.seat.game_id, self.seat):
            last = message
            obs = message.observation
            if not self.names.guild_sets:
                self.names.set_game(obs)
            if message.seats:
                show_seats(self.console, self.names, message)
            elif not names_known and message.status != game_pb2.GAME_STATUS_WAITING:
                if not all(self.names.seat_names):  # seats taken before this watch began: learn the names
                    summary = await self.client.get_game(self.seat.game_id)
                    self.names.seat_names = [s.name for s in summary.seats]
                names_known = True
            self._record(message)
            if message.status in (game_pb2.GAME_STATUS_FINISHED, game_pb2.GAME_STATUS_ABANDONED) or obs.over:
                break
            if message.status == game_pb2.GAME_STATUS_WAITING:
                continue
            pending = obs.pending
            if pending.seat == self.seat.seat and pending.options:
                await self._take_turn(obs)
                waiting_shown = -1
            elif waiting_shown != pending.seat:
                waiting_shown = pending.seat
                line = Text("Waiting for ")
                line.append_text(self.names.seat(pending.seat))
                line.append(" …", style="dim")
                self.console.print(line)
        return last

    def _record(self, message: play_service_pb2.WatchGameResponse) -> None:
        if message.HasField("decision"):
            self.moves.append(move_line(message.decision, message.events, self.names, self.last_kind))
        elif message.events:
            self.moves.append(Text("\n".join(readable(e.text) for e in message.events), style="dim"))
        self.last_kind = message.observation.pending.kind

    def _show_moves(self) -> None:
        if not self.moves:
            return
        body = Text("\n").join(self.moves[-40:])
        skipped = len(self.moves) - 40
        title = "What happened since your last decision" + (
            f" (last 40 of {len(self.moves)})" if skipped > 0 else ""
        )
        self.console.print(Panel(body, title=title, title_align="left"))
        self.moves.clear()

    def _show_question(self, obs: Observation) -> None:
        """The options with their costs, why an action is missing, and the header line just above the
        prompt (so round, turn and who is to play stay on a small screen)."""
        self.console.print(options_table(obs, self.names))
        note = unavailable_note(obs, self.names)
        if note is not None:
            self.console.print(note)
        self.console.print(status_line(obs, self.names))

    async def _take_turn(self, obs: Observation) -> None:
        options = obs.pending.options
        free = nothing_to_pay(obs)
        if free is not None and not self.confirm_forced:
            if await self._submit(obs, free):
                self.moves.append(Text("The tax is 0: nothing to pay.", style="italic"))
            return
        if len(options) == 1 and not self.confirm_forced:
            if await self._submit(obs, 0):
                only = describe_option(options[0], obs.pending.kind, self.names)
                self.moves.append(Text(f"Only one choice, taken for you: {only}", style="italic"))
            return
        self._show_moves()
        self.console.print(game_screen(obs, self.names))
        self._show_question(obs)
        while True:
            try:
                answer = await ask(self.console, f"[bold cyan]Your choice (1-{len(options)}):[/] ")
            except EOFError:
                raise Quit("input closed") from None
            words = answer.strip()
            lowered = words.lower()
            if lowered in ("?", "h", "help"):
                self.console.print(help_text(obs))
                continue
            if lowered in ("b", "board"):
                self.console.print(game_screen(obs, self.names))
                self._show_question(obs)
                continue
            if lowered in ("q", "quit", "exit"):
                confirm = await ask(self.console, escape("Resign this game and leave? [y/N] "))
                if confirm.strip().lower() in ("y", "yes"):
                    await self.client.resign(self.seat)
                    raise Quit("resigned")
                continue
            index = self._parse(words, obs)
            if index is None:
                continue
            if await self._submit(obs, index):
                chosen = describe_option(options[index], obs.pending.kind, self.names)
                self.console.print(f"[green]You chose:[/] {escape(chosen)}")
                return
            if self._moved_on:
                return

    async def _submit(self, obs: Observation, index: int) -> bool:
        """Submit an option; False (and said why) when the server refused it."""
        self._moved_on = False
        try:
            await self.client.submit(self.seat, obs, index)
        except ClientError as error:
            self.console.print(f"[red]The server refused that:[/] {escape(str(error))}")
            if error.code == grpc.StatusCode.ABORTED:
                self.console.print("The game moved on; here is where it stands now.")
                self._moved_on = True
            return False
        return True

    def _parse(self, words: str, obs: Observation) -> int | None:
        """The option index a person's input names, or None after explaining what is wrong."""
        options = obs.pending.options
        if not words:
            self.console.print(f"Type a number from 1 to {len(options)}, or ? for help.")
            return None
        if words.isdigit():
            number = int(words)
            if 1 <= number <= len(options):
                return number - 1
            self.console.print(
                f"[yellow]There is no option {number}.[/] Choose a number from 1 to {len(options)}."
            )
            return None
        for option in options:
            if option.text == words.lower():
                return int(option.index)
        self.console.print(f"[yellow]{escape(self._not_an_option(words, obs))}[/] {self._hint(len(options))}")
        return None

    def _hint(self, count: int) -> str:
        return f"Type the number in front of an option (1 to {count}), or ? for help."

    def _not_an_option(self, words: str, obs: Observation) -> str:
        """Why typed words name none of the listed options, as precisely as they allow."""
        parts = words.lower().split()
        if parts and parts[0] == "play" and len(parts) == 3 and parts[1].isdigit():
            card = int(parts[1])
            hand = list(obs.players[self.seat.seat].hand) if self.seat.seat < len(obs.players) else []
            if card not in self.names.cards:
                cards = ", ".join(str(n) for n in sorted(self.names.cards))
                return f"There is no card {card}; the action cards are {cards}."
            if obs.pending.kind != game_pb2.DECISION_KIND_PLAY_CARD:
                return f"{words!r} plays a card, but this decision is not about playing a card."
            if card not in hand:
                return f"Card {card} is not in your hand (you hold {', '.join(map(str, hand)) or 'none'})."
            prefix = f"play {card} "
            listed = {o.text.removeprefix(prefix) for o in obs.pending.options if o.text.startswith(prefix)}
            halves = " or ".join(sorted(listed - {"none"}))
            if not halves:
                return f"Card {card} can only be played for no effect now (play {card} none)."
            return f"Card {card} cannot be played as {parts[2]!r} now; it can be played as {halves}."
        if parts and parts[0] in SHORT_FORM_HEADS:
            return f"{words!r} is not one of the options listed now."
        return f"{words!r} is not a number or the short form of a listed option."


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-play",
        formatter_class=DefaultsHelpFormatter,
        description="Play Kutná Hora in the terminal, against bots or people, or watch a game.",
    )
    parser.add_argument("--server", default="localhost:50051", help="server address host:port")
    parser.add_argument("--game", help="join this waiting game")
    parser.add_argument("--seat", type=int, help="the seat to take (default: the lowest free seat)")
    parser.add_argument("--create", action="store_true", help="create a new game")
    parser.add_argument("--players", type=int, default=2, help="seats of a created game, 2 to 4 (default 2)")
    parser.add_argument(
        "--opponents",
        default="greedy",
        help=(
            "bots for the other seats of a created game, comma-separated and repeated as needed "
            f"({', '.join(sorted(BOTS))}), or 'none' to wait for people (default greedy)"
        ),
    )
    parser.add_argument("--seed", type=int, help="seed of a created game")
    parser.add_argument(
        "--token",
        help="come back to a seat you left: the seat token shown when you joined (with --game and --seat)",
    )
    parser.add_argument("--name", default="human", help="your name, shown to the others")
    parser.add_argument("--watch", metavar="GAME", help="watch a game as a spectator instead of playing")
    parser.add_argument(
        "--confirm-forced",
        action="store_true",
        help="ask even when a decision has a single legal option (by default it is taken for you)",
    )
    parser.add_argument("--tls", action="store_true", help="use TLS")
    parser.add_argument("--ca-cert", help="PEM file of the CA to trust (TLS)")
    return parser


async def run(args: argparse.Namespace, console: Console) -> int:
    """Play or watch as the arguments say; returns the exit status."""
    async with await Client.connect(args.server, tls=args.tls, ca_cert=args.ca_cert) as client:
        components = await client.components()
        if args.watch:
            return await watch(client, args.watch, console, Names(components))
        bots: list[asyncio.Task[object]] = []
        try:
            seat = await _take_seat(client, args, console, bots)
            if seat is None:
                return 0
            summary = await client.get_game(seat.game_id)
            names = Names(components, [s.name for s in summary.seats], viewer=seat.seat)
            session = HumanSeat(client, seat, console, names, confirm_forced=args.confirm_forced)
            try:
                last = await session.run()
            except Quit as reason:
                console.print(f"You left the game ({reason}).")
                if bots and str(reason) == "resigned":
                    # The server now plays your seat; let the bots finish the game rather than strand it.
                    await asyncio.wait(bots, timeout=15)
                return 0
            summary = await client.get_game(seat.game_id)
            names = Names(components, [s.name for s in summary.seats], viewer=seat.seat)
            session.names = names
            session._show_moves()
            if last is not None:
                console.print(game_screen(last.observation, names, status_name(summary.status)))
            _print_end(console, summary, names, seat.seat)
            return 0
        finally:
            for task in bots:
                task.cancel()
            await asyncio.gather(*bots, return_exceptions=True)


async def _take_seat(
    client: Client, args: argparse.Namespace, console: Console, bots: list[asyncio.Task[object]]
) -> SeatCredentials | None:
    if args.token:
        if args.game is None or args.seat is None:
            raise ClientError("--token needs --game and --seat: the seat it was given for.")
        seat = SeatCredentials(args.game, args.seat, args.token)
        await client.observe(seat.game_id, seat)  # proves the token before the game is drawn
        console.print(f"Back in game [bold]{seat.game_id}[/] as seat {seat.seat}.")
        return seat
    game_id = args.game
    if game_id is None and not args.create:
        game_id = await _choose_waiting_game(client, console)
    if game_id is not None:
        seat = await client.join_game(game_id, args.seat, args.name)
        console.print(f"You joined game [bold]{game_id}[/] as seat {seat.seat}.")
        _print_rejoin(console, args.server, seat)
        return seat
    if not 2 <= args.players <= 4:
        raise ClientError("--players must be 2, 3 or 4.")
    opponents = (
        [] if args.opponents.strip().lower() == "none" else [o.strip() for o in args.opponents.split(",")]
    )
    unknown = [o for o in opponents if o not in BOTS]
    if unknown:
        raise ClientError(f"unknown bot {unknown[0]!r}; the bots are {', '.join(sorted(BOTS))}.")
    clock = game_pb2.ClockSettings(disabled=True)
    created = await client.create_game(args.players, seed=args.seed, clock=clock, label="kutnahora-play")
    game_id = created.game.game_id
    mine = args.seat if args.seat is not None else 0
    seat = await client.join_game(game_id, mine, args.name)
    console.print(f"Created game [bold]{game_id}[/] for {args.players} players; you are seat {seat.seat}.")
    if not opponents:
        _print_rejoin(console, args.server, seat)
    others = [s for s in range(args.players) if s != seat.seat]
    if not opponents:
        console.print(
            f"Waiting for {_players(len(others))}. They join with:\n"
            f"  kutnahora-play --server {args.server} --game {game_id}"
        )
        return seat
    for n, other in enumerate(others):
        kind = opponents[n % len(opponents)]
        credentials = await client.join_game(game_id, other, kind)
        bot = make_bot(kind, (args.seed or 0) * 10 + other)
        bots.append(asyncio.create_task(client.play(bot, credentials)))
    return seat


def _players(count: int) -> str:
    return f"{count} more player" + ("" if count == 1 else "s")


def show_seats(console: Console, names: Names, message: play_service_pb2.WatchGameResponse) -> None:
    """Say who took a seat and how many are still awaited (a watch message that tells of the seats)."""
    for seat in message.seats:
        while len(names.seat_names) <= seat.seat:
            names.seat_names.append("")
        names.seat_names[seat.seat] = seat.name
    if not message.HasField("joined_seat"):
        return
    line = names.seat(message.joined_seat)
    line.append(" took a seat.")
    console.print(line)
    free = sum(1 for seat in message.seats if not seat.joined)
    if free:
        console.print(f"Waiting for {_players(free)} …")
    else:
        console.print("Every seat is taken; the game begins.")


def _print_rejoin(console: Console, server: str, seat: SeatCredentials) -> None:
    """How to come back to this seat after leaving the client (the token is this player's own secret)."""
    console.print(
        "To come back to this seat later: "
        f"kutnahora-play --server {server} --game {seat.game_id} --seat {seat.seat} --token={seat.token}",
        soft_wrap=True,
    )


async def _choose_waiting_game(client: Client, console: Console) -> str | None:
    games = await client.list_games(game_pb2.GAME_STATUS_WAITING)
    open_games = [g for g in games if any(not s.joined for s in g.seats)]
    if not open_games:
        console.print("No game is waiting for players; creating one against the greedy bot.")
        return None
    console.print("Games waiting for players:")
    for number, game in enumerate(open_games, start=1):
        free = sum(1 for s in game.seats if not s.joined)
        console.print(f"  {number}. {game.game_id}: {game.options.players} players, {free} seat(s) free")
    while True:
        try:
            answer = await ask(
                console, "Join which game? (number, or Enter for a new game against the greedy bot) "
            )
        except EOFError:
            return None
        if not answer.strip():
            return None
        if answer.strip().isdigit() and 1 <= int(answer) <= len(open_games):
            return str(open_games[int(answer) - 1].game_id)
        console.print(f"Type a number from 1 to {len(open_games)}, or press Enter.")


async def watch(client: Client, game_id: str, console: Console, names: Names) -> int:
    """Follow a game as a spectator: every move as it happens, the board at each new round."""
    summary = await client.get_game(game_id)
    names = Names(names.components, [s.name for s in summary.seats])
    last_round = -1
    last: Observation | None = None
    kind = game_pb2.DECISION_KIND_UNSPECIFIED
    async for message in client.watch(game_id):
        last = message.observation
        if not names.guild_sets:
            names.set_game(last)
        if message.seats:
            show_seats(console, names, message)
        if message.HasField("decision"):
            console.print(move_line(message.decision, message.events, names, kind))
        kind = last.pending.kind
        if last.round != last_round and not last.over:
            last_round = last.round
            console.print(game_screen(last, names))
        if message.status in (game_pb2.GAME_STATUS_FINISHED, game_pb2.GAME_STATUS_ABANDONED):
            break
    summary = await client.get_game(game_id)
    if last is not None:
        console.print(game_screen(last, names, status_name(summary.status)))
    _print_end(console, summary, names, None)
    return 0


def _print_end(console: Console, summary: game_pb2.GameSummary, names: Names, seat: int | None) -> None:
    if summary.status != game_pb2.GAME_STATUS_FINISHED:
        reason = f": {summary.abandon_reason}" if summary.abandon_reason else ""
        console.print(f"The game was {status_name(summary.status)}{reason}.")
        return
    console.print(result_table(summary.result, names))
    console.print("[bold yellow]Game over.[/]", end=" ")
    if seat is None:
        return console.print()
    scores = sorted(((s.score, s.groschen) for s in summary.result.seats), reverse=True)
    mine = next(s for s in summary.result.seats if s.seat == seat)
    place = 1 + scores.index((mine.score, mine.groschen))
    if seat in summary.result.winners:
        console.print(f"You won with {mine.score} points!")
    else:
        console.print(f"You finished {_ordinal(place)} with {mine.score} points.")


def _ordinal(n: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n, "th")
    return f"{n}{suffix}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kutnahora-play``."""
    args = build_parser().parse_args(argv)
    console = Console(highlight=False)
    try:
        return asyncio.run(run(args, console))
    except ConnectError as error:
        print(f"kutnahora-play: {error}", file=sys.stderr)
        return 2
    except ClientError as error:
        print(f"kutnahora-play: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        with contextlib.suppress(Exception):
            console.print("\nInterrupted; your seat stays in the game.")
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""``kutnahora-bot``: run a reference bot on one seat (or every seat) of a game.

Examples::

    kutnahora-bot greedy --server localhost:50051 --create --players 2 --fill   # a whole game, bot vs bot
    kutnahora-bot random --server localhost:50051 --create --players 3          # seat 0; prints the game id
    kutnahora-bot greedy --server localhost:50051 --game 5f0c2a9e --seat 1      # join a waiting game
    kutnahora-bot mcts --iterations 200 --server localhost:50051 --game 5f0c2a9e   # search 200 iterations
    kutnahora-bot neural --search 300 --server localhost:50051 --game 5f0c2a9e   # network-guided search
    kutnahora-bot neural-mcts --iterations 100 --server localhost:50051 --game 5f0c2a9e  # network picks, mcts
    kutnahora-bot register my-bot --key-file my-bot.key --arena localhost:50061   # once; plays no game
    kutnahora-bot greedy --arena localhost:50061 --key-file my-bot.key --pool 4 --games 20  # rated games
    kutnahora-bot submit my-bot/ --arena localhost:50061 --key-file my-bot.key --wait  # hosted by the arena
    kutnahora-bot submissions --arena localhost:50061 --key-file my-bot.key   # its hosted versions
    kutnahora-bot greedy --arena arena.example.org:50061 --tls --key-file my-bot.key --pool 2  # over TLS

A runner (such as ``kutnahora-tournament --bot-cmd``) may hand over a seat it has already joined through
the environment: ``KUTNAHORA_SERVER``, ``KUTNAHORA_GAME_ID``, ``KUTNAHORA_SEAT`` and ``KUTNAHORA_TOKEN``.

Exit status: 0 when the game ended, 1 when it could not be played, 2 for a usage error or when the server
cannot be reached. ``kutnahora-bot register`` exits 0 when registered, 1 when the arena refuses the name,
2 for a usage error or an unreachable arena. ``kutnahora-bot submit``, ``submissions`` and ``hosting``:
see :mod:`kutnahora.clients.bots.hosted`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from rich.console import Console

from kutnahora.clients.bots import BOTS, hosted, make_bot, neural_bot, neural_mcts_bot
from kutnahora.clients.bots.arena import ENV_ARENA_KEY, add_tls_options, play_rated, read_key, register
from kutnahora.clients.bots.mcts import DEFAULT_ITERATIONS, ROLLOUTS, MctsBot
from kutnahora.clients.bots.paced import PacedBot
from kutnahora.clients.sdk import (
    ENV_GAME_ID,
    ENV_SEAT,
    ENV_SERVER,
    ENV_TOKEN,
    Bot,
    Client,
    ClientError,
    ConnectError,
    GameOutcome,
    SeatCredentials,
    status_name,
)
from kutnahora.v1 import game_pb2

ENV_ARENA = "KUTNAHORA_ARENA"
ENV_ARENA_ADMIN_TOKEN = "KUTNAHORA_ARENA_ADMIN_TOKEN"


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser; defaults come from the KUTNAHORA_* environment variables."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-bot",
        description="Play a Kutná Hora seat with a reference bot, over gRPC.",
        epilog=(
            "Without --game or --create, the seat named by KUTNAHORA_GAME_ID, KUTNAHORA_SEAT and "
            "KUTNAHORA_TOKEN is played (this is how kutnahora-tournament --bot-cmd starts bots). "
            "'kutnahora-bot register NAME --key-file FILE' registers a bot with an arena and plays no game "
            "(see 'kutnahora-bot register --help'). 'kutnahora-bot submit FOLDER' uploads the bot's code for "
            "the arena to host; 'kutnahora-bot submissions' lists its versions and 'kutnahora-bot hosting "
            "pause|resume' pauses or resumes its hosted play (each has its --help)."
        ),
    )
    parser.add_argument("bot", choices=sorted(BOTS), help="which bot plays")
    parser.add_argument(
        "--server",
        default=os.environ.get(ENV_SERVER, "localhost:50051"),
        help="server address host:port (default: $KUTNAHORA_SERVER or localhost:50051)",
    )
    where = parser.add_argument_group("which seat")
    where.add_argument("--game", default=os.environ.get(ENV_GAME_ID), help="join this game id")
    where.add_argument(
        "--seat",
        type=int,
        default=int(os.environ[ENV_SEAT]) if os.environ.get(ENV_SEAT, "").isdigit() else None,
        help="the seat to take (default: the lowest free seat)",
    )
    where.add_argument("--create", action="store_true", help="create a new game first")
    where.add_argument("--players", type=int, default=2, help="seats of a created game, 2 to 4 (default 2)")
    where.add_argument("--seed", type=int, help="seed of a created game (default: the server chooses)")
    where.add_argument("--events", action="store_true", help="use event cards in a created 3-4 player game")
    where.add_argument("--fill", action="store_true", help="play every free seat of the game with this bot")
    parser.add_argument("--name", help="the name shown for the seat (default: the bot's name)")
    parser.add_argument("--bot-seed", type=int, help="seed of the bot's own choices (random and mcts bots)")
    search = parser.add_argument_group("search budget (mcts, neural, neural-mcts)")
    search.add_argument(
        "--search",
        type=int,
        help="neural: simulations of its network-guided search per decision (default: no search, the "
        "network's policy alone)",
    )
    search.add_argument(
        "--iterations",
        type=int,
        help=f"mcts, neural-mcts: iterations per decision (default {DEFAULT_ITERATIONS} when no --budget-ms "
        "is given)",
    )
    search.add_argument(
        "--budget-ms",
        type=float,
        help="milliseconds per decision (with --iterations or --search, whichever ends first)",
    )
    search.add_argument(
        "--rollout", choices=sorted(ROLLOUTS), default="heuristic", help="rollout policy (default heuristic)"
    )
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds to wait before each decision, to watch the game"
    )
    add_tls_options(
        parser,
        "connect over TLS to the game server, or with --arena to the arena (the game servers it names are "
        "reached as it reaches them, in plain gRPC)",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    arena = parser.add_argument_group("rated games in an arena (instead of --game or --create)")
    arena.add_argument("--arena", help="the arena's address host:port; the arena places the games")
    arena.add_argument("--key-file", help=f"file holding the bot's arena API key (default: ${ENV_ARENA_KEY})")
    arena.add_argument(
        "--register",
        metavar="NAME",
        help="register NAME with the arena first, write its key to --key-file (a new file: one that exists "
        "is never overwritten), then play "
        "('kutnahora-bot register' only registers)",
    )
    arena.add_argument(
        "--pool", default="2", help="pools to seek in, comma-separated, such as 2 or 2,4 (default 2)"
    )
    arena.add_argument(
        "--games",
        type=int,
        default=1,
        help="rated games to play in each pool (an abandoned one does not count); 0 plays until stopped",
    )
    return parser


def build_register_parser() -> argparse.ArgumentParser:
    """The parser of ``kutnahora-bot register``: register a bot with an arena, and play no game."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-bot register",
        description="Register a bot with a Kutná Hora arena and write its API key to a file (readable only "
        "by you). No game is played; then play rated games with "
        "'kutnahora-bot BOT --arena ADDRESS --key-file FILE --pool 2 --games N'.",
    )
    parser.add_argument("name", help="the bot's name in the arena (ASCII letters, digits, - _ .; 40 at most)")
    parser.add_argument("--key-file", required=True, help="file to write the new API key to (must not exist)")
    parser.add_argument(
        "--arena",
        default=os.environ.get(ENV_ARENA, "localhost:50061"),
        help=f"the arena's address host:port (default: ${ENV_ARENA} or localhost:50061)",
    )
    add_tls_options(parser)
    parser.add_argument(
        "--admin-token",
        default=os.environ.get(ENV_ARENA_ADMIN_TOKEN) or None,
        help="the arena's admin token, for an arena that registers only with it "
        f"(default: ${ENV_ARENA_ADMIN_TOKEN})",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return parser


def key_file_exists(key_file: str) -> bool:
    """Whether the file a new key would go to exists (saying so): it may hold a key, never overwritten."""
    if not os.path.lexists(key_file):
        return False
    print(
        f"kutnahora-bot: {key_file} exists (it may hold a key); name a new file, or delete it first",
        file=sys.stderr,
    )
    return True


async def run_register(args: argparse.Namespace, console: Console) -> int:
    """Register ``args.name`` and write its key; the exit status."""
    if key_file_exists(args.key_file):
        return 2
    await register(
        args.arena, args.name, args.key_file, admin_token=args.admin_token, tls=args.tls, ca_cert=args.ca_cert
    )
    if not args.quiet:
        console.print(
            f"Registered [bold]{args.name}[/] with the arena at {args.arena}; its key is in "
            f"{args.key_file}. Play with: kutnahora-bot greedy --arena {args.arena} "
            f"--key-file {args.key_file} --pool 2 --games 5"
        )
    return 0


async def run_arena(args: argparse.Namespace, console: Console) -> int:
    """Play rated games in the arena as the arguments say; returns the exit status."""
    if args.register:
        if not args.key_file:
            print("kutnahora-bot: --register needs --key-file, where the new key is written", file=sys.stderr)
            return 2
        if key_file_exists(args.key_file):
            return 2
        await register(args.arena, args.register, args.key_file, tls=args.tls, ca_cert=args.ca_cert)
        if not args.quiet:
            console.print(f"Registered [bold]{args.register}[/]; its key is in {args.key_file}.")
    key = read_key(args.key_file)
    if key is None:
        where = args.key_file or f"${ENV_ARENA_KEY}"
        print(f"kutnahora-bot: no arena API key in {where} (register with --register NAME)", file=sys.stderr)
        return 2
    pools = [p.strip() for p in args.pool.split(",") if p.strip()]

    def make() -> Bot:
        bot = build_bot(args, args.bot_seed)
        return PacedBot(bot, args.delay) if args.delay > 0 else bot

    outcomes = await play_rated(
        args.arena,
        key,
        pools,
        args.games,
        make,
        console,
        quiet=args.quiet,
        tls=args.tls,
        ca_cert=args.ca_cert,
    )
    return 0 if all(o.status == game_pb2.GAME_STATUS_FINISHED for o in outcomes) else 1


async def run(args: argparse.Namespace, console: Console) -> int:
    """Play as the arguments say; returns the exit status."""
    if args.arena:
        return await run_arena(args, console)
    async with await Client.connect(args.server, tls=args.tls, ca_cert=args.ca_cert) as client:
        name = args.name or args.bot
        token = os.environ.get(ENV_TOKEN)
        seats: list[SeatCredentials]
        if args.create:
            if args.fill:  # every seat this bot's: the game is made with them taken
                created, seats = await client.create_seated_game(
                    [name] * args.players, seed=args.seed, events=args.events
                )
            else:
                created = await client.create_game(args.players, seed=args.seed, events=args.events)
                seats = await _join(client, created.game.game_id, args, name, args.players)
            game_id = created.game.game_id
            if not args.quiet:
                console.print(f"Created game [bold]{game_id}[/] for {args.players} players.")
            if not args.quiet and not args.fill and args.players > 1:
                console.print(
                    f"Others join with: kutnahora-bot random --server {args.server} --game {game_id}"
                    " (add --fill to take every free seat)\n"
                    f"             or: kutnahora-play --server {args.server} --game {game_id}"
                )
        elif args.game and token and args.seat is not None and not args.fill:
            seats = [SeatCredentials(args.game, args.seat, token)]
        elif args.game:
            summary = await client.get_game(args.game)
            seats = await _join(client, args.game, args, name, summary.options.players)
        else:
            print(
                "kutnahora-bot: say which game to play: --create, --game ID, or KUTNAHORA_GAME_ID/SEAT/TOKEN",
                file=sys.stderr,
            )
            return 2
        if not args.quiet:
            taken = ", ".join(str(s.seat) for s in seats)
            console.print(f"Playing game [bold]{seats[0].game_id}[/] as {args.bot} on seat {taken}…")
        outcomes = await asyncio.gather(*(_play_one(client, args, seat) for seat in seats))
    if not args.quiet:
        _print_outcome(console, outcomes[0], seats)
    return 0 if all(o.status == game_pb2.GAME_STATUS_FINISHED for o in outcomes) else 1


async def _join(
    client: Client, game_id: str, args: argparse.Namespace, name: str, players: int
) -> list[SeatCredentials]:
    if not args.fill:
        return [await client.join_game(game_id, args.seat, name)]
    summary = await client.get_game(game_id)
    free = [s.seat for s in summary.seats if not s.joined] or list(range(players))
    return [await client.join_game(game_id, seat, name) for seat in free]


def build_bot(args: argparse.Namespace, seed: int | None) -> Bot:
    """The bot the command line names, with its search budget."""
    if args.bot == "mcts":
        return MctsBot(seed, iterations=args.iterations, budget_ms=args.budget_ms, rollout=args.rollout)
    if args.bot == "neural":
        return neural_bot(seed, args.search, args.budget_ms)
    if args.bot == "neural-mcts":
        return neural_mcts_bot(seed, args.iterations, args.budget_ms)
    return make_bot(args.bot, seed)


async def _play_one(client: Client, args: argparse.Namespace, seat: SeatCredentials) -> GameOutcome:
    seed = None if args.bot_seed is None else args.bot_seed + seat.seat
    bot = build_bot(args, seed)
    if args.delay > 0:
        bot = PacedBot(bot, args.delay)
    return await client.play(bot, seat)


def _print_outcome(console: Console, outcome: GameOutcome, seats: Sequence[SeatCredentials]) -> None:
    mine = {s.seat for s in seats}
    if outcome.result is None:
        console.print(f"Game {outcome.game_id} ended: {status_name(outcome.status)}, without a result.")
        return
    console.print(f"Game {outcome.game_id} {status_name(outcome.status)}.")
    for seat in sorted(outcome.result.seats, key=lambda s: -s.score):
        marks = []
        if seat.seat in outcome.result.winners:
            marks.append("winner")
        if seat.seat in mine and len(mine) < len(outcome.result.seats):
            marks.append("this bot")
        console.print(
            f"  seat {seat.seat}: {seat.score} points" + (f" ({', '.join(marks)})" if marks else "")
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kutnahora-bot``."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    console = Console(highlight=False, soft_wrap=True)

    def error(message: str) -> None:
        print(f"kutnahora-bot: {message}", file=sys.stderr)

    if arguments[:1] and arguments[0] in hosted.COMMANDS:
        return hosted.main(arguments, console)
    if arguments[:1] == ["register"]:
        try:
            return asyncio.run(run_register(build_register_parser().parse_args(arguments[1:]), console))
        except ConnectError as failure:
            error(str(failure))
            return 2
        except ClientError as failure:
            error(str(failure))
            return 1
    args = build_parser().parse_args(arguments)

    if args.games < 0:
        error("--games must be 0 (play on) or more.")
        return 2
    if args.create and not 2 <= args.players <= 4:
        error("--players must be 2, 3 or 4.")
        return 2
    if args.iterations is not None and args.iterations < 1:
        error("--iterations must be at least 1.")
        return 2
    if args.budget_ms is not None and args.budget_ms <= 0:
        error("--budget-ms must be more than 0.")
        return 2
    if args.search is not None and (args.bot != "neural" or args.search < 1):
        error("--search sets the neural bot's simulations per decision, at least 1.")
        return 2
    if args.bot not in ("mcts", "neural-mcts") and args.iterations is not None:
        error("--iterations sets the mcts or neural-mcts bot's search; the neural bot's is --search.")
        return 2
    if args.bot not in ("mcts", "neural", "neural-mcts") and args.budget_ms is not None:
        error("--budget-ms sets the mcts, neural or neural-mcts bot's search; the other bots do not search.")
        return 2
    try:
        return asyncio.run(run(args, console))
    except ConnectError as failure:
        error(str(failure))
        return 2
    except ClientError as failure:
        error(str(failure))
        return 1
    except KeyboardInterrupt:
        error("interrupted; the server's clock plays this seat from now on.")
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""``kutnahora-tournament``: play a seeded, seat-rotated schedule of bot games and rate the bots.

Examples::

    kutnahora-tournament --bots random,greedy --players 4 --games 200 --seed 1
    kutnahora-tournament --bots greedy,random --games 50 --out results.json --csv table.csv
    kutnahora-tournament --bots greedy --bot-cmd node='node clients/node/bot.js' --players 2 --games 20
    kutnahora-tournament --bots random,greedy --games 200 --out results.json --resume   # after an interrupt
    kutnahora-tournament --submissions bots/ --players 4 --games 200 --out results.json  # hosted, walled in
    kutnahora-tournament --bots random,greedy --games 200 --shard 0/2 --out shard-0.json  # and 1/2 elsewhere
    kutnahora-tournament merge --out results.json shard-0.json shard-1.json

Without ``--server`` the runner starts its own ``kutnahora-server`` on a free port (in memory) and stops
it at the end (``--components FILE`` gives it your own component data). Progress goes to standard error,
the table to standard output.

Exit status: 0 when every game was played and every submission could play (a bot that crashed or timed
out still counts as played, and loses), 1 when some games could not be played or some submission could not
play (its manifest, build or run command: its seats were lost, and the end of the output says why), 2 for
a usage error or an unreachable server, 130 when interrupted (the results file then holds every game
finished so far).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from kutnahora.clients.bots import BOTS
from kutnahora.clients.sdk import ConnectError
from kutnahora.clients.stopping import INTERRUPTED, terminate_as_interrupt
from kutnahora.clients.tournament import merge, results, stats
from kutnahora.clients.tournament.merge import parse_shard
from kutnahora.clients.tournament.results import GameRecord, ResultsError
from kutnahora.clients.tournament.runner import BotSpec, LocalServer, Runner, RunnerConfig, known_bot
from kutnahora.clients.tournament.schedule import ScheduledGame, schedule, split_copies
from kutnahora.hosting import builds
from kutnahora.hosting.gateway_flags import add_gateway_arguments, gateway_limits_of
from kutnahora.hosting.limit_flags import add_limit_arguments, limits_of
from kutnahora.hosting.sandbox import Sandbox, SandboxError, copy_protos
from kutnahora.hosting.submission import SubmissionError
from kutnahora.hosting.submission import find as find_submissions


class UsageError(Exception):
    """The command line asks for something that cannot be done."""


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-tournament",
        description=(
            "Play a tournament of Kutná Hora bots: every seating rotated fairly, every game seeded from "
            "the tournament seed, results as a table, JSON and CSV, ratings with openskill."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "built-in bots: "
            + ", ".join(sorted(BOTS))
            + "; mcts:200 or mcts:500ms (neural:300, neural:150ms) set the search budget\n"
            "external bots: --bot-cmd NAME='command' starts the command for each of NAME's seats with\n"
            "  KUTNAHORA_SERVER, KUTNAHORA_GAME_ID, KUTNAHORA_SEAT, KUTNAHORA_TOKEN and KUTNAHORA_BOT_SEED\n"
            "  in its environment; it must play that seat to the end and exit with status 0.\n"
            "hosted submissions: see the group below and docs/hosted-bots.md\n"
            "shards: 'kutnahora-tournament merge --help' joins the results of --shard runs"
        ),
    )
    parser.add_argument(
        "--bots",
        default="",
        help="comma-separated bot names, each once (copies fill spare seats; NAME*N takes N seats); "
        "needed unless hosted submissions are given",
    )
    parser.add_argument("--players", type=int, default=4, help="seats per game, 2 to 4 (default 4)")
    parser.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    parser.add_argument(
        "--seed", type=int, default=1, help="tournament seed; same seed, same games (default 1)"
    )
    parser.add_argument("--server", help="server address host:port (default: start a local server)")
    parser.add_argument(
        "--components",
        metavar="FILE",
        help="component data file for the local server (your own printed values); a server given with "
        "--server plays the set it was started with",
    )
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="play only the game indices i with i %% N == K (0 <= K < N); join the shards' results "
        "files with 'kutnahora-tournament merge'",
    )
    parser.add_argument("--concurrency", type=int, default=8, help="games played at once (default 8)")
    parser.add_argument("--out", type=Path, help="write results as JSON here (after every game)")
    parser.add_argument("--csv", type=Path, help="write the standings table as CSV here")
    parser.add_argument("--resume", action="store_true", help="continue the run recorded in --out")
    parser.add_argument(
        "--bot-cmd",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="an external bot: the command that plays one seat (repeatable)",
    )
    hosted = parser.add_argument_group(
        "hosted submissions",
        "folders with a kutnahora-bot.toml (name, language, build, run), each built once and run walled "
        "in for every seat it plays (see docs/hosted-bots.md)",
    )
    hosted.add_argument("--submissions", type=Path, metavar="DIR", help="every subfolder of DIR is one")
    hosted.add_argument(
        "--submission", type=Path, action="append", default=[], metavar="PATH", help="one (repeatable)"
    )
    hosted.add_argument(
        "--sandbox",
        choices=("bwrap", "none"),
        default="bwrap",
        help="bwrap: each bot in bubblewrap with the limits below; none: unwalled (default bwrap)",
    )
    hosted.add_argument(
        "--server-socket",
        type=Path,
        metavar="PATH",
        help="the Unix socket a --server listens on (kutnahora-server --unix-socket), for the hosted bots' "
        "seat gateways to reach it by (default: the local server's own socket, or --server's address)",
    )
    add_limit_arguments(hosted)
    add_gateway_arguments(hosted)
    hosted.add_argument(
        "--sandbox-runtime",
        type=Path,
        metavar="DIR",
        help="where the runners of this host lease the sandbox user ids (one lock file per id; default "
        "$KUTNAHORA_SANDBOX_RUNTIME or /run/kutnahora-sandbox)",
    )
    parser.add_argument(
        "--replays",
        type=Path,
        help="save each game's replay here (default: OUT's name + .replays/); a new run without --resume "
        "first removes the earlier run's replays (*.json) there",
    )
    parser.add_argument("--no-replays", action="store_true", help="do not save replays")
    parser.add_argument("--events", action="store_true", help="use event cards with 3 or 4 players")
    parser.add_argument(
        "--game-timeout",
        type=float,
        default=600.0,
        help="seconds a game may take; then the seat it waits for loses (default 600)",
    )
    parser.add_argument(
        "--move-timeout",
        type=float,
        default=60.0,
        help="seconds a game may wait for one seat's decision before that seat loses (default 60)",
    )
    parser.add_argument("--decision-time", type=float, help="seconds per decision (default: the server's)")
    parser.add_argument(
        "--time-bank", type=float, help="time bank per seat in seconds (default: the server's)"
    )
    parser.add_argument("--label", default="tournament", help="label given to every game on the server")
    parser.add_argument("--tls", action="store_true", help="connect to --server with TLS")
    parser.add_argument("--ca-cert", help="PEM file of the CA to trust (TLS)")
    parser.add_argument(
        "--server-token",
        default=os.environ.get("KUTNAHORA_SERVER_TOKEN", ""),
        metavar="TOKEN",
        help="the --server's --quota-token, sent with every game created, so that a tournament of more "
        "than the server's --caller-games games at once is not refused (prefer the variable "
        "KUTNAHORA_SERVER_TOKEN)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def parse_bot_commands(entries: Sequence[str]) -> dict[str, str]:
    """``NAME=COMMAND`` entries as a mapping."""
    commands: dict[str, str] = {}
    for entry in entries:
        name, sep, command = entry.partition("=")
        name, command = name.strip(), command.strip()
        if not sep or not name or not command:
            raise UsageError(f"--bot-cmd wants NAME=COMMAND, not {entry!r}")
        if name in commands:
            raise UsageError(f"--bot-cmd names {name!r} twice")
        commands[name] = command
    return commands


class Tournament:
    """One run of the command: schedule, resume, play, report."""

    def __init__(self, args: argparse.Namespace, console: Console, progress_console: Console) -> None:
        self.args = args
        self.console = console
        self.progress_console = progress_console
        self.commands = parse_bot_commands(args.bot_cmd)
        folders = list(args.submission)
        if args.submissions is not None:
            try:
                folders += find_submissions(args.submissions)
            except SubmissionError as error:
                raise UsageError(str(error)) from None
        self.entries = builds.read(folders)
        hosted_names = {e.name for e in self.entries}
        names = [b.strip() for b in args.bots.split(",") if b.strip()]
        names += [n for n in self.commands if n not in names]
        names += [e.name for e in self.entries if e.name not in names]
        if not names:
            raise UsageError("no bots: give --bots, --bot-cmd or hosted submissions")
        clash = hosted_names & (set(self.commands) | {split_copies(n)[0] for n in args.bots.split(",")})
        if clash:
            raise UsageError(f"the submission name(s) {', '.join(sorted(clash))} are also given as bots")
        self.names = names
        self.bot_names = [split_copies(name)[0] for name in names]
        try:
            self.specs: dict[str, BotSpec] = {
                name: BotSpec(name) if name in hosted_names else known_bot(name, self.commands)
                for name, _ in map(split_copies, names)
            }
            self.schedule = schedule(names, args.players, args.games, args.seed)
            if args.shard:
                part, count = parse_shard(args.shard)
                self.schedule = [g for g in self.schedule if g.index % count == part]
        except ValueError as error:
            raise UsageError(str(error)) from None
        self.runner: Runner | None = None
        self.sandbox: Sandbox | None = None
        if self.entries and args.sandbox == "bwrap":
            self.sandbox = Sandbox(limits_of(args))
            try:
                self.sandbox.setup(args.sandbox_runtime)
            except SandboxError as error:
                raise UsageError(str(error)) from None
        if args.concurrency < 1:
            raise UsageError("--concurrency must be at least 1")
        if args.resume and args.out is None:
            raise UsageError("--resume needs --out, the results file to continue")
        self.config: dict[str, Any] = {
            "bots": names,
            "players": args.players,
            "games": args.games,
            "seed": args.seed,
            "events": args.events,
            "bot_commands": self.commands,
            "label": args.label,
        }
        if args.shard:
            self.config["shard"] = args.shard
        if self.entries:
            self.config["submissions"] = {
                e.name: {"folder": str(e.source), "language": e.submission.language if e.submission else ""}
                for e in self.entries
            }
            self.config["sandbox"] = args.sandbox
        if self.sandbox is not None:  # which walls held the bots: cgroup v2, cgroup v1 or prlimit
            self.config["walls"] = {
                "limits": self.sandbox.cgroups.mode,
                "description": self.sandbox.describe(),
            }
        self.records: dict[int, GameRecord] = {}
        self.server = args.server or ""
        self.broken: dict[str, str] = {}
        self.protos: Path | None = None
        self._kept_logs: Path | None = None

    def replays_dir(self) -> Path | None:
        if self.args.no_replays:
            return None
        if self.args.replays is not None:
            return Path(self.args.replays)
        out: Path | None = self.args.out
        if out is not None:
            return out.with_name(out.stem + ".replays")
        return None

    def load_previous(self) -> None:
        if not (self.args.resume and self.args.out.exists()):
            return
        saved, records = results.load(self.args.out)
        results.check_resumable(saved, self.config)
        # A game that could not be played at all (no result, no failure to blame) is played again.
        self.records = {r.index: r for r in records if r.scores is not None or r.failures}

    def clear_previous(self) -> None:
        """A new run (no --resume) into an --out used before: the earlier run's replays and bot logs
        are removed, so that the folders hold this run's files only."""
        if self.args.resume:
            return
        logs = self.logs_dir()
        for folder, pattern in ((self.replays_dir(), "*.json"), (logs, "*.log")):
            if folder is None or not folder.is_dir():
                continue
            old = list(folder.glob(pattern))
            for path in old:
                path.unlink()
            if old:
                self.progress_console.print(f"Removed {len(old)} file(s) of an earlier run from {folder}.")

    def build_logs(self, work: Path) -> Path:
        """Where the builds' logs are kept: beside the results file (``OUT.logs/``), else a folder that
        outlives the run (named in the messages)."""
        logs = self.logs_dir()
        if logs is not None:
            return logs
        if self._kept_logs is None:
            self._kept_logs = Path(tempfile.mkdtemp(prefix="kutnahora-builds-"))
        return self._kept_logs

    def logs_dir(self) -> Path | None:
        out: Path | None = self.args.out
        if out is None or not (self.commands or self.entries):
            return None
        return out.with_name(out.stem + ".logs")

    async def prepare_submissions(self, work: Path) -> None:
        """Copy and build every submission once; each one that cannot play is said, naming it. The
        project's .proto files are copied beside them first, for the builds that generate code."""
        logs = self.build_logs(work)
        if self.sandbox is not None:  # a tmpfs of the run's own, so that the bots see no host path
            work = self.sandbox.stage(work)
        self.protos = copy_protos(work / ".protos")  # no submission name starts with a dot
        if self.sandbox is not None:
            self.sandbox.protos = self.protos
        for entry in self.entries:
            self.progress_console.print(f"Preparing submission {entry.name}...")
            prepared = await builds.prepare(entry, work, self.sandbox, logs, self.protos)
            spec = BotSpec(prepared.name, submission=prepared.submission, broken=prepared.broken)
            self.specs[entry.name] = spec
            if spec.broken is not None:
                self.progress_console.print(f"[red]{spec.broken}[/red]; its seats will be lost.")
                self.broken[entry.name] = spec.broken

    async def run(self) -> int:
        self.load_previous()
        self.clear_previous()
        todo = [g for g in self.schedule if g.index not in self.records]
        local: LocalServer | None = None
        with tempfile.TemporaryDirectory(prefix="kutnahora-hosted-") as work_name:
            work = Path(work_name)
            os.chmod(work, 0o711)
            socket = self.args.server_socket
            if self.sandbox is not None:
                self.progress_console.print(f"Sandbox: bubblewrap; {self.sandbox.describe()}.")
            if self.entries:
                self.progress_console.print(f"Seat gateways: {self._runner_config().gateway.describe()}.")
            try:
                if not self.args.server:
                    extra = ["--components", self.args.components] if self.args.components else []
                    if self.entries:
                        socket = work / "server.sock"  # the seat gateways' way to it
                        extra += ["--unix-socket", str(socket)]
                    local = LocalServer(extra)
                    self.server = await local.start()
                    self.progress_console.print(f"Started a local server at {self.server}.")
                if self.entries:
                    await self.prepare_submissions(work)
                staged = self.sandbox.staged if self.sandbox is not None else None
                return await self._run_games(todo, socket, (staged or work) / ".gateways")
            finally:
                if local is not None:
                    await local.stop()
                if self.sandbox is not None:
                    self.sandbox.close()

    async def _run_games(self, todo: list[ScheduledGame], socket: Path | None, gateways: Path) -> int:
        config = self._runner_config()
        config.socket = socket
        config.gateways = gateways
        config.protos = self.protos
        runner = Runner(config, self.server)
        self.runner = runner
        await runner.check_server()
        started = time.monotonic()
        if todo:
            await self._play(runner, todo)
        elapsed = time.monotonic() - started
        return self._report(elapsed, len(todo))

    def _runner_config(self) -> RunnerConfig:
        args = self.args
        logs = self.logs_dir()
        return RunnerConfig(
            sandbox=self.sandbox,
            bots=self.specs,
            players=args.players,
            events=args.events,
            concurrency=args.concurrency,
            game_timeout=args.game_timeout,
            move_timeout=args.move_timeout,
            decision_time=args.decision_time,
            time_bank=args.time_bank,
            label=args.label,
            replays=self.replays_dir(),
            tls=args.tls,
            ca_cert=args.ca_cert,
            quota_token=args.server_token or None,
            bot_logs=logs,
            gateway=gateway_limits_of(args),
        )

    async def _play(self, runner: Runner, todo: list[ScheduledGame]) -> None:
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("leader: {task.fields[leader]}"),
            console=self.progress_console,
            disable=self.args.quiet,
        )
        with progress:
            task: TaskID = progress.add_task(
                "games",
                total=len(self.schedule),
                completed=len(self.records),
                leader=stats.leader(stats.standings(self.bot_names, self.records.values())),
            )

            def on_record(record: GameRecord) -> None:
                self.records[record.index] = record
                self._save(with_standings=False)
                leader = stats.leader(_quick_standings(self.bot_names, self.records.values()))
                progress.update(task, advance=1, leader=leader)

            await runner.run(todo, on_record)

    def _save(self, *, with_standings: bool) -> None:
        if self.args.out is None:
            return
        table = stats.standings(self.bot_names, self.records.values()) if with_standings else []
        results.save(
            self.args.out,
            self.config,
            self.server,
            self.records.values(),
            [s.to_json() for s in table],
            self.runner.hosting() if self.runner is not None else None,
        )

    def _report(self, elapsed: float, played: int) -> int:
        entries = stats.standings(self.bot_names, self.records.values())
        self._save(with_standings=True)
        if self.args.csv is not None:
            stats.write_csv(self.args.csv, entries)
        title = f"{self.args.players}-player tournament, {len(self.records)} games, seed {self.args.seed}"
        self.console.print(stats.table(entries, title))
        counts = Counter(r.status for r in self.records.values())
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        rate = f" in {elapsed:.1f} s ({played / elapsed:.1f} games/s)" if played and elapsed > 0 else ""
        self.console.print(f"{len(self.records)} games ({summary}){rate}.")
        failed = [r for r in self.records.values() if r.failures]
        for record in sorted(failed, key=lambda r: r.index)[:5]:
            for failure in record.failures:
                self.console.print(
                    f"  game {record.index} ({record.game_id}): seat {failure.seat} {failure.bot} "
                    f"{failure.status}: {failure.reason}"
                )
        for name, reason in sorted(self.broken.items()):
            self.console.print(f"  {name} could not play: {reason}")
        if self.broken:
            self.console.print(
                f"{len(self.broken)} submission(s) could not play ({', '.join(sorted(self.broken))}); "
                "their seats were lost (exit status 1)."
            )
        if self.args.out is not None:
            self.console.print(
                f"Results: {self.args.out}" + (f", table: {self.args.csv}" if self.args.csv else "")
            )
        unplayed = [r for r in self.records.values() if r.scores is None and not r.failures]
        for record in unplayed[:3]:
            self.console.print(f"  game {record.index} could not be played: {record.error}")
        return 1 if unplayed or len(self.records) < len(self.schedule) or self.broken else 0


def _quick_standings(names: Sequence[str], records: Any) -> list[stats.Standing]:
    """Wins and games only, for the progress bar (ratings wait for the end)."""
    table = {name: stats.Standing(name) for name in names}
    for record in records:
        if record.scores is None:
            continue
        for bot in dict.fromkeys(record.bots):
            entry = table.setdefault(bot, stats.Standing(bot))
            entry.games += 1
            if any(record.bots[s] == bot for s in record.winners):
                entry.wins += 1
    return list(table.values())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kutnahora-tournament``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        return merge.main(argv[1:])
    args = build_parser().parse_args(argv)
    # Not a terminal (a file, a pipe): the table is as wide as it needs, not cut at 80 columns.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 1000)
    progress_console = Console(stderr=True, highlight=False, soft_wrap=True)  # a path is never cut

    def fail(message: str, code: int) -> int:
        print(f"kutnahora-tournament: {message}", file=sys.stderr)
        return code

    if not 2 <= args.players <= 4:
        return fail("--players must be 2, 3 or 4.", 2)
    if args.components and args.server:
        return fail(
            "--components sets up the local server; a server given with --server plays the set it was "
            "started with (kutnahora-server --components FILE).",
            2,
        )
    tournament: Tournament | None = None
    try:
        with terminate_as_interrupt():  # stop as on Ctrl-C: save, stop the local server, exit 130
            tournament = Tournament(args, console, progress_console)
            return asyncio.run(tournament.run())
    except UsageError as error:
        return fail(f"{error}.", 2)
    except ResultsError as error:
        return fail(f"{error}.", 2)
    except ConnectError as error:
        return fail(str(error), 2)
    except KeyboardInterrupt:
        done = len(tournament.records) if tournament is not None else 0
        return fail(f"interrupted with {done} games recorded; continue with --resume.", INTERRUPTED)
    finally:
        if tournament is not None and tournament.sandbox is not None:
            tournament.sandbox.close()  # the bots' control groups, also after an interrupt


if __name__ == "__main__":
    sys.exit(main())

"""Playing a tournament's games against a server: seats, bots, failures, replays, and a local server.

Each game gets its own connection. The runner creates the game with its scheduled seed, joins every seat,
then plays each seat with its bot: a built-in bot (:mod:`kutnahora.clients.bots`) as a task in this process,
an external bot (``--bot-cmd NAME='command'``) as a process started with the seat in its environment
(``KUTNAHORA_SERVER``, ``KUTNAHORA_GAME_ID``, ``KUTNAHORA_SEAT``, ``KUTNAHORA_TOKEN``,
``KUTNAHORA_BOT_SEED``, and ``KUTNAHORA_TLS``/``KUTNAHORA_CA_CERT`` over TLS).

A bot that raises, exits with an error or stops before the end is recorded as failed (``error``), and so
is a seat still playing when the game's time is up (``timeout``), as is a seat the server's clock had to
play for (it counts a strike). The runner resigns a failed seat at once, so the server's random policy
finishes the game for it and the other seats play on; the failed bot loses the game, the others keep
their result.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import grpc
from google.protobuf import duration_pb2, json_format

from kutnahora.clients.bots import BOTS, is_bot, make_bot
from kutnahora.clients.sdk import (
    ENV_CA_CERT,
    ENV_GAME_ID,
    ENV_SEAT,
    ENV_SERVER,
    ENV_TLS,
    ENV_TOKEN,
    Client,
    ClientError,
    ConnectError,
    SeatCredentials,
)
from kutnahora.clients.tournament.results import Failure, GameRecord
from kutnahora.clients.tournament.schedule import ScheduledGame
from kutnahora.hosting.gateway_limits import BotBudget, GatewayLimits
from kutnahora.hosting.processes import stop_process_group
from kutnahora.hosting.sandbox import Sandbox
from kutnahora.hosting.seat import SeatFailed, SeatHost, play_seat
from kutnahora.hosting.submission import Submission
from kutnahora.v1 import game_pb2

ENV_BOT_SEED = "KUTNAHORA_BOT_SEED"
STDERR_TAIL = 2000  # characters of an external bot's standard error kept for its failure reason


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A participant: a built-in bot, or an external command."""

    name: str
    command: str | None = None
    submission: Submission | None = None  # a hosted submission, built and ready
    broken: str | None = None  # why a hosted submission cannot play (its seats then fail at once)


@dataclass(slots=True)
class RunnerConfig:
    """How the games are played."""

    bots: dict[str, BotSpec]
    players: int
    events: bool = False
    concurrency: int = 8
    game_timeout: float = 600.0
    move_timeout: float = 60.0
    poll: float = 1.0
    exit_grace: float = 10.0
    decision_time: float | None = None
    time_bank: float | None = None
    label: str = "tournament"
    replays: Path | None = None
    tls: bool = False
    ca_cert: str | None = None
    quota_token: str | None = None  # the server's --quota-token, sent with the games created (--server-token)
    end_wait: float = 120.0
    bot_logs: Path | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    sandbox: Sandbox | None = None  # None: hosted submissions run unwalled (--sandbox none)
    socket: Path | None = None  # the server's Unix socket, the seat gateways' way to it (else the address)
    gateways: Path | None = (
        None  # where the hosted bots' gateway sockets are made (default: a temporary folder)
    )
    protos: Path | None = None  # the .proto files an unwalled hosted bot is told of (KUTNAHORA_PROTOS)
    gateway: GatewayLimits = field(default_factory=GatewayLimits)  # what one hosted bot may cost the runner


class Runner:
    """Plays scheduled games on one server, ``concurrency`` at a time."""

    def __init__(self, config: RunnerConfig, address: str) -> None:
        self.config = config
        self.address = address
        self._slots = asyncio.Semaphore(max(1, config.concurrency))
        self._host: SeatHost | None = None  # made when the first hosted seat plays
        self.budgets: dict[str, BotBudget] = {}  # each hosted submission's, shared by its seats' gateways

    def budget(self, name: str) -> BotBudget:
        """The bounds and the usage of the hosted submission ``name``, over all its seats."""
        budget = self.budgets.get(name)
        if budget is None:
            budget = self.budgets[name] = BotBudget(name, self.config.gateway)
        return budget

    def hosting(self) -> dict[str, dict[str, object]]:
        """What each hosted submission cost the runner through its gateways, by name."""
        return {name: budget.usage.to_json() for name, budget in sorted(self.budgets.items())}

    async def check_server(self) -> None:
        """Fail early, with one sentence, when the server cannot be reached."""
        async with await Client.connect(self.address, tls=self.config.tls, ca_cert=self.config.ca_cert):
            pass

    async def run(
        self, games: Sequence[ScheduledGame], on_record: Callable[[GameRecord], Awaitable[None] | None]
    ) -> None:
        """Play every game; ``on_record`` hears about each as it ends, in the order they end."""

        async def one(game: ScheduledGame) -> None:
            async with self._slots:
                record = await self.play(game)
            outcome = on_record(record)
            if outcome is not None:
                await outcome

        tasks = [asyncio.create_task(one(game)) for game in games]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def play(self, game: ScheduledGame) -> GameRecord:
        """Play one scheduled game to its end and record it."""
        started = time.monotonic()
        try:
            async with await Client.connect(
                self.address,
                tls=self.config.tls,
                ca_cert=self.config.ca_cert,
                quota_token=self.config.quota_token,
            ) as client:
                return await self._play(client, game, started)
        except ConnectError:
            raise
        except ClientError as error:
            return GameRecord(
                index=game.index,
                game_id="",
                seed=game.seed,
                bots=list(game.bots),
                scores=None,
                winners=[],
                status="error",
                replay=None,
                failures=[],
                seconds=time.monotonic() - started,
                error=str(error),
            )

    async def _play(self, client: Client, game: ScheduledGame, started: float) -> GameRecord:
        created, seats = await client.create_seated_game(
            game.bots,
            seed=game.seed,
            events=self.config.events,
            clock=self._clock(),
            label=self.config.label,
        )
        game_id = created.game.game_id
        try:
            failures = await self._play_seats(client, game, seats)
            summary = await self._wait_for_end(client, game_id, created.game_token)
        except asyncio.CancelledError:
            with contextlib.suppress(ClientError, asyncio.CancelledError):
                await asyncio.shield(client.abandon(game_id, created.game_token, "tournament interrupted"))
            raise
        for info in summary.seats:
            if info.strikes and info.seat not in failures:
                failures[info.seat] = Failure(
                    info.seat,
                    game.bots[info.seat],
                    "timeout",
                    f"the server's clock decided for it {info.strikes} time(s)",
                )
        return GameRecord(
            index=game.index,
            game_id=game_id,
            seed=game.seed,
            bots=list(game.bots),
            scores=_scores(summary),
            winners=_winners(summary, set(failures)),
            status=_status(summary, failures),
            replay=await self._replay(client, game_id),
            failures=[failures[s] for s in sorted(failures)],
            groschen=_groschen(summary),
            decisions=summary.version,
            seconds=time.monotonic() - started,
        )

    def _clock(self) -> game_pb2.ClockSettings | None:
        if self.config.decision_time is None and self.config.time_bank is None:
            return None
        clock = game_pb2.ClockSettings()
        if self.config.decision_time is not None:
            clock.decision_time.CopyFrom(_duration(self.config.decision_time))
        if self.config.time_bank is not None:
            clock.time_bank.CopyFrom(_duration(self.config.time_bank))
        return clock

    async def _play_seats(
        self, client: Client, game: ScheduledGame, seats: list[SeatCredentials]
    ) -> dict[int, Failure]:
        """Run every seat's bot until the game ends, resigning each failed seat at once.

        A seat fails when its bot raises or exits with an error, or when the game has waited on it for
        ``move_timeout`` seconds (or is still waiting on it when ``game_timeout`` is up). Its bot is then
        stopped and the seat resigned: the server's random policy plays it and the others play on.
        """
        tasks = {seat.seat: asyncio.create_task(self._seat(client, game, seat)) for seat in seats}
        failures: dict[int, Failure] = {}
        started = time.monotonic()
        last_version, last_change = -1, started
        ended_at: float | None = None

        async def fail(seat: int, status: str, reason: str) -> None:
            failures.setdefault(seat, Failure(seat, game.bots[seat], status, reason))
            task = tasks[seat]
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            await self._resign(client, seats[seat])

        try:
            while True:
                running = [t for t in tasks.values() if not t.done()]
                if running:
                    await asyncio.wait(running, timeout=self.config.poll, return_when=asyncio.FIRST_COMPLETED)
                for seat, task in tasks.items():
                    if task.done() and not task.cancelled() and seat not in failures:
                        error = task.exception()
                        if isinstance(error, SeatFailed):
                            await fail(seat, error.status, error.reason)
                        elif error is not None:
                            await fail(seat, "error", f"{type(error).__name__}: {error}")
                if all(t.done() for t in tasks.values()):
                    break
                summary = await client.get_game(seats[0].game_id)
                now = time.monotonic()
                if summary.status in (game_pb2.GAME_STATUS_FINISHED, game_pb2.GAME_STATUS_ABANDONED):
                    # The game is over; a bot still running gets a moment to notice, then is stopped.
                    ended_at = ended_at if ended_at is not None else now
                    if now - ended_at > self.config.exit_grace:
                        break
                    continue
                if summary.version != last_version:
                    last_version, last_change = summary.version, now
                stalled = now - last_change > self.config.move_timeout
                late = now - started > self.config.game_timeout
                if (stalled or late) and summary.HasField("pending_seat"):
                    waited = now - last_change
                    reason = (
                        f"made no decision for {waited:.0f} s"
                        if stalled
                        else f"the game was still waiting for it after {self.config.game_timeout:g} s"
                    )
                    await fail(summary.pending_seat, "timeout", reason)
                    last_change = now
        finally:
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)
        return failures

    async def _seat(self, client: Client, game: ScheduledGame, seat: SeatCredentials) -> None:
        spec = self.config.bots[game.bots[seat.seat]]
        if spec.broken is not None:
            raise SeatFailed("error", spec.broken)
        if spec.submission is not None:
            await self._hosted(client, game, seat, spec.submission)
            return
        if spec.command is None:
            outcome = await client.play(make_bot(spec.name, game.bot_seed(seat.seat)), seat)
            if not outcome.finished:
                raise SeatFailed("error", f"the game ended as {outcome.status} without a result")
            return
        await self._external(client, game, seat, spec.command)

    async def _external(
        self, client: Client, game: ScheduledGame, seat: SeatCredentials, command: str
    ) -> None:
        env = dict(os.environ)
        env.update(self.config.extra_env)
        env.update(
            {
                ENV_SERVER: self.address,
                ENV_GAME_ID: seat.game_id,
                ENV_SEAT: str(seat.seat),
                ENV_TOKEN: seat.token,
                ENV_BOT_SEED: str(game.bot_seed(seat.seat)),
                ENV_TLS: "1" if self.config.tls else "",
                ENV_CA_CERT: self.config.ca_cert or "",
            }
        )
        log: IO[bytes] | int = asyncio.subprocess.DEVNULL
        if self.config.bot_logs is not None:
            self.config.bot_logs.mkdir(parents=True, exist_ok=True)
            log = (self.config.bot_logs / f"{seat.game_id}-seat{seat.seat}.log").open("wb")
        process = await asyncio.create_subprocess_shell(
            command,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group, so that stopping it stops its children
        )
        try:
            assert process.stderr is not None
            tail = b""
            while chunk := await process.stderr.read(4096):
                tail = (tail + chunk)[-STDERR_TAIL:]
                if not isinstance(log, int):
                    log.write(chunk)
            code = await process.wait()
        except asyncio.CancelledError:
            stop_process_group(process)
            with contextlib.suppress(ProcessLookupError, asyncio.CancelledError):
                await asyncio.shield(process.wait())
            raise
        finally:
            if not isinstance(log, int):
                log.close()
        if code != 0:
            last = tail.decode(errors="replace").strip().splitlines()
            reason = f"exited with status {code}" + (f": {last[-1]}" if last else "")
            raise SeatFailed("error", reason)
        summary = await client.get_game(seat.game_id)
        if summary.status not in (game_pb2.GAME_STATUS_FINISHED, game_pb2.GAME_STATUS_ABANDONED):
            raise SeatFailed("error", "exited before the game ended")

    def _seat_env(self, game: ScheduledGame, seat: SeatCredentials, server: str) -> dict[str, str]:
        return {
            ENV_SERVER: server,
            ENV_GAME_ID: seat.game_id,
            ENV_SEAT: str(seat.seat),
            ENV_TOKEN: seat.token,
            ENV_BOT_SEED: str(game.bot_seed(seat.seat)),
        }

    async def _hosted(
        self, client: Client, game: ScheduledGame, seat: SeatCredentials, submission: Submission
    ) -> None:
        """Run a hosted submission for one seat (:func:`kutnahora.hosting.seat.play_seat`): walled in
        unless ``--sandbox none``, reaching the server only through a seat gateway of its own."""
        if self._host is None:
            sockets = self.config.gateways or Path(tempfile.mkdtemp(prefix="kutnahora-gateways-"))
            self._host = SeatHost(
                sandbox=self.config.sandbox,
                upstream=self._upstream(),
                sockets=sockets,
                credentials=self._tls(),
                logs=self.config.bot_logs,
                protos=self.config.protos,
            )

        async def ended() -> bool:
            summary = await client.get_game(seat.game_id)
            return summary.status in (game_pb2.GAME_STATUS_FINISHED, game_pb2.GAME_STATUS_ABANDONED)

        await play_seat(
            self._host,
            submission,
            seat.game_id,
            seat.seat,
            lambda server: self._seat_env(game, seat, server),
            self.budget(submission.name),
            ended,
            seat_token=seat.token,
        )

    def _upstream(self) -> str:
        return f"unix:{self.config.socket}" if self.config.socket is not None else self.address

    def _tls(self) -> grpc.ChannelCredentials | None:
        if not self.config.tls or self.config.socket is not None:
            return None
        root = Path(self.config.ca_cert).read_bytes() if self.config.ca_cert else None
        return grpc.ssl_channel_credentials(root_certificates=root)

    async def _resign(self, client: Client, seat: SeatCredentials) -> None:
        with contextlib.suppress(ClientError):
            await client.resign(seat)

    async def _wait_for_end(self, client: Client, game_id: str, game_token: str) -> game_pb2.GameSummary:
        """The game's summary once it has ended; abandon it if it does not end in time."""
        deadline = time.monotonic() + self.config.end_wait
        delay = 0.02
        while True:
            summary = await client.get_game(game_id)
            if summary.status in (game_pb2.GAME_STATUS_FINISHED, game_pb2.GAME_STATUS_ABANDONED):
                return summary
            if time.monotonic() > deadline:
                return await client.abandon(game_id, game_token, "the tournament runner gave up waiting")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)

    async def _replay(self, client: Client, game_id: str) -> str:
        reference = f"kutnahora://{self.address}/games/{game_id}/replay"
        if self.config.replays is None:
            return reference
        try:
            replay = await client.replay(game_id)
        except ClientError:
            return reference
        self.config.replays.mkdir(parents=True, exist_ok=True)
        path = self.config.replays / f"{game_id}.json"
        path.write_text(json_format.MessageToJson(replay, indent=1), encoding="utf-8")
        return str(path)


def _duration(seconds: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromMilliseconds(int(seconds * 1000))
    return duration


def _scores(summary: game_pb2.GameSummary) -> list[int] | None:
    if summary.status != game_pb2.GAME_STATUS_FINISHED or not summary.result.seats:
        return None
    by_seat = {s.seat: s.score for s in summary.result.seats}
    return [by_seat.get(seat, 0) for seat in range(len(summary.seats))]


def _groschen(summary: game_pb2.GameSummary) -> list[int] | None:
    if summary.status != game_pb2.GAME_STATUS_FINISHED or not summary.result.seats:
        return None
    by_seat = {s.seat: s.groschen for s in summary.result.seats}
    return [by_seat.get(seat, 0) for seat in range(len(summary.seats))]


def _winners(summary: game_pb2.GameSummary, failed: set[int]) -> list[int]:
    """The server's winners, less failed seats; if only failed seats won, the best of the others."""
    if summary.status != game_pb2.GAME_STATUS_FINISHED:
        return []
    winners = [s for s in summary.result.winners if s not in failed]
    if winners or not failed:
        return sorted(winners)
    others = [s for s in summary.result.seats if s.seat not in failed]
    if not others:
        return []
    best = max((s.score, s.groschen) for s in others)
    return sorted(s.seat for s in others if (s.score, s.groschen) == best)


def _status(summary: game_pb2.GameSummary, failures: dict[int, Failure]) -> str:
    if summary.status != game_pb2.GAME_STATUS_FINISHED:
        return "error"
    if any(f.status == "error" for f in failures.values()):
        return "error"
    if failures:
        return "timeout"
    return "finished"


def server_command() -> list[str]:
    """How to start ``kutnahora-server``: the installed script, else ``-m kutnahora.server.main``."""
    script = shutil.which("kutnahora-server")
    if script:
        return [script]
    return [sys.executable, "-m", "kutnahora.server.main"]


class LocalServer:
    """A ``kutnahora-server`` started on a free port for the length of a tournament."""

    LISTENING = re.compile(r"listening on grpcs?://(\S+)")

    def __init__(self, extra_args: Sequence[str] = ()) -> None:
        self.extra_args = list(extra_args)
        self.process: asyncio.subprocess.Process | None = None
        self.address = ""
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - kept open while the server runs

    async def start(self, timeout: float = 30.0) -> str:
        """Start the server and return its address once it listens."""
        command = [
            *server_command(),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            ":memory:",
            "--metrics-port",
            "off",
            "--log-level",
            "warning",
            # It serves this tournament only: refusing its new games when its CPU is busy protects no one.
            "--overload-cpu",
            "0",
            *self.extra_args,
        ]
        try:
            self.process = await asyncio.create_subprocess_exec(
                *command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=self._log
            )
        except OSError as error:
            raise ConnectError(f"cannot start a local kutnahora-server: {error.strerror}.") from None
        assert self.process.stdout is not None
        try:
            line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        except TimeoutError:
            line = b""
        match = self.LISTENING.search(line.decode(errors="replace"))
        if match is None:
            await self.stop()
            self._log.seek(0)
            detail = self._log.read().decode(errors="replace").strip().splitlines()
            raise ConnectError(
                "the local kutnahora-server did not start" + (f": {detail[-1]}" if detail else ".")
            )
        self.address = match.group(1)
        return self.address

    async def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s)."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
        self._log.close()


def known_bot(name: str, commands: dict[str, str]) -> BotSpec:
    """The participant named ``name``: an external command when given, else a built-in bot."""
    if name in commands:
        return BotSpec(name, commands[name])
    if is_bot(name):
        return BotSpec(name)
    known = (
        ", ".join(sorted(BOTS)) + " (mcts:200 for 200 iterations a decision, mcts:500ms for half a second)"
    )
    raise ValueError(f"unknown bot {name!r}: the built-in bots are {known}; add others with --bot-cmd")

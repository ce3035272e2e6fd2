"""Real ``kutnahora-server`` processes for the deployment tests, and a small synchronous client.

:func:`start_server` runs ``python -m kutnahora.server.main`` from this checkout on ephemeral ports (gRPC and
metrics) and reads the addresses from the line the server prints once it serves; its log goes to a file
that a failing test prints. :class:`Seat`-level helpers drive a game decision by decision with the local
engine choosing options, so that any replica can be asked for any decision.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from kutnahora.v1 import (
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    play_service_pb2,
    play_service_pb2_grpc,
    replay_service_pb2,
    replay_service_pb2_grpc,
)

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"listening on grpcs?://(?P<address>\S+) \(metrics (?P<metrics>\S+),")


@dataclass
class ServerProcess:
    """One running server: its process, gRPC address, metrics URL (or "off") and log file."""

    process: subprocess.Popen[str]
    address: str
    metrics_url: str
    log_path: Path
    name: str
    _channel: grpc.Channel | None = field(default=None, repr=False)

    @property
    def channel(self) -> grpc.Channel:
        """A channel to this server, opened on first use."""
        if self._channel is None:
            self._channel = grpc.insecure_channel(self.address)
        return self._channel

    @property
    def games(self) -> game_service_pb2_grpc.GameServiceStub:
        """GameService on this server."""
        return game_service_pb2_grpc.GameServiceStub(self.channel)

    @property
    def play(self) -> play_service_pb2_grpc.PlayServiceStub:
        """PlayService on this server."""
        return play_service_pb2_grpc.PlayServiceStub(self.channel)

    @property
    def replay(self) -> replay_service_pb2_grpc.ReplayServiceStub:
        """ReplayService on this server."""
        return replay_service_pb2_grpc.ReplayServiceStub(self.channel)

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush; whatever was committed stays committed."""
        self.close_channel()
        if self.alive():
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM and wait for the graceful shutdown (SIGKILL after 15 s)."""
        self.close_channel()
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    def close_channel(self) -> None:
        """Close this helper's channel."""
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def log(self) -> str:
        """What the server logged so far (its last 60 lines)."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-60:])


def start_server(
    db: str, log_dir: Path, name: str, extra: Sequence[str] = (), timeout: float = 30.0
) -> ServerProcess:
    """Starts ``kutnahora-server`` on ephemeral ports with store ``db``; returns once it serves."""
    log_path = log_dir / f"{name}.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "POD_NAME": name}
    with open(log_path, "w") as log_file:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kutnahora.server.main",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--metrics-host",
                "127.0.0.1",
                "--metrics-port",
                "0",
                "--db",
                db,
                "--log-format",
                "json",
                *extra,
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
        )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=pump, name=f"{name}-stdout", daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or process.poll() is not None:
            process.kill()
            process.wait()
            raise RuntimeError(f"{name} did not start:\n{log_path.read_text(errors='replace')[-4000:]}")
        try:
            line = lines.get(timeout=min(remaining, 0.5))
        except queue.Empty:
            continue
        match = LISTENING.search(line)
        if match:
            return ServerProcess(process, match["address"], match["metrics"], log_path, name)


@contextlib.contextmanager
def servers(db: str, log_dir: Path, count: int, extra: Sequence[str] = ()) -> Iterator[list[ServerProcess]]:
    """``count`` servers on one store, stopped (or found dead) at the end; logs printed on failure."""
    started: list[ServerProcess] = []
    try:
        with ThreadPoolExecutor(max_workers=count) as pool:  # they start in parallel: imports take a while
            futures = [
                pool.submit(start_server, db, log_dir, f"replica-{index}", extra) for index in range(count)
            ]
            for future in futures:
                with contextlib.suppress(Exception):
                    started.append(future.result())
        if len(started) != count:
            raise RuntimeError(
                "a server did not start: " + "; ".join(str(f.exception()) for f in futures if f.exception())
            )
        yield started
    except BaseException:
        for server in started:
            print(f"--- log of {server.name} ---\n{server.log()}", file=sys.stderr)
        raise
    finally:
        for server in started:
            server.stop()


def scrape(server: ServerProcess) -> dict[str, float]:
    """The server's /metrics, as sample name with sorted labels -> value (``name{a="1",b="2"}``)."""
    from urllib.request import urlopen

    from prometheus_client.parser import text_string_to_metric_families

    with urlopen(server.metrics_url, timeout=5) as response:
        text = response.read().decode()
    samples: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            samples[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return samples


def total(samples: dict[str, float], name: str) -> float:
    """The sum of every sample of ``name``, whatever its labels."""
    return sum(value for key, value in samples.items() if key == name or key.startswith(name + "{"))


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying a seat token."""
    return (("authorization", f"Bearer {token}"),)


def create_game(server: ServerProcess, players: int, seed: int, clock: bool = False) -> str:
    """Creates a game on ``server``; returns its id."""
    request = game_service_pb2.CreateGameRequest(
        options=game_pb2.GameOptions(players=players),
        seed=seed,
        clock=game_pb2.ClockSettings(disabled=not clock),
    )
    response = server.games.CreateGame(request, timeout=10)
    return str(response.game.game_id)


def join(server: ServerProcess, game_id: str, seat: int) -> str:
    """Joins ``seat`` through ``server``; returns the seat token."""
    response = server.games.JoinGame(
        game_service_pb2.JoinGameRequest(game_id=game_id, seat=seat, name=f"seat-{seat}"), timeout=10
    )
    return str(response.seat_token)


def submit(
    server: ServerProcess, game_id: str, seat: int, token: str, version: int, index: int
) -> play_service_pb2.SubmitDecisionResponse:
    """Submits option ``index`` for ``seat`` at ``version`` through ``server``."""
    request = play_service_pb2.SubmitDecisionRequest(
        game_id=game_id, seat=seat, version=version, answer=game_pb2.Answer(option_index=index)
    )
    response: play_service_pb2.SubmitDecisionResponse = server.play.SubmitDecision(
        request, metadata=bearer(token), timeout=10
    )
    return response


def get_replay(server: ServerProcess, game_id: str) -> replay_service_pb2.GetReplayResponse:
    """The replay of a game, through ``server``."""
    response: replay_service_pb2.GetReplayResponse = server.replay.GetReplay(
        replay_service_pb2.GetReplayRequest(game_id=game_id), timeout=10
    )
    return response

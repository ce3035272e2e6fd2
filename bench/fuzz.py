"""``kutnahora-fuzz``: malformed and hostile requests against a server, on every method and the Play stream.

Hypothesis draws each request: random bytes, a valid request with a few bytes changed or cut, or a message
of the method's type whose fields are drawn at random (negative and huge numbers, unknown enum values,
long and odd texts, the real game id and tokens now and then, so that requests reach past the first
checks). Play streams get a sequence of such messages. Every answer must be a status the protocol guide
names, never UNKNOWN or INTERNAL; its sentence must be short; every stream must end; the server must
answer a plain request afterwards; and its log must hold no traceback and no line longer than a few
hundred characters. The server's resident memory is printed before and after.

    kutnahora-fuzz                          # 5,000 requests against a fresh server (memory store)
    kutnahora-fuzz --examples 100000        # a longer run
    kutnahora-fuzz --target 127.0.0.1:50051 # a running server (its log is not checked)

The test suite runs the same checks for a few seconds (tests/server/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor, message_factory
from google.protobuf.message import Message

try:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - the development extra holds it
    raise SystemExit("kutnahora-fuzz needs hypothesis: pip install -e '.[dev]'") from None

from kutnahora.bench.server_bench import LISTENING
from kutnahora.v1 import (
    admin_service_pb2,
    game_pb2,
    game_service_pb2,
    play_service_pb2,
    replay_service_pb2,
)

Code = grpc.StatusCode
FORBIDDEN = {Code.UNKNOWN, Code.INTERNAL, Code.UNIMPLEMENTED, Code.DATA_LOSS}
"""Statuses no request may provoke: each means the server failed, not the request."""
MAX_DETAILS = 1100
"""The longest refusal sentence allowed (the server cuts its sentences at 1000 characters)."""
MAX_LOG_LINE = 2500
"""The longest log line allowed: every text field is cut at 300 characters."""
CALL_TIMEOUT = 5.0

SERVICES = (
    game_service_pb2.DESCRIPTOR.services_by_name["GameService"],
    play_service_pb2.DESCRIPTOR.services_by_name["PlayService"],
    replay_service_pb2.DESCRIPTOR.services_by_name["ReplayService"],
    admin_service_pb2.DESCRIPTOR.services_by_name["AdminService"],
)


@dataclass(frozen=True)
class Method:
    """One RPC: its path, its request message class, and whether it streams."""

    path: str
    request: type[Message]
    server_streaming: bool
    client_streaming: bool


METHODS = tuple(
    Method(
        f"/{service.full_name}/{method.name}",
        message_factory.GetMessageClass(method.input_type),
        method.server_streaming,
        method.client_streaming,
    )
    for service in SERVICES
    for method in service.methods
)
UNARY_AND_SERVER_STREAMING = tuple(m for m in METHODS if not m.client_streaming)
PLAY = next(m for m in METHODS if m.client_streaming)


@dataclass(frozen=True)
class Target:
    """A game the fuzzer's requests may name: its id and tokens, so that some requests get past the checks
    of ids and credentials."""

    game_id: str
    seat_tokens: tuple[str, ...]
    game_token: str


def prepare(channel: grpc.Channel) -> Target:
    """Create a two-seat game without a clock and join both seats."""
    create = channel.unary_unary(
        "/kutnahora.v1.GameService/CreateGame",
        request_serializer=game_service_pb2.CreateGameRequest.SerializeToString,
        response_deserializer=game_service_pb2.CreateGameResponse.FromString,
    )
    join = channel.unary_unary(
        "/kutnahora.v1.GameService/JoinGame",
        request_serializer=game_service_pb2.JoinGameRequest.SerializeToString,
        response_deserializer=game_service_pb2.JoinGameResponse.FromString,
    )
    created = create(
        game_service_pb2.CreateGameRequest(
            options=game_pb2.GameOptions(players=2), seed=7, clock=game_pb2.ClockSettings(disabled=True)
        ),
        timeout=CALL_TIMEOUT,
    )
    game_id = created.game.game_id
    tokens = tuple(
        join(game_service_pb2.JoinGameRequest(game_id=game_id, seat=seat), timeout=CALL_TIMEOUT).seat_token
        for seat in (0, 1)
    )
    return Target(game_id, tokens, created.game_token)


# --- what hypothesis draws ------------------------------------------------------------------------------

F = descriptor.FieldDescriptor
INT_RANGES = {
    F.TYPE_INT32: (-(2**31), 2**31 - 1),
    F.TYPE_SINT32: (-(2**31), 2**31 - 1),
    F.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    F.TYPE_INT64: (-(2**63), 2**63 - 1),
    F.TYPE_SINT64: (-(2**63), 2**63 - 1),
    F.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    F.TYPE_UINT32: (0, 2**32 - 1),
    F.TYPE_FIXED32: (0, 2**32 - 1),
    F.TYPE_UINT64: (0, 2**64 - 1),
    F.TYPE_FIXED64: (0, 2**64 - 1),
}
OPTION_TEXTS = (
    "skip",
    "yes",
    "no",
    "square 1,2",
    "play 1 none",
    "tile 3",
    "rows a,b,c",
    "set 0",
    "action mine",
)


def _texts(name: str, target: Target) -> st.SearchStrategy[str]:
    odd = st.sampled_from(["", " ", "\x00", "é" * 50, "x" * 5000, "1:", "9" * 400 + ":g", "../../etc"])
    if name == "game_id":
        return st.one_of(st.just(target.game_id), odd, st.text(max_size=20))
    if name == "option_text":
        return st.one_of(st.sampled_from(OPTION_TEXTS), odd, st.text(max_size=30))
    return st.one_of(odd, st.text(max_size=30))


def _value(field: Any, target: Target, depth: int) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]
        small = st.integers(max(low, -3), min(high, 8))
        return st.one_of(small, st.integers(low, high))
    if kind == F.TYPE_ENUM:
        return st.one_of(st.sampled_from([v.number for v in field.enum_type.values]), st.integers(-5, 5000))
    if kind == F.TYPE_BOOL:
        return st.booleans()
    if kind in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        return st.floats(width=32 if kind == F.TYPE_FLOAT else 64)
    if kind == F.TYPE_STRING:
        return _texts(field.name, target)
    if kind == F.TYPE_BYTES:
        return st.binary(max_size=32)
    return messages(message_factory.GetMessageClass(field.message_type), target, depth + 1)


def messages(message_class: type[Message], target: Target, depth: int = 0) -> st.SearchStrategy[Message]:
    """Messages of ``message_class`` with fields drawn at random (nested up to three levels)."""

    @st.composite
    def draw_message(draw: st.DrawFn) -> Message:
        message = message_class()
        for wire_field in message_class.DESCRIPTOR.fields:
            if depth >= 3 and wire_field.type == F.TYPE_MESSAGE:
                continue
            if not draw(st.booleans()):
                continue
            values = _value(wire_field, target, depth)
            container = getattr(message, wire_field.name)
            if wire_field.is_repeated:
                for value in draw(st.lists(values, max_size=4)):
                    if wire_field.type == F.TYPE_MESSAGE:
                        container.add().CopyFrom(value)
                    else:
                        container.append(value)
            elif wire_field.type == F.TYPE_MESSAGE:
                container.CopyFrom(draw(values))
            else:
                setattr(message, wire_field.name, draw(values))
        return message

    return draw_message()


def _mutated(valid: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    @st.composite
    def mutate(draw: st.DrawFn) -> bytes:
        data = bytearray(draw(valid))
        for _ in range(draw(st.integers(1, 4))):
            if not data:
                break
            at = draw(st.integers(0, len(data) - 1))
            action = draw(st.sampled_from(["flip", "cut", "insert"]))
            if action == "flip":
                data[at] ^= draw(st.integers(1, 255))
            elif action == "cut":
                del data[at:]
            else:
                data[at:at] = draw(st.binary(min_size=1, max_size=6))
        return bytes(data)

    return mutate()


def bodies(message_class: type[Message], target: Target) -> st.SearchStrategy[bytes]:
    """Request bodies: random bytes, a drawn message changed by a few bytes, or a drawn message."""
    valid = messages(message_class, target).map(lambda m: m.SerializeToString())
    return st.one_of(st.binary(max_size=64), _mutated(valid), valid)


def play_openings(target: Target) -> st.SearchStrategy[bytes]:
    """The first message of a Play stream: mostly a start for one of the game's seats."""
    starts = st.builds(
        lambda seat: play_service_pb2.PlayRequest(
            start=play_service_pb2.PlayStart(game_id=target.game_id, seat=seat)
        ).SerializeToString(),
        st.integers(-1, 2),
    )
    return st.one_of(starts, starts, bodies(play_service_pb2.PlayRequest, target))


def credentials(target: Target) -> st.SearchStrategy[tuple[tuple[str, str], ...]]:
    """Call metadata: none, a real token, a wrong one, or nonsense."""
    tokens = [*target.seat_tokens, target.game_token]
    return st.one_of(
        st.just(()),
        st.sampled_from(tokens).map(lambda t: (("authorization", f"Bearer {t}"),)),
        st.sampled_from(["Bearer nope", "Basic x", "Bearer " + "y" * 3000, ""]).map(
            lambda v: (("authorization", v),)
        ),
    )


# --- checking answers -----------------------------------------------------------------------------------


def _status_problem(path: str, error: grpc.RpcError, allowed_extra: Sequence[Code] = ()) -> str | None:
    code = error.code()
    details = error.details() or ""
    if code in FORBIDDEN or (code == Code.DEADLINE_EXCEEDED and code not in allowed_extra):
        return f"{path}: {code.name}: {details[:200]}"
    if len(details) > MAX_DETAILS:
        return f"{path}: a sentence of {len(details)} characters"
    return None


def call_once(
    channel: grpc.Channel, method: Method, body: bytes, metadata: tuple[tuple[str, str], ...]
) -> str | None:
    """Send one request; a sentence naming what went wrong, or None."""
    try:
        if method.server_streaming:
            # A watch of a game that does not move waits: a deadline ends it, which is no fault.
            call = channel.unary_stream(method.path, None, None)(body, metadata=metadata, timeout=0.3)
            for _ in call:
                pass
        else:
            channel.unary_unary(method.path, None, None)(body, metadata=metadata, timeout=CALL_TIMEOUT)
    except grpc.RpcError as error:
        allowed = (Code.DEADLINE_EXCEEDED,) if method.server_streaming else ()
        return _status_problem(method.path, error, allowed)
    return None


def play_once(
    channel: grpc.Channel, messages_sent: Sequence[bytes], metadata: tuple[tuple[str, str], ...]
) -> str | None:
    """Send a Play stream's messages, then read until it ends; a sentence naming what went wrong, or None."""
    stream = channel.stream_stream(PLAY.path, None, play_service_pb2.PlayResponse.FromString)
    try:
        for response in stream(iter(messages_sent), metadata=metadata, timeout=CALL_TIMEOUT):
            if response.WhichOneof("message") == "rejected":
                message = response.rejected.message
                if not message or len(message) > MAX_DETAILS:
                    return f"{PLAY.path}: a rejection with a sentence of {len(message)} characters"
    except grpc.RpcError as error:
        return _status_problem(PLAY.path, error)
    return None


def alive(channel: grpc.Channel) -> str | None:
    """None when the server still answers a plain request."""
    info = channel.unary_unary(
        "/kutnahora.v1.AdminService/GetServerInfo",
        request_serializer=admin_service_pb2.GetServerInfoRequest.SerializeToString,
        response_deserializer=admin_service_pb2.GetServerInfoResponse.FromString,
    )
    try:
        info(admin_service_pb2.GetServerInfoRequest(), timeout=CALL_TIMEOUT)
    except grpc.RpcError as error:
        return f"the server no longer answers: {error.code().name}"
    return None


def log_problems(lines: Sequence[str]) -> list[str]:
    """What is wrong with the server's log lines: tracebacks, and lines too long."""
    problems = []
    for line in lines:
        if len(line) > MAX_LOG_LINE:
            problems.append(f"a log line of {len(line)} characters: {line[:120]}")
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and (
            "exception" in record or record.get("level") in ("error", "critical")
        ):
            problems.append(f"the server logged a fault: {line[:300]}")
    return problems


# --- running ----------------------------------------------------------------------------------------------


@dataclass
class Report:
    """What a run did and found."""

    requests: int = 0
    play_streams: int = 0
    problems: list[str] = field(default_factory=list)


def fuzz(
    channel: grpc.Channel,
    target: Target,
    examples: int,
    play_share: float = 0.25,
    stop_at_first: bool = False,
    seed: int | None = None,
    on_example: Callable[[Report], None] | None = None,
) -> Report:
    """Run ``examples`` drawn requests and Play streams (``play_share`` of them streams) and report."""
    report = Report()
    methods = st.sampled_from(UNARY_AND_SERVER_STREAMING)
    streams = round(examples * play_share)
    config = settings(
        database=None,
        deadline=None,
        derandomize=seed is not None,
        phases=[Phase.generate, Phase.shrink] if stop_at_first else [Phase.generate],
        suppress_health_check=list(HealthCheck),
    )

    def found(problem: str | None) -> None:
        if on_example is not None:
            on_example(report)
        if problem is None:
            return
        if stop_at_first:
            raise AssertionError(problem)
        if len(report.problems) < 100:
            report.problems.append(problem)

    @settings(config, max_examples=max(examples - streams, 1))
    @given(data=st.data())
    def request(data: st.DataObject) -> None:
        metadata = data.draw(credentials(target), label="metadata")
        method = data.draw(methods, label="method")
        body = data.draw(bodies(method.request, target), label="body")
        report.requests += 1
        found(call_once(channel, method, body, metadata))

    @settings(config, max_examples=max(streams, 1))
    @given(data=st.data())
    def play(data: st.DataObject) -> None:
        metadata = data.draw(credentials(target), label="metadata")
        opening = data.draw(play_openings(target), label="first message")
        rest = data.draw(st.lists(bodies(play_service_pb2.PlayRequest, target), max_size=4), label="rest")
        report.play_streams += 1
        found(play_once(channel, [opening, *rest], metadata))

    if examples > streams:
        request()
    if streams:
        play()
    return report


def start_server(log_path: Path) -> tuple[subprocess.Popen[str], int]:
    """A server process (memory store, no clock, no rate limit) logging JSON lines to ``log_path``."""
    log = log_path.open("w")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "kutnahora.server.main", "--port", "0", "--metrics-port", "off",
            "--db", ":memory:", "--clock", "false", "--rate", "0", "--log-format", "json",
            "--max-games", "100000",
        ],
        stdout=subprocess.PIPE, stderr=log, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    match = LISTENING.search(line)
    if match is None:
        process.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return process, int(match.group(1))


def open_descriptors(pid: int) -> int:
    """How many descriptors a process holds open (Linux)."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def rss_kib(pid: int) -> int:
    """A process's resident memory in KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@dataclass
class Served:
    """A server started for a run, its channel and its log."""

    process: subprocess.Popen[str] | None
    channel: grpc.Channel
    log_path: Path | None


@contextlib.contextmanager
def serve(folder: Path, address: str = "") -> Iterator[Served]:
    """Start a server (unless ``address`` names one) and open a channel to it; stop both afterwards."""
    process = None
    log_path = None
    if not address:
        log_path = folder / "server.log"
        process, port = start_server(log_path)
        address = f"127.0.0.1:{port}"
    channel = grpc.insecure_channel(address, options=[("grpc.max_receive_message_length", 16 << 20)])
    try:
        grpc.channel_ready_future(channel).result(timeout=10)
        yield Served(process, channel, log_path)
    finally:
        channel.close()
        if process is not None:
            process.terminate()
            process.wait(timeout=10)


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-fuzz",
        description="Send malformed and hostile requests to a Kutná Hora server and check every answer.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--examples", type=int, default=5000, help="requests and Play streams to send")
    parser.add_argument("--play-share", type=float, default=0.25, help="share of Play streams among them")
    parser.add_argument("--seed", type=int, default=None, help="draw reproducibly from this seed")
    parser.add_argument("--target", default="", help="fuzz this running server instead of starting one")
    parser.add_argument(
        "--stop-at-first",
        action="store_true",
        help="stop at the first problem and print its smallest example (Hypothesis shrinks it)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the fuzzer and print what it found; exit status 1 when it found a problem."""
    args = build_parser().parse_args(argv)
    if args.examples <= 0:
        raise SystemExit("--examples must be positive")
    with tempfile.TemporaryDirectory() as folder, serve(Path(folder), args.target) as served:
        target = prepare(served.channel)
        pid = served.process.pid if served.process is not None else None
        before = rss_kib(pid) if pid is not None else 0
        started = time.monotonic()
        last_print = [started]

        def progress(report: Report) -> None:
            now = time.monotonic()
            if now - last_print[0] >= 5:
                last_print[0] = now
                memory = f", server RSS {rss_kib(pid) / 1024:.1f} MiB" if pid is not None else ""
                done = report.requests + report.play_streams
                print(f"kutnahora-fuzz: {done} sent, {len(report.problems)} problems{memory}", flush=True)

        report = fuzz(
            served.channel, target, args.examples, args.play_share, seed=args.seed, on_example=progress
        )
        elapsed = time.monotonic() - started
        problems = list(report.problems)
        dead = alive(served.channel)
        if dead:
            problems.append(dead)
        log_lines: list[str] = []
        if served.log_path is not None:
            log_lines = served.log_path.read_text(errors="replace").splitlines()
            problems.extend(log_problems(log_lines)[:20])
        print(
            f"kutnahora-fuzz: {report.requests} requests and {report.play_streams} Play streams in "
            f"{elapsed:.1f} s; {len(problems)} problems"
        )
        if pid is not None:
            after = rss_kib(pid)
            print(f"  server RSS      {before / 1024:.1f} MiB before, {after / 1024:.1f} MiB after")
            size = served.log_path.stat().st_size if served.log_path is not None else 0
            print(f"  server log      {len(log_lines)} lines, {size / 1024:.0f} KiB")
        for problem in problems[:30]:
            print(f"  problem: {problem}")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One hosted seat played: a submission's run command for one game's seat, walled in, behind a gateway.

The tournament runner and the arena's sandbox workers play a hosted seat the same way
(:func:`play_seat`): a :class:`~kutnahora.hosting.gateway.SeatGateway` of the seat's own is started (the
only way to the game server, for that game alone, within the submission's
:class:`~kutnahora.hosting.gateway_limits.BotBudget`), a user id is leased and a control group made, and the
run command is started in the sandbox (:mod:`kutnahora.hosting.sandbox`) with the seat in its environment
and the gateway's socket as its server. Its output goes to a log of at most the sandbox's ``log_bytes``
(a bot that writes more is stopped). Whatever it leaves behind (processes, the group, the lease, the
gateway) is removed when it ends, however it ends, cancellation included.

Without a sandbox (``--sandbox none``, for a trusted submission on a machine without bubblewrap) the
command runs as the runner's own user in its folder, still through the gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import secrets
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import grpc

from kutnahora.hosting.cgroups import BotGroup
from kutnahora.hosting.gateway import SeatGateway
from kutnahora.hosting.gateway_limits import BotBudget
from kutnahora.hosting.processes import exit_reason, stop_process_group
from kutnahora.hosting.sandbox import ENV_PROTOS, MIB, SOCKET_INSIDE, Sandbox, SandboxError, bot_env
from kutnahora.hosting.submission import Submission

TAIL = 2000  # characters of a bot's last output kept for its failure reason
LOG_CAP = 16 << 20  # bytes of a hosted bot's output kept when it runs unwalled (--sandbox none)
_SOCKETS = itertools.count(1)  # the gateways' sockets made by this process


class SeatFailed(Exception):
    """A seat's bot failed; ``status`` is ``error`` or ``timeout`` and the message says how."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(slots=True)
class SeatHost:
    """Where and how hosted seats run: the sandbox (None: unwalled), the game server the gateways lead
    to, and where their sockets and the seats' logs go."""

    sandbox: Sandbox | None
    upstream: str  # the game server's address for the gateways (``unix:PATH`` or ``HOST:PORT``)
    sockets: Path  # the folder of the gateways' sockets (mode 0711)
    credentials: grpc.ChannelCredentials | None = None  # TLS to the game server, if it speaks TLS
    logs: Path | None = None  # where each seat's output is kept, as GAME-seatN.log (None: not kept)
    protos: Path | None = None  # the .proto files an unwalled bot is told of (KUTNAHORA_PROTOS)
    extra_env: dict[str, str] | None = None  # added to an unwalled bot's environment

    def socket(self) -> Path:
        """A socket path for one seat's gateway that no other gateway has, whichever host made it (two
        gateways on one path would hand one bot another's seat)."""
        self.sockets.mkdir(parents=True, exist_ok=True)
        os.chmod(self.sockets, 0o711)
        return self.sockets / f"seat-{next(_SOCKETS)}-{secrets.token_hex(4)}.sock"

    def log_path(self, game_id: str, seat: int) -> Path | None:
        """Where one seat's output is kept (None when logs are not kept)."""
        if self.logs is None:
            return None
        return self.logs / f"{game_id}-seat{seat}.log"


async def play_seat(
    host: SeatHost,
    submission: Submission,
    game_id: str,
    seat: int,
    seat_env: Callable[[str], dict[str, str]],
    budget: BotBudget,
    ended: Callable[[], Awaitable[bool]],
    *,
    seat_token: str | None = None,
) -> None:
    """Run ``submission`` for one seat of ``game_id`` until it exits; :class:`SeatFailed` if it failed.

    ``seat_env(server)``: the seat's environment for a bot whose server is ``server`` (the SDK's
    ``KUTNAHORA_SERVER``, ``KUTNAHORA_GAME_ID``, ``KUTNAHORA_SEAT``, ``KUTNAHORA_TOKEN`` and the bot's
    seed). ``ended()``: whether the game has ended, asked when the bot exits cleanly (a bot that exits
    before the end has failed). ``seat_token``: the seat's token, which the gateway then sends with every
    call in place of the bot's own credentials (so that the server counts all its calls as its seat)."""
    sandbox = host.sandbox
    gateway = SeatGateway(
        host.socket(),
        host.upstream,
        [game_id],
        credentials=host.credentials,
        budget=budget,
        seat_token=seat_token,
    )
    lease = None
    group: BotGroup | None = None
    try:
        await gateway.start()
        if sandbox is not None:
            try:
                lease = sandbox.lease()
                group = sandbox.group()
            except (SandboxError, OSError) as error:
                raise SeatFailed("error", f"the runner could not wall it in: {error}") from None
            env = bot_env()
            env.update(seat_env(f"unix:{SOCKET_INSIDE}"))
            argv = sandbox.command(
                submission.folder,
                submission.run,
                env,
                uid=lease.uid if lease is not None else None,
                socket=gateway.socket,
                group=group,
            )
            cap = sandbox.limits.log_bytes
            cwd = None
        else:
            env = dict(os.environ)
            env.update(host.extra_env or {})
            env.update(seat_env(f"unix:{gateway.socket}"))
            if host.protos is not None:
                env[ENV_PROTOS] = str(host.protos)
            argv = ["/bin/sh", "-c", submission.run]
            cap = LOG_CAP
            cwd = submission.folder
        try:
            await _run(argv, env, cwd, cap, host.log_path(game_id, seat))
        except SeatFailed as failed:
            if group is not None and group.oom_killed():
                raise SeatFailed("error", f"out of memory (limit {group.memory_bytes // MIB} MiB)") from None
            raise failed
        if group is not None and group.oom_killed():
            raise SeatFailed("error", f"out of memory (limit {group.memory_bytes // MIB} MiB)")
        if not await ended():
            raise SeatFailed("error", "exited before the game ended")
    finally:
        if group is not None:
            group.remove()  # whatever the bot left running is killed with its group
        if lease is not None:
            lease.release()
        await gateway.stop()


async def _run(
    argv: list[str], env: dict[str, str], cwd: Path | None, cap: int, log_path: Path | None
) -> None:
    """Run the bot's command to its end, its output to ``log_path`` (at most ``cap`` bytes)."""
    log: IO[bytes] | None = None
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log = log_path.open("wb")
    process = await asyncio.create_subprocess_exec(
        *argv,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    written = 0
    tail = b""
    flooded = False
    try:
        assert process.stdout is not None
        while chunk := await process.stdout.read(65536):
            tail = (tail + chunk)[-TAIL:]
            if log is not None and written < cap:
                log.write(chunk[: cap - written])
            written += len(chunk)
            if written > cap:
                flooded = True
                stop_process_group(process, signal.SIGKILL)
                while await process.stdout.read(65536):  # to the end, or asyncio never sees it exit
                    pass
                break
        code = await process.wait()
    except asyncio.CancelledError:
        stop_process_group(process, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, asyncio.CancelledError):
            await asyncio.shield(process.wait())
        raise
    finally:
        if log is not None:
            if written > cap:
                log.write(f"\n[log cut at {cap} bytes: the bot was stopped]\n".encode())
            log.close()
    if flooded:
        raise SeatFailed("error", f"flooded its output (more than {cap} bytes); stopped")
    if code != 0:
        raise SeatFailed("error", exit_reason(code, tail))

"""``kutnahora-arena``: run the arena, or recompute its ratings from the stored results.

Every flag can also be set by an environment variable (shown in ``--help``); a flag wins over its
variable. The arena prints the address it listens on once it serves, logs JSON lines on standard error,
and stops gracefully on SIGTERM or SIGINT.

Examples::

    kutnahora-arena --server 127.0.0.1:50051 --house-bots greedy,random
    kutnahora-arena --server a:50051,b:50051 --db postgresql://arena@db/arena --registration admin
    kutnahora-arena --server a:50051 --host 0.0.0.0 --tls-cert arena.crt --tls-key arena.key  # over TLS
    kutnahora-arena recompute-ratings --db kutnahora-arena.db          # compare with the stored ratings
    kutnahora-arena recompute-ratings --db kutnahora-arena.db --write  # and store the recomputed ones
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kutnahora.arena.app import ArenaConfig, create_arena
from kutnahora.arena.built import BUILT_MAX_BYTES
from kutnahora.arena.house import parse_house_bots
from kutnahora.arena.matchmaker import Window
from kutnahora.arena.pools import DEFAULT_POOLS, parse_pools
from kutnahora.arena.ratings import recompute
from kutnahora.arena.servers import POLL_SECONDS
from kutnahora.arena.store import ArenaStore
from kutnahora.plumbing import logs
from kutnahora.plumbing.callers import DEFAULT_EXEMPT, parse_exempt, parse_networks, show_exempt
from kutnahora.plumbing.errors import StartupError, StoreError
from kutnahora.plumbing.keepalive import (
    DEFAULT_HANDSHAKE_SECONDS,
    DEFAULT_IDLE_SECONDS,
    DEFAULT_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
)
from kutnahora.plumbing.quota_store import MEMORY, parse_url
from kutnahora.plumbing.tls import pair_problem

ENV_PREFIX = "KUTNAHORA_ARENA_"


def _env(name: str, default: Any, parse: Callable[[str], Any]) -> Any:
    value = os.environ.get(ENV_PREFIX + name)
    if value is None or value == "":
        return default
    try:
        return parse(value)
    except ValueError:
        raise SystemExit(f"environment variable {ENV_PREFIX}{name}={value!r} is not valid") from None


def _optional_port(text: str) -> int | None:
    return None if text.strip().lower() in ("", "off", "none", "-1") else int(text)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``kutnahora-arena`` (serving); defaults come from the environment."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-arena",
        description="Serve the Kutná Hora arena: bot accounts, matchmaking and ratings, over gRPC. "
        "'kutnahora-arena recompute-ratings --help' shows the ratings command.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    window = Window()

    def add(flag: str, env: str, default: Any, parse: Callable[[str], Any], help_text: str) -> None:
        # A secret's value is never shown as a default: "%(default).0s" prints none of it.
        hide = "%(default).0s" if "TOKEN" in env else ""
        parser.add_argument(
            flag,
            type=parse,
            default=_env(env, default, parse),
            help=f"{help_text} [env {ENV_PREFIX}{env}]{hide}",
        )

    add("--host", "HOST", "127.0.0.1", str, "address to listen on")
    add("--port", "PORT", 50061, int, "gRPC port (0 picks a free one)")
    add(
        "--tls-cert",
        "TLS_CERT",
        None,
        str,
        "PEM certificate chain; with --tls-key the gRPC port serves TLS (off this machine the bots' API keys "
        "must travel over TLS: this, or a front that speaks TLS)",
    )
    add("--tls-key", "TLS_KEY", None, str, "PEM private key of --tls-cert")
    add("--server", "SERVERS", "127.0.0.1:50051", str, "game servers to place games on, comma-separated")
    add("--db", "DB", "kutnahora-arena.db", str, "SQLite file or postgresql:// URL of the arena's store")
    add("--pools", "POOLS", DEFAULT_POOLS, str, "pools: player count, optionally -fast or -slow (4-fast)")
    add(
        "--registration", "REGISTRATION", "open", str, "open: anyone registers a bot; admin: admin token only"
    )
    add(
        "--admin-token",
        "ADMIN_TOKEN",
        "",
        str,
        "token for admin registration and revocation (prefer the variable)",
    )
    add(
        "--register-rate",
        "REGISTER_RATE",
        2.0,
        float,
        "bots one caller (an IPv4 address, an IPv6 /64) may register per minute on average (0: no limit)",
    )
    add("--register-burst", "REGISTER_BURST", 10, int, "bots one caller may register at once")
    add(
        "--caller-rate",
        "CALLER_RATE",
        20.0,
        float,
        "calls per second one caller may make on average: every call but RegisterBot, a Seek or "
        "StreamEvents as it opens (0: no limit)",
    )
    add("--caller-burst", "CALLER_BURST", 200, int, "calls one caller may make at once above --caller-rate")
    add(
        "--caller-streams",
        "CALLER_STREAMS",
        100,
        int,
        "Seek and StreamEvents streams one caller may hold open at once, per replica unless --quota-store is "
        "shared (0: no limit)",
    )
    add(
        "--quota-store",
        "QUOTA_STORE",
        MEMORY,
        str,
        "where the per-caller counts live: memory (each replica counts for itself) or a redis:// URL every "
        "replica shares (while it cannot be reached, each replica counts in its memory)",
    )
    add(
        "--quota-store-prefix",
        "QUOTA_STORE_PREFIX",
        "kutnahora",
        str,
        "what the keys of --quota-store start with, so that several deployments may share one Redis",
    )
    add(
        "--quota-exempt",
        "QUOTA_EXEMPT",
        show_exempt(DEFAULT_EXEMPT),
        str,
        "callers the per-caller limits (registrations, calls, open streams) do not count, comma-separated: "
        "loopback, unix, addresses or networks (10.0.0.0/8); none for nobody (the admin token is never "
        "counted)",
    )
    add(
        "--trusted-proxies",
        "TRUSTED_PROXIES",
        "none",
        str,
        "reverse proxies, comma-separated addresses or networks, whose calls are counted as the caller's "
        "that their x-forwarded-for names (the right-most address there that is no trusted proxy); none: "
        "the header is ignored",
    )
    add(
        "--server-token",
        "SERVER_TOKEN",
        "",
        str,
        "token sent to the game servers with every game created, their --quota-token, so that the arena's "
        "games do not count against its address in their per-caller quotas (prefer the variable)",
    )
    add(
        "--house-bots", "HOUSE_BOTS", "", str, "house bot kinds, such as greedy,random,mcts:100 (empty: none)"
    )
    add(
        "--window", "WINDOW", window.base, float, "rating spread a fresh ticket accepts (conservative rating)"
    )
    add("--widen", "WIDEN", window.per_second, float, "how much the spread widens per second waited")
    parser.add_argument(
        "--max-wait",
        "--open-after",
        dest="max_wait",
        type=float,
        default=_env("MAX_WAIT", _env("OPEN_AFTER", window.max_wait, float), float),
        help="the bound on waiting: a ticket that has waited this many seconds is matched first, with the "
        "bots nearest in rating whatever their ratings, whenever its pool holds enough tickets "
        f"(--open-after is its older name) [env {ENV_PREFIX}MAX_WAIT]",
    )
    add("--tick", "TICK", 0.2, float, "seconds between matchmaker passes")
    add(
        "--lost-after",
        "LOST_AFTER",
        20.0,
        float,
        "seconds a game server may stay unreachable before its game is unrated",
    )
    add(
        "--poll",
        "POLL",
        POLL_SECONDS,
        float,
        "seconds between two questions to a game server about a game followed, while none of its bots "
        "seeks again (then it is asked within half a second)",
    )
    add("--metrics-host", "METRICS_HOST", "127.0.0.1", str, "address of the /metrics endpoint")
    add(
        "--metrics-port",
        "METRICS_PORT",
        9465,
        _optional_port,
        "port of the /metrics endpoint ('off' disables it)",
    )
    add(
        "--keepalive",
        "KEEPALIVE",
        DEFAULT_SECONDS,
        float,
        "seconds between the arena's pings on each connection; one that does not answer within "
        "--keepalive-timeout is closed and its Seek and StreamEvents streams with it (0: no pings)",
    )
    add(
        "--keepalive-timeout",
        "KEEPALIVE_TIMEOUT",
        DEFAULT_TIMEOUT_SECONDS,
        float,
        "seconds the arena waits for a connection to answer its ping",
    )
    add(
        "--handshake-timeout",
        "HANDSHAKE_TIMEOUT",
        DEFAULT_HANDSHAKE_SECONDS,
        float,
        "seconds a new connection has to complete its opening (TLS, HTTP/2's preface); one that has not is "
        "closed",
    )
    add(
        "--max-connection-idle",
        "MAX_CONNECTION_IDLE",
        DEFAULT_IDLE_SECONDS,
        float,
        "seconds a connection may hold no call before it is closed (0: never); a bot's channel reconnects "
        "for its next call",
    )
    add(
        "--worker-token-file",
        "WORKER_TOKEN_FILE",
        "",
        str,
        "file holding the token the sandbox workers (kutnahora-arena-worker) send with their HostingService "
        "calls; without it the arena hosts no bots and refuses those calls",
    )
    add(
        "--submissions-per-day",
        "SUBMISSIONS_PER_DAY",
        20,
        int,
        "new versions of its hosted code one bot may submit in 24 hours (the same archive again is free)",
    )
    add(
        "--hosted-games-per-hour",
        "HOSTED_GAMES_PER_HOUR",
        60,
        int,
        "hosted games one bot may start in an hour (its workers seek no more)",
    )
    add(
        "--hosted-games-per-lease",
        "HOSTED_GAMES_PER_LEASE",
        5,
        int,
        "hosted games one lease may start; then the worker releases it and the bot hosted least recently "
        "is leased next, so that more bots than the workers' seats take turns",
    )
    add(
        "--hosted-max-failures",
        "HOSTED_MAX_FAILURES",
        3,
        int,
        "failed hosted seats in a row (crash, limit, timeout, early exit) that pause a bot until its author "
        "resumes it or a new version builds",
    )
    add(
        "--built-max-bytes",
        "BUILT_MAX_BYTES",
        BUILT_MAX_BYTES,
        int,
        "bytes of one version's built folder (a gzip'd tar) a worker may upload, so that the other workers "
        "play it without building it again; a larger one is refused and each worker builds that version "
        "itself",
    )
    add(
        "--lease-time",
        "LEASE_TIME",
        30.0,
        float,
        "seconds a worker's lease lives without a renewal (workers renew every third of it); a host lease "
        "that lapses frees its bot, and its game in progress goes to the next worker",
    )
    add("--log-format", "LOG_FORMAT", "json", str, "log lines as json or console")
    add("--log-level", "LOG_LEVEL", "info", str, "debug, info, warning or error")
    return parser


def config_from_args(args: argparse.Namespace) -> ArenaConfig:
    """The arena configuration the parsed arguments describe; SystemExit with a sentence when invalid."""
    if args.registration not in ("open", "admin"):
        raise SystemExit(f"kutnahora-arena: --registration must be open or admin, not {args.registration!r}")
    if tls_problem := pair_problem(args.tls_cert, args.tls_key):
        raise SystemExit(f"kutnahora-arena: {tls_problem}")
    if args.registration == "admin" and not args.admin_token:
        raise SystemExit("kutnahora-arena: --registration admin needs --admin-token")
    if args.log_format not in ("json", "console"):
        raise SystemExit(f"kutnahora-arena: --log-format must be json or console, not {args.log_format!r}")
    if args.register_rate < 0 or args.register_burst < 1:
        raise SystemExit(
            "kutnahora-arena: --register-rate must not be negative and --register-burst must be at least 1"
        )
    if args.caller_rate < 0 or args.caller_burst < 1 or args.caller_streams < 0:
        raise SystemExit(
            "kutnahora-arena: --caller-rate and --caller-streams must not be negative and --caller-burst "
            "must be at least 1"
        )
    try:
        exempt = parse_exempt(args.quota_exempt)
    except ValueError as error:
        raise SystemExit(f"kutnahora-arena: --quota-exempt: {error}") from None
    try:
        store = parse_url(args.quota_store)
    except ValueError as error:
        raise SystemExit(f"kutnahora-arena: --quota-store: {error}") from None
    try:
        proxies = parse_networks(args.trusted_proxies)
    except ValueError as error:
        raise SystemExit(f"kutnahora-arena: --trusted-proxies: {error}") from None
    if args.handshake_timeout <= 0:
        raise SystemExit(
            f"kutnahora-arena: --handshake-timeout must be more than 0, not {args.handshake_timeout:g}"
        )
    if args.max_connection_idle < 0:
        raise SystemExit(
            "kutnahora-arena: --max-connection-idle must be 0 (never) or more seconds, not "
            f"{args.max_connection_idle:g}"
        )
    if args.keepalive < 0 or args.keepalive_timeout <= 0:
        raise SystemExit(
            "kutnahora-arena: --keepalive must be 0 (no pings) or more seconds and --keepalive-timeout more "
            f"than 0, not {args.keepalive:g} and {args.keepalive_timeout:g}"
        )
    if (
        args.submissions_per_day < 1
        or args.hosted_games_per_hour < 1
        or args.hosted_games_per_lease < 1
        or args.hosted_max_failures < 1
    ):
        raise SystemExit(
            "kutnahora-arena: --submissions-per-day, --hosted-games-per-hour, --hosted-games-per-lease and "
            "--hosted-max-failures must be at least 1"
        )
    if args.built_max_bytes < 0:
        raise SystemExit(
            f"kutnahora-arena: --built-max-bytes must be 0 (no built folder kept) or more, not "
            f"{args.built_max_bytes}"
        )
    if args.lease_time <= 0:
        raise SystemExit(f"kutnahora-arena: --lease-time must be more than 0, not {args.lease_time:g}")
    worker_token = read_token_file(args.worker_token_file) if args.worker_token_file else ""
    servers = [s.strip() for s in args.server.split(",") if s.strip()]
    if not servers:
        raise SystemExit("kutnahora-arena: name at least one game server with --server")
    try:
        pools = parse_pools(args.pools)
        house = parse_house_bots(args.house_bots, max(p.players for p in pools.values()))
    except ValueError as error:
        raise SystemExit(f"kutnahora-arena: {error}") from None
    if args.tick <= 0 or args.poll <= 0 or args.window < 0 or args.widen < 0 or args.max_wait < 0:
        raise SystemExit(
            "kutnahora-arena: --tick and --poll must be positive, --window, --widen and --max-wait not "
            "negative"
        )
    return ArenaConfig(
        servers=servers,
        db=args.db,
        pools=pools,
        registration=args.registration,
        admin_token=args.admin_token,
        server_token=args.server_token,
        register_rate=args.register_rate,
        register_burst=args.register_burst,
        caller_rate=args.caller_rate,
        caller_burst=args.caller_burst,
        caller_streams=args.caller_streams,
        quota_store=store,
        quota_store_prefix=args.quota_store_prefix,
        quota_exempt=exempt,
        trusted_proxies=proxies,
        house_bots=house,
        window=Window(args.window, args.widen, args.max_wait),
        tick_seconds=args.tick,
        lost_after_seconds=args.lost_after,
        poll_seconds=args.poll,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
        keepalive_seconds=args.keepalive,
        keepalive_timeout_seconds=args.keepalive_timeout,
        handshake_timeout_seconds=args.handshake_timeout,
        max_connection_idle_seconds=args.max_connection_idle,
        worker_token=worker_token,
        submissions_per_day=args.submissions_per_day,
        hosted_games_per_hour=args.hosted_games_per_hour,
        hosted_games_per_lease=args.hosted_games_per_lease,
        hosted_max_failures=args.hosted_max_failures,
        built_max_bytes=args.built_max_bytes,
        lease_seconds=args.lease_time,
        tls_cert=args.tls_cert or None,
        tls_key=args.tls_key or None,
    )


def read_token_file(path: str) -> str:
    """The token in ``--worker-token-file`` (surrounding white space dropped); SystemExit with a sentence
    when it cannot be read, is empty, or holds white space within."""
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise SystemExit(f"kutnahora-arena: --worker-token-file {path}: cannot be read ({error})") from None
    if not token or any(c.isspace() for c in token):
        raise SystemExit(
            f"kutnahora-arena: --worker-token-file {path} must hold one token (no spaces), such as the "
            "output of: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return token


async def serve(host: str, port: int, config: ArenaConfig) -> None:
    """Run an arena until SIGTERM or SIGINT, then stop it gracefully."""
    log = logs.get_logger("kutnahora.arena")
    try:
        arena, bound = await create_arena(f"{host}:{port}", config)
    except (OSError, RuntimeError) as error:
        raise SystemExit(f"kutnahora-arena: cannot listen on {host}:{port}: {error}") from None
    try:
        await arena.start()
    except StartupError as error:
        await arena.stop(0)
        raise SystemExit(f"kutnahora-arena: {error}") from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    metrics = f"http://{config.metrics_host}:{arena.metrics_port}/metrics" if arena.metrics_port else "off"
    print(
        f"kutnahora-arena listening on {'grpcs' if config.tls_cert else 'grpc'}://{host}:{bound} "
        f"(metrics {metrics}, store {arena.store.description}, "
        f"pools {','.join(sorted(config.pools))}, game servers {','.join(config.servers)})",
        flush=True,
    )
    log.info("arena listening", address=f"{host}:{bound}", metrics=metrics, store=arena.store.description)
    await stop.wait()
    await arena.stop()


def recompute_parser() -> argparse.ArgumentParser:
    """The parser of ``kutnahora-arena recompute-ratings``."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-arena recompute-ratings",
        description="Recompute every rating from the stored results, in the order they were rated, and "
        "compare with the stored ratings (exit 0 when they are identical, 1 when not).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--db", default=_env("DB", "kutnahora-arena.db", str), help="the arena's store")
    parser.add_argument("--write", action="store_true", help="store the recomputed ratings")
    return parser


async def recompute_ratings(db: str, write: bool) -> int:
    """Recompute, compare, print a line per pool, optionally write; the exit status."""
    store = ArenaStore(db)
    try:
        await store.open()
    except StoreError as error:
        print(f"kutnahora-arena: {error}", file=sys.stderr)
        return 2
    try:
        games = await store.rated_games()
        fresh = recompute(games)
        stored = await store.stored_ratings()
        differ = sorted(key for key in set(fresh) | set(stored) if fresh.get(key) != stored.get(key))
        pools = sorted({pool for _, pool in fresh})
        for pool in pools:
            count = sum(1 for game in games if game.pool == pool)
            bots = sum(1 for _, p in fresh if p == pool)
            print(f"pool {pool}: {count} rated games, {bots} bots")
        for name, pool in differ[:20]:
            print(
                f"  differs: {name} in pool {pool}: stored {stored.get((name, pool))}, "
                f"recomputed {fresh.get((name, pool))}"
            )
        if write:
            await store.replace_ratings(fresh)
            print(f"wrote {len(fresh)} ratings")
        print("identical" if not differ else f"{len(differ)} ratings differ")
        return 0 if not differ or write else 1
    finally:
        await store.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kutnahora-arena``."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["recompute-ratings"]:
        options = recompute_parser().parse_args(arguments[1:])
        return asyncio.run(recompute_ratings(options.db, options.write))
    args = build_parser().parse_args(arguments)
    config = config_from_args(args)
    try:
        logs.configure(args.log_format, args.log_level)
    except ValueError as error:
        raise SystemExit(f"kutnahora-arena: {error}") from None
    try:
        asyncio.run(serve(args.host, args.port, config))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The arena's tables and their migrations: accounts, placed games and their seats, ratings with their
history, shared tickets and events, and hosted bots (archives, versions, hosting settings, workers'
leases, seat logs, built folders).

Migrations are versioned as the game server's, by the same runner
(:class:`kutnahora.plumbing.migrations.Schema`): ``MIGRATIONS`` lists the steps, ``arena_schema_version``
records those applied, a database migrated by a newer arena is refused, and with PostgreSQL the migration
runs under an advisory lock so replicas that start together migrate once. ``{ID}`` in a statement stands
for each database's auto-numbered key, ``{BLOB}`` for its type of bytes.
"""

from __future__ import annotations

from kutnahora.plumbing.migrations import Schema

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """CREATE TABLE arena_accounts (
                account_id {ID},
                name TEXT NOT NULL UNIQUE,
                key_hash TEXT NOT NULL UNIQUE,
                revoked INTEGER NOT NULL DEFAULT 0,
                house INTEGER NOT NULL DEFAULT 0,
                created_at DOUBLE PRECISION NOT NULL
            )""",
            """CREATE TABLE arena_games (
                game_id TEXT PRIMARY KEY,
                pool TEXT NOT NULL,
                server TEXT NOT NULL,
                status TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                ended_at DOUBLE PRECISION,
                rated_seq INTEGER UNIQUE
            )""",
            "CREATE INDEX arena_games_by_status ON arena_games (status)",
            """CREATE TABLE arena_seats (
                game_id TEXT NOT NULL REFERENCES arena_games (game_id),
                seat INTEGER NOT NULL,
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                place INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (game_id, seat)
            )""",
            "CREATE INDEX arena_seats_by_account ON arena_seats (account_id)",
            """CREATE TABLE arena_ratings (
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                pool TEXT NOT NULL,
                mu DOUBLE PRECISION NOT NULL,
                sigma DOUBLE PRECISION NOT NULL,
                games INTEGER NOT NULL,
                wins INTEGER NOT NULL,
                PRIMARY KEY (account_id, pool)
            )""",
            """CREATE TABLE arena_rating_history (
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                pool TEXT NOT NULL,
                game_id TEXT NOT NULL REFERENCES arena_games (game_id),
                mu DOUBLE PRECISION NOT NULL,
                sigma DOUBLE PRECISION NOT NULL,
                rated_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (account_id, game_id)
            )""",
        ),
    ),
)
MIGRATIONS += (
    (
        2,
        (
            # Tickets shared by replicas on one PostgreSQL database: each replica writes its own, the one
            # replica running the matchmaker fills in the match (seat token included), and the owner hands
            # it to its bot and deletes the row.
            """CREATE TABLE arena_tickets (
                ticket_id TEXT PRIMARY KEY,
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                pool TEXT NOT NULL,
                opened_at DOUBLE PRECISION NOT NULL,
                heartbeat DOUBLE PRECISION NOT NULL,
                server TEXT,
                game_id TEXT,
                seat INTEGER,
                seat_token TEXT,
                seat_names TEXT,
                UNIQUE (account_id, pool)
            )""",
        ),
    ),
)
MIGRATIONS += (
    (
        3,
        (
            # What happened to each account's games (started, finished with its rating change, abandoned
            # with the cause), written in the transaction that records the change itself, and read by
            # every replica to tell the bots on their StreamEvents streams. Rows are kept for a while,
            # then pruned (kutnahora.arena.game_events.EVENT_KEEP_SECONDS).
            """CREATE TABLE arena_events (
                event_id {ID},
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                game_id TEXT NOT NULL REFERENCES arena_games (game_id),
                kind TEXT NOT NULL,
                detail TEXT NOT NULL,
                recorded_at DOUBLE PRECISION NOT NULL
            )""",
            "CREATE INDEX arena_events_by_time ON arena_events (recorded_at)",
        ),
    ),
)
MIGRATIONS += (
    (
        4,
        (
            # Hosted bots. Each archive is kept once, by its SHA-256; each account's versions are numbered
            # from 1 and name their archive (the same archive twice from one account is one version).
            """CREATE TABLE arena_archives (
                digest TEXT PRIMARY KEY,
                archive {BLOB} NOT NULL,
                size_bytes INTEGER NOT NULL,
                stored_at DOUBLE PRECISION NOT NULL
            )""",
            """CREATE TABLE arena_versions (
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                version INTEGER NOT NULL,
                digest TEXT NOT NULL REFERENCES arena_archives (digest),
                state TEXT NOT NULL,
                reason TEXT NOT NULL DEFAULT '',
                build_log TEXT NOT NULL DEFAULT '',
                language TEXT NOT NULL,
                size_bytes INTEGER NOT NULL,
                submitted_at DOUBLE PRECISION NOT NULL,
                built_at DOUBLE PRECISION,
                PRIMARY KEY (account_id, version),
                UNIQUE (account_id, digest)
            )""",
            "CREATE INDEX arena_versions_by_state ON arena_versions (state, submitted_at)",
            # Each hosted account's settings: the pools it is sought in (empty: every pool), whether its
            # hosted play is paused and why, its failed seats in a row, and when it was last given to a
            # worker (the least recently hosted goes first).
            """CREATE TABLE arena_hosting (
                account_id INTEGER PRIMARY KEY REFERENCES arena_accounts (account_id),
                pools TEXT NOT NULL DEFAULT '',
                paused INTEGER NOT NULL DEFAULT 0,
                paused_reason TEXT NOT NULL DEFAULT '',
                failures INTEGER NOT NULL DEFAULT 0,
                hosted_at DOUBLE PRECISION NOT NULL DEFAULT 0
            )""",
            # The workers' leases, one row per job (``build:ACCOUNT:VERSION`` or ``host:ACCOUNT``): a
            # worker takes a job by inserting its row, or by taking over the row of an expired lease in one
            # conditional update, so two replicas never lease one job twice. A host lease keeps the hash of
            # its seek key and the seat of the game its worker reported started (handed to the next lease
            # while that game is active).
            """CREATE TABLE arena_leases (
                job TEXT PRIMARY KEY,
                lease_id TEXT NOT NULL UNIQUE,
                kind TEXT NOT NULL,
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                version INTEGER NOT NULL,
                worker TEXT NOT NULL,
                seek_key_hash TEXT UNIQUE,
                expires_at DOUBLE PRECISION NOT NULL,
                server TEXT,
                game_id TEXT,
                seat INTEGER,
                seat_token TEXT
            )""",
            # What each hosted seat's code wrote, per game and account (its author's to read).
            """CREATE TABLE arena_seat_logs (
                game_id TEXT NOT NULL REFERENCES arena_games (game_id),
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                seat INTEGER NOT NULL,
                version INTEGER NOT NULL,
                outcome TEXT NOT NULL,
                failed INTEGER NOT NULL DEFAULT 0,
                log TEXT NOT NULL DEFAULT '',
                truncated INTEGER NOT NULL DEFAULT 0,
                started_at DOUBLE PRECISION NOT NULL,
                ended_at DOUBLE PRECISION,
                PRIMARY KEY (game_id, account_id)
            )""",
            "CREATE INDEX arena_seat_logs_by_account ON arena_seat_logs (account_id, started_at)",
        ),
    ),
)
MIGRATIONS += (
    (
        5,
        (
            # Built folders, each uploaded once by the worker that built a version and kept by its own
            # SHA-256, with the archive (source) it was built from and the platform it was built on; its
            # bytes in chunks of at most 1 MiB, in order. A version names the built folder its build
            # reported, and counts the build leases that expired before its build was reported.
            """CREATE TABLE arena_built (
                digest TEXT PRIMARY KEY,
                source_digest TEXT NOT NULL REFERENCES arena_archives (digest),
                platform TEXT NOT NULL,
                size_bytes BIGINT NOT NULL,
                chunks INTEGER NOT NULL,
                stored_at DOUBLE PRECISION NOT NULL
            )""",
            """CREATE TABLE arena_built_chunks (
                digest TEXT NOT NULL REFERENCES arena_built (digest),
                seq INTEGER NOT NULL,
                data {BLOB} NOT NULL,
                PRIMARY KEY (digest, seq)
            )""",
            "ALTER TABLE arena_versions ADD COLUMN built_digest TEXT REFERENCES arena_built (digest)",
            "ALTER TABLE arena_versions ADD COLUMN build_expiries INTEGER NOT NULL DEFAULT 0",
        ),
    ),
)
MIGRATION_LOCK_KEY = 0x6B68_6172_656E_6131  # "kharena1": the advisory lock of arena migrations
SCHEMA = Schema(
    table="arena_schema_version",
    steps=MIGRATIONS,
    lock_key=MIGRATION_LOCK_KEY,
    refusal="the arena store's schema is at version {found}, newer than this arena knows ({known}): "
    "run an arena at least as new as the one that migrated it",
)
SCHEMA_VERSION = SCHEMA.version

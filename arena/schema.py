"""The arena's tables and their migrations: accounts, placed games and their seats, ratings with their
history, shared tickets and events.

Migrations are versioned as the game server's, by the same runner
(:class:`kutnahora.plumbing.migrations.Schema`): ``MIGRATIONS`` lists the steps, ``arena_schema_version``
records those applied, a database migrated by a newer arena is refused, and with PostgreSQL the migration
runs under an advisory lock so replicas that start together migrate once. ``{ID}`` in a statement stands
for each database's auto-numbered key.
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
MIGRATION_LOCK_KEY = 0x6B68_6172_656E_6131  # "kharena1": the advisory lock of arena migrations
SCHEMA = Schema(
    table="arena_schema_version",
    steps=MIGRATIONS,
    lock_key=MIGRATION_LOCK_KEY,
    refusal="the arena store's schema is at version {found}, newer than this arena knows ({known}): "
    "run an arena at least as new as the one that migrated it",
)
SCHEMA_VERSION = SCHEMA.version

"""The Kutná Hora game server: the gRPC service over the rules engine.

Modules: :mod:`kutnahora.server.app` assembles a server (:func:`kutnahora.server.app.create_server`);
:mod:`kutnahora.server.service` holds the servicers; :mod:`kutnahora.server.hub` and
:mod:`kutnahora.server.game` the games in memory (engine values and the records of
:mod:`kutnahora.server.records` only), with beside the game its seats (:mod:`kutnahora.server.seating`),
clock (:mod:`kutnahora.server.clock`), submission checks (:mod:`kutnahora.server.submission`), log replay
(:mod:`kutnahora.server.replay`) and subscribers (:mod:`kutnahora.server.subscribers`);
:mod:`kutnahora.server.reading` the reading of requests,
:mod:`kutnahora.server.messages` the server's own messages and :mod:`kutnahora.server.feed` each game's
outgoing messages with their byte caches (the observation a seat is sent is
:mod:`kutnahora.wire.seat_observation`'s); :mod:`kutnahora.server.store` durable storage (memory, SQLite,
PostgreSQL);
:mod:`kutnahora.server.config` the settings (declared with :mod:`kutnahora.server.settings`);
:mod:`kutnahora.server.main` the ``kutnahora-server`` command.
"""

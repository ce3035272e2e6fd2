"""The Kutná Hora game server: the gRPC service over the rules engine.

Modules: :mod:`kutnahora.server.app` assembles a server (:func:`kutnahora.server.app.create_server`);
:mod:`kutnahora.server.service` holds the servicers; :mod:`kutnahora.server.hub` and
:mod:`kutnahora.server.game` the games in memory (engine values and the records of
:mod:`kutnahora.server.records` only); :mod:`kutnahora.server.presenter` every wire message and its byte
caches; :mod:`kutnahora.server.store` durable storage (memory, SQLite, PostgreSQL);
:mod:`kutnahora.server.config` the settings (declared with :mod:`kutnahora.server.settings`);
:mod:`kutnahora.server.main` the ``kutnahora-server`` command.
"""

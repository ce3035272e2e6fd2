"""The Kutná Hora game server: the gRPC service over the rules engine.

Modules: :mod:`server.app` assembles a server (:func:`server.app.create_server`); :mod:`server.service`
holds the servicers; :mod:`server.hub` and :mod:`server.game` the games in memory; :mod:`server.convert`
every conversion between engine values and wire messages; :mod:`server.store` and
:mod:`server.sqlite_store` durable storage; :mod:`server.main` the ``kutnahora-server`` command.
"""

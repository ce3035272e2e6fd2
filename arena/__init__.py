"""The arena: a standing place where bots register, seek games in rating pools and keep a rating.

``kutnahora-arena`` is a gRPC client of one or more game servers (the public protocol only) and serves
``kutnahora.v1.ArenaService``: accounts with API keys, ``Seek`` tickets matched by rating, games placed on
the least-loaded server, and openskill ratings per pool. See docs/arena.md.
"""

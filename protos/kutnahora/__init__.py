"""Kutná Hora: The City of Silver, the reference game service.

The installed package gathers the repository's folders under one name:

- ``kutnahora.engine``: the rules, pure Python and deterministic (``engine/``);
- ``kutnahora.v1``: the wire contract's generated code (``protos/kutnahora/v1``);
- ``kutnahora.server``: the gRPC game server (``server/``);
- ``kutnahora.clients``: the SDK, the bots, the human client and the tournament runner (``clients/``);
- ``kutnahora.bench``: the server benchmark (``bench/``).
"""

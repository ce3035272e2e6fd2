"""Kutná Hora: The City of Silver, the reference game service.

The installed package gathers the repository's folders under one name:

- ``kutnahora.engine``: the rules, pure Python and deterministic (``engine/``);
- ``kutnahora.v1``: the wire contract's generated code (``protos/kutnahora/v1``);
- ``kutnahora.server``: the gRPC game server (``server/``);
- ``kutnahora.clients``: the SDK, the bots, the human client and the tournament runner (``clients/``);
- ``kutnahora.bench``: the server benchmark (``bench/``).

``__version__`` is the installed distribution's version, read from its metadata: pyproject.toml is the one
place it is written.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kutnahora")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

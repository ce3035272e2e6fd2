"""Kutná Hora: The City of Silver, the reference game service.

The installed package gathers the repository's folders under one name:

- ``kutnahora.engine``: the rules, pure Python and deterministic (``engine/``);
- ``kutnahora.v1``: the wire contract's generated code (``protos/kutnahora/v1``);
- ``kutnahora.wire``: the one codec between engine values and wire messages, both ways (``wire/``);
- ``kutnahora.learned``: what a bot needs to play a trained network, with the shipped weights (``learned/``);
- ``kutnahora.plumbing``: what the game server and the arena share: logs, refusals (``plumbing/``);
- ``kutnahora.server``: the gRPC game server (``server/``);
- ``kutnahora.arena``: the arena: bot accounts, matchmaking, ratings (``arena/``);
- ``kutnahora.clients``: the SDK, the bots, the human client and the tournament runner (``clients/``);
- ``kutnahora.envs``: the learning environments, training and the strength ladder (``envs/``);
- ``kutnahora.web``: the game in a browser (``web/``);
- ``kutnahora.bench``: the benchmarks and hostile-input runs (``bench/``).

docs/architecture.md#layers says who may import whom.

``__version__`` is the installed distribution's version, read from its metadata: pyproject.toml is the one
place it is written. :func:`compiled_modules` says which modules of this installation run compiled (a wheel
built with ``KUTNAHORA_COMPILE=1``, see setup.py).
"""

from importlib.machinery import EXTENSION_SUFFIXES
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec

try:
    __version__ = version("kutnahora")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

COMPILABLE = (
    "kutnahora.engine.barbara",
    "kutnahora.engine.costs",
    "kutnahora.engine.economy",
    "kutnahora.engine.flow",
    "kutnahora.engine.geometry",
    "kutnahora.engine.income",
    "kutnahora.engine.mine",
    "kutnahora.engine.resample",
    "kutnahora.engine.rounds",
    "kutnahora.engine.scoring",
    "kutnahora.engine.setup",
    "kutnahora.engine.text",
    "kutnahora.engine.town",
    "kutnahora.engine.view",
    "kutnahora.server.feed",
    "kutnahora.server.messages",
    "kutnahora.wire.decisions",
    "kutnahora.wire.encoder",
    "kutnahora.wire.observations",
    "kutnahora.wire.seat_observation",
)
"""The modules the compiled build compiles (setup.py's list, checked against it by the tests)."""


def compiled_modules() -> tuple[str, ...]:
    """The modules of :data:`COMPILABLE` that load as C extensions here (none from the sources)."""
    found = []
    for name in COMPILABLE:
        spec = find_spec(name)
        if spec is not None and spec.origin is not None and spec.origin.endswith(tuple(EXTENSION_SUFFIXES)):
            found.append(name)
    return tuple(found)

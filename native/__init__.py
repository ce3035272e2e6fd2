"""The native rules core: the same game as :mod:`kutnahora.engine`, played by C++.

The core (``native/core/``, the module ``kutnahora_core``) is an optional build: ``pip install
./native/core`` (or the ``native`` extra). The pure-Python engine stays the reference and is used wherever
the core is not built. Which one plays is chosen at run time by ``KUTNAHORA_ENGINE``:

* ``native``: the core (an error when it is not built);
* ``python``: the engine;
* unset or empty: the core when it is built, else the engine.

:func:`active_engine` says which one that is; :class:`kutnahora.native.game.NativeGame` is a game in the
core, with the engine's values; :class:`kutnahora.native.resampling.Resampler` draws games from an
observation in the core. ``kutnahora-sim`` and the search bot use them when the core is selected.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from functools import cache
from types import ModuleType

ENGINE_VARIABLE = "KUTNAHORA_ENGINE"
NATIVE = "native"
PYTHON = "python"
CORE_MODULE = "kutnahora_core"


class EngineUnavailable(RuntimeError):
    """``KUTNAHORA_ENGINE`` asks for an engine that cannot be used here."""


@cache
def native_available() -> bool:
    """Whether the native core is built and importable."""
    return importlib.util.find_spec(CORE_MODULE) is not None


def core_module() -> ModuleType:
    """The native core's module; :class:`EngineUnavailable` when it is not built."""
    if not native_available():
        raise EngineUnavailable(
            f"the native rules core ({CORE_MODULE}) is not built: install it with `pip install ./native/core`"
        )
    return importlib.import_module(CORE_MODULE)


def active_engine() -> str:
    """``"native"`` or ``"python"``: the engine ``KUTNAHORA_ENGINE`` selects here.

    Raises :class:`EngineUnavailable` when it names the native core and the core is not built, and when it
    names neither engine.
    """
    asked = os.environ.get(ENGINE_VARIABLE, "").strip().lower()
    if asked == PYTHON:
        return PYTHON
    if asked == NATIVE:
        core_module()
        return NATIVE
    if asked:
        raise EngineUnavailable(f"{ENGINE_VARIABLE} must be `native` or `python`, not {asked!r}")
    return NATIVE if native_available() else PYTHON

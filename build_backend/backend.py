"""The package's build backend: setuptools', which also asks for mypyc when the compiled build is wanted.

With ``KUTNAHORA_COMPILE=1`` (see setup.py) a wheel is built with mypyc, so the isolated build environment
needs mypy (which carries mypyc) and the protobuf stubs the compiled modules are typed against. Only the
wheel itself is compiled: every other hook (requirements, metadata, sdist) runs setup.py with the variable
removed, so that nothing is compiled twice or in vain. An editable install always runs the sources
(compiled modules beside them would hide every later edit), and says that it ignores the variable.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from package_layout import COMPILE_VARIABLE, compiling
from setuptools import build_meta

COMPILE_REQUIRES = ["mypy>=1.11", "types-protobuf"]
T = TypeVar("T")


@contextmanager
def _sources_only() -> Iterator[None]:
    """setup.py without the compiled build, while inside."""
    value = os.environ.pop(COMPILE_VARIABLE, None)
    try:
        yield
    finally:
        if value is not None:
            os.environ[COMPILE_VARIABLE] = value


def _uncompiled(hook: Callable[..., T]) -> Callable[..., T]:
    def run(*args: Any, **kwargs: Any) -> T:
        with _sources_only():
            return hook(*args, **kwargs)

    run.__name__ = hook.__name__
    run.__doc__ = f"setuptools' {hook.__name__}, with nothing compiled."
    return run


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """setuptools' requirements, and mypy for a compiled wheel."""
    extra = COMPILE_REQUIRES if compiling() else []
    with _sources_only():
        return [*build_meta.get_requires_for_build_wheel(config_settings), *extra]


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' editable install, never compiled."""
    if compiling():
        print(
            f"{COMPILE_VARIABLE} is ignored by an editable install, which runs the sources; "
            "build a wheel to compile (KUTNAHORA_COMPILE=1 pip wheel --no-deps -w dist .)",
            file=sys.stderr,
        )
    with _sources_only():
        built: str = build_meta.build_editable(wheel_directory, config_settings, metadata_directory)
    return built


build_wheel = build_meta.build_wheel  # setuptools' own: setup.py compiles when KUTNAHORA_COMPILE says so
prepare_metadata_for_build_wheel = _uncompiled(build_meta.prepare_metadata_for_build_wheel)
get_requires_for_build_sdist = _uncompiled(build_meta.get_requires_for_build_sdist)
build_sdist = _uncompiled(build_meta.build_sdist)
get_requires_for_build_editable = _uncompiled(build_meta.get_requires_for_build_editable)
prepare_metadata_for_build_editable = _uncompiled(build_meta.prepare_metadata_for_build_editable)

"""The package's build backend: setuptools', which also asks for mypyc when the compiled build is wanted.

With ``KUTNAHORA_COMPILE=1`` (see setup.py) a wheel is built with mypyc, so the isolated build environment
needs mypy (which carries mypyc) and the protobuf stubs the compiled modules are typed against. Only the
wheel itself is compiled: every other hook (requirements, metadata, sdist) runs setup.py with the variable
removed, so that nothing is compiled twice or in vain. An editable install always runs the sources
(compiled modules beside them would hide every later edit), and says that it ignores the variable.

**The ``native`` extra.** The native rules core is a project of its own in ``native/core/`` (C++,
``kutnahora-core``), which pip cannot name by a relative path in an extra. The backend adds the extra to
the metadata it prepares: ``Provides-Extra: native`` and ``Requires-Dist: kutnahora-core @
file:///<this checkout>/native/core ; extra == "native"``, the folder's absolute URL worked out when the
package is built from a checkout, so ``pip install -e '.[native]'`` (or ``'.[native]'``) builds and
installs the core with the package. setuptools builds the wheel from that prepared metadata. A build
without the folder (from an sdist) has no such extra; ``pip install ./native/core`` always works.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from package_layout import COMPILE_VARIABLE, ROOT, compiling
from setuptools import build_meta

COMPILE_REQUIRES = ["mypy>=1.11", "types-protobuf"]
NATIVE_EXTRA = "native"
CORE_PROJECT = "kutnahora-core"
CORE_FOLDER = ROOT / "native" / "core"
T = TypeVar("T")


def native_requirement(folder: Path = CORE_FOLDER) -> str | None:
    """The ``native`` extra's requirement: the core's folder as an absolute file URL (None without it)."""
    if not (folder / "pyproject.toml").is_file():
        return None
    return f'{CORE_PROJECT} @ {folder.resolve().as_uri()} ; extra == "{NATIVE_EXTRA}"'


def add_native_extra(metadata: Path, requirement: str | None = None) -> None:
    """Add the ``native`` extra to a METADATA file (its headers end at the first empty line); nothing
    when the core's folder is not there or the extra is already declared."""
    requirement = requirement or native_requirement()
    if requirement is None:
        return
    text = metadata.read_text(encoding="utf-8")
    head, gap, body = text.partition("\n\n")
    headers = head.splitlines()
    if f"Provides-Extra: {NATIVE_EXTRA}" in headers:
        return
    headers += [f"Provides-Extra: {NATIVE_EXTRA}", f"Requires-Dist: {requirement}"]
    metadata.write_text("\n".join(headers) + "\n" + (gap[1:] if gap else "\n") + body, encoding="utf-8")


def _prepared(hook: Callable[..., str]) -> Callable[..., str]:
    """A prepare_metadata hook, with nothing compiled, whose METADATA declares the ``native`` extra."""

    def run(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
        with _sources_only():
            name = hook(metadata_directory, config_settings)
        add_native_extra(Path(metadata_directory) / name / "METADATA")
        return name

    run.__name__ = hook.__name__
    run.__doc__ = f"setuptools' {hook.__name__}, with nothing compiled, and the native extra."
    return run


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
    with (
        _prepared_metadata(metadata_directory, prepare_metadata_for_build_editable) as prepared,
        _sources_only(),
    ):
        built: str = build_meta.build_editable(wheel_directory, config_settings, prepared)
    return built


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' wheel (compiled when KUTNAHORA_COMPILE says so), from metadata with the native extra."""
    with _prepared_metadata(metadata_directory, prepare_metadata_for_build_wheel) as prepared:
        built: str = build_meta.build_wheel(wheel_directory, config_settings, prepared)
    return built


@contextmanager
def _prepared_metadata(given: str | None, prepare: Callable[[str], str]) -> Iterator[str]:
    """The metadata directory the frontend prepared, or one prepared here (so that a wheel built without
    one, as ``python -m build`` builds it, declares the native extra too)."""
    if given is not None:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="kutnahora-metadata-") as folder:
        prepare(folder)
        yield folder


prepare_metadata_for_build_wheel = _prepared(build_meta.prepare_metadata_for_build_wheel)
get_requires_for_build_sdist = _uncompiled(build_meta.get_requires_for_build_sdist)
build_sdist = _uncompiled(build_meta.build_sdist)
get_requires_for_build_editable = _uncompiled(build_meta.get_requires_for_build_editable)
prepare_metadata_for_build_editable = _prepared(build_meta.prepare_metadata_for_build_editable)

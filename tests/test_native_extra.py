"""The build backend declares the ``native`` extra: the core's folder as an absolute file URL."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "build_backend"))
import backend  # noqa: E402 (found through the line above)

METADATA = (
    "Metadata-Version: 2.4\nName: kutnahora\nVersion: 0.1.0\nProvides-Extra: rl\n\nThe README.\n\nMore.\n"
)


def test_the_extra_names_the_core_folder_of_this_checkout(tmp_path: Path) -> None:
    metadata = tmp_path / "METADATA"
    metadata.write_text(METADATA, encoding="utf-8")
    backend.add_native_extra(metadata)
    head, _, body = metadata.read_text(encoding="utf-8").partition("\n\n")
    url = (ROOT / "native" / "core").resolve().as_uri()
    assert head.splitlines()[-2:] == [
        "Provides-Extra: native",
        f'Requires-Dist: kutnahora-core @ {url} ; extra == "native"',
    ]
    assert body == "The README.\n\nMore.\n"  # the description is left as it was
    once = metadata.read_text(encoding="utf-8")
    backend.add_native_extra(metadata)
    assert metadata.read_text(encoding="utf-8") == once  # declared once


def test_no_extra_without_the_core_folder(tmp_path: Path) -> None:
    assert backend.native_requirement(tmp_path / "native" / "core") is None  # as in a build from an sdist
    requirement = backend.native_requirement(ROOT / "native" / "core")
    assert requirement is not None and requirement.startswith("kutnahora-core @ file:///")

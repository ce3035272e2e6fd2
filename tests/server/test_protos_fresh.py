"""The generated Python code under protos/kutnahora/v1 is up to date with the .proto files.

Regenerating with ``scripts/gen_protos.py`` must give the committed files. When the installed
grpcio-tools is the version that generated them, the files must match byte for byte; with another version
(whose generator writes a different header) the descriptors embedded in each ``_pb2.py`` must still match.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from grpc_tools import protoc  # noqa: F401  (the generator must be importable)

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "protos" / "kutnahora" / "v1"
DESCRIPTOR_BLOB = re.compile(rb"AddSerializedFile\((b'.*?')\)", re.S)


def regenerate(out: Path) -> Path:
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_protos.py"), "--out", str(out)], check=True)
    return out / "kutnahora" / "v1"


def generated_version(folder: Path) -> str:
    text = next(folder.glob("*_pb2_grpc.py")).read_text()
    match = re.search(r"GRPC_GENERATED_VERSION = '([^']+)'", text)
    assert match, "the generated gRPC code names no generator version"
    return match.group(1)


def test_generated_code_matches_the_proto_files(tmp_path: Path) -> None:
    fresh = regenerate(tmp_path)
    committed = {p.name for p in GENERATED.glob("*_pb2*.py*")}
    regenerated = {p.name for p in fresh.glob("*_pb2*.py*")}
    assert committed == regenerated, "generated files are missing or left over: run scripts/gen_protos.py"
    exact = generated_version(fresh) == generated_version(GENERATED)
    for name in sorted(regenerated):
        new, old = (fresh / name).read_bytes(), (GENERATED / name).read_bytes()
        if exact:
            assert new == old, f"{name} is stale: run scripts/gen_protos.py"
        elif name.endswith("_pb2.py"):
            assert DESCRIPTOR_BLOB.findall(new) == DESCRIPTOR_BLOB.findall(old), f"{name} is stale"


def test_every_proto_file_has_its_generated_module() -> None:
    for proto in GENERATED.glob("*.proto"):
        stem = proto.stem
        for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py"):
            assert (GENERATED / f"{stem}{suffix}").exists(), f"{stem}{suffix} is missing"


def test_the_package_imports_from_anywhere(tmp_path: Path) -> None:
    code = (
        "import kutnahora.v1.game_pb2, kutnahora.v1.play_service_pb2_grpc, kutnahora.engine;"
        "import kutnahora.server;"
        "import importlib.util as u; print('ok' if u.find_spec('engine') is None else 'top-level engine')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"

"""Generate the Python code of the wire contract from ``protos/kutnahora/v1/*.proto``.

Writes ``*_pb2.py``, ``*_pb2.pyi`` and ``*_pb2_grpc.py`` next to the ``.proto`` files, so that the folder
``protos/kutnahora`` is the importable package ``kutnahora`` (``import kutnahora.v1.game_pb2``). The
generated files are committed; ``tests/server/test_protos_fresh.py`` fails when they are stale::

    python scripts/gen_protos.py            # regenerate in place
    python scripts/gen_protos.py --out DIR  # generate into DIR instead (used by the freshness test)

Needs grpcio-tools (a dependency of the project).
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
PACKAGE_DIR = PROTO_ROOT / "kutnahora" / "v1"


def proto_files() -> list[Path]:
    """The ``.proto`` files of the contract, sorted."""
    return sorted(PACKAGE_DIR.glob("*.proto"))


def generate(out: Path) -> None:
    """Run protoc (from grpcio-tools) over every ``.proto`` file, writing the Python code under ``out``."""
    from grpc_tools import protoc

    well_known = str(resources.files("grpc_tools") / "_proto")
    out.mkdir(parents=True, exist_ok=True)
    args = [
        "grpc_tools.protoc",
        f"--proto_path={PROTO_ROOT}",
        f"--proto_path={well_known}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        *(str(path.relative_to(PROTO_ROOT)) for path in proto_files()),
    ]
    code = protoc.main(args)
    if code != 0:
        raise SystemExit(f"protoc failed with exit code {code}")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PROTO_ROOT, help="root folder of the generated package")
    args = parser.parse_args(argv)
    generate(args.out)
    written = sorted((args.out / "kutnahora" / "v1").glob("*_pb2*.py*"))
    print(f"wrote {len(written)} files under {args.out / 'kutnahora' / 'v1'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

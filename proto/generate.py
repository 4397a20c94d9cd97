"""Compile proto/cortexd/v1/cortexd.proto into the Python stubs and the descriptor set."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PROTO_ROOT = Path(__file__).resolve().parent
PROTO_FILE = "cortexd/v1/cortexd.proto"
DESCRIPTOR_SET = "cortexd/v1/cortexd.binpb"
GENERATED_FILES = (
    "cortexd/v1/cortexd_pb2.py",
    "cortexd/v1/cortexd_pb2.pyi",
    "cortexd/v1/cortexd_pb2_grpc.py",
    DESCRIPTOR_SET,
)


def generate(out_dir: Path) -> list[Path]:
    """Write the stubs and the source-info descriptor set under out_dir; return their paths."""
    from grpc_tools import protoc  # build-time dependency only
    import grpc_tools

    include = str(Path(grpc_tools.__file__).parent / "_proto")
    (out_dir / "cortexd/v1").mkdir(parents=True, exist_ok=True)
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        "--include_source_info",
        f"--descriptor_set_out={out_dir / DESCRIPTOR_SET}",
        PROTO_FILE,
    ]
    if protoc.main(args) != 0:
        raise SystemExit(f"protoc failed on {PROTO_FILE}")
    return [out_dir / name for name in GENERATED_FILES]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=PROTO_ROOT, help="where to write (default: next to the .proto)")
    for path in generate(parser.parse_args().out):
        print(path, file=sys.stderr)


if __name__ == "__main__":
    main()

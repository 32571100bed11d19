"""The language server's end-to-end cases: a real LSP client (pytest-lsp, from PyPI)
drives `nidos lsp` over stdio, one case per YAML file in cases/ (format: README.md)."""
import gzip
import os
import struct
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
CASES = sorted((HERE / "cases").glob("*.yaml"))


def nidos_bin() -> str:
    given = os.environ.get("NIDOS_BIN")
    if given:
        return given
    root = HERE.parent.parent
    for profile in ("release", "debug"):
        b = root / "target" / profile / "nidos"
        if b.exists():
            return str(b)
    raise RuntimeError("no nidos binary: build it or set NIDOS_BIN")


def nifti_bold() -> bytes:
    """A NIfTI-1 header of a 4-D image (64×64×30, 10 volumes, 2 s repetition time)."""
    h = bytearray(348)
    struct.pack_into("<i", h, 0, 348)
    struct.pack_into("<8h", h, 40, 4, 64, 64, 30, 10, 1, 1, 1)
    struct.pack_into("<h", h, 70, 16)
    struct.pack_into("<8f", h, 76, 1, 3, 3, 3, 2, 1, 1, 1)
    struct.pack_into("<f", h, 108, 352)
    h[344:348] = b"n+1\0"
    return gzip.compress(bytes(h) + b"\0" * 4)


GENERATED = {"@nifti-bold": nifti_bold}


def write_dataset(root: Path, files: dict) -> None:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str) and content in GENERATED:
            p.write_bytes(GENERATED[content]())
        elif isinstance(content, str):
            p.write_text(content)
        else:
            import json

            p.write_text(json.dumps(content, indent=2) + "\n")


def load_case(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


@pytest.fixture(params=CASES, ids=[c.stem for c in CASES])
def case(request, tmp_path_factory):
    spec = load_case(request.param)
    root = tmp_path_factory.mktemp(request.param.stem)
    write_dataset(root, spec["files"])
    return spec, root.resolve()

"""Reading the silicon fixtures (tests/silicon/README.md describes their format)."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "silicon" / "fixtures"
PROGRAMS = ROOT / "silicon" / "programs"


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def buffer_bytes(blob: dict[str, Any], nbytes: int) -> bytes:
    if blob["encoding"] == "zeros":
        return bytes(nbytes)
    assert blob["encoding"] == "zlib+base64", blob["encoding"]
    data = zlib.decompress(base64.b64decode(blob["data"]))
    assert len(data) == nbytes, (len(data), nbytes)
    return data


def output_words(fx: dict[str, Any], name: str = "out_ptr", size: int = 4) -> list[int]:
    out = fx["outputs"][name]
    data = buffer_bytes(out, out["nbytes"])
    words: tuple[int, ...] = struct.unpack(f"<{len(data) // size}{'I' if size == 4 else 'Q'}", data)
    return list(words)

#!/usr/bin/env python3
"""Writes tests/data/gguf-fixtures.json: reference values from the `gguf` Python package
(an implementation independent of ours) for the GGUF reader and dequantization tests.

  * "model": facts and dequantized values of a few tensors of the default model
    (SmolLM2-135M-Instruct.Q4_1.gguf): first 8 values and the sum over one row.
  * "blocks": one pseudo-random block of each quantized type we read, as hex bytes, and
    its dequantized values.

Run with the reference environment: /opt/refvenv/bin/python scripts/make-gguf-fixtures.py
CI never runs this; the JSON it writes is committed.
"""
import json
import os
import pathlib
import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader
from gguf.quants import dequantize

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "gguf-fixtures.json"
MODEL_TENSORS = [
    ("token_embd.weight", 1000),  # Q8_0
    ("blk.0.attn_q.weight", 5),  # Q4_1
    ("blk.29.ffn_down.weight", 100),  # Q4_1
    ("blk.0.attn_norm.weight", 0),  # F32
]


def cache_directory() -> pathlib.Path:
    # The same rule as models/ModelLoader.cpp's cacheDirectory().
    if os.environ.get("INFERSCOPE_CACHE"):
        return pathlib.Path(os.environ["INFERSCOPE_CACHE"])
    if os.environ.get("XDG_CACHE_HOME"):
        return pathlib.Path(os.environ["XDG_CACHE_HOME"]) / "inferscope"
    return pathlib.Path.home() / ".cache" / "inferscope"


def model_fixture(path: pathlib.Path) -> dict:
    reader = GGUFReader(str(path))
    tensors = {t.name: t for t in reader.tensors}
    out = {
        "file": path.name,
        "fileBytes": path.stat().st_size,
        "tensorCount": len(reader.tensors),
        "types": sorted({t.tensor_type.name for t in reader.tensors}),
        "tensors": [],
    }
    for name, row in MODEL_TENSORS:
        tensor = tensors[name]
        values = dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
        cols = int(tensor.shape[0])  # GGUF order: ne[0] is the contiguous dimension
        flat = values.reshape(-1)
        row_values = flat[row * cols:(row + 1) * cols]
        out["tensors"].append({
            "name": name,
            "type": tensor.tensor_type.name,
            "shape": [int(x) for x in tensor.shape],
            "first8": [float(x) for x in flat[:8]],
            "row": row,
            # float64 sum of the float32 values: the test sums the same way.
            "rowSum": float(np.sum(row_values.astype(np.float64))),
        })
    return out


def block_fixture(qtype: GGMLQuantizationType, block_bytes: int, half_fields: list,
                  rng: np.random.Generator) -> dict:
    raw = rng.integers(0, 256, size=block_bytes, dtype=np.uint8)
    # Scales stored as halves: keep them finite and moderate so the values are meaningful.
    for offset, value in half_fields:
        raw[offset:offset + 2] = np.frombuffer(np.float16(value).tobytes(), dtype=np.uint8)
    values = dequantize(raw.reshape(1, -1), qtype).reshape(-1).astype(np.float32)
    return {
        "type": qtype.name,
        "hex": raw.tobytes().hex(),
        "values": [float(x) for x in values],
    }


def main() -> int:
    rng = np.random.default_rng(20240611)
    blocks = [
        block_fixture(GGMLQuantizationType.Q4_0, 18, [(0, 0.0123)], rng),
        block_fixture(GGMLQuantizationType.Q4_1, 20, [(0, 0.0071), (2, -0.0625)], rng),
        block_fixture(GGMLQuantizationType.Q8_0, 34, [(0, 0.0031)], rng),
        block_fixture(GGMLQuantizationType.Q4_K, 144, [(0, 0.0021), (2, 0.0013)], rng),
        block_fixture(GGMLQuantizationType.Q5_K, 176, [(0, 0.0017), (2, 0.0009)], rng),
        block_fixture(GGMLQuantizationType.Q6_K, 210, [(208, 0.0011)], rng),
    ]
    fixture = {"generator": "scripts/make-gguf-fixtures.py (python gguf package)",
               "blocks": blocks}
    model = cache_directory() / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not model.exists():
        print(f"missing {model}: run set-up first", file=sys.stderr)
        return 1
    fixture["model"] = model_fixture(model)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

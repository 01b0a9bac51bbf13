#!/usr/bin/env python3
"""Writes tests/data/architecture-logits.json: what llama.cpp (an independent implementation,
through llama-cpp-python on the CPU) computes for a tiny random-weight model of each newer
architecture (qwen3, gemma3, phi3, smollm3), so the suite can check the CPU reference and the
Vulkan engine against it on the same weights, from the GGUF and from the HF folder.

  1. A Python environment with llama-cpp-python (its current release) built CPU-only, made
     once under ${INFERSCOPE_CACHE:-~/.cache/inferscope}/llamacpp-cpu-venv (the build takes
     10-20 minutes on two cores; it runs under nice).
  2. Each fixture written by `inferscope-cli synthesize tiny-ARCH FILE --type f32` (fixed
     seed, f32 weights: the same numbers our f32 reference computes with).
  3. llama.cpp evaluates fixed token ids in one batch with an f32 KV cache and every
     position's logits kept; the JSON records the logits of a few positions over the whole
     vocabulary, rounded to 4 decimals.

The suite synthesizes the same files at test time (models/synthetic/SyntheticShapes.cpp) and
compares. CI never runs this; rerun it by hand when a fixture or llama.cpp changes:
  python3 scripts/make-architecture-fixtures.py [--cli build/app/inferscope-cli]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
OUT = REPO / "tests/data/architecture-logits.json"
ARCHITECTURES = ["qwen3", "gemma3", "phi3", "smollm3"]
# Longer than tiny-gemma3's window of 4 positions; ids below the fixtures' 300 tokens.
TOKENS = [12, 250, 7, 99, 140, 3, 61, 200, 45, 18, 77, 260]
POSITIONS = [0, 2, 3, 4, 5, 7, 11]


def cache_directory() -> pathlib.Path:
    # The same rule as models/ModelLoader.cpp's cacheDirectory().
    if os.environ.get("INFERSCOPE_CACHE"):
        return pathlib.Path(os.environ["INFERSCOPE_CACHE"])
    if os.environ.get("XDG_CACHE_HOME"):
        return pathlib.Path(os.environ["XDG_CACHE_HOME"]) / "inferscope"
    return pathlib.Path.home() / ".cache" / "inferscope"


def ensure_venv() -> pathlib.Path:
    venv = cache_directory() / "llamacpp-cpu-venv"
    python = venv / "bin/python"
    if python.exists() and subprocess.run([python, "-c", "import llama_cpp"],
                                          capture_output=True).returncode == 0:
        return python
    print(f"building llama-cpp-python (CPU only) into {venv}: 10-20 minutes, once",
          file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    env = dict(os.environ, CMAKE_ARGS="-DGGML_VULKAN=off -DGGML_NATIVE=on")
    subprocess.run(["nice", "-n", "15", venv / "bin/pip", "install", "--no-cache-dir",
                    "llama-cpp-python", "numpy"], check=True, env=env)
    return python


# Runs inside the llama.cpp environment: prints one JSON object per model.
RUNNER = r"""
import json, sys
import numpy as np
import llama_cpp
from llama_cpp import Llama
path, tokens, positions = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
llm = Llama(model_path=path, n_ctx=64, n_batch=64, n_ubatch=64, n_threads=2,
            logits_all=True, type_k=0, type_v=0, flash_attn=False, verbose=False)
llm.eval(tokens)
scores = np.array(llm.scores[: len(tokens)], dtype=np.float64)
print(json.dumps({
    "version": llama_cpp.__version__,
    "logits": {str(p): [round(float(x), 4) for x in scores[p]] for p in positions},
}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default=str(REPO / "build/app/inferscope-cli"))
    args = parser.parse_args()
    python = ensure_venv()
    models = {}
    version = None
    with tempfile.TemporaryDirectory() as scratch:
        for architecture in ARCHITECTURES:
            shape = f"tiny-{architecture}"
            gguf = pathlib.Path(scratch) / f"{shape}.gguf"
            subprocess.run([args.cli, "synthesize", shape, str(gguf), "--type", "f32"],
                           check=True, capture_output=True)
            run = subprocess.run([python, "-c", RUNNER, str(gguf), json.dumps(TOKENS),
                                  json.dumps(POSITIONS)], check=True, capture_output=True,
                                 text=True)
            result = json.loads(run.stdout.strip().splitlines()[-1])
            version = result["version"]
            models[shape] = {"logits": result["logits"]}
            print(f"{shape}: {len(result['logits'])} positions", file=sys.stderr)
    fixture = {
        "generator": f"scripts/make-architecture-fixtures.py: llama.cpp through llama-cpp-python "
                     f"{version} (CPU backend, f32 weights, f32 KV cache, one batch)",
        "tokens": TOKENS,
        "positions": POSITIONS,
        "weightType": "f32",
        "models": models,
    }
    OUT.write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()

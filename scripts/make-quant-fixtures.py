#!/usr/bin/env python3
"""Writes tests/data/quant-fixtures.json: what llama.cpp's own quantizer writes and what
llama.cpp computes on those files, so the suite can check our readers, GPU formats and type
mixes against an independent implementation (issue 45).

  1. A Python environment with llama-cpp-python built CPU-only, made once under
     ${INFERSCOPE_CACHE:-~/.cache/inferscope}/llamacpp-cpu-venv (reused when it already
     imports llama_cpp, e.g. built by scripts/make-architecture-fixtures.py; a lock file keeps
     two scripts from building it at once; the build takes 10-20 minutes on two cores, under
     nice). gguf-py, llama.cpp's Python GGUF package, is installed into it from the source
     archive pip kept in the cache, or from the registry.
  2. The default model (SmolLM2-135M-Instruct, Q4_1) requantized by llama.cpp (its
     llama_model_quantize, allow_requantize on: the only source there is holds Q4_1 weights,
     so these files carry Q4_1's error plus their own) to Q3_K_M, Q4_K_M, Q5_K_M and Q6_K,
     kept in ${cache}/quant-fixtures/ (about 100 MB each, too big to commit). For each:
       - its SHA-256 and every tensor's type (the preset's type mix on SmolLM2's shape);
       - perplexity on the corpus by llama-perplexity's rule (ctx 512; per-chunk mean NLL),
         "native" (llama.cpp as it runs the file: activations rounded to 8 bits in its
         quantized dot products, f16 KV cache) and "exact" (an f32 copy of the same file,
         every tensor dequantized by gguf-py, f32 KV cache: the numbers an exact reader of
         the file computes with);
       - the 20 largest last-position logits of a short prompt, exact and native.
     The suite's slow test (tests/compute/test_slow_quant_parity.cpp) loads these files when
     they are in the cache (same SHA-256) and skips, naming this script, when they are not:
     llama.cpp's quantizer searches scales in ways ours does not, so the compared bytes can
     only come from llama.cpp, and CI never builds llama.cpp.
  3. Blocks of every type the presets write: the default model requantized "pure" (every
     matrix the preset's type but for rows that are no whole super-blocks) to Q2_K, Q3_K,
     Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0; two blocks of each type
     (hex) with gguf-py's dequantized values. The suite's host dequantizer and GPU formats
     must reproduce them exactly (these files are deleted afterwards).
  4. The type mixes of Q3_K_M, Q4_K_M and Q5_K_M on the chapter's model in shape (Qwen2.5-0.5B,
     written by `inferscope-cli synthesize qwen2.5-0.5b --type f16`): every matrix's type as
     llama.cpp's quantizer picks it, which models/quant/LlamaQuantMix must reproduce.

CI never runs this; rerun it by hand when llama.cpp or the default model changes:
  python3 scripts/make-quant-fixtures.py [--cli build/app/inferscope-cli] [--skip-qwen]
"""
import argparse
import fcntl
import hashlib
import json
import math
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
OUT = REPO / "tests/data/quant-fixtures.json"
PPL_CTX = 512
PROMPT = "The quick brown fox jumps over the"
# llama.cpp's file types (include/llama.h, LLAMA_FTYPE_MOSTLY_*).
PARITY_PRESETS = {"Q3_K_M": 12, "Q4_K_M": 15, "Q5_K_M": 17, "Q6_K": 18}
BLOCK_PRESETS = {"Q2_K": 10, "Q3_K_S": 11, "Q4_K_S": 14, "Q5_K_S": 16, "Q6_K": 18, "IQ4_NL": 25,
                 "IQ4_XS": 30, "Q4_0": 2, "Q4_1": 3, "Q5_0": 8, "Q5_1": 9, "Q8_0": 7}
MIX_PRESETS = {"Q3_K_M": 12, "Q4_K_M": 15, "Q5_K_M": 17}


def cache_directory() -> pathlib.Path:
    # The same rule as models/ModelLoader.cpp's cacheDirectory().
    if os.environ.get("INFERSCOPE_CACHE"):
        return pathlib.Path(os.environ["INFERSCOPE_CACHE"])
    if os.environ.get("XDG_CACHE_HOME"):
        return pathlib.Path(os.environ["XDG_CACHE_HOME"]) / "inferscope"
    return pathlib.Path.home() / ".cache" / "inferscope"


def imports(python: pathlib.Path, module: str) -> bool:
    return python.exists() and subprocess.run([python, "-c", f"import {module}"],
                                              capture_output=True).returncode == 0


def ensure_venv() -> pathlib.Path:
    venv = cache_directory() / "llamacpp-cpu-venv"
    python = venv / "bin/python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / "llamacpp-cpu-venv.lock", "w") as lock:
        # One build at a time: another script may be building the same environment.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not imports(python, "llama_cpp"):
            print(f"building llama-cpp-python (CPU only) into {venv}: 10-20 minutes, once",
                  file=sys.stderr)
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
            env = dict(os.environ, CMAKE_ARGS="-DGGML_VULKAN=off -DGGML_NATIVE=on")
            subprocess.run(["nice", "-n", "15", venv / "bin/pip", "install", "--no-cache-dir",
                            "llama-cpp-python", "numpy"], check=True, env=env)
        if not imports(python, "gguf"):
            install_gguf_py(python)
    return python


def install_gguf_py(python: pathlib.Path) -> None:
    # The gguf-py that matches the llama.cpp build: from the llama-cpp-python source archive
    # when pip left one in the cache, else the registry's release.
    archives = sorted((cache_directory() / "llamacpp-src").glob("llama_cpp_python-*.tar.gz"))
    if archives:
        with tempfile.TemporaryDirectory() as scratch, tarfile.open(archives[-1]) as archive:
            members = [m for m in archive.getmembers() if "/vendor/llama.cpp/gguf-py/" in m.name]
            archive.extractall(scratch, members=members)
            source = next(pathlib.Path(scratch).glob("*/vendor/llama.cpp/gguf-py"))
            subprocess.run([python, "-m", "pip", "install", "--no-cache-dir", str(source)],
                           check=True)
            return
    subprocess.run([python, "-m", "pip", "install", "--no-cache-dir", "gguf"], check=True)


# Runs inside the llama.cpp environment. Commands (argv[1]):
#   quantize SRC DST FTYPE PURE    llama_model_quantize with allow_requantize
#   types FILE                     every tensor's type and row length
#   f32 SRC DST                    an f32 copy (every tensor dequantized by gguf-py)
#   blocks FILE TYPES              two blocks of each listed type: hex and dequantized values
#   evaluate FILE F32CACHE CORPUS PROMPT CTX   perplexity per chunk and the prompt's top logits
RUNNER = r"""
import ctypes, json, math, sys
import numpy as np
command = sys.argv[1]
if command == "quantize":
    import llama_cpp
    src, dst, ftype, pure = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1"
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    params.allow_requantize = True
    params.pure = pure
    rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(params))
    if rc != 0:
        sys.exit(f"llama_model_quantize returned {rc}")
    print(json.dumps({"version": llama_cpp.__version__}))
elif command == "types":
    from gguf import GGUFReader
    reader = GGUFReader(sys.argv[2])
    print(json.dumps([[t.name, t.tensor_type.name, int(t.shape[0]), len(t.shape)]
                      for t in reader.tensors]))
elif command == "f32":
    # As scripts/make-reference-fixtures.py's write_f32_copy: metadata copied unchanged.
    import gguf
    reader = gguf.GGUFReader(sys.argv[2])
    writer = gguf.GGUFWriter(sys.argv[3], reader.get_field("general.architecture").contents())
    for field in reader.fields.values():
        if field.name == "general.architecture" or field.name.startswith("GGUF."):
            continue
        value_type = field.types[0]
        sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        value = 0 if field.name == "general.file_type" else field.contents()  # 0: all f32
        writer.add_key_value(field.name, value, value_type, sub_type=sub_type)
    for tensor in reader.tensors:
        writer.add_tensor(
            tensor.name, gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
elif command == "blocks":
    from gguf import GGUFReader
    from gguf.quants import dequantize
    from gguf.constants import GGML_QUANT_SIZES
    reader = GGUFReader(sys.argv[2])
    wanted = set(json.loads(sys.argv[3]))
    found = {}
    for t in reader.tensors:
        name = t.tensor_type.name
        if name not in wanted or name in found or len(t.shape) < 2:
            continue
        block, size = GGML_QUANT_SIZES[t.tensor_type]
        raw = np.frombuffer(t.data.tobytes()[: 2 * size], dtype=np.uint8)
        values = dequantize(raw.reshape(1, -1), t.tensor_type).reshape(-1).astype(np.float32)
        found[name] = {"type": name, "tensor": t.name, "hex": raw.tobytes().hex(),
                       "values": [float(x) for x in values]}
    print(json.dumps(list(found.values())))
elif command == "evaluate":
    from llama_cpp import Llama
    path, f32_cache, corpus, prompt, ctx = sys.argv[2], sys.argv[3] == "1", sys.argv[4], \
        sys.argv[5], int(sys.argv[6])
    kv = 0 if f32_cache else 1  # GGML_TYPE_F32 / F16
    llm = Llama(model_path=path, n_ctx=ctx, n_batch=ctx, n_ubatch=ctx, n_threads=2,
                logits_all=True, type_k=kv, type_v=kv, flash_attn=False, verbose=False)
    add_bos = bool(llm._model.add_bos_token())
    text = open(corpus, encoding="utf-8").read()
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
    def logits_of(window):
        llm.reset()
        llm.eval(window)
        return np.array(llm.scores[: len(window)], dtype=np.float64)
    first = ctx // 2
    chunk_nll = []
    for c in range(len(tokens) // ctx):
        window = list(tokens[c * ctx : (c + 1) * ctx])
        if add_bos:
            window[0] = llm.token_bos()
        rows = logits_of(window)
        nll = 0.0
        for pos in range(first, ctx - 1):
            row = rows[pos]
            m = row.max()
            nll -= float(row[tokens[c * ctx + pos + 1]] - m - math.log(np.exp(row - m).sum()))
        chunk_nll.append(nll / (ctx - 1 - first))
    ids = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
    row = logits_of(ids)[-1]
    order = np.argsort(-row, kind="stable")[:20]
    print(json.dumps({"chunkMeanNll": chunk_nll, "promptIds": ids,
                      "topIds": [int(i) for i in order],
                      "topLogits": [round(float(row[i]), 4) for i in order]}))
"""


def run(python: pathlib.Path, *args: str) -> str:
    result = subprocess.run([python, "-c", RUNNER, *args], check=True, capture_output=True,
                            text=True)
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""


def sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def mean_ppl(chunks: list) -> float:
    return math.exp(sum(chunks) / len(chunks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default=str(REPO / "build/app/inferscope-cli"))
    parser.add_argument("--skip-qwen", action="store_true",
                        help="leave out the Qwen2.5-0.5B-shape type mixes (a 1 GB f16 file)")
    args = parser.parse_args()
    cache = cache_directory()
    model = cache / "models/SmolLM2-135M-Instruct.Q4_1.gguf"
    corpus = cache / "corpus/ruth-kjv.txt"
    if not model.exists() or not corpus.exists():
        sys.exit(f"missing {model} or {corpus}: run scripts/setup first")
    python = ensure_venv()
    folder = cache / "quant-fixtures"
    folder.mkdir(parents=True, exist_ok=True)
    version = None

    files = {}
    with tempfile.TemporaryDirectory(prefix="inferscope-quant-") as scratch:
        scratch = pathlib.Path(scratch)
        for preset, ftype in PARITY_PRESETS.items():
            target = folder / f"SmolLM2-135M-Instruct.{preset}.gguf"
            version = json.loads(run(python, "quantize", str(model), str(target), str(ftype),
                                     "0"))["version"]
            exact_copy = scratch / "exact-f32.gguf"
            run(python, "f32", str(target), str(exact_copy))
            native = json.loads(run(python, "evaluate", str(target), "0", str(corpus), PROMPT,
                                    str(PPL_CTX)))
            exact = json.loads(run(python, "evaluate", str(exact_copy), "1", str(corpus),
                                   PROMPT, str(PPL_CTX)))
            exact_copy.unlink()
            types = json.loads(run(python, "types", str(target)))
            files[preset] = {
                "file": target.name,
                "sha256": sha256(target),
                "bytes": target.stat().st_size,
                "tensorTypes": {name: kind for name, kind, _, dims in types if dims >= 2},
                "perplexity": {
                    "ctx": PPL_CTX,
                    "exactChunkMeanNll": [round(v, 6) for v in exact["chunkMeanNll"]],
                    "nativeChunkMeanNll": [round(v, 6) for v in native["chunkMeanNll"]],
                    "exact": round(mean_ppl(exact["chunkMeanNll"]), 6),
                    "native": round(mean_ppl(native["chunkMeanNll"]), 6),
                },
                "lastLogits": {"prompt": PROMPT, "promptIds": exact["promptIds"],
                               "topIds": exact["topIds"], "topLogits": exact["topLogits"],
                               "nativeTopIds": native["topIds"],
                               "nativeTopLogits": native["topLogits"]},
            }
            p = files[preset]["perplexity"]
            print(f"{preset}: {target.stat().st_size} bytes, ppl exact {p['exact']:.4f} native "
                  f"{p['native']:.4f}", file=sys.stderr)

        blocks = {}
        for preset, ftype in BLOCK_PRESETS.items():
            target = scratch / f"pure-{preset}.gguf"
            run(python, "quantize", str(model), str(target), str(ftype), "1")
            missing = [t for t in ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS",
                                   "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"] if t not in blocks]
            for block in json.loads(run(python, "blocks", str(target), json.dumps(missing))):
                blocks[block["type"]] = block
            target.unlink()
        print(f"blocks of {sorted(blocks)}", file=sys.stderr)

        mixes = {}
        if not args.skip_qwen:
            source = scratch / "qwen-shape-f16.gguf"
            subprocess.run([args.cli, "synthesize", "qwen2.5-0.5b", str(source), "--type", "f16"],
                           check=True, capture_output=True)
            for preset, ftype in MIX_PRESETS.items():
                target = scratch / f"qwen-{preset}.gguf"
                run(python, "quantize", str(source), str(target), str(ftype), "0")
                types = json.loads(run(python, "types", str(target)))
                mixes[preset] = [[name, kind, cols] for name, kind, cols, dims in types
                                 if dims >= 2]
                target.unlink()
            print(f"qwen-shape mixes of {sorted(mixes)}", file=sys.stderr)

    fixture = {
        "generator": f"scripts/make-quant-fixtures.py: llama.cpp's quantizer and CPU backend "
                     f"through llama-cpp-python {version}; dequantized values by gguf-py",
        "source": f"{model.name} requantized (allow_requantize: the only source is Q4_1)",
        "corpus": corpus.name,
        "files": files,
        "blocks": list(blocks.values()),
        "qwenShapeMixes": {"model": {"layers": 24, "heads": 14, "kvHeads": 2, "tied": True},
                           "presets": mixes},
    }
    OUT.write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()

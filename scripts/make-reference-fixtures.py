#!/opt/refvenv/bin/python
"""Writes tests/data/reference-smollm2.json: what llama.cpp (an independent implementation,
through llama-cpp-python on the CPU) computes for the default model, so the C++ reference
transformer can be checked against it without depending on our tokenizer.

Two llama.cpp runs:
  exact   an f32 copy of the model file (every tensor dequantized by gguf-py, an
          implementation independent of ours) with an f32 KV cache: the same numbers our f32
          reference computes with, so logits agree to ~1e-4. Everything below comes from it.
  native  the Q4_1 file as llama.cpp normally runs it: its CPU kernels round activations to
          8 bits (Q8_1) before every quantized product and keep K/V in f16, which moves
          logits by up to ~2 and flips ~4% of near-tie top-1s. Recorded (nativeTop1,
          nativeTopLogits, perplexity.native) to show that effect, not to test against.

Contents:
  teacherForcing  the first ~600 corpus tokens; llama.cpp's top-1 id and top-1 minus top-2
                  logit margin after each position (position i predicts token i+1).
  greedy          prompts (plain and ChatML), their ids, 32 greedy tokens and the top-2
                  margin of every generated step (a small margin means a near tie, where two
                  correct implementations may legitimately part ways).
  perplexity      llama-perplexity's rule on the whole corpus at ctx=512 (see perplexity()),
                  computed here from llama.cpp's logits, with the corpus ids so C++ can
                  recompute it with its own logits.
  lastLogits      the 20 largest last-position logits of one short prompt (4 decimals).

CI never runs this; rerun it by hand when the model or llama.cpp changes:
  /opt/refvenv/bin/python scripts/make-reference-fixtures.py
"""
import argparse
import json
import math
import os
import pathlib
import tempfile

import gguf
import numpy as np
from llama_cpp import Llama, __version__ as llama_cpp_version

CACHE = pathlib.Path(os.environ.get("INFERSCOPE_CACHE", pathlib.Path.home() / ".cache/inferscope"))
DEFAULT_MODEL = CACHE / "models/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CORPUS = CACHE / "corpus/ruth-kjv.txt"
REPO = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests/data/reference-smollm2.json"

TEACHER_TOKENS = 600
GREEDY_STEPS = 32
PPL_CTX = 512
PLAIN_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea,",
    "def fibonacci(n):\n",
    "The three primary colors are",
]
CHAT_QUESTIONS = [
    "What is the capital of Denmark?",
    "Write one sentence about the moon.",
    "How many legs does a spider have?",
]
LAST_LOGITS_PROMPT = "The quick brown fox jumps over the"


def chatml(question):
    # The model's own template adds this system turn when none is given.
    return (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
        "<|im_end|>\n<|im_start|>user\n" + question + "<|im_end|>\n<|im_start|>assistant\n"
    )


def write_f32_copy(source, destination):
    """The same model with every tensor dequantized to f32 (metadata copied unchanged)."""
    reader = gguf.GGUFReader(source)
    arch = reader.get_field("general.architecture").contents()
    writer = gguf.GGUFWriter(destination, arch)
    for field in reader.fields.values():
        if field.name == "general.architecture" or field.name.startswith("GGUF."):
            continue
        value_type = field.types[0]
        sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        value = 0 if field.name == "general.file_type" else field.contents()  # 0: all f32
        writer.add_key_value(field.name, value, value_type, sub_type=sub_type)
    for tensor in reader.tensors:
        writer.add_tensor(
            tensor.name, gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
        )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def open_llama(path, n_ctx, f32_cache):
    options = dict(
        model_path=str(path),
        n_ctx=n_ctx,
        n_batch=min(n_ctx, 512),
        n_threads=2,
        n_threads_batch=2,
        logits_all=True,
        n_gpu_layers=0,
        seed=0,
        verbose=False,
    )
    if f32_cache:
        options.update(type_k=0, type_v=0)  # GGML_TYPE_F32
    return Llama(**options)


def logits_of(llm, tokens):
    """All-position logits of tokens evaluated from an empty KV cache."""
    llm.reset()
    llm.eval(tokens)
    return np.array(llm.scores[: len(tokens), :], dtype=np.float64)


def top2(row):
    order = np.argsort(-row, kind="stable")  # stable: lowest index first on ties
    return int(order[0]), float(row[order[0]] - row[order[1]])


def log_softmax_at(row, token):
    m = row.max()
    return float(row[token] - m - math.log(np.exp(row - m).sum()))


def perplexity(tokens, ctx, bos_id, add_bos, chunk_logits):
    """llama-perplexity's rule (tools/perplexity/perplexity.cpp, perplexity()): the token
    stream is cut into n = len(tokens) // ctx non-overlapping chunks (the tail is dropped);
    when the vocabulary adds BOS, each chunk's first token is replaced by BOS; every chunk is
    evaluated from an empty cache and only its second half is scored: logits at positions
    first = ctx/2 .. ctx-2 predict the token after them, ctx - 1 - ctx/2 tokens per chunk.
    PPL = exp(mean negative log-likelihood over all scored tokens)."""
    chunks = len(tokens) // ctx
    first = ctx // 2
    nll = 0.0
    count = 0
    chunk_means = []
    for c in range(chunks):
        window = list(tokens[c * ctx : (c + 1) * ctx])
        if add_bos:
            window[0] = bos_id
        logits = chunk_logits(window)
        chunk_nll = 0.0
        for pos in range(first, ctx - 1):
            chunk_nll -= log_softmax_at(logits[pos], tokens[c * ctx + pos + 1])
        nll += chunk_nll
        count += ctx - 1 - first
        chunk_means.append(chunk_nll / (ctx - 1 - first))
    return math.exp(nll / count), count, chunks, chunk_means


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args()

    workdir = tempfile.TemporaryDirectory(prefix="inferscope-fixtures-")
    f32_path = pathlib.Path(workdir.name) / "model-f32.gguf"
    write_f32_copy(args.model, f32_path)
    llm = open_llama(f32_path, 1024, f32_cache=True)
    native = open_llama(args.model, 1024, f32_cache=False)
    # The vocabulary's own flag (tokenizer.ggml.add_bos_token), as llama.cpp reads it.
    add_bos = bool(llm._model.add_bos_token())
    bos_id = int(llm.token_bos())

    text = pathlib.Path(args.corpus).read_text(encoding="utf-8")
    # As llama-perplexity does: tokenize with special handling on (BOS only if the vocab adds it).
    corpus_tokens = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)

    # (a) teacher forcing
    tf_tokens = corpus_tokens[:TEACHER_TOKENS]
    tf_logits = logits_of(llm, tf_tokens)
    tf_top1, tf_margin = [], []
    for row in tf_logits:
        best, margin = top2(row)
        tf_top1.append(best)
        tf_margin.append(round(margin, 4))
    native_tf_top1 = [top2(row)[0] for row in logits_of(native, tf_tokens)]

    # (b) greedy continuations, one token at a time after the prompt (as a decoder does)
    greedy = []
    prompts = [(p, False) for p in PLAIN_PROMPTS] + [(chatml(q), True) for q in CHAT_QUESTIONS]
    for prompt, is_chat in prompts:
        ids = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=is_chat)
        llm.reset()
        llm.eval(ids)
        generated, margins = [], []
        for _ in range(GREEDY_STEPS):
            row = np.array(llm.scores[llm.n_tokens - 1, :], dtype=np.float64)
            best, margin = top2(row)
            generated.append(best)
            margins.append(round(margin, 4))
            llm.eval([best])
        greedy.append(
            {
                "prompt": prompt,
                "chat": is_chat,
                "promptIds": ids,
                "generatedIds": generated,
                "top2Margins": margins,
                "text": llm.detokenize(generated).decode("utf-8", errors="replace"),
            }
        )

    # (c) perplexity, each chunk from an empty cache in one ctx-sized batch
    ppl_llm = open_llama(f32_path, PPL_CTX, f32_cache=True)
    ppl, scored, chunks, chunk_means = perplexity(
        corpus_tokens, PPL_CTX, bos_id, add_bos, lambda w: logits_of(ppl_llm, w)
    )
    native_ppl_llm = open_llama(args.model, PPL_CTX, f32_cache=False)
    native_ppl, _, _, native_chunk_means = perplexity(
        corpus_tokens, PPL_CTX, bos_id, add_bos, lambda w: logits_of(native_ppl_llm, w)
    )

    # (d) top-20 last-position logits of a short prompt
    d_ids = llm.tokenize(LAST_LOGITS_PROMPT.encode("utf-8"), add_bos=True, special=False)
    d_row = logits_of(llm, d_ids)[-1]
    d_order = np.argsort(-d_row, kind="stable")[:20]
    d_native = logits_of(native, d_ids)[-1]

    fixture = {
        "generator": "scripts/make-reference-fixtures.py",
        "llamaCppPython": llama_cpp_version,
        "model": pathlib.Path(args.model).name,
        "corpus": pathlib.Path(args.corpus).name,
        "addBos": add_bos,
        "bosId": bos_id,
        "exactRun": "llama.cpp on an f32 copy of the model (dequantized by gguf-py), f32 KV cache",
        "nativeRun": "llama.cpp on the model file as is (Q8_1 activations, f16 KV cache)",
        "teacherForcing": {
            "tokens": tf_tokens,
            "top1": tf_top1,
            "top1Margin": tf_margin,
            "nativeTop1": native_tf_top1,
        },
        "greedy": greedy,
        "perplexity": {
            "ctx": PPL_CTX,
            "value": round(ppl, 6),
            "nativeValue": round(native_ppl, 6),
            "scoredTokens": scored,
            "chunks": chunks,
            "chunkMeanNll": [round(v, 6) for v in chunk_means],
            "nativeChunkMeanNll": [round(v, 6) for v in native_chunk_means],
            "corpusTokens": corpus_tokens,
        },
        "lastLogits": {
            "prompt": LAST_LOGITS_PROMPT,
            "promptIds": d_ids,
            "topIds": [int(i) for i in d_order],
            "topLogits": [round(float(d_row[i]), 4) for i in d_order],
            "nativeTopLogits": [round(float(d_native[i]), 4) for i in d_order],
        },
    }
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fixture, separators=(",", ":")) + "\n", encoding="utf-8")
    native_agree = sum(a == b for a, b in zip(tf_top1, native_tf_top1)) / len(tf_top1)
    print(f"wrote {out} ({out.stat().st_size} bytes): {len(corpus_tokens)} corpus tokens, "
          f"ppl {ppl:.4f} (native {native_ppl:.4f}) over {scored} tokens in {chunks} chunks, "
          f"add_bos={add_bos}; native vs exact teacher-forced top-1: {100 * native_agree:.1f}%")
    for g in greedy:
        print(f"greedy {g['promptIds'][:4]}...: min margin {min(g['top2Margins']):.4f} "
              f"{g['text'][:60]!r}")


if __name__ == "__main__":
    main()

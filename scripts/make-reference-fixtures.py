#!/opt/refvenv/bin/python
"""Writes tests/data/reference-smollm2.json: what llama.cpp (an independent implementation,
through llama-cpp-python on the CPU) computes for the default model, so the C++ reference
transformer can be checked against it without depending on our tokenizer.

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
    for c in range(chunks):
        window = list(tokens[c * ctx : (c + 1) * ctx])
        if add_bos:
            window[0] = bos_id
        logits = chunk_logits(window)
        for pos in range(first, ctx - 1):
            nll -= log_softmax_at(logits[pos], tokens[c * ctx + pos + 1])
            count += 1
    return math.exp(nll / count), count, chunks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args()

    llm = Llama(
        model_path=args.model,
        n_ctx=1024,
        n_batch=512,
        n_threads=2,
        n_threads_batch=2,
        logits_all=True,
        n_gpu_layers=0,
        seed=0,
        verbose=False,
    )
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
    ppl_llm = Llama(
        model_path=args.model,
        n_ctx=PPL_CTX,
        n_batch=PPL_CTX,
        n_threads=2,
        n_threads_batch=2,
        logits_all=True,
        n_gpu_layers=0,
        verbose=False,
    )
    ppl, scored, chunks = perplexity(
        corpus_tokens, PPL_CTX, bos_id, add_bos, lambda w: logits_of(ppl_llm, w)
    )

    # (d) top-20 last-position logits of a short prompt
    d_ids = llm.tokenize(LAST_LOGITS_PROMPT.encode("utf-8"), add_bos=True, special=False)
    d_row = logits_of(llm, d_ids)[-1]
    d_order = np.argsort(-d_row, kind="stable")[:20]

    fixture = {
        "generator": "scripts/make-reference-fixtures.py",
        "llamaCppPython": llama_cpp_version,
        "model": pathlib.Path(args.model).name,
        "corpus": pathlib.Path(args.corpus).name,
        "addBos": add_bos,
        "bosId": bos_id,
        "teacherForcing": {"tokens": tf_tokens, "top1": tf_top1, "top1Margin": tf_margin},
        "greedy": greedy,
        "perplexity": {
            "ctx": PPL_CTX,
            "value": round(ppl, 6),
            "scoredTokens": scored,
            "chunks": chunks,
            "corpusTokens": corpus_tokens,
        },
        "lastLogits": {
            "prompt": LAST_LOGITS_PROMPT,
            "promptIds": d_ids,
            "topIds": [int(i) for i in d_order],
            "topLogits": [round(float(d_row[i]), 4) for i in d_order],
        },
    }
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fixture, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {out} ({out.stat().st_size} bytes): {len(corpus_tokens)} corpus tokens, "
          f"ppl {ppl:.4f} over {scored} tokens in {chunks} chunks, add_bos={add_bos}")
    for g in greedy:
        print(f"greedy {g['promptIds'][:4]}...: min margin {min(g['top2Margins']):.4f} "
              f"{g['text'][:60]!r}")


if __name__ == "__main__":
    main()

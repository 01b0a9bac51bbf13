#!/usr/bin/env python3
"""Times llama.cpp's batched decode the way llama-batched-bench does (through the low-level
API of llama-cpp-python): for each B, a fresh cache, B sequences of PP prompt tokens each
prefilled, then TG steps that decode one token for every sequence in one batch.
S_TG = B * TG / (time of the TG steps). Prints one JSON object.

Run it in the environment scripts/bench-vs-llamacpp prepares. Not used by the tests."""
import argparse
import ctypes
import json
import os
import sys
import time


def call(lib, names, *args):
    """The first of `names` this llama-cpp-python has (the C API renamed some functions)."""
    for name in names:
        fn = getattr(lib, name, None)
        if fn is not None:
            return fn(*args)
    raise RuntimeError("llama-cpp-python has none of " + ", ".join(names))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--device", choices=["cpu", "vulkan"], default="cpu")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--batches", default="1,2,4,8,16,32")
    parser.add_argument("--prompt-tokens", type=int, default=64)
    parser.add_argument("--decode-steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import llama_cpp as lib

    batches = [int(x) for x in args.batches.split(",") if x]
    pp, tg = args.prompt_tokens, args.decode_steps
    lib.llama_backend_init()
    mparams = lib.llama_model_default_params()
    mparams.n_gpu_layers = 99 if args.device == "vulkan" else 0
    model = call(lib, ["llama_model_load_from_file", "llama_load_model_from_file"],
                 args.model.encode(), mparams)
    if not model:
        sys.exit("llamacpp_batched_bench: could not load " + args.model)
    most = max(batches)
    chunk = 512
    cparams = lib.llama_context_default_params()
    cparams.n_ctx = most * (pp + tg) + 16
    cparams.n_batch = chunk
    cparams.n_ubatch = chunk
    cparams.n_seq_max = most
    cparams.n_threads = args.threads
    cparams.n_threads_batch = args.threads
    ctx = call(lib, ["llama_init_from_model", "llama_new_context_with_model"], model, cparams)
    if not ctx:
        sys.exit("llamacpp_batched_bench: could not create a context for B = %d" % most)
    batch = lib.llama_batch_init(max(chunk, most), 0, most)

    def decode(entries):
        """entries: (token, position, sequence, wants_logits), at most `chunk` of them."""
        batch.n_tokens = len(entries)
        for i, (token, pos, seq, logits) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = logits
        if lib.llama_decode(ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")
        if hasattr(lib, "llama_synchronize"):
            lib.llama_synchronize(ctx)

    # Token ids below the smallest vocabulary we bench; what they say does not matter here.
    def token(seq, pos):
        return 100 + (seq * 7919 + pos * 104729) % 900

    def run(b):
        call(lib, ["llama_kv_cache_clear", "llama_kv_self_clear"], ctx)
        prompt = [(token(s, p), p, s, p == pp - 1) for s in range(b) for p in range(pp)]
        for at in range(0, len(prompt), chunk):
            decode(prompt[at:at + chunk])
        start = time.perf_counter()
        for step in range(tg):
            decode([(token(s, pp + step), pp + step, s, True) for s in range(b)])
        return time.perf_counter() - start

    run(min(batches))  # warm-up: the first evaluations compile pipelines on Vulkan
    result = {"engine": "llama.cpp", "device": args.device, "threads": args.threads,
              "prompt_tokens": pp, "decode_steps": tg, "points": []}
    for b in batches:
        best = min(run(b) for _ in range(args.repeats))
        result["points"].append({"batch": b, "seconds": best, "tokens_per_s": b * tg / best})
        print("llamacpp_batched_bench: B = %d: %.1f tokens/s" % (b, b * tg / best), file=sys.stderr)
    lib.llama_batch_free(batch)
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

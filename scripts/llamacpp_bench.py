#!/usr/bin/env python3
"""Times llama.cpp (through llama-cpp-python) on a GGUF file the way `inferscope-cli bench`
times InferScope: prompt processing tokens/s for prompt lengths P (fresh context each), and
decode tokens/s for single-token steps after a context of C tokens. Prints one JSON object.

Run it in a Python environment that has llama-cpp-python (built with -DGGML_VULKAN=on for the
Vulkan device); scripts/bench-vs-llamacpp prepares one. Not used by the tests."""
import argparse
import json
import os
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--device", choices=["cpu", "vulkan"], default="cpu")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--prompt-lengths", default="16,64,256,512")
    parser.add_argument("--contexts", default="16,256,1024")
    parser.add_argument("--decode-steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    from llama_cpp import Llama

    prompt_lengths = [int(x) for x in args.prompt_lengths.split(",") if x]
    contexts = [int(x) for x in args.contexts.split(",") if x]
    n_ctx = max(prompt_lengths + [c + args.decode_steps for c in contexts]) + 8
    llm = Llama(model_path=args.model, n_ctx=n_ctx, n_batch=512, n_ubatch=512,
                n_threads=args.threads, n_threads_batch=args.threads,
                n_gpu_layers=99 if args.device == "vulkan" else 0, verbose=False)
    # Deterministic token stream from the model's own tokenizer, long enough for every test.
    text = ("In the beginning the lab measured every step of the model, and the students "
            "wrote down what they saw. ") * 200
    tokens = llm.tokenize(text.encode(), add_bos=False)
    result = {"engine": "llama.cpp", "device": args.device, "threads": args.threads,
              "prompt": [], "decode": []}

    # Warm-up: the first evaluations compile pipelines (seconds on the Vulkan backend).
    for p in sorted(set(prompt_lengths))[:2] + [1]:
        llm.reset()
        llm.eval(tokens[:p])
        llm.eval([tokens[p]])

    for p in prompt_lengths:
        best = None
        for _ in range(args.repeats):
            llm.reset()
            llm._ctx.kv_cache_clear() if hasattr(llm._ctx, "kv_cache_clear") else None
            start = time.perf_counter()
            llm.eval(tokens[:p])
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        result["prompt"].append({"tokens": p, "seconds": best, "tokens_per_s": p / best})

    for c in contexts:
        best = None
        for _ in range(args.repeats):
            llm.reset()
            llm._ctx.kv_cache_clear() if hasattr(llm._ctx, "kv_cache_clear") else None
            llm.eval(tokens[:c])
            start = time.perf_counter()
            for i in range(args.decode_steps):
                llm.eval([tokens[c + i]])
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        result["decode"].append({"context": c, "steps": args.decode_steps, "seconds": best,
                                 "tokens_per_s": args.decode_steps / best})
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Prints InferScope's batched decode (inferscope-cli batch --json) next to llama.cpp's
(llamacpp_batched_bench.py: the CPU backend, then optionally the Vulkan backend), tokens/s
per B with ratios ours / theirs. Both sides take the best of their repeats: ours is the
fastest of the `batch` runs given (each the mean of its timed steps), theirs the fastest of
llama.cpp's repeats (each S_TG over its steps).

    compare_batched_bench.py OURS.json [OURS.json ...] -- THEIRS.json [THEIRS.json ...]"""
import json
import sys


def sweep(doc):
    for t in doc["tables"]:
        if t["id"] == "batching-sweep":
            names = [c["name"] for c in t["columns"]]
            return {row[0]: dict(zip(names, row)) for row in t["rows"]}
    sys.exit("compare_batched_bench: no batching-sweep table in an InferScope file")


def main():
    if "--" not in sys.argv:
        sys.exit("usage: compare_batched_bench.py OURS.json ... -- THEIRS.json ...")
    split = sys.argv.index("--")
    ours = {}
    for path in sys.argv[1:split]:
        for b, row in sweep(json.load(open(path))).items():
            if b not in ours or row["tokens/s"] > ours[b]["tokens/s"]:
                ours[b] = row
    runs = split - 1
    theirs = [json.load(open(path)) for path in sys.argv[split + 1:]]
    points = [{p["batch"]: p["tokens_per_s"] for p in doc["points"]} for doc in theirs]
    first = theirs[0]
    print(f"Batched decode, tokens/s (InferScope: cache of {first['prompt_tokens']} tokens per "
          f"sequence, mean of its timed steps, best of {runs} runs; llama.cpp: S_TG over "
          f"{first['decode_steps']} steps after a prompt of {first['prompt_tokens']}, best of its "
          f"repeats)")
    header = f"{'B':>4}{'InferScope':>12}"
    for doc in theirs:
        header += f"{'llama.cpp ' + doc['device']:>18}{'vs ' + doc['device']:>10}"
    print(header)
    for b, row in sorted(ours.items()):
        line = f"{b:>4}{row['tokens/s']:>12.1f}"
        for p in points:
            if b in p:
                line += f"{p[b]:>18.1f}{row['tokens/s'] / p[b]:>9.2f}x"
            else:
                line += f"{'-':>18}{'-':>10}"
        print(line)
    print()
    print("Target on lavapipe: >= 0.8x llama.cpp's CPU S_TG at B = 16 and 32.")


if __name__ == "__main__":
    main()

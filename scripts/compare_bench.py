#!/usr/bin/env python3
"""Prints InferScope's bench figures next to llama.cpp's with ratios (ours / theirs).
    compare_bench.py --ours OURS.json [...] --cpu CPU.json [...] [--vulkan VULKAN.json]
OURS: inferscope-cli bench --json; CPU and VULKAN: llamacpp_bench.py (without --vulkan the
Vulkan columns read "-"). With several rounds (OURS and CPU files paired in order, each pair
run one after the other), each side keeps its best figure per test, and the ratio of every
round is printed too, so the spread the machine adds is in view."""
import argparse
import json
import os


def table(doc, table_id):
    for t in doc["tables"]:
        if t["id"] == table_id:
            names = [c["name"] for c in t["columns"]]
            return [dict(zip(names, row)) for row in t["rows"]]
    return []


def cell(value, width, digits):
    return f"{value:>{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def ratio(mine, theirs):
    return f"{mine / theirs:>8.2f}x" if theirs else f"{'-':>9}"


def best_by_key(runs, key):
    """{key: best tokens/s over the runs} and {key: [tokens/s of each run]}."""
    per_run = [{r[key]: r["tokens_per_s"] for r in run} for run in runs]
    keys = {k for run in per_run for k in run}
    return ({k: max(run[k] for run in per_run if k in run) for k in keys},
            {k: [run.get(k) for run in per_run] for k in keys})


def round_ratios(mine_each, theirs_each):
    parts = [f"{m / t:.2f}" if m and t else "-" for m, t in zip(mine_each, theirs_each)]
    return "  " + " ".join(parts) if len(parts) > 1 else ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ours", nargs="+", required=True)
    parser.add_argument("--cpu", nargs="+", required=True)
    parser.add_argument("--vulkan")
    args = parser.parse_args()
    if len(args.ours) != len(args.cpu):
        parser.error("--ours and --cpu take one file per round each")
    ours = [json.load(open(f)) for f in args.ours]
    cpu = [json.load(open(f)) for f in args.cpu]
    vk = json.load(open(args.vulkan)) if args.vulkan else {"prompt": [], "decode": []}
    device = {r["property"]: r["value"] for r in table(ours[0], "bench-device")}
    print(f"Device: {device.get('name')}  (read bandwidth {device.get('measured read bandwidth (GB/s)', 0):.1f} GB/s:"
          f" {device.get('read bandwidth measured as', 'best pass')})")
    pool = os.environ.get("LP_NUM_THREADS")
    print(f"Threads: llama.cpp CPU {cpu[0].get('threads', '?')}; InferScope: lavapipe's thread pool "
          + (f"LP_NUM_THREADS={pool}" if pool is not None else "as the driver sets it (one per core)"))
    rounds = len(ours)
    if rounds > 1:
        print(f"Rounds: {rounds}, ours and llama.cpp's CPU backend alternating; each side its best "
              f"per test; 'per round' is ours / CPU within each round")
    print()
    print(f"{'test':<12}{'InferScope':>12}{'llama.cpp CPU':>15}{'llama.cpp VK':>14}{'vs CPU':>9}{'vs VK':>9}"
          + ("  per round" if rounds > 1 else ""))
    ours_pp, ours_pp_each = best_by_key(
        [[{"tokens": r["P"], "tokens_per_s": r["tokens/s"]} for r in table(o, "bench-prompt")]
         for o in ours], "tokens")
    cpu_pp, cpu_pp_each = best_by_key([c["prompt"] for c in cpu], "tokens")
    vk_pp = {r["tokens"]: r["tokens_per_s"] for r in vk["prompt"]}
    for p in sorted(ours_pp):
        mine, c, v = ours_pp[p], cpu_pp.get(p), vk_pp.get(p)
        print(f"{'pp' + str(p):<12}{mine:>12.1f}{cell(c, 15, 1)}{cell(v, 14, 1)}{ratio(mine, c)}"
              f"{ratio(mine, v)}{round_ratios(ours_pp_each[p], cpu_pp_each.get(p, []))}")
    ours_tg, ours_tg_each = best_by_key(
        [[{"context": r["C"], "tokens_per_s": r["tokens/s"]} for r in table(o, "bench-decode")
          if r["batch"] == 1] for o in ours], "context")
    cpu_tg, cpu_tg_each = best_by_key([c["decode"] for c in cpu], "context")
    vk_tg = {r["context"]: r["tokens_per_s"] for r in vk["decode"]}
    for c_ in sorted(ours_tg):
        mine, c, v = ours_tg[c_], cpu_tg.get(c_), vk_tg.get(c_)
        print(f"{'tg@' + str(c_):<12}{mine:>12.2f}{cell(c, 15, 2)}{cell(v, 14, 2)}{ratio(mine, c)}"
              f"{ratio(mine, v)}{round_ratios(ours_tg_each[c_], cpu_tg_each.get(c_, []))}")
    print()
    print("Targets on lavapipe: >= 10x llama.cpp's Vulkan backend and >= 0.5x its CPU backend;")
    print("on a GPU: >= 1x llama.cpp's Vulkan backend on the same device.")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Prints InferScope's bench figures next to llama.cpp's with ratios (ours / theirs).
Arguments: ours.json (inferscope-cli bench --json), llama.cpp CPU json, and llama.cpp Vulkan
json (optional: without it the Vulkan columns read "-")."""
import json
import os
import sys


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


def main():
    ours = json.load(open(sys.argv[1]))
    cpu = json.load(open(sys.argv[2]))
    vk = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else {"prompt": [], "decode": []}
    device = {r["property"]: r["value"] for r in table(ours, "bench-device")}
    print(f"Device: {device.get('name')}  (read bandwidth {device.get('measured read bandwidth (GB/s)', 0):.1f} GB/s:"
          f" {device.get('read bandwidth measured as', 'best pass')})")
    pool = os.environ.get("LP_NUM_THREADS")
    print(f"Threads: llama.cpp CPU {cpu.get('threads', '?')}; InferScope: lavapipe's thread pool "
          + (f"LP_NUM_THREADS={pool}" if pool is not None else "as the driver sets it (one per core)"))
    print()
    print(f"{'test':<12}{'InferScope':>12}{'llama.cpp CPU':>15}{'llama.cpp VK':>14}{'vs CPU':>9}{'vs VK':>9}")
    cpu_pp = {r["tokens"]: r["tokens_per_s"] for r in cpu["prompt"]}
    vk_pp = {r["tokens"]: r["tokens_per_s"] for r in vk["prompt"]}
    for r in table(ours, "bench-prompt"):
        p = r["P"]
        mine = r["tokens/s"]
        c, v = cpu_pp.get(p), vk_pp.get(p)
        print(f"{'pp' + str(p):<12}{mine:>12.1f}{c:>15.1f}{cell(v, 14, 1)}{mine / c:>8.2f}x"
              f"{ratio(mine, v)}")
    cpu_tg = {r["context"]: r["tokens_per_s"] for r in cpu["decode"]}
    vk_tg = {r["context"]: r["tokens_per_s"] for r in vk["decode"]}
    for r in table(ours, "bench-decode"):
        if r["batch"] != 1:
            continue
        c_ = r["C"]
        mine = r["tokens/s"]
        c, v = cpu_tg.get(c_), vk_tg.get(c_)
        print(f"{'tg@' + str(c_):<12}{mine:>12.2f}{c:>15.2f}{cell(v, 14, 2)}{mine / c:>8.2f}x"
              f"{ratio(mine, v)}")
    print()
    print("Targets on lavapipe: >= 10x llama.cpp's Vulkan backend and >= 0.5x its CPU backend;")
    print("on a GPU: >= 1x llama.cpp's Vulkan backend on the same device.")


if __name__ == "__main__":
    main()

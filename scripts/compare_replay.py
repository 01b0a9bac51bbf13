#!/usr/bin/env python3
"""Prints two `inferscope-cli replay --json` results side by side with ratios (ours / theirs).
    compare_replay.py --ours OURS.json [...] --llamacpp LLAMACPP.json [...] [--slots N] [--threads N]
OURS: the replay against `inferscope-cli serve`; LLAMACPP: the same mix against llama.cpp's
server (scripts/replay-vs-llamacpp runs both). With several rounds (files paired in order), the
tables show each side's round with the most output tokens/s, and every round's ratios follow. A ratio above 1 means ours is larger: better for
throughput, worse for a latency."""
import argparse
import json
import sys


def summary(doc):
    for t in doc["tables"]:
        if t["id"] == "replay-summary":
            names = [c["name"] for c in t["columns"]]
            return {row[0]: dict(zip(names, row)) for row in t["rows"]}, t["title"]
    sys.exit("compare_replay.py: a replay result without its summary table")


def number(value):
    return value if isinstance(value, (int, float)) else None


def cell(value, width=12, digits=1):
    return f"{value:>{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ours", required=True, nargs="+")
    parser.add_argument("--llamacpp", required=True, nargs="+")
    parser.add_argument("--slots", type=int)
    parser.add_argument("--threads", type=int)
    args = parser.parse_args()
    if len(args.ours) != len(args.llamacpp):
        sys.exit("compare_replay.py: as many --ours files as --llamacpp files, one pair a round")
    rounds = [(json.load(open(a)), json.load(open(b))) for a, b in zip(args.ours, args.llamacpp)]
    best = lambda docs: max(docs, key=lambda d: number(d.get("output_throughput")) or 0.0)
    docs = [best([r[0] for r in rounds]), best([r[1] for r in rounds])]
    (ours, ours_title), (theirs, theirs_title) = (summary(d) for d in docs)

    print("Replay, InferScope's server vs llama.cpp's server (same mix, same client)" +
          (f", each side's best of {len(rounds)} rounds by output tokens/s" if len(rounds) > 1 else ""))
    print(f"  ours:      {ours_title}")
    print(f"  llama.cpp: {theirs_title}")
    print()
    print(f"{'metric':<8}{'statistic':<10}{'ours (ms)':>12}{'llama.cpp (ms)':>16}{'ours/theirs':>13}")
    print("-" * 59)
    for metric in ("TTFT", "TPOT", "ITL", "E2EL"):
        for stat in ("mean", "median", "p99"):
            mine = number(ours.get(metric, {}).get(stat))
            other = number(theirs.get(metric, {}).get(stat))
            ratio = f"{mine / other:>12.2f}x" if mine is not None and other else f"{'-':>13}"
            print(f"{metric:<8}{stat:<10}{cell(mine)}{cell(other, 16)}{ratio}")
    print()
    print(f"{'':<22}{'ours':>12}{'llama.cpp':>16}{'ours/theirs':>13}")
    print("-" * 63)
    rows = [("requests completed", "requests_completed", 0),
            ("requests failed", "requests_failed", 0),
            ("output tokens", "output_tokens", 0),
            ("duration (s)", "duration_s", 2),
            ("requests/s", "request_throughput", 3),
            ("output tokens/s", "output_throughput", 2)]
    for label, key, digits in rows:
        mine, other = number(docs[0].get(key)), number(docs[1].get(key))
        ratio = f"{mine / other:>12.2f}x" if mine is not None and other else f"{'-':>13}"
        print(f"{label:<22}{cell(mine, 12, digits)}{cell(other, 16, digits)}{ratio}")
    print()

    def ratios(mine_doc, other_doc):
        mine, other = summary(mine_doc)[0], summary(other_doc)[0]

        def of(metric, stat):
            a, b = number(mine.get(metric, {}).get(stat)), number(other.get(metric, {}).get(stat))
            return f"{a / b:.2f}x" if a is not None and b else "-"

        a, b = number(mine_doc.get("output_throughput")), number(other_doc.get("output_throughput"))
        tps = f"{a / b:.2f}x" if a is not None and b else "-"
        return (f"output tokens/s {tps} (higher is ours faster); TTFT median {of('TTFT', 'median')}, "
                f"TTFT p99 {of('TTFT', 'p99')}, TPOT median {of('TPOT', 'median')}, "
                f"E2EL median {of('E2EL', 'median')} (lower is ours faster)")

    print("Ratios ours / llama.cpp: " + ratios(*docs))
    if len(rounds) > 1:
        for i, (mine_doc, other_doc) in enumerate(rounds, 1):
            print(f"  round {i}: {number(mine_doc.get('output_throughput')) or 0:.2f} vs "
                  f"{number(other_doc.get('output_throughput')) or 0:.2f} tokens/s; " + ratios(mine_doc, other_doc))
    slots = f"{args.slots} slots, continuous batching" if args.slots else "continuous batching"
    threads = f" on {args.threads} threads" if args.threads else ""
    print(f"Ours: {slots} on lavapipe. llama.cpp: llama-cpp-python's server, CPU backend{threads}, "
          "one request at a time (the others queue: its TTFT includes that wait); its end-of-"
          "generation tokens masked so each request makes exactly the tokens asked, as ours does.")
    if any(number(d.get("requests_failed")) for pair in rounds for d in pair):
        print("Some requests failed: see the replay's error column (inferscope-cli replay URL).")


if __name__ == "__main__":
    main()

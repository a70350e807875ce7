#!/usr/bin/env python3
"""Ratios over several runs of the contention matrix: for each cell, `OURS` ÷ each peer in
every run's contention.csv, printed as the median with the range (least–greatest).

    python3 benches/scripts/runs.py OURS DIR1 DIR2 DIR3 [--cells 'permits==1']

A ratio above 1 means OURS did more operations per second. The median of the runs' ratios
is the statistic; the range is the run-to-run spread it is read against. A cell with more
permits than the machine's hardware threads (`--cores`, default this machine's) is marked
`scheduler only`: nobody waits for a permit there, only for a core, so no comparison counts it.
"""
import os
import argparse
import csv
import statistics
from collections import defaultdict
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("ours")
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--cells", default="True",
                    help="a Python condition on threads, permits, hold_ns, between_ns")
    ap.add_argument("--peers", default="", help="comma-separated peers (default: all)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 0,
                    help="hardware threads of the machine the runs were made on")
    args = ap.parse_args()
    # (cell, peer) -> [ops/s per run]
    ops = defaultdict(list)
    for d in args.dirs:
        with open(d / "contention.csv", newline="") as f:
            for r in csv.DictReader(f):
                cell = tuple(int(r[k]) for k in ("threads", "permits", "hold_ns", "between_ns"))
                ops[(cell, r["peer"])].append(float(r["ops_per_sec"]))
    cells = sorted({c for c, _ in ops})
    peers = [p for p in dict.fromkeys(p for _, p in ops) if p != args.ours]
    if args.peers:
        peers = [p for p in args.peers.split(",") if p in peers]
    print(f"| T | P | hold | between | {args.ours} ops/s (median) | "
          + " | ".join(f"÷ {p}" for p in peers) + " |")
    print("|" + "---:|" * (5 + len(peers)))
    for cell in cells:
        threads, permits, hold_ns, between_ns = cell
        if not eval(args.cells, {}, dict(threads=threads, permits=permits,
                                         hold_ns=hold_ns, between_ns=between_ns)):
            continue
        ours = ops.get((cell, args.ours))
        if not ours:
            continue
        p_cell = f"{permits} (scheduler only)" if 0 < args.cores < permits else str(permits)
        row = [str(threads), p_cell, f"{hold_ns} ns", f"{between_ns} ns",
               f"{statistics.median(ours) / 1e6:.2f} M"]
        for p in peers:
            theirs = ops.get((cell, p))
            if not theirs:
                row.append("·")
                continue
            ratios = sorted(a / b for a, b in zip(ours, theirs))
            row.append(f"{statistics.median(ratios):.2f} ({ratios[0]:.2f}–{ratios[-1]:.2f})")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

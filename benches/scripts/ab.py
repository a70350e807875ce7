#!/usr/bin/env python3
"""An A/B of two builds of parksema from alternated runs of the contention matrix: for each
cell, B ÷ A for parksema in each round, and in each build parksema ÷ every peer, printed as
the median over the rounds with the range (least–greatest). The first peer is also shown as
B ÷ A: it is the same code in both builds, so its spread is the control.

    python3 benches/scripts/ab.py --a A1 A2 A3 --b B1 B2 B3 [--cells 'permits==1']

Round i pairs A_i with B_i (run one after the other), so the pairs share the machine's state.
"""
import argparse
import csv
import statistics
from pathlib import Path


def load(d: Path) -> dict:
    with open(d / "contention.csv", newline="") as f:
        return {(int(r["threads"]), int(r["permits"]), int(r["hold_ns"]), int(r["between_ns"]),
                 r["peer"]): float(r["ops_per_sec"]) for r in csv.DictReader(f)}


def spread(xs: list) -> str:
    xs = sorted(xs)
    return f"{statistics.median(xs):.2f} ({xs[0]:.2f}–{xs[-1]:.2f})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", nargs="+", type=Path, required=True)
    ap.add_argument("--b", nargs="+", type=Path, required=True)
    ap.add_argument("--ours", default="parksema")
    ap.add_argument("--cells", default="True",
                    help="a Python condition on threads, permits, hold_ns, between_ns")
    args = ap.parse_args()
    if len(args.a) != len(args.b):
        ap.error("--a and --b need as many runs each (one pair a round)")
    a = [load(d) for d in args.a]
    b = [load(d) for d in args.b]
    cells = sorted({k[:4] for k in a[0]})
    peers = [p for p in dict.fromkeys(k[4] for k in a[0]) if p != args.ours]
    print(f"| T | P | hold | between | B ÷ A | "
          + " | ".join(f"A ÷ {p} / B ÷ {p}" for p in peers)
          + (f" | control: {peers[0]} B ÷ A |" if peers else " |"))
    print("|" + "---:|" * (5 + len(peers) + bool(peers)))
    for c in cells:
        threads, permits, hold_ns, between_ns = c
        if not eval(args.cells, {}, dict(threads=threads, permits=permits,
                                         hold_ns=hold_ns, between_ns=between_ns)):
            continue
        us = c + (args.ours,)
        row = [str(threads), str(permits), f"{hold_ns} ns", f"{between_ns} ns",
               spread([bi[us] / ai[us] for ai, bi in zip(a, b)])]
        for p in peers:
            them = c + (p,)
            row.append(spread([ai[us] / ai[them] for ai in a]) + " / "
                       + spread([bi[us] / bi[them] for bi in b]))
        if peers:
            ctrl = c + (peers[0],)
            row.append(spread([bi[ctrl] / ai[ctrl] for ai, bi in zip(a, b)]))
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

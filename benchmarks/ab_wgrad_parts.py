"""A/B of the oneDNN weight-gradient path's cutting constants, our side only, the two variants
interleaved in one process so that the machine's drift between runs cancels.

    python benchmarks/ab_wgrad_parts.py "old:WGRAD_SLABS=32" "new:" --filter "^wgrad" --rounds 4

A variant is ``name:CONSTANT=value,...`` naming constants of
``hipdnn.engines.reference._onednn`` (``WGRAD_SLABS``, ``WGRAD_PARTS``, ``WGRAD_PART_MACS``,
``WGRAD_MIN_PARTS``, ``WGRAD_SMALL_PART_MACS``, ``PACK_PIXELS``); an empty list is the code as
it is. For each case of ``bench_reference.py``'s suite that ``--filter`` matches (and
``--exclude`` does not), each round runs variant A then B, two warm-up calls and three timed,
and the best of all rounds is kept per variant; prints each case's times and B/A, then the
geometric mean of B/A. Each variant's parts and plans are kept apart (the constants join
their cache keys), so the two never share a prepared part.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_reference

from hipdnn.engines.reference import _onednn

Variant = tuple[str, dict[str, int]]


def parse_variant(text: str) -> Variant:
    name, _, body = text.partition(":")
    values: dict[str, int] = {}
    for item in filter(None, body.split(",")):
        key, _, value = item.partition("=")
        if not hasattr(_onednn, key) or not isinstance(getattr(_onednn, key), int):
            raise SystemExit(f"unknown constant {key!r} in variant {text!r}")
        values[key] = int(value, 0)
    return name or "?", values


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--filter", default="^wgrad")
    ap.add_argument("--exclude", default="")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="the suite's small cases (a smoke run)")
    args = ap.parse_args(argv)
    variants = [parse_variant(args.a), parse_variant(args.b)]
    if _onednn.library() is None:
        print("oneDNN is not available: nothing to compare")
        return 1
    names = sorted({k for _, v in variants for k in v})
    defaults = {k: getattr(_onednn, k) for k in names}

    def apply(values: dict[str, int]) -> None:
        for k in names:
            setattr(_onednn, k, values.get(k, defaults[k]))

    def current() -> tuple[int, ...]:
        return tuple(getattr(_onednn, k) for k in names)

    problem, cached = _onednn._problem, _onednn._cached
    _onednn._problem = lambda *a: (*problem(*a), current())  # type: ignore[assignment]
    _onednn._cached = lambda one, key, *a: cached(  # type: ignore[assignment]
        one, (*key, current()), *a)
    import torch  # the suite builds its cases' data and PyTorch sides with it
    keep = re.compile(args.filter)
    drop = re.compile(args.exclude) if args.exclude else None
    logs: list[float] = []
    try:
        for case in bench_reference.suite(torch, quick=args.quick):
            if not keep.search(case.name) or (drop and drop.search(case.name)):
                continue
            ours, _ = case.setup()
            best = [math.inf, math.inf]
            for _ in range(args.rounds):
                for i, (_, values) in enumerate(variants):
                    apply(values)
                    ours()
                    ours()
                    for _ in range(3):
                        start = time.perf_counter()
                        ours()
                        best[i] = min(best[i], time.perf_counter() - start)
            apply({})
            logs.append(math.log(best[1] / best[0]))
            print(f"{case.name:50s} {variants[0][0]} {best[0] * 1e3:8.2f} ms  "
                  f"{variants[1][0]} {best[1] * 1e3:8.2f} ms  B/A {best[1] / best[0]:5.3f}",
                  flush=True)
    finally:
        apply({})
        _onednn._problem, _onednn._cached = problem, cached  # type: ignore[assignment]
    if not logs:
        print("no case matched")
        return 1
    print(f"geometric mean {variants[1][0]}/{variants[0][0]} over {len(logs)} cases: "
          f"{math.exp(sum(logs) / len(logs)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The sum of a weight gradient's partial gradients on the reference engine: numba's loop
(``_onednn_jit.add_partials``: blocks of the gradient on every thread) against numpy's adds on
the reference pool (element ranges), each checked to give the same bits as adding the partials
one after another in numpy.

Shapes are those of ResNet-50 weight gradients at batch 8 run as row slabs (a partial per part
after the first): 31 partials of 512x256 (1x1, 28x28), 23 of 512x128, 31 of 64x64x3x3, 15 of
64x64 (1x1, 56x56). Times are the best of ``--repeats`` calls, both sides in one run.

    python benchmarks/bench_wgrad_sums.py               # the engine's thread count
    HIPDNN_REFERENCE_THREADS=16 python benchmarks/bench_wgrad_sums.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hipdnn.engines.reference import _onednn
from hipdnn.engines.reference._parallel import workers

#: (partials, elements of the gradient)
SHAPES = ((31, 512 * 256), (23, 512 * 128), (31, 64 * 64 * 9), (15, 64 * 64))


def _best(dw: np.ndarray, spare: np.ndarray, order: list[int], repeats: int) -> float:
    _onednn._accumulate(dw, spare, order)  # compiles / warms up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        _onednn._accumulate(dw, spare, order)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=30, help="timed calls per side")
    ap.add_argument("--quick", action="store_true", help="the smallest shape only")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    from hipdnn.engines.reference import _onednn_jit

    saved = os.environ.get("HIPDNN_REFERENCE_JIT")  # each side sets it; restored at the end
    same_everywhere = True
    try:
        os.environ["HIPDNN_REFERENCE_JIT"] = "1"
        probe = _onednn_jit.add_partials(np.zeros(1, np.float32), np.zeros((1, 1), np.float32),
                                         [0], 1)
        print(f"threads: {workers()}; numba's loop: "
              f"{'compiled' if probe else 'unavailable (both columns are numpy)'}")
        print(f"{'partials x elements':>22} {'numba ms':>9} {'numpy ms':>9} {'ratio':>6}  "
              "same bits")
        for parts, size in SHAPES[-1:] if args.quick else SHAPES:
            spare = rng.standard_normal((parts + 1, size)).astype(np.float32)
            order = list(range(1, parts + 1))
            want = spare[0].copy()
            for r in order:
                want += spare[r]
            times, same = {}, True
            for mode in ("1", "0"):
                os.environ["HIPDNN_REFERENCE_JIT"] = mode
                dw = spare[0].copy()
                _onednn._accumulate(dw, spare, order)
                same = same and dw.tobytes() == want.tobytes()
                times[mode] = _best(dw, spare, order, args.repeats)
            same_everywhere = same_everywhere and same
            print(f"{f'{parts} x {size}':>22} {times['1'] * 1e3:9.3f} {times['0'] * 1e3:9.3f} "
                  f"{times['1'] / times['0']:6.2f}  {'yes' if same else 'NO'}")
    finally:
        if saved is None:
            os.environ.pop("HIPDNN_REFERENCE_JIT", None)
        else:
            os.environ["HIPDNN_REFERENCE_JIT"] = saved
    return 0 if same_everywhere else 1


if __name__ == "__main__":
    sys.exit(main())

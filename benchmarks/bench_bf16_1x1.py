"""What bounds the BF16 1x1 forward convolution on oneDNN 3.2 (issue 34's one case over target).

The layer is ResNet-50's 64->256 1x1 expansion, NHWC, BF16 data summed in FP32 and rounded to
BF16. The same product is timed four ways, each made for the thread count it runs on: oneDNN's
convolution (what the reference engine runs), oneDNN's matrix product, oneDNN's inner product
(weights in the layout it picks, reordered each call, as the convolution's are), and PyTorch's
convolution (its own, newer oneDNN). Each oneDNN result is checked against the FP32 product of
the same data before it is timed; a table of the best of ``--repeats`` calls per way follows.

    python benchmarks/bench_bf16_1x1.py                 # 1 and 2 threads, batch 8
    python benchmarks/bench_bf16_1x1.py --threads 16 --batch 8

Needs oneDNN (``pip install 'hipdnn-ctypes[cpu]'``), ml_dtypes and torch (the baseline).
"""

from __future__ import annotations

import argparse
import ctypes
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hipdnn.engines.reference import _onednn as od

_FORWARD_INFERENCE = 96  # dnnl_forward_inference
CHANNELS_IN, CHANNELS_OUT, SIDE = 64, 256, 56


def _product_plan(one: od.OneDNN, kind: str, pixels: int, c: int, k: int, threads: int
                  ) -> od._Plan:
    """oneDNN's matrix product or inner product of (pixels, C) by the (K, C) weights into
    (pixels, K), BF16, as a plan of the engine's (:func:`od._run` binds and runs it): the
    weights reordered from (K, C) into the layout the primitive picks on each call, as the
    convolution's are; made for ``threads`` (oneDNN fixes the work split at creation)."""
    bf16 = od._DNNL_BF16
    lib = one.lib
    one.set_threads(threads)
    src = one.md_strided([pixels, c], [c, 1], bf16)
    dst = one.md_strided([pixels, k], [k, 1], bf16)
    pd = od._vp()
    attr = one.attr()
    try:
        if kind == "matmul":  # weights as (C, K)
            wei, plain = one.md_any([c, k], bf16), one.md_strided([c, k], [1, c], bf16)
            status = lib.dnnl_matmul_primitive_desc_create(
                ctypes.byref(pd), one.engine, src.handle, wei.handle, None, dst.handle, attr)
        else:  # inner product: weights as (K, C)
            wei, plain = one.md_any([k, c], bf16), one.md_strided([k, c], [c, 1], bf16)
            status = lib.dnnl_inner_product_forward_primitive_desc_create(
                ctypes.byref(pd), one.engine, _FORWARD_INFERENCE, src.handle, wei.handle,
                None, dst.handle, attr)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)
    one._check(status, f"the {kind} primitive descriptor")
    try:
        inner = one.queried(pd, od._QUERY_WEIGHTS_MD)
        weights = od._Side(plain, inner, one.reorder(plain, inner))
        try:
            prim = od._Prim(one.primitive(pd), one.queried(pd, od._QUERY_SCRATCHPAD_MD))
        except BaseException:  # the reorder is not owned by a plan yet
            lib.dnnl_primitive_destroy(weights.reorder.handle)
            raise
        return od._Plan(one, prim, one.impl(pd),
                        [(od._ARG_SRC, od._Side(src, src, None)), (od._ARG_WEIGHTS, weights)],
                        (od._ARG_DST, od._Side(dst, dst, None)))
    finally:
        lib.dnnl_primitive_desc_destroy(pd)


def _best(fn: Callable[[], Any], repeats: int) -> float:
    fn()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _check(name: str, got: np.ndarray, want: np.ndarray) -> None:
    """BF16 rounding of FP32 sums of 64 products: a few BF16 ulps of the largest output."""
    err = float(np.abs(got.astype(np.float32) - want).max())
    if err > 2.0 ** -7 * float(np.abs(want).max()):
        raise SystemExit(f"{name}: largest error {err:.3g} against the FP32 product")


def run(threads: Sequence[int], batch: int, repeats: int) -> list[tuple[int, dict[str, float]]]:
    """The table's rows: per thread count, milliseconds per way (best of ``repeats``)."""
    import ml_dtypes
    import torch

    one = od.library()
    if one is None:
        raise SystemExit("oneDNN is not installed: pip install 'hipdnn-ctypes[cpu]'")
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(0)
    nhwc = rng.standard_normal((batch, SIDE, SIDE, CHANNELS_IN), dtype=np.float32).astype(bf16)
    w = rng.standard_normal((CHANNELS_OUT, CHANNELS_IN, 1, 1), dtype=np.float32).astype(bf16)
    y = np.empty((batch, SIDE, SIDE, CHANNELS_OUT), bf16)
    pixels = batch * SIDE * SIDE
    x2, w2, y2 = nhwc.reshape(pixels, -1), w.reshape(CHANNELS_OUT, -1), y.reshape(pixels, -1)
    want = x2.astype(np.float32) @ w2.astype(np.float32).T
    xt = torch.from_numpy(nhwc.astype(np.float32)).to(torch.bfloat16).permute(0, 3, 1, 2)
    wt = torch.from_numpy(w.astype(np.float32)).to(torch.bfloat16)
    x, out = nhwc.transpose(0, 3, 1, 2), y.transpose(0, 3, 1, 2)
    rows = []
    for count in threads:
        torch.set_num_threads(count)
        plan = od._plan(one, "fprop", x, w, out, [0, 0], [0, 0], [1, 1], [1, 1], 1, count)
        if plan is None:
            raise SystemExit("oneDNN declined the convolution")
        ways: dict[str, Callable[[], Any]] = {
            "convolution": lambda plan=plan, count=count: od._run(one, plan, [x, w], out, count)}
        for kind in ("matmul", "inner product"):
            product = _product_plan(one, kind, pixels, CHANNELS_IN, CHANNELS_OUT, count)
            ways[kind] = (lambda product=product, count=count:
                          od._run(one, product, [x2, w2], y2, count))
        times: dict[str, float] = {}
        for name, fn in ways.items():
            y2.fill(0)
            fn()
            _check(name, y2, want)
            times[name] = _best(fn, repeats)
        times["PyTorch"] = _best(lambda: torch.nn.functional.conv2d(xt, wt), repeats)
        rows.append((count, times))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=40, help="timed calls per way (best of)")
    args = ap.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    if min(threads) < 1 or args.batch < 1 or args.repeats < 1:
        ap.error("--threads, --batch and --repeats must be at least 1")
    rows = run(threads, args.batch, args.repeats)
    one = od.library()
    assert one is not None
    print(f"BF16 {CHANNELS_IN}->{CHANNELS_OUT} 1x1 fprop, NHWC {args.batch}x{SIDE}x{SIDE}; "
          f"oneDNN {'.'.join(map(str, one.version))}, ms (best of {args.repeats})")
    names = list(rows[0][1])
    print(f"{'threads':>7} " + " ".join(f"{n:>13}" for n in names) + "  convolution/PyTorch")
    for count, times in rows:
        print(f"{count:>7} " + " ".join(f"{times[n]:>13.3f}" for n in names)
              + f"  {times['convolution'] / times['PyTorch']:>19.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

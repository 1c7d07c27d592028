"""Shared helpers for the oracle tests: dtypes, layouts as strided views, DESIGN.md tolerances."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

__all__ = [
    "DTYPES",
    "LAYOUTS_1D",
    "LAYOUTS_2D",
    "LAYOUTS_3D",
    "TOL",
    "assert_close",
    "in_layout",
    "rounded",
]

#: numpy dtype per test dtype name.
DTYPES: dict[str, Any] = {
    "fp32": np.dtype(np.float32),
    "fp16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
}

LAYOUTS_1D = ("NCL", "NLC")
LAYOUTS_2D = ("NCHW", "NHWC")
LAYOUTS_3D = ("NCDHW", "NDHWC")

#: DESIGN.md "Numerics" tolerances: op -> dtype -> (atol, rtol).
TOL: dict[str, dict[str, tuple[float, float]]] = {
    "bn_inference": {"fp32": (2e-4, 2e-4), "fp16": (8e-4, 8e-4), "bf16": (7e-3, 7e-3)},
    "bn_training": {"fp32": (4e-3, 4e-3), "fp16": (4e-3, 4e-3), "bf16": (8e-3, 8e-3)},
    "bn_backward": {"fp32": (2e-3, 2e-3), "fp16": (4e-4, 4e-4), "bf16": (3e-3, 3e-3)},
    "conv_fprop": {"fp32": (1e-5, 1e-5), "fp16": (1e-1, 1e-2), "bf16": (1e-1, 2e-2)},
    "conv_dgrad": {"fp32": (8.5e-6, 8.5e-6), "fp16": (2e-2, 2e-2), "bf16": (2e-2, 2e-2)},
    "conv_wgrad": {"fp32": (2e-4, 2e-4), "fp16": (2e-1, 2e-1), "bf16": (2e-1, 2e-1)},
    "pointwise": {"fp32": (1e-5, 1e-5), "fp16": (1e-3, 1e-3), "bf16": (1e-2, 1e-2)},
}


def rounded(a: np.ndarray, dtype: str) -> np.ndarray:
    """``a`` rounded to ``dtype`` (a DTYPES key), returned as float32 values."""
    return np.asarray(a, dtype=np.float32).astype(DTYPES[dtype]).astype(np.float32)


def in_layout(a: np.ndarray, layout: str, dtype: str, pad: int = 0) -> np.ndarray:
    """A logical-order view of ``a`` stored in ``layout`` (NCL/NLC/NCHW/NHWC/NCDHW/NDHWC) as
    ``dtype``.

    With ``pad`` > 0 the innermost stored axis gets ``pad`` extra elements, so the view is not
    packed (strides must be read, not assumed).
    """
    channels_last = layout in ("NLC", "NHWC", "NDHWC")
    nd = a.ndim
    order = (0, *range(2, nd), 1) if channels_last else tuple(range(nd))
    stored_shape = [a.shape[i] for i in order]
    stored_shape[-1] += pad
    buf = np.zeros(stored_shape, dtype=DTYPES[dtype])
    inner = [slice(None)] * nd
    inner[-1] = slice(0, a.shape[order[-1]])
    buf[tuple(inner)] = np.transpose(a, order).astype(DTYPES[dtype])
    view = buf[tuple(inner)]
    return np.transpose(view, np.argsort(order))


def _ulp(ref: np.ndarray, dtype: str) -> np.ndarray:
    """Spacing of ``dtype`` at |ref| (float32 values)."""
    d = DTYPES[dtype]
    r = np.abs(ref).astype(d)
    return np.abs(np.nextafter(r, np.asarray(np.inf, dtype=d)).astype(np.float32) - r.astype(np.float32))


def assert_close(
    ours: np.ndarray,
    ref: np.ndarray,
    op: str,
    dtype: str,
    *,
    round_to: str | None = None,
    what: str = "",
) -> None:
    """Assert |ours - ref| <= atol + rtol*|ref| with TOL[op][dtype] (NaN must match NaN).

    With ``round_to`` both sides are first rounded to that dtype; then one unit in the last place
    of that dtype is also allowed, because two fp32 values within tolerance can round to
    neighbouring 16-bit values (an inherent, documented loosening of exactly one rounding step).
    """
    atol, rtol = TOL[op][dtype]
    a = np.asarray(ours, dtype=np.float32)
    b = np.asarray(ref, dtype=np.float32)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != reference {b.shape}"
    slack = np.zeros_like(b)
    if round_to is not None:
        a = rounded(a, round_to)
        b = rounded(b, round_to)
        slack = _ulp(b, round_to) if round_to != "fp32" else slack
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    assert np.array_equal(nan_a, nan_b), f"{what}: NaN positions differ"
    fin = ~nan_b
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity
        err = np.abs(a[fin] - b[fin])
    bound = atol + rtol * np.abs(b[fin]) + slack[fin]
    inf_b = np.isinf(b[fin])
    ok = (err <= bound) | (inf_b & (a[fin] == b[fin]))
    if not ok.all():
        i = int(np.argmax(~ok))
        raise AssertionError(
            f"{what} [{op}/{dtype}]: {int((~ok).sum())}/{ok.size} elements out of tolerance "
            f"atol={atol} rtol={rtol}; worst example ours={a[fin][i]} ref={b[fin][i]}, "
            f"max err={float(err.max()):.3g}"
        )


def wait_for_child(pid: int, what: str, timeout: float = 60.0) -> int:
    """Wait for forked child ``pid``; kill it and fail the test (saying it hung in ``what``) if
    it has not exited within ``timeout`` seconds (a hang is the regression these tests catch).
    Returns its exit code (-1 if a signal ended it)."""
    import os
    import time

    import pytest

    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail(f"the forked child hung in {what}")
        time.sleep(0.05)

"""The reference convolutions' implementations (the tap GEMMs on numpy's OpenBLAS, numba's
tiled im2col/col2im, the numpy im2col/col2im; the ``conv_path`` fixture) against PyTorch
autograd in float64: fprop, dgrad and wgrad, 1-D, 2-D and 3-D, plain, grouped and depthwise,
channels-first and channels-last memory, FP32/FP16/BF16 data (accumulated in FP32), odd shapes
(stride larger than the kernel, a dilated window larger than the padded input, 1x1 spatial,
C = 1, groups = C), tiles forced small, the same bits for any thread count and scratch
bounded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from oracle_helpers import DTYPES, TOL, rounded

from hipdnn.engines.reference import _conv, _conv_taps, _scratch
from hipdnn.engines.reference import kernels as K

torch = pytest.importorskip("torch")
F = torch.nn.functional
ROOT = Path(__file__).resolve().parents[2]

#: name -> (N, C, K, spatial, kernel, pre, post, stride, dilation, groups)
CASES: dict[str, tuple[Any, ...]] = {
    "2d-grouped-asym": (2, 4, 6, (9, 7), (3, 3), (1, 0), (2, 1), (2, 1), (1, 2), 2),
    "3d-grouped": (2, 4, 4, (5, 6, 5), (3, 2, 2), (1, 0, 1), (0, 1, 1), (2, 1, 1), (1, 2, 1), 2),
    "3d-plain-s2": (1, 3, 5, (6, 7, 6), (3, 3, 3), (1, 1, 1), (1, 1, 1), (2, 2, 2), (1, 1, 1), 1),
    "1d": (2, 6, 6, (7,), (3,), (1,), (1,), (2,), (1,), 3),
    "depthwise": (2, 8, 8, (6, 6), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 8),
    "depthwise-x2": (2, 8, 16, (6, 5), (3, 3), (1, 1), (1, 1), (2, 1), (1, 1), 8),
    "stride>kernel-C1": (1, 1, 3, (5, 5), (2, 2), (0, 0), (0, 0), (3, 3), (1, 1), 1),
    "dilated-window>input": (2, 3, 4, (3, 3), (3, 3), (2, 2), (2, 2), (1, 1), (3, 3), 1),
    "1x1-spatial-1x1": (2, 5, 4, (1, 1), (1, 1), (0, 0), (0, 0), (1, 1), (1, 1), 1),
    "1x1-spatial-3x3": (2, 5, 4, (1, 1), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1),
    "1x1-stride2": (3, 16, 8, (8, 7), (1, 1), (0, 0), (0, 0), (2, 2), (1, 1), 1),
    "pad>kernel": (2, 4, 4, (6, 6), (3, 3), (3, 0), (0, 2), (1, 1), (1, 1), 1),
    "3d-depthwise-cl": (1, 6, 6, (4, 5, 6), (3, 3, 1), (1, 1, 0), (1, 1, 0), (1, 2, 1),
                        (1, 1, 1), 6),
}


def _channels_last(a: np.ndarray) -> np.ndarray:
    order = (0, *range(2, a.ndim), 1)
    return np.ascontiguousarray(a.transpose(order)).transpose(np.argsort(order))


def _problem(case: str, dtype: str, seed: int = 0) -> dict[str, Any]:
    n, c, k, sp, ks, pre, post, st, dl, g = CASES[case]
    rng = np.random.default_rng(seed)
    x = rounded(rng.uniform(-1, 1, (n, c, *sp)), dtype)
    w = rounded(rng.uniform(-1, 1, (k, c // g, *ks)), dtype)
    pads = [p for i in reversed(range(len(sp))) for p in (pre[i], post[i])]
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(sp)]
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    wt = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    y = conv(F.pad(xt, pads), wt, stride=st, dilation=dl, groups=g)
    dy = rounded(rng.uniform(-1, 1, tuple(y.shape)), dtype)
    y.backward(torch.tensor(dy, dtype=torch.float64))
    return {"x": x, "w": w, "dy": dy, "y": y.detach().numpy(), "dx": xt.grad.numpy(),
            "dw": wt.grad.numpy(), "args": (pre, post, st, dl, g)}


def _run(d: dict[str, Any], direction: str, layout: str, dtype: str) -> np.ndarray:
    def stored(a: np.ndarray) -> np.ndarray:
        a = a.astype(DTYPES[dtype])
        return _channels_last(a) if layout == "cl" else a

    x, w, dy = stored(d["x"]), stored(d["w"]), stored(d["dy"])
    if direction == "fprop":
        return K.conv_fprop(x, w, *d["args"])
    if direction == "dgrad":
        return K.conv_dgrad(dy, w, d["x"].shape, *d["args"])
    return K.conv_wgrad(x, dy, d["w"].shape, *d["args"])


WANT = {"fprop": "y", "dgrad": "dx", "wgrad": "dw"}


@pytest.mark.parametrize("direction", ["fprop", "dgrad", "wgrad"])
@pytest.mark.parametrize("layout", ["cf", "cl"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_conv_matches_torch(conv_path: str, case: str, layout: str, direction: str) -> None:
    d = _problem(case, "fp32")
    got = _run(d, direction, layout, "fp32")
    want = d[WANT[direction]]
    assert got.dtype == np.float32 and got.shape == want.shape
    atol, rtol = TOL[f"conv_{direction}"]["fp32"]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("direction", ["fprop", "dgrad", "wgrad"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("case", ["2d-grouped-asym", "3d-grouped", "depthwise"])
def test_low_precision_accumulates_in_fp32(conv_path: str, case: str, dtype: str,
                                           direction: str) -> None:
    """FP16/BF16 data (exactly representable in FP32): the sums are FP32's, as close to the
    float64 truth as the FP32 tolerance, not the data type's."""
    d = _problem(case, dtype)
    got = _run(d, direction, "cl", dtype)
    want = d[WANT[direction]]
    atol, rtol = TOL[f"conv_{direction}"]["fp32"]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("direction", ["fprop", "dgrad", "wgrad"])
@pytest.mark.parametrize("layout", ["cf", "cl"])
def test_small_tiles_and_bounded_scratch(conv_path: str, monkeypatch: pytest.MonkeyPatch,
                                         layout: str, direction: str) -> None:
    """Tiles forced to a few rows (many tiles, a partial last one): the same answer, and no
    scratch request larger than a tile (or one image's columns, for a strided dgrad)."""
    sizes: list[int] = []
    take = _scratch.take

    def spy(count: int, size: int, dtype: Any = np.float32) -> list[np.ndarray]:
        sizes.append(size * np.dtype(dtype).itemsize)
        return take(count, size, dtype)

    monkeypatch.setattr(_scratch, "take", spy)
    monkeypatch.setattr(_conv, "TILE_BYTES", 2000)
    for name, value in (("TILE_ROWS", 5), ("MIN_TILE_ROWS", 1), ("COLUMN_BLOCK", 3),
                        ("WGRAD_ROWS", 7)):
        monkeypatch.setattr(_conv_taps, name, value)
    for case in ("2d-grouped-asym", "3d-plain-s2", "depthwise-x2"):
        d = _problem(case, "fp32")
        got = _run(d, direction, layout, "fp32")
        atol, rtol = TOL[f"conv_{direction}"]["fp32"]
        want = d[WANT[direction]]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * max(1.0, np.abs(want).max()))
        c, k, sp, ks = CASES[case][1:5]
        if conv_path == "jit":
            row = int(np.prod(ks)) * max(c, k) * 4  # one output pixel's columns
            image = row * int(np.prod(sp))
            assert sizes and max(sizes) <= max(2000 + row, image), (case, sizes)
        if conv_path == "taps":  # the input's phases or dY on the grid: its size and padding
            n, grid = CASES[case][0], [v + kd + 1 for v, kd in zip(sp, ks, strict=True)]
            assert sizes and max(sizes) <= n * max(c, k) * int(np.prod(grid)) * 4, (case, sizes)
        sizes.clear()


_BITS_SCRIPT = """
import hashlib, sys
import numpy as np
sys.path.insert(0, {root!r})
from hipdnn.engines.reference import _conv, _conv_taps, kernels as K
_conv.TILE_BYTES = int(sys.argv[1]) or _conv.TILE_BYTES
if int(sys.argv[1]):
    _conv_taps.TILE_ROWS, _conv_taps.MIN_TILE_ROWS, _conv_taps.WGRAD_ROWS = 40, 8, 50
_conv.TAP_PATH = sys.argv[2] != "jit"
_conv_taps.MODE = "blas" if sys.argv[2] == "taps-blas" else "parts"
_conv.TAP_MIN_CHANNELS = 1
_conv.MIN_COMPILED_CHANNELS = 1
_conv.COMPILED_RANKS = dict.fromkeys(('fprop', 'dgrad', 'wgrad'), (1, 2, 3))
rng = np.random.default_rng(1)
h = hashlib.sha256()
for cl in (False, True):
    for nsp in (2, 3):
        sp = (6, 17, 15)[3 - nsp:]
        x = rng.standard_normal((3, 24, *sp)).astype(np.float32)
        w = rng.standard_normal((32, 12, *([3] * nsp))).astype(np.float32)
        if cl:
            x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)
        for st in (1, 2):
            a = ([1] * nsp, [1] * nsp, [st] * nsp, [1] * nsp, 2)
            y = K.conv_fprop(x, w, *a)
            dy = rng.standard_normal(y.shape).astype(np.float32)
            for r in (y, K.conv_dgrad(dy, w, x.shape, *a), K.conv_wgrad(x, dy, w.shape, *a)):
                h.update(np.ascontiguousarray(r).tobytes())
print(h.hexdigest())
"""


@pytest.mark.parametrize("conv_path", ["jit", "taps"], indirect=True)  # these paths' promise
@pytest.mark.parametrize("tile", [0, 1 << 16])
def test_same_bits_for_any_thread_count(conv_path: str, tile: int) -> None:
    """fprop/dgrad/wgrad of the compiled path and of the tap GEMMs (2-D and 3-D, strides 1 and
    2, both memory orders, default tiles and many small ones) give the same bits with 1, 2 and 5
    threads of BLAS, of the pool and of numba, and the tap GEMMs' "blas" mode (large tiles,
    GEMMs on BLAS's own threads) the same bits as their pool parts. (The numpy path's weight gradient does not: one
    BLAS GEMM sums every row, and OpenBLAS splits that sum differently with 1 thread than with
    several.)"""
    digests = set()
    runs = [("1", conv_path), ("2", conv_path), ("5", conv_path)]
    if conv_path == "taps":  # large tiles, each GEMM on BLAS's threads: the same sums
        runs += [("1", "taps-blas"), ("3", "taps-blas")]
    for threads, path in runs:
        env = {**os.environ, "HIPDNN_REFERENCE_ONEDNN": "0", "HIPDNN_REFERENCE_THREADS": threads,
               "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads,
               "NUMBA_NUM_THREADS": threads}
        out = subprocess.run([sys.executable, "-c", _BITS_SCRIPT.format(root=str(ROOT)),
                              str(tile), path], env=env, capture_output=True, text=True, timeout=600,
                             check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1, digests

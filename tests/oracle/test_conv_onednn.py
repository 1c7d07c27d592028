"""The reference convolutions on oneDNN (hipdnn/engines/reference/_onednn.py, Intel's
onednn-cpu-gomp wheel): that it really runs the problems users run (not a silent fallback),
against PyTorch in float64 and against the tap GEMMs (our own OpenBLAS path, independent of
oneDNN); the same bits for any thread count; primitives run from several threads at once;
the switch; what it declines. The ``conv_path`` tests in test_conv_paths.py run every odd
shape through it too."""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from oracle_helpers import TOL, wait_for_child

from hipdnn.engines.reference import _onednn
from hipdnn.engines.reference import kernels as K

torch = pytest.importorskip("torch")
F = torch.nn.functional
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def one(require_or_skip: Any, monkeypatch: pytest.MonkeyPatch) -> _onednn.OneDNN:
    monkeypatch.delenv(_onednn.ENV, raising=False)
    lib = _onednn.library()
    if lib is None:
        require_or_skip("HIPDNN_REQUIRE_ONEDNN", "oneDNN is not installed: pip install "
                        "'hipdnn-ctypes[cpu]' (Intel's onednn-cpu-gomp wheel, Linux x86-64)")
    assert lib is not None
    return lib


def _cl(a: np.ndarray) -> np.ndarray:
    order = (0, *range(2, a.ndim), 1)
    return np.ascontiguousarray(a.transpose(order)).transpose(np.argsort(order))


#: (N, C, K, spatial, kernel, pad, stride, dilation, groups): ResNet / U-Net / video shapes
LAYERS = {
    "3x3": (2, 32, 32, (14, 14), 3, 1, 1, 1, 1),
    "3x3-s2": (2, 32, 64, (15, 15), 3, 1, 2, 1, 1),
    "1x1": (2, 64, 32, (7, 7), 1, 0, 1, 1, 1),
    "1x1-deep": (8, 512, 256, (7, 7), 1, 0, 1, 1, 1),  # wgrad in channel blocks
    "3d-blocks": (1, 64, 64, (8, 28, 28), 3, 1, 1, 1, 1),  # more blocks asked than channels
    "stem-7x7": (2, 3, 16, (32, 32), 7, 3, 2, 1, 1),
    "grouped": (2, 32, 32, (9, 9), 3, 1, 1, 1, 4),
    "depthwise": (2, 16, 16, (9, 9), 3, 1, 1, 1, 16),
    "dilated": (2, 16, 16, (12, 12), 3, 2, 1, 2, 1),
    "3d": (1, 16, 16, (4, 9, 9), 3, 1, 1, 1, 1),
    "1d": (2, 16, 24, (40,), 5, 2, 1, 1, 1),
}


def _layer(name: str, dtype: Any = np.float32, seed: int = 0) -> dict[str, Any]:
    n, c, k, sp, ks, p, s, d, g = LAYERS[name]
    nd = len(sp)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, c, *sp)).astype(dtype).astype(np.float64)
    w = rng.uniform(-1, 1, (k, c // g, *[ks] * nd)).astype(dtype).astype(np.float64)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    y = conv(xt, wt, stride=s, padding=p, dilation=d, groups=g)
    dy = rng.uniform(-1, 1, tuple(y.shape)).astype(dtype).astype(np.float64)
    y.backward(torch.tensor(dy))
    args = ([p] * nd, [p] * nd, [s] * nd, [d] * nd, g)
    return {"x": x, "w": w, "dy": dy, "y": y.detach().numpy(), "dx": xt.grad.numpy(),
            "dw": wt.grad.numpy(), "args": args}


def _close(got: np.ndarray, want: np.ndarray, direction: str) -> None:
    atol, rtol = TOL[f"conv_{direction}"]["fp32"]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * max(1.0, np.abs(want).max()))


def test_channel_blocks_never_exceed_the_channels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The block split asks for at most one block per 16 channels on each side, however many
    parts the work would allow, and the blocks tile the gradient (a 64-channel 3-D layer once
    found no allowed split: an AssertionError out of graph.execute)."""
    shapes: list[tuple[int, ...]] = []

    def fake_plan(one: Any, kind: str, a: np.ndarray, b: np.ndarray, out: np.ndarray,
                  *rest: Any) -> str:
        assert out.shape == (b.shape[1], a.shape[1], 1, 1)
        return "plan"

    def fake_parts(one: Any, key: Any, x: Any, dy: Any, dw: Any, make: Any,
                   accumulate: bool) -> bool:
        jobs, _, _ = make()
        for [(_, _, (_, out))] in jobs:  # one step each
            shapes.append(out.shape)
            out[...] = 1.0
        return True

    monkeypatch.setattr(_onednn, "_plan", fake_plan)
    monkeypatch.setattr(_onednn, "_pointwise", lambda *args: False)  # convolutions, not products
    monkeypatch.setattr(_onednn, "_run_parts", fake_parts)
    for k, c, count in ((64, 64, 32), (16, 3, 32), (2048, 512, 24), (1, 1, 2)):
        shapes.clear()
        xs, dys = np.zeros((1, c, 4, 4), np.float32), np.zeros((1, k, 4, 4), np.float32)
        dw = _onednn._wgrad_blocks(None, xs, dys, (k, c, 1, 1), [0, 0], [0, 0],  # type: ignore[arg-type]
                                   [1, 1], [1, 1], count)
        assert dw is not None and dw.shape == (k, c, 1, 1) and (dw == 1.0).all()
        assert sum(s[0] * s[1] for s in shapes) == k * c
        assert len(shapes) <= -(-k // 16) * -(-c // 16)


def test_part_counts_follow_the_work_alone() -> None:
    """A weight gradient's part count grows with its work, never past WGRAD_PARTS: one part per
    WGRAD_PART_MACS, but a mid-sized gradient whose parts share no rows (ResNet-50's 64->64 1x1
    layer at batch 8: 6 parts by the large-part rule) gets WGRAD_MIN_PARTS parts so that many
    cores share it."""
    big, small = _onednn.WGRAD_PART_MACS, _onednn.WGRAD_SMALL_PART_MACS
    floor = _onednn.WGRAD_MIN_PARTS
    counts = [_onednn._part_count(m) for m in range(0, 40 * big, small // 3)]
    assert counts == sorted(counts) and counts[0] == 1 and counts[-1] == _onednn.WGRAD_PARTS
    assert _onednn._part_count(small - 1) == 1 and _onednn._part_count(floor * small - 1) < floor
    resnet_64_64 = 8 * 64 * 56 * 56 * 64
    assert resnet_64_64 // big == 6 and _onednn._part_count(resnet_64_64) == floor
    assert _onednn._part_count(20 * big) == 20  # large parts where there are enough of them
    resnet_128_512 = 8 * 512 * 28 * 28 * 128
    assert _onednn._part_count(resnet_128_512) == 24
    # a kernel reaching across the slabs' rows keeps its large parts (less of x re-read)
    assert _onednn._part_count(resnet_64_64, shared_rows=True) == 6
    assert _onednn._part_count(resnet_128_512, shared_rows=True) == 24
    assert _onednn._part_count(20 * big, shared_rows=True) == 20
    # slabs (each a partial gradient to add) are capped lower than blocks
    assert _onednn._part_count(40 * big, most=_onednn.WGRAD_SLABS) == _onednn.WGRAD_SLABS
    assert _onednn.WGRAD_MIN_PARTS <= _onednn.WGRAD_SLABS <= _onednn.WGRAD_PARTS


def test_weight_gradient_split_weighs_partials_against_the_data_in_bytes() -> None:
    """Slabs where their FP32 partial gradients weigh less than x and dy, else blocks of
    channels (more parts: no partials): ResNet-50's strided 3x3 (128 channels at 56x56, batch
    8) runs as WGRAD_SLABS slabs in FP32, but as blocks in BF16 or FP16, whose data weighs half
    as much; a deep 1x1 layer runs as blocks in any type; grouped ones never as blocks."""
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    w = (128, 128, 3, 3)
    for dtype, want in ((np.float32, "slabs"), (np.float16, "blocks"), (bf16, "blocks")):
        x, dy = np.empty((8, 128, 56, 56), dtype), np.empty((8, 128, 28, 28), dtype)
        split, count = _onednn._wgrad_split(x, dy, w, 2, 1)
        assert split == want, dtype
        assert count == (_onednn.WGRAD_SLABS if want == "slabs" else _onednn.WGRAD_PARTS)
        assert _onednn._wgrad_split(x, dy, w, 2, 2)[0] == "slabs"
    x, dy = np.empty((8, 1024, 14, 14), np.float32), np.empty((8, 256, 14, 14), np.float32)
    assert _onednn._wgrad_split(x, dy, (256, 1024, 1, 1), 0, 1) == ("blocks", 24)
    x, dy = np.empty((8, 64, 56, 56), np.float32), np.empty((8, 64, 56, 56), np.float32)
    assert _onednn._wgrad_split(x, dy, (64, 64, 1, 1), 0, 1) == ("slabs", _onednn.WGRAD_MIN_PARTS)


@pytest.mark.parametrize("x_rows, n, pre, stride, reach, count",
                         [(14, 8, 0, 1, 0, 32), (7, 8, 0, 1, 0, 32), (56, 1, 1, 1, 2, 32),
                          (28, 2, 3, 2, 6, 24), (5, 3, 0, 1, 0, 32), (9, 40, 1, 1, 2, 32)])
def test_row_slabs_are_even_and_read_what_they_need(x_rows: int, n: int, pre: int, stride: int,
                                                    reach: int, count: int) -> None:
    """The slabs of a weight gradient tile each image's output rows in near-equal runs (sizes
    differ by at most one row, so no part is left with a short tail), or take whole runs of
    images; each reads exactly the input rows its outputs reach, the rest said as padding."""
    out_rows = (x_rows + 2 * pre - reach - 1) // stride + 1
    parts = _onednn._wgrad_slabs(x_rows, out_rows, n, pre, stride, reach, count)
    assert 1 <= len(parts) <= max(count, n)
    if n >= count:
        images = [range(n)[p[0]] for p in parts]
        assert [i for r in images for i in r] == list(range(n))
        return
    for image in range(n):
        mine = [p for p in parts if p[0] == slice(image, image + 1)]
        sizes = [p[2].stop - p[2].start for p in mine]
        assert max(sizes) - min(sizes) <= 1
        assert [r for p in mine for r in range(p[2].start, p[2].stop)] == list(range(out_rows))
        for _, rows_in, rows_out, top, bottom in mine:
            first = rows_out.start * stride - pre
            last = (rows_out.stop - 1) * stride - pre + reach
            assert (rows_in.start - top, rows_in.stop - 1 + bottom) == (first, last)
            assert 0 <= rows_in.start < rows_in.stop <= x_rows


@pytest.mark.parametrize("layout", ["cf", "cl"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_runs_on_onednn_and_matches_torch(one: _onednn.OneDNN, name: str, layout: str) -> None:
    """Every direction of each layer is computed by oneDNN itself (``conv`` answers, no
    fallback) and matches PyTorch's float64 autograd, and the kernels' entry points return it."""
    d = _layer(name)
    store = _cl if layout == "cl" else np.ascontiguousarray
    x, w, dy = (store(d[k].astype(np.float32)) for k in ("x", "w", "dy"))
    for direction, a, b, shape, want in (("fprop", x, w, d["y"].shape, d["y"]),
                                          ("dgrad", dy, w, d["x"].shape, d["dx"]),
                                          ("wgrad", x, dy, d["w"].shape, d["dw"])):
        got = _onednn.conv(direction, a, b, shape, *d["args"])
        assert got is not None, f"{name} {layout} {direction}: oneDNN declined"
        assert got.dtype == np.float32 and got.shape == tuple(shape)
        _close(got, want, direction)
    _close(K.conv_fprop(x, w, *d["args"]), d["y"], "fprop")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["3x3", "3x3-s2", "1x1", "3d"])
def test_half_types_sum_in_fp32(one: _onednn.OneDNN, name: str, dtype: str) -> None:
    """FP16/BF16 data (exact in FP32): oneDNN's sums are FP32's, within the FP32 tolerance of
    the float64 truth; every BF16 direction and FP16 fprop run on oneDNN."""
    import ml_dtypes

    np_dtype = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    d = _layer(name, np_dtype)
    x, w, dy = (_cl(d[k].astype(np_dtype)) for k in ("x", "w", "dy"))
    for direction, a, b, shape, want in (("fprop", x, w, d["y"].shape, d["y"]),
                                          ("dgrad", dy, w, d["x"].shape, d["dx"]),
                                          ("wgrad", x, dy, d["w"].shape, d["dw"])):
        got = _onednn.conv(direction, a, b, shape, *d["args"])
        if got is None:  # oneDNN 3.2 lacks some FP16 backward kernels (the tap GEMMs run them)
            assert direction != "fprop" and dtype == "float16", (name, direction, dtype)
            got = getattr(K, f"conv_{direction}")(a, b, shape, *d["args"])
        _close(got, want, direction)


def test_agrees_with_the_tap_gemms(one: _onednn.OneDNN, monkeypatch: pytest.MonkeyPatch) -> None:
    """Our own OpenBLAS tap GEMMs (no oneDNN) and oneDNN agree to FP32 rounding on a ResNet-50
    layer, in both directions of the switch."""
    rng = np.random.default_rng(3)
    x = _cl(rng.standard_normal((4, 64, 28, 28)).astype(np.float32))
    w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32)
    args = ([1, 1], [1, 1], [1, 1], [1, 1], 1)
    fast = K.conv_fprop(x, w, *args)
    monkeypatch.setenv(_onednn.ENV, "0")
    assert _onednn.library() is None and _onednn.conv("fprop", x, w, fast.shape, *args) is None
    taps = K.conv_fprop(x, w, *args)
    np.testing.assert_allclose(fast, taps, rtol=1e-4, atol=1e-4 * np.abs(taps).max())
    monkeypatch.setenv(_onednn.ENV, "fwd")  # fprop and dgrad only
    dy = rng.standard_normal(fast.shape).astype(np.float32)
    assert _onednn.conv("wgrad", x, dy, w.shape, *args) is None
    assert _onednn.conv("dgrad", dy, w, x.shape, *args) is not None
    monkeypatch.setenv(_onednn.ENV, "fast")  # wgrad on oneDNN's own threads: same values
    threaded = _onednn.conv("wgrad", x, dy, w.shape, *args)
    monkeypatch.delenv(_onednn.ENV)
    parts = _onednn.conv("wgrad", x, dy, w.shape, *args)
    assert threaded is not None and parts is not None
    np.testing.assert_allclose(threaded, parts, rtol=1e-4, atol=1e-4 * np.abs(parts).max())


_BITS_SCRIPT = """
import hashlib, sys
import numpy as np
sys.path.insert(0, {root!r})
from hipdnn.core.shapes import conv_output_dims
from hipdnn.engines.reference import _onednn
assert _onednn.library() is not None
rng = np.random.default_rng(1)
h = {{k: hashlib.sha256() for k in ("fprop", "dgrad", "wgrad")}}
for cl in (False, True):
    for nsp in (1, 2, 3):
        sp = (6, 17, 15)[3 - nsp:]
        for n, c in ((3, 24), (40, 16)):
            x = rng.standard_normal((n, c, *sp)).astype(np.float32)
            w = rng.standard_normal((32, c // 2, *([3] * nsp))).astype(np.float32)
            if cl:
                x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)
            for st in (1, 2):
                a = ([1] * nsp, [1] * nsp, [st] * nsp, [1] * nsp, 2)
                y = _onednn.conv("fprop", x, w, conv_output_dims(x.shape, w.shape, *a[:4]), *a)
                dy = rng.standard_normal(y.shape).astype(np.float32)
                if cl:
                    dy = np.moveaxis(np.ascontiguousarray(np.moveaxis(dy, 1, -1)), -1, 1)
                dx = _onednn.conv("dgrad", dy, w, x.shape, *a)
                dw = _onednn.conv("wgrad", x, dy, w.shape, *a)
                for k, r in (("fprop", y), ("dgrad", dx), ("wgrad", dw)):
                    h[k].update(np.ascontiguousarray(r).tobytes())
x = rng.standard_normal((8, 512, 7, 7)).astype(np.float32)  # wgrad in channel blocks
dy = rng.standard_normal((8, 256, 7, 7)).astype(np.float32)
h["wgrad"].update(_onednn.conv("wgrad", x, dy, (256, 512, 1, 1), [0, 0], [0, 0], [1, 1], [1, 1],
                               1).tobytes())
for shape, k in (((2, 64, 64, 64), 128), ((8, 64, 32, 32), 128), ((8, 512, 7, 7), 256)):
    for cl in (False, True):  # 1x1 parts as matrix products: row slabs, image runs, blocks
        x = rng.standard_normal(shape).astype(np.float32)
        dy = rng.standard_normal((shape[0], k, *shape[2:])).astype(np.float32)
        if cl:
            x, dy = (np.moveaxis(np.ascontiguousarray(np.moveaxis(t, 1, -1)), -1, 1)
                     for t in (x, dy))
        h["wgrad"].update(_onednn.conv("wgrad", x, dy, (k, shape[1], 1, 1), [0, 0], [0, 0],
                                       [1, 1], [1, 1], 1).tobytes())
print(" ".join(f"{{k}}={{v.hexdigest()}}" for k, v in h.items()))
"""


def test_same_bits_for_any_thread_count(one: _onednn.OneDNN) -> None:
    """fprop, dgrad and wgrad (1-D, 2-D, 3-D; both memory orders; strides 1 and 2; a batch
    below and above WGRAD_PARTS) give the same bits with 1, 2 and 5 threads. Without the fixed
    parts, oneDNN's threaded weight gradient did not (its sums split by thread count)."""
    digests = set()
    for threads in ("1", "2", "5"):
        env = {**os.environ, "HIPDNN_REFERENCE_THREADS": threads, "OMP_NUM_THREADS": threads,
               "OPENBLAS_NUM_THREADS": threads}
        env.pop(_onednn.ENV, None)
        out = subprocess.run([sys.executable, "-c", _BITS_SCRIPT.format(root=str(ROOT))],
                             env=env, capture_output=True, text=True, timeout=600, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1, digests


def test_deep_weight_gradients_run_in_channel_blocks(one: _onednn.OneDNN,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A weight gradient whose partial sums would outweigh its data (a deep 1x1 layer) runs as
    blocks of channels, and matches PyTorch."""
    d = _layer("1x1-deep")
    calls: list[int] = []
    real = _onednn._wgrad_blocks

    def spy(*args: Any) -> Any:
        calls.append(args[-1])
        return real(*args)

    monkeypatch.setattr(_onednn, "_wgrad_blocks", spy)
    x, dy = (_cl(d[k].astype(np.float32)) for k in ("x", "dy"))
    got = _onednn.conv("wgrad", x, dy, d["w"].shape, *d["args"])
    assert calls and calls[0] > 1 and got is not None
    _close(got, d["dw"], "wgrad")


def test_threads_running_primitives_at_once(one: _onednn.OneDNN) -> None:
    """Four Python threads run the same cached primitives at once (each execution has its own
    scratchpad): every result is right and equal to the single-threaded one."""
    d = _layer("3x3")
    x, w, dy = (_cl(d[k].astype(np.float32)) for k in ("x", "w", "dy"))
    want = {k: _onednn.conv(k, *ab, shape, *d["args"]) for k, ab, shape in (
        ("fprop", (x, w), d["y"].shape), ("dgrad", (dy, w), d["x"].shape),
        ("wgrad", (x, dy), d["w"].shape))}
    digests: list[set[str]] = [set(), set(), set()]
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                for i, (k, ab, shape) in enumerate((
                        ("fprop", (x, w), d["y"].shape), ("dgrad", (dy, w), d["x"].shape),
                        ("wgrad", (x, dy), d["w"].shape))):
                    got = _onednn.conv(k, *ab, shape, *d["args"])
                    assert got is not None
                    digests[i].add(hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, k in enumerate(("fprop", "dgrad", "wgrad")):
        assert digests[i] == {hashlib.sha256(np.ascontiguousarray(want[k]).tobytes()).hexdigest()}


def test_a_kept_binding_follows_new_arrays(one: _onednn.OneDNN,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread keeps its recent problems' memory objects and temporaries (and a weight
    gradient's prepared parts) and only re-points them: the same problem on other arrays (other
    data, other addresses, the first arrays freed) gives those arrays' answer, and nothing kept
    holds the caller's arrays."""
    import gc
    import weakref
    monkeypatch.setattr(_onednn, "WGRAD_PART_MACS", 1 << 14)  # many parts, slabs and blocks
    monkeypatch.setenv("HIPDNN_REFERENCE_THREADS", "3")
    for name in ("3x3", "1x1-deep"):
        first, second = _layer(name, seed=1), _layer(name, seed=2)
        for d in (first, second, first):
            x, w, dy = (_cl(d[k].astype(np.float32)) for k in ("x", "w", "dy"))
            for kind, ab, want in (("fprop", (x, w), "y"), ("dgrad", (dy, w), "dx"),
                                   ("wgrad", (x, dy), "dw")):
                got = _onednn.conv(kind, *ab, d[want].shape, *d["args"])
                assert got is not None
                _close(got, d[want], kind)
            gone = weakref.ref(x)
            del x, w, dy, ab
            gc.collect()
            assert gone() is None  # nothing kept a reference to the caller's input


def test_kept_bindings_stay_within_their_bytes(one: _onednn.OneDNN,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread keeps at most KEEP_BYTES of temporaries: the least recent problems are dropped,
    a problem larger than half of it is made for its call alone, and answers stay right."""
    monkeypatch.setattr(_onednn, "KEEP_BYTES", 1 << 18)
    results = []

    def work() -> None:  # a fresh thread: nothing kept from other tests
        for name in ("3x3", "3x3-s2", "stem-7x7", "dilated", "3d", "1d"):
            d = _layer(name)
            x, w = (np.ascontiguousarray(d[k].astype(np.float32)) for k in ("x", "w"))
            got = _onednn.conv("fprop", x, w, d["y"].shape, *d["args"])
            assert got is not None
            _close(got, d["y"], "fprop")
            kept = getattr(one._local, "bounds", {})
            results.append((len(kept), sum(b.nbytes for b in kept.values())))
            # reordered sides and scratchpads: the bytes bound are those the plan says
            assert all(b.nbytes == _onednn._Bound.temp_bytes(b.plan) for b in kept.values())

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert len(results) == 6, results
    assert all(total <= _onednn.KEEP_BYTES for _, total in results)
    assert 1 <= results[-1][0] < 6  # some kept, some (over half of the bytes) not


def test_kept_bindings_drop_the_least_recent(one: _onednn.OneDNN,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The keeping policy alone (bindings of given sizes): a hit is the same binding and
    becomes the most recent; over the bytes, the least recent go; too large is never kept."""
    class Sized:
        def __init__(self, owner: Any, plan: Any, threads: int) -> None:
            self.nbytes = plan.nbytes

    class Plan:
        def __init__(self, nbytes: int) -> None:
            self.nbytes = nbytes

    monkeypatch.setattr(_onednn, "_Bound", Sized)
    monkeypatch.setattr(_onednn, "KEEP_BYTES", 200)  # kept: 100 bytes at most
    a, b, c, big, d, e = Plan(40), Plan(50), Plan(30), Plan(101), Plan(45), Plan(40)
    got: dict[str, Any] = {}

    def work() -> None:
        take = functools.partial(_onednn._bound_for, one, threads=1)
        got["a"], kept = take(a)
        assert kept and take(a) == (got["a"], True)
        for p in (b, c, a):  # a is now the most recent, b the least
            take(p)
        got["big"] = take(big)
        take(d)
        take(e)  # 40 + 50 + 30 + 45 + 40 > 200: b goes
        got["left"] = sorted(bound.nbytes for bound in one._local.bounds.values())
        got["a again"] = take(a)[0]

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert got["big"][1] is False
    assert got["left"] == [30, 40, 40, 45]
    assert got["a again"] is got["a"]


@pytest.fixture
def launcher(one: _onednn.OneDNN, require_or_skip: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The numba launcher of the weight-gradient parts (skipped without numba, required in CI),
    with at least 3 engine threads so that it runs."""
    from hipdnn.engines.reference import _bn_jit, _onednn_jit
    monkeypatch.delenv(_bn_jit.ENV, raising=False)
    monkeypatch.setenv("HIPDNN_REFERENCE_THREADS", "3")
    got = _onednn_jit.launcher(one.lib, one.omp)
    if got is None:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed (or could not compile the "
                        "oneDNN part launcher): pip install numba")
    return _onednn_jit


@pytest.mark.parametrize("name", ["3x3", "1x1-deep", "3d-blocks", "grouped"])
def test_parts_on_numba_threads_match_the_pool(one: _onednn.OneDNN, launcher: Any,
                                               monkeypatch: pytest.MonkeyPatch,
                                               name: str) -> None:
    """Weight-gradient parts (slabs, and channel blocks for the deep layer) run on numba's
    threads, the same bits as on the reference pool (numba switched off), and match PyTorch."""
    from hipdnn.engines.reference import _bn_jit
    d = _layer(name)
    monkeypatch.setattr(_onednn, "WGRAD_PART_MACS", 1 << 12)  # several parts of the small data
    launches: list[int] = []
    real = launcher.Launcher.__call__

    def counted(self: Any, prepared: Any, bases: Any, threads: int) -> Any:
        launches.append(prepared.streams.size)
        return real(self, prepared, bases, threads)

    monkeypatch.setattr(launcher.Launcher, "__call__", counted)
    for store in (np.ascontiguousarray, _cl):
        x, dy = (store(d[k].astype(np.float32)) for k in ("x", "dy"))
        launches.clear()
        got = _onednn.conv("wgrad", x, dy, d["w"].shape, *d["args"])
        assert got is not None and launches and min(launches) > 1
        _close(got, d["dw"], "wgrad")
        monkeypatch.setenv(_bn_jit.ENV, "0")
        launches.clear()
        pool = _onednn.conv("wgrad", x, dy, d["w"].shape, *d["args"])
        monkeypatch.delenv(_bn_jit.ENV)
        assert not launches and pool is not None
        assert np.array_equal(got, pool)


@pytest.mark.parametrize("status, error", [(2, None), (1, MemoryError)])
def test_a_failed_part_writes_nothing_and_the_retry_works(one: _onednn.OneDNN, launcher: Any,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          status: int, error: Any) -> None:
    """A part that oneDNN fails (its status back from numba's threads) declines the whole
    weight gradient (the engine's other paths run), out of memory is a MemoryError; no partial
    gradient comes back, and the same call then works."""
    d = _layer("3x3")
    monkeypatch.setattr(_onednn, "WGRAD_PART_MACS", 1 << 12)
    x, dy = (_cl(d[k].astype(np.float32)) for k in ("x", "dy"))
    real = launcher.Launcher.__call__

    def failing(self: Any, prepared: Any, bases: Any, threads: int) -> Any:
        got = real(self, prepared, bases, threads)
        got[got.size // 2] = status
        return got

    monkeypatch.setattr(launcher.Launcher, "__call__", failing)
    if error is None:
        assert _onednn.conv("wgrad", x, dy, d["w"].shape, *d["args"]) is None
    else:
        with pytest.raises(error, match="oneDNN ran out of memory"):
            _onednn.conv("wgrad", x, dy, d["w"].shape, *d["args"])
    monkeypatch.setattr(launcher.Launcher, "__call__", real)
    got = _onednn.conv("wgrad", x, dy, d["w"].shape, *d["args"])
    assert got is not None
    _close(got, d["dw"], "wgrad")


@pytest.mark.parametrize("jit", ["1", "0"])
def test_partials_are_added_in_part_order(monkeypatch: pytest.MonkeyPatch, require_or_skip: Any,
                                          jit: str) -> None:
    """The partial weight gradients are added to dw one after another in the given order, on
    numba's threads (blocks of the gradient) or on the pool (element ranges): the same bits as
    adding them in turn in numpy, for any thread count and a size no block divides."""
    from hipdnn.engines.reference import _onednn_jit

    monkeypatch.setenv("HIPDNN_REFERENCE_JIT", jit)
    if jit == "1" and not _onednn_jit.add_partials(np.zeros(1, np.float32),
                                                   np.zeros((1, 1), np.float32), [0], 1):
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed (or could not compile "
                        "the partial-gradient sum): pip install numba")
    rng = np.random.default_rng(15)
    shape = (3, 5, 3 * _onednn_jit.ADD_BLOCK + 17)  # a few blocks and a short one
    spare = (rng.standard_normal((6, *shape)) * 10.0 ** rng.integers(-3, 4, (6, 1, 1, 1))
             ).astype(np.float32)
    order = [4, 1, 1, 5, 0, 3]
    start = rng.standard_normal(shape).astype(np.float32)
    want = start.copy()
    for r in order:
        want += spare[r]
    for threads in ("1", "2", "5"):
        monkeypatch.setenv("HIPDNN_REFERENCE_THREADS", threads)
        dw = start.copy()
        _onednn._accumulate(dw, spare, order)
        assert dw.tobytes() == want.tobytes(), threads


def test_a_loop_numba_cannot_compile_warns_and_numpy_adds(monkeypatch: pytest.MonkeyPatch,
                                                          require_or_skip: Any) -> None:
    """A numba that cannot compile one of the oneDNN path's loops warns once, naming the loop
    and what runs instead; the partial sum then falls back to numpy with the same bits."""
    from hipdnn.engines.reference import _bn_jit, _onednn_jit

    monkeypatch.delenv(_bn_jit.ENV, raising=False)
    if _bn_jit.kernels() is None:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed: pip install numba")

    def broken(loop: Any) -> None:
        raise TypeError("cannot type this")

    with pytest.warns(RuntimeWarning, match="could not compile the partial-gradient sum "
                                            r"\(TypeError: cannot type this\); using numpy"):
        assert _onednn_jit._compiled(_onednn_jit.add_rows, "the partial-gradient sum",
                                     "using numpy", broken) is None
    monkeypatch.setattr(_onednn_jit, "_ADD_STATE", [None])  # as after that failure
    rng = np.random.default_rng(16)
    spare = rng.standard_normal((4, 3, 5000)).astype(np.float32)
    dw = spare[0].copy()
    want = dw.copy()
    for r in (3, 1, 2):
        want += spare[r]
    assert not _onednn_jit.add_partials(dw.reshape(-1), spare.reshape(4, -1), [3], 1)
    _onednn._accumulate(dw, spare, [3, 1, 2])
    assert dw.tobytes() == want.tobytes()


def test_pixels_at_one_stride() -> None:
    """A part's pixels are one matrix axis where they lie at one stride: a channels-last array
    or a run of its images, or of one image's rows; one image (or a run of its rows) of a
    channel-first array; not a run of channel-first images."""
    cf = np.zeros((4, 8, 6, 5), np.float32)
    cl = _cl(cf)
    assert _onednn._flat_pixels(cl) == (120, 8)
    assert _onednn._flat_pixels(cl[1:3, 2:6]) == (60, 8)
    assert _onednn._flat_pixels(cl[1:2, 2:6, 2:4]) == (10, 8)
    assert _onednn._flat_pixels(cl[1:3, :, 2:4]) is None  # rows of several images
    assert _onednn._flat_pixels(cf[2:3, 1:5]) == (30, 1)
    assert _onednn._flat_pixels(cf[2:3, :, 1:4]) == (15, 1)
    assert _onednn._flat_pixels(cf) is None
    assert _onednn._flat_pixels(cl[:, :, :, 1:4]) is None  # part of each row
    assert _onednn._flat_pixels(np.zeros((1, 3, 1, 1), np.float32)) == (1, 1)


@pytest.mark.parametrize("layout", ["cf", "cl"])
def test_pointwise_weight_gradients_run_as_matrix_products(one: _onednn.OneDNN, layout: str,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """FP32 1x1 unit-stride weight gradients run their parts (row slabs, image runs, channel
    blocks) as oneDNN matrix products (where a part's pixels do not lie at one stride: one over
    the images' pixels copied into one run for images under PACK_PIXELS, else one per image
    summed in image order), and match float64 sums; a strided 1x1 problem stays a
    convolution."""
    made: list[Any] = []
    summed: list[bool] = []
    packed: list[bool] = []
    real = _onednn._create_matmul

    def spy(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        summed.append(bool(args[3:] and args[3]))
        packed.append(kwargs.get("packed") is not None)
        return made[-1]

    monkeypatch.setattr(_onednn, "_create_matmul", spy)
    monkeypatch.setattr(_onednn, "WGRAD_PART_MACS", 1 << 14)
    one._cache.clear()  # products made in other tests would not be made again
    store = _cl if layout == "cl" else np.ascontiguousarray
    rng = np.random.default_rng(3)
    for n, c, k, hw in ((1, 32, 48, 16), (2, 24, 40, 20), (6, 64, 32, 8), (3, 8, 256, 9),
                        (4, 64, 64, 4), (2, 64, 64, 12)):
        x = store(rng.uniform(-1, 1, (n, c, hw, hw)).astype(np.float32))
        dy = store(rng.uniform(-1, 1, (n, k, hw, hw)).astype(np.float32))
        got = _onednn.conv("wgrad", x, dy, (k, c, 1, 1), [0, 0], [0, 0], [1, 1], [1, 1], 1)
        want = np.einsum("nkhw,nchw->kc", dy.astype(np.float64), x.astype(np.float64))
        assert got is not None
        _close(got, want[:, :, None, None], "wgrad")
    assert made and all(p is not None and not p.impl.startswith("ref") for p in made)
    # the bytes a binding allocates are known from the plan before it is bound
    assert all(_onednn._Bound.temp_bytes(p) == _onednn._Bound(one, p, 1).nbytes for p in made)
    # a run of channel-first images: small images packed into one product (4x4, 8x8), larger
    # ones (12x12) one product per image, each added to those before it
    assert any(summed) == (layout == "cf") and any(packed) == (layout == "cf")
    assert not any(s and p for s, p in zip(summed, packed, strict=True))
    made.clear()
    d = _layer("3x3-s2")
    x, dy = (store(d[k].astype(np.float32)) for k in ("x", "dy"))
    _onednn.conv("wgrad", x, dy, d["w"].shape, *d["args"])
    assert not made


def test_parts_too_large_to_keep_are_bound_a_few_at_a_time(one: _onednn.OneDNN,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """A weight gradient whose parts' temporaries are over half of KEEP_BYTES binds a thread
    count of parts at a time (never every part at once: memory stays bounded), keeps none,
    and still matches PyTorch."""
    monkeypatch.setattr(_onednn, "KEEP_BYTES", 2)
    monkeypatch.setattr(_onednn, "WGRAD_PART_MACS", 1 << 12)
    monkeypatch.setenv("HIPDNN_REFERENCE_THREADS", "3")
    live, peak, parts = [0], [0], [0]
    real_init, real_close = _onednn._Bound.__init__, _onednn._Bound.close

    def init(self: Any, *args: Any) -> None:
        real_init(self, *args)
        live[0] += 1
        peak[0] = max(peak[0], live[0])

    def close(self: Any) -> None:
        if self.mems:
            live[0] -= 1
        real_close(self)

    monkeypatch.setattr(_onednn._Bound, "__init__", init)
    monkeypatch.setattr(_onednn._Bound, "close", close)
    results: dict[str, Any] = {}

    def work() -> None:  # a fresh thread: nothing kept from other tests
        for name in ("3x3", "3x3-s2"):
            d = _layer(name)
            x, dy = (np.ascontiguousarray(d[k].astype(np.float32)) for k in ("x", "dy"))
            macs = d["dy"].size * int(np.prod(d["w"].shape[1:]))
            parts[0] = max(parts[0], min(_onednn.WGRAD_PARTS, macs >> 12))
            results[name] = (_onednn.conv("wgrad", x, dy, d["w"].shape, *d["args"]), d["dw"])
        results["kept"] = len(getattr(one._local, "bounds", {}))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    for name in ("3x3", "3x3-s2"):
        got, want = results[name]
        assert got is not None
        _close(got, want, "wgrad")
    assert results["kept"] == 0
    assert parts[0] > 3 and 1 <= peak[0] <= 3


def test_declines_what_it_does_not_do(one: _onednn.OneDNN) -> None:
    """Mixed input types, float64/int8 data and empty tensors are declined (None: the caller's
    numpy paths run), never computed in another precision."""
    x = np.ones((1, 4, 5, 5), np.float32)
    w = np.ones((4, 4, 3, 3), np.float32)
    args = ([1, 1], [1, 1], [1, 1], [1, 1], 1)
    assert _onednn.conv("fprop", x, w.astype(np.float16), (1, 4, 5, 5), *args) is None
    assert _onednn.conv("fprop", x.astype(np.float64), w.astype(np.float64), (1, 4, 5, 5),
                        *args) is None
    assert _onednn.conv("fprop", x.astype(np.int8), w.astype(np.int8), (1, 4, 5, 5), *args) is None
    assert _onednn.conv("fprop", x[:0], w, (0, 4, 5, 5), *args) is None
    # and the kernels still answer those (INT8 exactly, in float64)
    y = K.conv_fprop(x.astype(np.int8), w.astype(np.int8), *args, acc=np.float64)
    assert y.dtype == np.float64 and y[0, 0, 2, 2] == 36


def test_odd_strides_and_views(one: _onednn.OneDNN) -> None:
    """Views with a negative stride, a broadcast axis or a sliced channel range are read right."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal((2, 24, 10, 10)).astype(np.float32)
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    args = ([1, 1], [1, 1], [1, 1], [1, 1], 1)
    one_image = np.lib.stride_tricks.as_strided(base[:1, :16], strides=(0, *base.strides[1:]))
    assert _onednn._plain(one_image) is not None  # a size-1 axis of stride 0: no copy needed
    for x in (base[:, 4:20], base[:, :16, ::-1], np.broadcast_to(base[:1, :16], (2, 16, 10, 10)),
              one_image):
        want = F.conv2d(torch.tensor(np.ascontiguousarray(x), dtype=torch.float64),
                        torch.tensor(w, dtype=torch.float64), padding=1).numpy()
        got = _onednn.conv("fprop", x, w, want.shape, *args)
        assert got is not None
        _close(got, want, "fprop")
    # and an output view whose size-1 batch axis has stride 0 is still written in place
    out = np.lib.stride_tricks.as_strided(np.zeros((1, 8, 10, 10), np.float32),
                                          strides=(0, 400, 40, 4))
    late = _onednn.deferred("fprop", base[:1, :16], w, out.shape, *args, fallback=lambda: None)
    assert late is not None and late.fits(out)
    late.write_into(out)
    want = F.conv2d(torch.tensor(base[:1, :16], dtype=torch.float64),
                    torch.tensor(w, dtype=torch.float64), padding=1).numpy()
    _close(out, want, "fprop")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["cf", "cl"])
def test_half_outputs_rounded_once_as_the_engine_rounds(one: _onednn.OneDNN, dtype: str,
                                                         layout: str) -> None:
    """fprop and dgrad asked for an FP16/BF16 result give exactly the FP32 result rounded to
    nearest even (what the engine would do with an FP32 result), over values from subnormal
    to large; wgrad stays FP32 (its parts are added in FP32)."""
    import ml_dtypes

    np_dtype = np.dtype(np.float16 if dtype == "float16" else ml_dtypes.bfloat16)
    rng = np.random.default_rng(7)
    store = _cl if layout == "cl" else np.ascontiguousarray
    scale = rng.choice([1e-6, 1.0, 300.0], (4, 32, 12, 12))
    x = store((rng.standard_normal((4, 32, 12, 12)) * scale).astype(np_dtype))
    w = store(rng.standard_normal((48, 32, 3, 3)).astype(np_dtype))
    dy = store(rng.standard_normal((4, 48, 12, 12)).astype(np_dtype))
    args = ([1, 1], [1, 1], [1, 1], [1, 1], 1)
    for direction, a, b, shape in (("fprop", x, w, (4, 48, 12, 12)),
                                   ("dgrad", dy, w, (4, 32, 12, 12))):
        wide = _onednn.conv(direction, a, b, shape, *args)
        low = _onednn.conv(direction, a, b, shape, *args, out_dtype=np_dtype)
        assert wide is not None and low is not None and low.dtype == np_dtype
        np.testing.assert_array_equal(np.asarray(low, np.float32),
                                      np.asarray(wide.astype(np_dtype), np.float32))
    dw = _onednn.conv("wgrad", x, dy, (48, 32, 3, 3), *args)
    assert dw is None or dw.dtype == np.float32


def _graph_conv(direction: str, x: np.ndarray, w: np.ndarray, dy: np.ndarray,
                out: np.ndarray, io: Any) -> Any:
    import hipdnn

    f32 = hipdnn.DataType.FLOAT
    g = hipdnn.Graph(io_data_type=io, intermediate_data_type=f32, compute_data_type=f32)
    if direction == "fprop":
        a, b = g.tensor_like(x, "x"), g.tensor_like(w, "w")
        t = g.conv_fprop(a, b, padding=[1, 1], stride=[1, 1])
        pack = {a: x, b: w}
    else:
        a, b = g.tensor_like(dy, "dy"), g.tensor_like(w, "w")
        t = g.conv_dgrad(a, b, padding=[1, 1], stride=[1, 1])
        pack = {a: dy, b: w}
    t.set_dim(list(out.shape)).set_stride([s // out.itemsize for s in out.strides])
    t.set_output(True).set_data_type(io)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.HeurMode.A])
    g.check_support()
    g.build_plans()
    pack[t] = out
    return g, pack


@pytest.mark.parametrize("out_layout", ["same", "other", "strided", "half"])
@pytest.mark.parametrize("direction", ["fprop", "dgrad"])
def test_graph_output_written_in_place_by_onednn(one: _onednn.OneDNN, monkeypatch: pytest.MonkeyPatch,
                                                 direction: str, out_layout: str) -> None:
    """A graph's fprop/dgrad output (no node reads it) is written by oneDNN straight into the
    caller's array at commit, whatever its layout (the input's, the other memory order, a
    strided view into a larger array) or type (BF16 rounded once by oneDNN): right values, no
    engine-side copy of it, and the memory around a strided view untouched."""
    import ml_dtypes

    import hipdnn
    from hipdnn.engines.reference import engine as reference_engine

    rng = np.random.default_rng(11)
    low = out_layout == "half"
    np_dtype = ml_dtypes.bfloat16 if low else np.float32
    io = hipdnn.DataType.BFLOAT16 if low else hipdnn.DataType.FLOAT
    x = _cl(rng.standard_normal((2, 16, 10, 10)).astype(np_dtype))
    w = rng.standard_normal((24, 16, 3, 3)).astype(np_dtype)
    dy = _cl(rng.standard_normal((2, 24, 10, 10)).astype(np_dtype))
    shape = (2, 24, 10, 10) if direction == "fprop" else (2, 16, 10, 10)
    base = None
    if out_layout in ("same", "half"):
        out = _cl(np.zeros(shape, np_dtype))
    elif out_layout == "other":
        out = np.zeros(shape, np_dtype)
    else:  # every other channel of a larger channels-last array
        base = np.full((shape[0], shape[2], shape[3], 2 * shape[1]), 7.0, np_dtype)
        out = np.moveaxis(base, -1, 1)[:, ::2]
    writes: list[int] = []
    real = _onednn.DeferredConv.write_into

    def spy(self: Any, view: np.ndarray) -> None:
        writes.append(view.__array_interface__["data"][0])
        real(self, view)

    copies: list[np.ndarray] = []
    commit = reference_engine.commit_output

    def spy_commit(view: np.ndarray, value: np.ndarray) -> None:
        copies.append(view)
        commit(view, value)

    monkeypatch.setattr(_onednn.DeferredConv, "write_into", spy)
    monkeypatch.setattr(reference_engine, "commit_output", spy_commit)
    g, pack = _graph_conv(direction, x, w, dy, out, io)
    g.execute(pack)
    assert writes == [out.__array_interface__["data"][0]] and not copies
    xt, wt, dyt = (torch.tensor(np.asarray(a, np.float64)) for a in (x, w, dy))
    if direction == "fprop":
        want = F.conv2d(xt, wt, padding=1).numpy()
    else:
        want = torch.ops.aten.convolution_backward(
            dyt, xt, wt, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
            [True, False, False])[0].numpy()
    if low:
        np.testing.assert_allclose(np.asarray(out, np.float64), want, rtol=1e-2,
                                   atol=1e-2 * np.abs(want).max())
    else:
        _close(np.asarray(out), want, direction)
    if base is not None:
        assert (base[..., 1::2] == 7.0).all()


def test_graph_outputs_sharing_a_kept_binding(one: _onednn.OneDNN,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Two fprop outputs of one problem (the same plan, so this thread's one kept binding)
    are each written with their own inputs into their own arrays, and executing again binds
    nothing new (the kept binding's temporaries are reused)."""
    import hipdnn

    rng = np.random.default_rng(14)
    f32 = hipdnn.DataType.FLOAT
    x1, x2 = (_cl(rng.standard_normal((2, 16, 8, 8)).astype(np.float32)) for _ in range(2))
    w = rng.standard_normal((24, 16, 3, 3)).astype(np.float32)
    g = hipdnn.Graph(io_data_type=f32, intermediate_data_type=f32, compute_data_type=f32)
    a1, a2, wt = g.tensor_like(x1, "x1"), g.tensor_like(x2, "x2"), g.tensor_like(w, "w")
    outs = [_cl(np.zeros((2, 24, 8, 8), np.float32)) for _ in range(2)]
    pack: dict[Any, np.ndarray] = {a1: x1, a2: x2, wt: w}
    for a, out in zip((a1, a2), outs, strict=True):
        t = g.conv_fprop(a, wt, padding=[1, 1], stride=[1, 1])
        t.set_dim(list(out.shape)).set_stride([s // 4 for s in out.strides]).set_output(True)
        pack[t] = out
    g.build()
    made: list[int] = []
    real = _onednn._Bound.__init__

    def counting(self: Any, *args: Any) -> None:
        made.append(1)
        real(self, *args)

    monkeypatch.setattr(_onednn._Bound, "__init__", counting)
    for _ in range(2):
        for out in outs:
            out[...] = 0
        g.execute(pack)
        for x, out in zip((x1, x2), outs, strict=True):
            want = F.conv2d(torch.tensor(x, dtype=torch.float64),
                            torch.tensor(w, dtype=torch.float64), padding=1).numpy()
            _close(out, want, "fprop")
    assert len(made) <= 1  # one binding, made by the first execute (or an earlier test)


def test_graph_output_over_an_input_is_not_written_early(one: _onednn.OneDNN) -> None:
    """An fprop whose output array is the input's own memory (same shape: K = C) is computed
    before anything is written (oneDNN is not handed the input as its output)."""
    import hipdnn

    rng = np.random.default_rng(12)
    x = _cl(rng.standard_normal((2, 8, 9, 9)).astype(np.float32))
    w = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
    want = F.conv2d(torch.tensor(x, dtype=torch.float64), torch.tensor(w, dtype=torch.float64),
                    padding=1).numpy()
    g, pack = _graph_conv("fprop", x, w, x, x, hipdnn.DataType.FLOAT)
    g.execute(pack)
    _close(x, want, "fprop")


def test_a_kernel_fault_is_a_typed_error_and_the_plan_stays_usable(
        one: _onednn.OneDNN, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault inside the oneDNN path (an internal assertion, a failed oneDNN call) reaches the
    caller as ExecutionError naming the node, the output is not written, and the same plan runs
    right once the fault is gone."""
    import hipdnn

    rng = np.random.default_rng(13)
    x = _cl(rng.standard_normal((2, 16, 6, 6)).astype(np.float32))
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    dy = _cl(rng.standard_normal((2, 16, 6, 6)).astype(np.float32))
    out = _cl(np.full((2, 16, 6, 6), 5.0, np.float32))
    g, pack = _graph_conv("dgrad", x, w, dy, out, hipdnn.DataType.FLOAT)
    for fault in (AssertionError("internal"), _onednn.OneDNNError("dnnl_primitive_execute", 5)):
        def broken(*args: Any, fault: BaseException = fault, **kwargs: Any) -> Any:
            raise fault

        monkeypatch.setattr(_onednn, "deferred", broken)
        with pytest.raises(hipdnn.ExecutionError, match="node"):
            g.execute(pack)
        assert (out == 5.0).all()
        monkeypatch.undo()
    g.execute(pack)
    want = torch.ops.aten.convolution_backward(
        torch.tensor(dy, dtype=torch.float64), torch.tensor(x, dtype=torch.float64),
        torch.tensor(w, dtype=torch.float64), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
        [True, False, False])[0].numpy()
    _close(out, want, "dgrad")


def test_a_forked_child_does_not_hang(one: _onednn.OneDNN) -> None:
    """After the parent ran oneDNN on GNU OpenMP threads, a forked child's convolution (which
    hung there on oneDNN) takes the tap GEMMs and gives the same values. (oneDNN's wheel is
    Linux-only, so the fixture has skipped wherever there is no os.fork.)"""
    rng = np.random.default_rng(14)
    x = _cl(rng.standard_normal((4, 32, 14, 14)).astype(np.float32))
    w = rng.standard_normal((32, 32, 3, 3)).astype(np.float32)
    args = ([1, 1], [1, 1], [1, 1], [1, 1], 1)
    y = K.conv_fprop(x, w, *args)
    assert _onednn._RAN[0]
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            ok = _onednn.library() is None and np.allclose(K.conv_fprop(x, w, *args), y,
                                                          rtol=1e-4, atol=1e-3)
            code = 0 if ok else 1
        finally:
            os._exit(code)
    assert wait_for_child(pid, "a convolution") == 0


def test_pointwise_weight_gradients_of_odd_shapes(one: _onednn.OneDNN,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """1x1 weight gradients cut into many parts (packed images, per-image products, slabs and
    blocks) over odd shapes, one channel in or out, 1x1 and 1xW images, channel slices of
    larger arrays: each result matches float64 sums, or the path declines (None: the caller's
    paths run); never a wrong gradient. Most take a product, packed ones included."""
    monkeypatch.setattr(_onednn, "WGRAD_PART_MACS", 1 << 10)
    monkeypatch.setattr(_onednn, "WGRAD_SMALL_PART_MACS", 1 << 8)
    packed: list[bool] = []
    real = _onednn._packed_plan

    def spy(*args: Any) -> Any:
        got = real(*args)
        packed.append(got is not None)
        return got

    monkeypatch.setattr(_onednn, "_packed_plan", spy)
    rng = np.random.default_rng(11)
    ran = declined = 0
    for n, c, k, h, w in itertools.product((2, 5), (1, 3, 17), (1, 2, 33), (1, 7), (1, 5)):
        for sliced in (False, True):
            big_x = rng.uniform(-1, 1, (n, c + 2 * sliced, h, w)).astype(np.float32)
            big_dy = rng.uniform(-1, 1, (n, k + 3 * sliced, h, w)).astype(np.float32)
            x, dy = (big_x[:, 1:1 + c], big_dy[:, 2:2 + k]) if sliced else (big_x, big_dy)
            got = _onednn.conv("wgrad", x, dy, (k, c, 1, 1), [0, 0], [0, 0], [1, 1], [1, 1], 1)
            if got is None:
                declined += 1
                continue
            ran += 1
            want = np.einsum("nkhw,nchw->kc", dy.astype(np.float64), x.astype(np.float64))
            _close(got, want[:, :, None, None], "wgrad")
    assert ran > 4 * declined and any(packed)


def test_a_packed_product_that_fails_to_build_declines_and_frees(
        one: _onednn.OneDNN, monkeypatch: pytest.MonkeyPatch) -> None:
    """When oneDNN fails while building a packed product (here its second reorder), the part
    declines (None: the caller's paths run), the reorder already made is destroyed, and the
    same problem builds once the fault is gone."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (3, 8, 4, 4)).astype(np.float32)
    dy = rng.uniform(-1, 1, (3, 6, 4, 4)).astype(np.float32)
    out = np.empty((6, 8), np.float32)
    made: list[int] = []
    destroyed: list[int] = []
    real_reorder, real_destroy = one.reorder, one.lib.dnnl_primitive_destroy

    def reorder(src: Any, dst: Any) -> Any:
        if made:
            raise _onednn.OneDNNError("dnnl_reorder_primitive_desc_create", 5)
        got = real_reorder(src, dst)
        made.append(int(got.handle.value or 0))
        return got

    def destroy(handle: Any) -> int:
        destroyed.append(int(getattr(handle, "value", handle) or 0))
        return int(real_destroy(handle))

    one._cache.clear()
    monkeypatch.setattr(one, "reorder", reorder)
    monkeypatch.setattr(one.lib, "dnnl_primitive_destroy", destroy)
    assert _onednn._packed_plan(one, x, dy, out) is None
    assert len(made) == 1 and made[0] in destroyed
    monkeypatch.undo()
    one._cache.clear()  # the failure was cached as "no fast product" for this problem
    plan = _onednn._packed_plan(one, x, dy, out)
    assert plan is not None
    bound = _onednn._Bound(one, plan, 1)
    try:
        bound.bind([dy, x], out)
        bound.run()
    finally:
        bound.close()
    _close(out, np.einsum("nkhw,nchw->kc", dy.astype(np.float64), x.astype(np.float64)), "wgrad")

"""hipdnn/engines/reference/_scratch.py: buffers come back for reuse, never to two holders at
once, at most KEEP bytes stay; the convolution gives its columns back and stays exact when they
are reused."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from hipdnn.engines.reference import _conv, _scratch


@pytest.fixture(autouse=True)
def empty_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_scratch, "_FREE", [])


def test_a_given_buffer_is_reused_with_the_asked_dtype_and_size() -> None:
    (a,) = _scratch.take(1, 1000, np.float64)
    assert a.dtype == np.float64 and a.shape == (1000,)
    _scratch.give([a])
    (b,) = _scratch.take(1, 500, np.float32)
    assert b.shape == (500,) and np.shares_memory(a, b)
    (c,) = _scratch.take(1, 10)  # the only free buffer is held: a new one
    assert not np.shares_memory(b, c)


def test_concurrent_takers_never_share_a_buffer() -> None:
    _scratch.give(_scratch.take(4, 4096))
    held: list[np.ndarray] = []
    lock = threading.Lock()

    def grab() -> None:
        got = _scratch.take(2, 4096)
        with lock:
            held.extend(got)

    threads = [threading.Thread(target=grab) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(held) == 16
    assert not any(np.shares_memory(a, b) for i, a in enumerate(held) for b in held[i + 1:])


def test_at_most_keep_bytes_stay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_scratch, "KEEP", 10_000)
    _scratch.give(_scratch.take(5, 1000))  # 5 x 4000 bytes
    assert sum(b.nbytes for b in _scratch._FREE) <= 10_000 and len(_scratch._FREE) == 2


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv_gives_its_columns_back_and_stays_exact(layout: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, (2, 16, 9, 9)).astype(np.float32)
    if layout == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    w = rng.integers(-3, 4, (8, 16, 3, 3)).astype(np.float32)
    args = ([1, 1], [1, 1], [1, 1], [1, 1])
    want = _conv.conv_fprop(x.astype(np.float64), w.astype(np.float64), *args, acc=np.float64)
    for _ in range(3):  # the second and third calls run on the first call's columns
        y = _conv.conv_fprop(x, w, *args)
        np.testing.assert_array_equal(y, want)  # small integers: exact in float32
        assert len(_scratch._FREE) >= 1
        dy = rng.integers(-3, 4, y.shape).astype(np.float32)
        dw = _conv.conv_wgrad(x, dy, w.shape, *args)
        dw64 = _conv.conv_wgrad(x.astype(np.float64), dy.astype(np.float64), w.shape, *args)
        np.testing.assert_array_equal(dw, dw64)

"""graph.execute remembers bindings for framework values (numpy, torch, __cuda_array_interface__,
__dlpack__, __array_interface__) keyed by per-call signatures: a remembered binding is reused
only while pointer, shape, strides, dtype, device and read-only flag read the same on this
call; any change goes through the checked path again (same errors as a first call)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn.core.errors import VariantPackError
from hipdnn.graph.graph import Graph
from hipdnn.pipeline import packsig as _packsig

F = hipdnn.DataType.FLOAT


def _graph() -> tuple[Graph, hipdnn.Tensor, hipdnn.Tensor, hipdnn.Tensor]:
    g = Graph("sig", io_data_type=F, compute_data_type=F, intermediate_data_type=F)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    b = g.tensor(dim=[1, 3, 1, 1], name="b")
    y = g.relu(g.bias(x, b, name="add"), name="relu").set_output(True)
    g.build()
    return g, x, b, y


def _arrays(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((2, 3, 4, 4)).astype(np.float32),
            rng.standard_normal((1, 3, 1, 1)).astype(np.float32),
            np.full((2, 3, 4, 4), np.nan, np.float32))


def _check(ya: Any, xa: np.ndarray, ba: np.ndarray) -> None:
    np.testing.assert_allclose(np.asarray(ya), np.maximum(xa + ba, 0), rtol=1e-6, atol=1e-6)


class ArrayLike:
    """A host array behind a mutable ``__array_interface__`` dict (read on every access)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a
        self.iface = {"data": (a.ctypes.data, False), "shape": a.shape, "strides": None,
                      "typestr": a.dtype.str, "version": 3}

    @property
    def __array_interface__(self) -> dict[str, Any]:
        return dict(self.iface)


class DLOnly:
    """Only ``__dlpack__`` (delegating to numpy's)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.a.__dlpack_device__()


def test_numpy_pack_is_remembered_and_rechecked(reference_only: None) -> None:
    g, x, b, y = _graph()
    xa, ba, ya = _arrays()
    pack = {x: xa, b: ba, y: ya}
    g.execute(pack)
    _check(ya, xa, ba)
    assert len(g._fast) == 1
    xa[...] = -xa  # contents change: the binding reads them
    ya[...] = np.nan
    g.execute(pack)
    _check(ya, xa, ba)
    assert len(g._fast) == 1
    # same object made read-only: caught again on this call
    ya.flags.writeable = False
    with pytest.raises(VariantPackError, match="read-only"):
        g.execute(pack)
    ya.flags.writeable = True
    # other strides (a transposed copy): rechecked; the reference engine reads it through its
    # own strides, so the result is still right
    xt = np.ascontiguousarray(xa.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    ya[...] = np.nan
    g.execute({x: xt, b: ba, y: ya})
    _check(ya, xa, ba)
    # same memory, another dtype: rechecked, refused
    with pytest.raises(VariantPackError, match="data type"):
        g.execute({x: xa.view(np.int32), b: ba, y: ya})
    # a new array object at a new pointer: a new binding, right result
    xb, _, yb = _arrays(1)
    g.execute({x: xb, b: ba, y: yb})
    _check(yb, xb, ba)
    assert len(g._fast) == 3
    g.close()


def test_resized_array_gets_a_new_binding(reference_only: None) -> None:
    g, x, b, y = _graph()
    xa, ba, _ = _arrays()
    ya = np.zeros(2 * 3 * 4 * 4, np.float32)
    g.execute({x: xa, b: ba, y: ya.reshape(2, 3, 4, 4)})
    before = _packsig.signature(ya)
    ya.resize(10 ** 6, refcheck=False)  # moves the data in place: same object, new pointer
    assert _packsig.signature(ya) != before
    yv = ya[:96].reshape(2, 3, 4, 4)
    g.execute({x: xa, b: ba, y: yv})
    _check(yv, xa, ba)
    g.close()


def test_interface_objects_are_read_each_call(reference_only: None) -> None:
    g, x, b, y = _graph()
    xa, ba, ya = _arrays()
    cx = ArrayLike(xa)
    dy = DLOnly(ya)
    pack = {x: cx, b: ba, y: dy}
    g.execute(pack)
    _check(ya, xa, ba)
    g.execute(pack)
    assert len(g._fast) == 1
    cx.iface["typestr"] = "<i4"  # the same object now says int32: refused on this call
    with pytest.raises(VariantPackError, match="data type"):
        g.execute(pack)
    cx.iface["typestr"] = "<f4"
    cx.iface["shape"] = (2, 3, 15)  # too small to hold the tensor, even by pointer
    with pytest.raises(VariantPackError, match="shape"):
        g.execute(pack)
    cx.iface["shape"] = xa.shape
    dy.a = ya.view(np.int32)  # DLPack exporter now exports int32
    with pytest.raises(VariantPackError, match="data type"):
        g.execute(pack)
    dy.a = ya
    ya[...] = np.nan
    g.execute(pack)
    _check(ya, xa, ba)
    g.close()


def test_torch_tensors_are_read_each_call(reference_only: None) -> None:
    torch = pytest.importorskip("torch")
    g, x, b, y = _graph()
    xa, ba, ya = _arrays()
    xt, bt, yt = (torch.from_numpy(a) for a in (xa, ba, ya))
    pack = {x: xt, b: bt, y: yt}
    g.execute(pack)
    g.execute(pack)
    _check(yt, xa, ba)
    assert len(g._fast) == 1
    xt.as_strided_(xt.shape, (48, 1, 12, 3))  # same tensor object, other strides:
    yt[...] = float("nan")
    g.execute(pack)  # re-read, and the reference engine follows the tensor's strides
    _check(yt, xt.numpy(), ba)
    xt.as_strided_(xt.shape, (48, 16, 4, 1))
    xt.data = xt.data.double()  # same object, new dtype and memory
    with pytest.raises(VariantPackError, match="data type"):
        g.execute(pack)
    g.close()


def test_values_that_are_never_remembered(reference_only: None) -> None:
    g, x, b, y = _graph()
    xa, ba, ya = _arrays()
    # True == 1 and 1.0 == 1: bool and float keys/values never reuse an int binding
    pack = {x: xa.ctypes.data, b: ba.ctypes.data, y: ya.ctypes.data}
    g.execute(pack)
    with pytest.raises(VariantPackError, match="float"):
        g.execute({**pack, x: float(pack[x])})
    with pytest.raises(VariantPackError):
        g.execute({**pack, x: True})
    assert _packsig.kind_of(True) is None and _packsig.kind_of(np.float32(1)) is None
    # a Mapping that is not a dict takes the checked path
    from types import MappingProxyType
    g.execute(MappingProxyType({x: xa, b: ba, y: ya}))
    assert len(g._fast) == 1
    g.close()


def test_scalar_from_array_contents_is_not_baked(reference_only: None) -> None:
    g = Graph("bn", io_data_type=F, compute_data_type=F, intermediate_data_type=F)
    x = g.tensor(dim=[2, 3, 4, 4], name="x")
    s, bi = (g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias"))
    eps = g.tensor(dim=[1], name="eps", is_pass_by_value=True)
    y, mean, inv = g.batchnorm(x, s, bi, epsilon=eps)[:3]
    for t in (y, mean, inv):
        assert t is not None
        t.set_output(True)
    g.build()
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    sa, ba = np.ones((1, 3, 1, 1), np.float32), np.zeros((1, 3, 1, 1), np.float32)
    outs = [np.empty((2, 3, 4, 4), np.float32), np.empty((1, 3, 1, 1), np.float32),
            np.empty((1, 3, 1, 1), np.float32)]
    epsa = np.array([1e-5], np.float32)
    pack = {x: xa, s: sa, bi: ba, eps: epsa, y: outs[0], mean: outs[1], inv: outs[2]}
    g.execute(pack)
    first = outs[2].copy()
    epsa[0] = 100.0  # the array's contents are the scalar: read again on this call
    g.execute(pack)
    assert not g._fast
    np.testing.assert_allclose(outs[2].ravel(), 1 / np.sqrt(xa.var(axis=(0, 2, 3)) + 100.0),
                               rtol=1e-4)
    assert not np.allclose(first, outs[2])
    g.execute({**pack, eps: 1e-5})  # a Python float is part of the signature
    g.execute({**pack, eps: 1e-5})
    assert len(g._fast) == 1
    np.testing.assert_allclose(outs[2], first, rtol=1e-5)
    g.execute({**pack, eps: 100.0})
    assert len(g._fast) == 2
    assert not np.allclose(first, outs[2])
    g.close()


def test_matchers_read_every_value_each_call() -> None:
    """compile_matcher: equal reads hit; any changed read, key, length, workspace or handle
    misses; values without a kind are never remembered."""
    a = np.zeros((2, 3), np.float32)
    b = np.zeros((4,), np.float16)
    handle = object()
    m = _packsig.compile_matcher({1: a, 2: b, 3: 4096, 4: 0.5}, 8192, handle, "run")
    assert m is not None
    assert m({1: a[:], 2: b, 3: 4096, 4: 0.5}, 8192, handle) == "run"
    misses = [({1: a.T.T.copy(), 2: b, 3: 4096, 4: 0.5}, 8192, handle),  # other pointer
              ({1: a.reshape(3, 2), 2: b, 3: 4096, 4: 0.5}, 8192, handle),
              ({1: a, 2: b.view(np.int16), 3: 4096, 4: 0.5}, 8192, handle),
              ({1: a, 2: b, 3: 4097, 4: 0.5}, 8192, handle),
              ({1: a, 2: b, 3: 4096, 4: 0.25}, 8192, handle),
              ({1: a, 2: b, 3: 4096}, 8192, handle),
              ({2: b, 1: a, 3: 4096, 4: 0.5}, 8192, handle),  # keys in another order
              ({1: a, 2: b, 3: True, 4: 0.5}, 8192, handle),
              ({1: a, 2: b, 3: 4096, 4: 0.5}, 8193, handle),
              ({1: a, 2: b, 3: 4096, 4: 0.5}, 8192, object())]
    for pack, ws, h in misses:
        assert m(pack, ws, h) is None, pack
    a.flags.writeable = False
    assert m({1: a, 2: b, 3: 4096, 4: 0.5}, 8192, handle) is None
    z = _packsig.compile_matcher({1: 0.0}, None, None, "run")
    assert z is not None and z({1: -0.0}, None, None) is None and z({1: 0.0}, None, None)
    for value in (True, np.float32(1.0), np.int64(5)):
        assert _packsig.compile_matcher({1: value}, None, None, "run") is None
    assert _packsig.compile_matcher({"x": 1}, None, None, "run") is None


def test_cai_matcher_keeps_its_own_copy() -> None:
    class Dev:
        def __init__(self) -> None:
            self.iface = {"data": (4096, False), "shape": [2, 3], "typestr": "<f4",
                          "strides": None, "version": 3}

        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:
            return self.iface  # the same dict every time, mutated in place below

    d = Dev()
    m = _packsig.compile_matcher({1: d}, None, None, "run")
    assert m is not None and m({1: d}, None, None) == "run"
    d.iface["shape"].append(1)
    assert m({1: d}, None, None) is None
    d.iface["shape"].pop()
    d.iface["data"] = (8192, False)
    assert m({1: d}, None, None) is None

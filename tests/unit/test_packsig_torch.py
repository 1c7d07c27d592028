"""Torch tensors in ``graph.execute``'s remembered bindings (hipdnn/pipeline/packsig.py).

Exact ``torch.Tensor`` values are matched by torch's own tensor guard (shape, strides, dtype,
device, view bits in one C call, after a self-test) plus ``data_ptr()``; other torch types, and
every torch where the guard is missing or fails its self-test, by the per-value ``torch`` test.
Both paths are checked here against one oracle: a later value hits exactly when its type,
pointer, shape, strides, dtype and device read as the bound value's did and it carries neither
view bit; nothing is trusted by identity. Includes the edge cases a shortcut could miss: the
stride of a size-1 axis, zero-size tensors, expanded (0) strides, channels-last against
contiguous with the same shape, the same pointer under another dtype.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipdnn.pipeline import packsig as _packsig

torch = pytest.importorskip("torch")


@pytest.fixture(params=["guard", "plain"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test runs with torch's guard and with the per-value test (guard switched off)."""
    if request.param == "plain":
        monkeypatch.setattr(_packsig, "_torch_guards", None)
    else:
        monkeypatch.setattr(_packsig, "_torch_guards", _packsig._UNSET)  # decided afresh
    yield request.param


def _guarded(match: Any) -> bool:
    return "g_check" in match.__code__.co_freevars


def _oracle(bound: Any, value: Any) -> bool:
    return (type(value) is type(bound) and value.data_ptr() == bound.data_ptr()
            and tuple(value.shape) == tuple(bound.shape) and value.stride() == bound.stride()
            and value.dtype == bound.dtype and value.device == bound.device
            and not value.is_neg() and not value.is_conj())


def test_guard_passes_its_self_test_on_this_torch() -> None:
    # torch is pinned in the test extra: the fast path must be the one taken here
    assert _packsig._load_tensor_guards() is not None


def test_self_test_rejects_a_guard_that_skips_a_read() -> None:
    api = _packsig._load_tensor_guards()
    assert api is not None

    def no_strides(ts: list[Any]) -> Any:
        want = [(type(t), tuple(t.shape), t.dtype, t.device, t.is_neg(), t.is_conj())
                for t in ts]
        return lambda *vs: [(type(v), tuple(v.shape), v.dtype, v.device, v.is_neg(),
                             v.is_conj()) for v in vs] == want

    def no_neg(ts: list[Any]) -> Any:
        want = [(tuple(t.shape), t.stride(), t.dtype, t.device) for t in ts]
        return lambda *vs: [(tuple(v.shape), v.stride(), v.dtype, v.device) for v in vs] == want

    for make in (no_strides, no_neg):
        assert not _packsig._guard_self_test(api._replace(make=make), torch)


def test_missing_guard_api_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def gone(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("another signature")

    monkeypatch.setattr(torch._C._dynamo.guards, "TensorGuards", gone)
    assert _packsig._load_tensor_guards() is None
    monkeypatch.setattr(_packsig, "_torch_guards", _packsig._UNSET)
    t = torch.zeros(2, 3)
    m = _packsig.compile_matcher({1: t}, None, None, "run")
    assert m is not None and not _guarded(m)
    assert m({1: t[:]}, None, None) == "run" and m({1: t.t().t()[:, :2]}, None, None) is None


def test_a_guard_that_cannot_be_made_leaves_the_per_value_test(
        monkeypatch: pytest.MonkeyPatch) -> None:
    api = _packsig._load_tensor_guards()
    assert api is not None

    def refuse(ts: list[Any]) -> Any:
        raise RuntimeError("cannot guard these")

    monkeypatch.setattr(_packsig, "_torch_guards", api._replace(make=refuse))
    t = torch.zeros(2, 3)
    m = _packsig.compile_matcher({1: t, 2: 4096}, None, None, "run")
    assert m is not None and not _guarded(m)
    assert m({1: t[:], 2: 4096}, None, None) == "run" and m({1: t.t(), 2: 4096}, None, None) is None


def test_every_read_is_checked(path: str) -> None:
    base = torch.zeros(64)
    x = base[:24].view(2, 3, 4)
    s = base[32:35].view(1, 3, 1)  # size-1 axes
    e = torch.zeros(0, 3)  # zero-size
    m = _packsig.compile_matcher({1: x, 2: s, 3: e, 4: 4096}, None, None, "run")
    assert m is not None and _guarded(m) == (path == "guard")

    def call(**over: Any) -> Any:
        pack = {1: x.view(2, 3, 4), 2: s.view(1, 3, 1), 3: e.view(0, 3), 4: 4096}
        pack.update({int(k[1]): v for k, v in over.items()})
        return m(pack, None, None)

    assert call() == "run"  # other objects, equal reads
    misses = {
        "shape": dict(v1=base[:24].view(2, 4, 3)),
        "strides": dict(v1=base[:24].view(2, 4, 3).transpose(1, 2)),
        "pointer": dict(v1=base[1:25].view(2, 3, 4)),
        "dtype, same pointer": dict(v1=base[:24].view(torch.int32).view(2, 3, 4)),
        "device": dict(v1=torch.zeros(2, 3, 4, device="meta")),
        "negative bit": dict(v1=torch._neg_view(x)),
        "size-1 axis stride": dict(v2=base.as_strided((1, 3, 1), (3, 1, 7), 32)),
        "size-1 axis stride 0": dict(v2=base.as_strided((1, 3, 1), (0, 1, 0), 32)),
        "expanded": dict(v2=base[32:33].view(1, 1, 1).expand(1, 3, 1)),
        "zero-size strides": dict(v3=e.as_strided((0, 3), (1, 1))),
        "zero-size shape": dict(v3=torch.zeros(3, 0)),
        "type": dict(v1=x.numpy()),
        "an int": dict(v1=x.data_ptr()),
        "subclass": dict(v1=x.as_subclass(type("Sub", (torch.Tensor,), {}))),
    }
    for what, over in misses.items():
        assert call(**over) is None, what
    assert m({1: x, 2: s, 3: e, 4: 4096}, None, None) == "run"


def test_channels_last_against_contiguous(path: str) -> None:
    nchw = torch.zeros(2, 3, 4, 5)
    nhwc = nchw.clone(memory_format=torch.channels_last)
    for bound, other in ((nchw, nhwc), (nhwc, nchw)):
        m = _packsig.compile_matcher({1: bound}, None, None, "run")
        assert m is not None
        assert m({1: bound[:]}, None, None) == "run"
        # same pointer, dtype and shape; only the strides differ
        assert m({1: bound.as_strided(other.shape, other.stride())}, None, None) is None


def test_complex_conjugate_and_negative(path: str) -> None:
    z = torch.zeros(2, 3, dtype=torch.complex64)
    m = _packsig.compile_matcher({1: z}, None, None, "run")
    assert m is not None and m({1: z[:]}, None, None) == "run"
    assert m({1: z.conj()}, None, None) is None
    assert m({1: torch._neg_view(z)}, None, None) is None
    # views with a bit are never bound (execute reads them through a resolved copy)
    assert _packsig.compile_matcher({1: z.conj()}, None, None, "run") is None
    assert _packsig.compile_matcher({1: z.conj().imag}, None, None, "run") is None


def test_thread_excluding_a_view_bit_misses(path: str) -> None:
    x = torch.zeros(2, 3)
    m = _packsig.compile_matcher({1: x}, None, None, "run")
    assert m is not None
    dk = torch._C.DispatchKey
    for key in (dk.Negative, dk.Conjugate):
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(key)):
            # the guard compares key sets after the thread's exclusions: a negative view
            # would read as plain there, so the guarded matcher misses on every value
            assert m({1: torch._neg_view(x)}, None, None) is None
            assert m({1: x}, None, None) == (None if path == "guard" else "run")
    assert m({1: x}, None, None) == "run"


def test_binding_while_a_thread_includes_a_view_bit_is_not_guarded() -> None:
    x = torch.zeros(2, 3)
    with torch._C._IncludeDispatchKeyGuard(torch._C.DispatchKey.Negative):
        m = _packsig.compile_matcher({1: x}, None, None, "run")
    assert m is not None and not _guarded(m)
    assert m({1: x[:]}, None, None) == "run" and m({1: torch._neg_view(x)}, None, None) is None


def test_the_guard_is_not_decided_on_a_thread_with_view_bit_keys(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_packsig, "_torch_guards", _packsig._UNSET)
    x = torch.zeros(2, 3)
    with torch._C._IncludeDispatchKeyGuard(torch._C.DispatchKey.Negative):
        m = _packsig.compile_matcher({1: x}, None, None, "run")
    assert m is not None and not _guarded(m)
    assert _packsig._torch_guards is _packsig._UNSET  # not decided there, nor cached as None
    m = _packsig.compile_matcher({1: x}, None, None, "run")
    assert m is not None and _guarded(m)


def test_one_object_twice_and_other_types(path: str) -> None:
    x, y = torch.zeros(2, 3), torch.zeros(2, 3)
    m = _packsig.compile_matcher({1: x, 2: x}, None, None, "run")
    assert m is not None and m({1: x, 2: x[:]}, None, None) == "run"
    assert m({1: x, 2: x}, None, None) == "run"  # the second occurrence is not guarded
    assert m({1: x, 2: y}, None, None) is None
    m = _packsig.compile_matcher({1: x, 2: y}, None, None, "run")
    assert m is not None and m({1: x, 2: y}, None, None) == "run"
    assert m({1: x, 2: x}, None, None) is None  # other pointer (and, guarded, one object)
    p = torch.nn.Parameter(torch.zeros(3), requires_grad=False)
    sub = torch.zeros(3).as_subclass(type("Sub", (torch.Tensor,), {}))
    mp = _packsig.compile_matcher({1: p, 2: sub}, None, torch, "run")
    assert mp is not None and _guarded(mp) == (path == "guard")
    assert mp({1: p, 2: sub}, None, torch) == "run"
    assert mp({1: p.data, 2: sub}, None, torch) is None  # a Tensor, not the Parameter type
    ws = torch.zeros(16, dtype=torch.uint8)
    mw = _packsig.compile_matcher({1: x}, ws, None, "run")
    assert mw is not None and mw({1: x}, ws[:], None) == "run"
    assert mw({1: x}, ws[:8], None) is None and mw({1: x}, ws.view(torch.int8), None) is None


# ---------------------------------------------------------------- property: matcher == oracle

_BUF = torch.zeros(256)
_VIEWS = {"f32": _BUF, "i32": _BUF.view(torch.int32), "c64": _BUF.view(torch.complex64),
          "f32b": torch.zeros(256)}


@st.composite
def _tensor(draw: st.DrawFn, like: Any = None) -> Any:
    """A strided view of a shared buffer: sizes 0-3 (size-1 and zero-size axes), strides 0-9
    (expanded, overlapping, gapped), offsets 0-2; near ``like`` (the bound geometry) half the
    time, so that hits and near-misses are both drawn."""
    if like is not None and draw(st.booleans()):
        name, shape, strides, offset = like
        field = draw(st.sampled_from(["none", "buffer", "dim", "stride", "offset"]))
        i = draw(st.integers(0, max(len(shape) - 1, 0)))
        if field == "buffer":
            name = draw(st.sampled_from(sorted(_VIEWS)))
        elif field == "dim" and shape:
            shape = (*shape[:i], draw(st.integers(0, 3)), *shape[i + 1:])
        elif field == "stride" and shape:
            strides = (*strides[:i], draw(st.integers(0, 9)), *strides[i + 1:])
        elif field == "offset":
            offset = draw(st.integers(0, 2))
    else:
        name = draw(st.sampled_from(sorted(_VIEWS)))
        ndim = draw(st.integers(0, 4))
        shape = tuple(draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
        strides = tuple(draw(st.lists(st.integers(0, 9), min_size=ndim, max_size=ndim)))
        offset = draw(st.integers(0, 2))
    t = _VIEWS[name].as_strided(shape, strides, offset)
    bit = draw(st.sampled_from(["none", "none", "neg", "conj"]))
    if bit == "neg":
        t = torch._neg_view(t)
    elif bit == "conj" and t.dtype.is_complex:
        t = t.conj()
    return t


def _geometry(t: Any) -> tuple[str, tuple[int, ...], tuple[int, ...], int]:
    name = next(k for k, v in _VIEWS.items()
                if v.dtype == t.dtype and v.untyped_storage().data_ptr()
                == t.untyped_storage().data_ptr())
    return name, tuple(t.shape), t.stride(), t.storage_offset()


@settings(max_examples=400, deadline=None)
@given(st.data(), st.sampled_from(["guard", "plain"]))
def test_matcher_agrees_with_the_oracle(data: st.DataObject, which: str) -> None:
    saved = _packsig._torch_guards
    _packsig._torch_guards = _packsig._UNSET if which == "guard" else None
    try:
        bound = data.draw(_tensor())
        m = _packsig.compile_matcher({1: bound, 2: 64}, None, None, "run")
        if bound.is_neg() or bound.is_conj():
            assert m is None
            return
        assert m is not None and _guarded(m) == (which == "guard")
        for _ in range(4):
            value = data.draw(_tensor(like=_geometry(bound)))
            got = m({1: value, 2: 64}, None, None)
            assert (got == "run") == _oracle(bound, value), (bound.shape, bound.stride(),
                                                             value.shape, value.stride())
    finally:
        _packsig._torch_guards = saved


def test_numpy_read_only_flag_still_read(path: str) -> None:
    a = np.zeros((2, 3), np.float32)
    t = torch.zeros(2, 3)
    m = _packsig.compile_matcher({1: a, 2: t}, None, None, "run")
    assert m is not None and m({1: a, 2: t}, None, None) == "run"
    a.flags.writeable = False
    assert m({1: a, 2: t}, None, None) is None

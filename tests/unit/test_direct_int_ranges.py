"""hipdnn.direct: an integer argument must fit its C parameter before the C call.

ctypes converts an out-of-range Python int without a word: ``-1`` for a ``size_t`` arrives as
2**64-1, ``2**40`` for an ``int`` as 0. A :class:`Session` refuses both, naming the function, the
parameter, its C type, the valid range (or an enum's names) and the value, with nothing made
and no C call; a retry with a fitting value then goes through. The fakes below record what C
would receive; tests/live/test_direct_int_ranges.py runs the same on the real library.
"""

from __future__ import annotations

import ctypes
from ctypes import byref, c_size_t, c_void_p, cast
from typing import Any

import numpy as np
import pytest
from test_direct import FakeHip  # host memory standing in for HIP's

from hipdnn.core.errors import ArgumentError
from hipdnn.direct import Session
from miopen_ctypes import MIOpenLibrary
from miopen_ctypes import types as mt
from miopen_ctypes.enums import miopenBackendAttributeName_t, miopenLRNMode_t, miopenPoolingMode_t

INT_BITS = 8 * ctypes.sizeof(ctypes.c_int)
LONG_BITS = 8 * ctypes.sizeof(ctypes.c_long)  # 32 on Windows, 64 on Linux
SIZE_T_BITS = 8 * ctypes.sizeof(ctypes.c_size_t)


class Fake:
    """Records each C call (name, arguments) and the objects alive."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.made = 0
        self.live: set[int] = set()

    def _new(self, out: Any, kind: Any) -> None:
        self.made += 1
        address = 0x1000 + 0x10 * self.made
        self.live.add(address)
        out[0] = cast(c_void_p(address), kind)

    def _gone(self, handle: Any) -> None:
        self.live.remove(mt.pointer_value(handle))

    def _record(self, name: str) -> Any:
        return lambda *args: self.calls.append((name, args))

    def functions(self) -> dict[str, Any]:
        recorded = ("miopenSet2dPoolingDescriptor", "miopenSetLRNDescriptor", "miopenSetTensorDescriptor",
                    "miopenBackendSetAttribute", "miopenGetMultiMarginLossForwardWorkspaceSize",
                    "miopenConvolutionForwardGetSolutionWorkspaceSize", "miopenPoolingForward",
                    "miopenGLUForward")
        return {
            "miopenCreate": lambda out: self._new(out, mt.miopenHandle_t),
            "miopenDestroy": self._gone,
            "miopenCreateTensorDescriptor": lambda out: self._new(out, mt.miopenTensorDescriptor_t),
            "miopenDestroyTensorDescriptor": self._gone,
            "miopenCreatePoolingDescriptor": lambda out: self._new(out, mt.miopenPoolingDescriptor_t),
            "miopenDestroyPoolingDescriptor": self._gone,
            "miopenCreateLRNDescriptor": lambda out: self._new(out, mt.miopenLRNDescriptor_t),
            "miopenDestroyLRNDescriptor": self._gone,
            **{name: self._record(name) for name in recorded},
        }

    def called(self, name: str) -> list[tuple[Any, ...]]:
        return [args for n, args in self.calls if n == name]


@pytest.fixture
def fake() -> Fake:
    return Fake()


@pytest.fixture
def session(fake: Fake) -> Any:
    with Session(MIOpenLibrary.from_functions(fake.functions(), version=(3, 5, 1)), FakeHip()) as s:
        yield s
    assert fake.live == set(), "the session left MIOpen objects alive"


def _h(kind: Any) -> Any:
    """A non-NULL handle of ``kind`` (the fakes never read it)."""
    return cast(c_void_p(0x7000), kind)


BACKEND = _h(mt.miopenBackendDescriptor_t)
TENSOR = _h(mt.miopenTensorDescriptor_t)
CONV = _h(mt.miopenConvolutionDescriptor_t)


def _refused(match: str) -> Any:
    return pytest.raises(ArgumentError, match=match)


def test_int_parameters_refuse_what_a_c_int_cannot_hold(session: Session, fake: Fake) -> None:
    pool = session.descriptor("Pooling")
    mode = miopenPoolingMode_t.miopenPoolingMax
    low, high = -(2 ** (INT_BITS - 1)), 2 ** (INT_BITS - 1) - 1
    for bad in (2**31, 2**40, -(2**31) - 1, 2**64, np.int64(2**31)):
        with _refused(rf"^miopenSet2dPoolingDescriptor\(windowHeight\): the C parameter is int "
                      rf"\(valid: {low}\.\.{high}\); got {int(bad)}$"):
            session.call("miopenSet2dPoolingDescriptor", pool, mode, bad, 2, 0, 0, 2, 2)
    assert fake.called("miopenSet2dPoolingDescriptor") == []  # no C call
    session.call("miopenSet2dPoolingDescriptor", pool, mode, high, low, 0, 0, 2, 2)  # the edges pass
    session.call("miopenSet2dPoolingDescriptor", pool, mode, np.int32(3), True, 0, 0, 2, 2)  # a retry
    assert [args[2:4] for args in fake.called("miopenSet2dPoolingDescriptor")] == [(high, low), (3, 1)]


def test_a_refused_setter_makes_no_descriptor(session: Session, fake: Fake) -> None:
    with _refused(r"^miopenSet2dPoolingDescriptor\(pad_w\): the C parameter is int .*; got -4294967297$"):
        session.descriptor("Pooling", "miopenSet2dPoolingDescriptor", miopenPoolingMode_t.miopenPoolingMax,
                           2, 2, 0, -(2**32) - 1, 2, 2)
    assert fake.made == 0 and fake.calls == []  # nothing created, nothing set
    pool = session.descriptor("Pooling", "miopenSet2dPoolingDescriptor", miopenPoolingMode_t.miopenPoolingMax,
                              2, 2, 0, 1, 2, 2)
    assert mt.pointer_value(fake.called("miopenSet2dPoolingDescriptor")[0][0]) == mt.pointer_value(pool)


def test_enums_refuse_values_they_do_not_declare(session: Session, fake: Fake) -> None:
    pool = session.descriptor("Pooling")
    names = ", ".join(f"{m.name} \\({int(m)}\\)" for m in sorted(miopenPoolingMode_t, key=int))
    for bad in (7, -1, 2**32, 2**40):
        with _refused(rf"^miopenSet2dPoolingDescriptor\(mode\): the C parameter is miopenPoolingMode_t "
                      rf"\(an enum: valid: {names}\); got {bad}$"):
            session.call("miopenSet2dPoolingDescriptor", pool, bad, 2, 2, 0, 0, 2, 2)
    assert fake.calls == []
    # a large enum names the first values and where the rest are
    with _refused(r"^miopenBackendSetAttribute\(attributeName\): the C parameter is "
                  r"miopenBackendAttributeName_t \(an enum: valid: .*, \.\.\. \(\d+ names: "
                  r"miopen_ctypes\.enums\.miopenBackendAttributeName_t\)\); got 99999$"):
        session.call("miopenBackendSetAttribute", BACKEND, 99999, 0, 1, None)
    # a declared value passes as a plain int, a member, a numpy int or a bool (True is 1)
    session.call("miopenSet2dPoolingDescriptor", pool, int(miopenPoolingMode_t.miopenPoolingAverage),
                 2, 2, 0, 0, 2, 2)
    session.call("miopenSet2dPoolingDescriptor", pool, np.uint8(0), 2, 2, 0, 0, 2, 2)
    session.call("miopenSet2dPoolingDescriptor", pool, True, 2, 2, 0, 0, 2, 2)
    assert [args[1] for args in fake.called("miopenSet2dPoolingDescriptor")] == [1, 0, 1]


def test_unsigned_parameters_refuse_negative_values(session: Session, fake: Fake) -> None:
    lrn = session.descriptor("LRN")
    mode = miopenLRNMode_t.miopenLRNCrossChannel
    with _refused(r"^miopenSetLRNDescriptor\(lrnN\): the C parameter is unsigned int "
                  r"\(valid: 0\.\.4294967295\); got -1$"):
        session.call("miopenSetLRNDescriptor", lrn, mode, -1, 1e-4, 0.75, 1.0)
    with _refused(r"^miopenSetLRNDescriptor\(lrnN\): .*; got 4294967296$"):
        session.call("miopenSetLRNDescriptor", lrn, mode, 2**32, 1e-4, 0.75, 1.0)
    with _refused(r"^miopenGLUForward\(dim\): the C parameter is uint32_t \(valid: 0\.\.4294967295\); "
                  r"got -1$"):
        session.call("miopenGLUForward", None, None, None, None, -1)
    assert fake.calls == []
    session.call("miopenSetLRNDescriptor", lrn, mode, 2**32 - 1, 1e-4, 0.75, 1.0)
    assert fake.called("miopenSetLRNDescriptor")[0][2] == 2**32 - 1


def test_size_t_and_uint64_refuse_negative_and_2_64(session: Session, fake: Fake) -> None:
    x, y = session.empty((1, 1, 4, 4)), session.empty((1, 1, 2, 2))
    pool = session.descriptor("Pooling", "miopenSet2dPoolingDescriptor", miopenPoolingMode_t.miopenPoolingMax,
                              2, 2, 0, 0, 2, 2)
    made = fake.made
    top = 2**SIZE_T_BITS - 1
    for bad in (-1, 2**SIZE_T_BITS):
        with _refused(rf"^miopenPoolingForward\(workSpaceSize\): the C parameter is size_t "
                      rf"\(valid: 0\.\.{top}\); got {bad}$"):
            session.call("miopenPoolingForward", pool, 1.0, x, 0.0, y, False, None, bad)
    # the arrays given for xDesc and yDesc were not described: no C call at all
    assert fake.made == made and fake.called("miopenSetTensorDescriptor") == []
    assert fake.called("miopenPoolingForward") == []
    session.call("miopenPoolingForward", pool, 1.0, x, 0.0, y, False, None, 0)  # a retry works
    assert fake.called("miopenPoolingForward")[0][-1] == 0

    out = c_size_t()
    for bad in (-1, 2**64):
        with _refused(rf"^miopenConvolutionForwardGetSolutionWorkspaceSize\(solution_id\): the C "
                      rf"parameter is uint64_t \(valid: 0\.\.18446744073709551615\); got {bad}$"):
            session.call("miopenConvolutionForwardGetSolutionWorkspaceSize", TENSOR, TENSOR, CONV, TENSOR, bad,
                         byref(out))
    session.call("miopenConvolutionForwardGetSolutionWorkspaceSize", TENSOR, TENSOR, CONV, TENSOR, 2**64 - 1,
                 byref(out))
    assert fake.called("miopenConvolutionForwardGetSolutionWorkspaceSize")[0][5] == 2**64 - 1


def test_int64_and_long_follow_the_platform(session: Session, fake: Fake) -> None:
    with _refused(r"^miopenBackendSetAttribute\(elementCount\): the C parameter is int64_t "
                  r"\(valid: -9223372036854775808\.\.9223372036854775807\); got 9223372036854775808$"):
        session.call("miopenBackendSetAttribute", BACKEND, 0, 0, 2**63, None)
    session.call("miopenBackendSetAttribute", BACKEND, 0, 0, 2**40, None)
    assert fake.called("miopenBackendSetAttribute")[0][3] == 2**40
    # long: 32 bits on Windows, 64 on Linux (ctypes.sizeof(c_long) says which)
    args = (TENSOR, TENSOR, TENSOR, TENSOR, 2**40, 1.0, 0)
    if LONG_BITS == 32:
        with _refused(r"^miopenGetMultiMarginLossForwardWorkspaceSize\(p\): the C parameter is long "
                      r"\(valid: -2147483648\.\.2147483647\); got 1099511627776$"):
            session.call("miopenGetMultiMarginLossForwardWorkspaceSize", *args, byref(c_size_t()))
    else:
        session.call("miopenGetMultiMarginLossForwardWorkspaceSize", *args, byref(c_size_t()))
        assert fake.called("miopenGetMultiMarginLossForwardWorkspaceSize")[0][5] == 2**40
    with _refused(rf"\(p\): the C parameter is long \(valid: {-(2 ** (LONG_BITS - 1))}\.\."
                  rf"{2 ** (LONG_BITS - 1) - 1}\); got {2**64}$"):
        session.call("miopenGetMultiMarginLossForwardWorkspaceSize", TENSOR, TENSOR, TENSOR, TENSOR, 2**64, 1.0, 0,
                     byref(c_size_t()))


def test_an_address_given_as_an_int_must_fit_a_pointer(session: Session, fake: Fake) -> None:
    bits = 8 * ctypes.sizeof(c_void_p)
    with _refused(rf"^miopenBackendSetAttribute\(arrayOfElements\): the C parameter is void\* "
                  rf"\(valid: 0\.\.{2**bits - 1}\); got -1$"):
        session.call("miopenBackendSetAttribute", BACKEND, 0, 0, 1, -1)
    assert fake.calls == []
    session.call("miopenBackendSetAttribute", BACKEND, int(miopenBackendAttributeName_t.
                                                           MIOPEN_ATTR_POINTWISE_MODE), 0, 1, 0x1000)
    assert len(fake.called("miopenBackendSetAttribute")) == 1

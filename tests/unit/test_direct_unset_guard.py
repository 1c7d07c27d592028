"""hipdnn.direct's refusal of getters the real libMIOpen crashes in on a never-set descriptor
(UNSET_GUARDS), on a library of injected fakes whose getters fail the test when they would crash:
a descriptor set through the session's library binding in any way (Session.call, ``s.lib.<setter>``,
``s.lib.cfunc(setter)``) answers; one never set, or whose setter failed, is refused before C.
(The real library's crash and the same sets: tests/live/test_direct_guards.py.)"""

from __future__ import annotations

import gc
from ctypes import c_void_p, cast
from typing import Any

import pytest

from hipdnn.direct import Session, UnsetDescriptorError
from miopen_ctypes import MIOpenLibrary
from miopen_ctypes import types as mt
from miopen_ctypes.enums import miopenActivationMode_t, miopenLRNMode_t, miopenPoolingMode_t

_BAD_PARM = 3


class FakeLib:
    """Create/set/get/destroy of the pooling, LRN and activation descriptors; a getter on a
    descriptor never set successfully raises (the real library dies of SIGSEGV there)."""

    def __init__(self) -> None:
        self.next_id = 0x2000
        self.values: dict[int, tuple[Any, ...] | None] = {}  # None: created, never set
        self.gets: list[str] = []

    def _create(self, kind: Any) -> Any:
        def create(out: Any) -> None:
            self.next_id += 0x10
            self.values[self.next_id] = None
            out[0] = cast(c_void_p(self.next_id), kind)
        return create

    def _destroy(self, desc: Any) -> None:
        del self.values[mt.pointer_value(desc)]

    def _set(self, desc: Any, *values: Any) -> int | None:
        if values[1] <= 0:  # e.g. a window / lrnN of 0: refused, the descriptor stays unset
            return _BAD_PARM
        self.values[mt.pointer_value(desc)] = values
        return None

    def _get(self, name: str) -> Any:
        def get(desc: Any, *outs: Any) -> None:
            values = self.values[mt.pointer_value(desc)]
            if values is None:
                raise AssertionError(f"{name} on a descriptor never set: the real library crashes")
            self.gets.append(name)
            for out, value in zip(outs, values, strict=False):
                out[0] = value
        return get

    def functions(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind, setter, getter in (("Pooling", "miopenSet2dPoolingDescriptor", "miopenGet2dPoolingDescriptor"),
                                     ("LRN", "miopenSetLRNDescriptor", "miopenGetLRNDescriptor"),
                                     ("Activation", "miopenSetActivationDescriptor",
                                      "miopenGetActivationDescriptor")):
            out[f"miopenCreate{kind}Descriptor"] = self._create(getattr(mt, f"miopen{kind}Descriptor_t"))
            out[f"miopenDestroy{kind}Descriptor"] = self._destroy
            out[setter] = self._set
            out[getter] = self._get(getter)
        out["miopenSet4dTensorDescriptor"] = lambda *args: None  # present, and not watched
        return out


@pytest.fixture
def fake() -> FakeLib:
    return FakeLib()


@pytest.fixture
def lib(fake: FakeLib) -> MIOpenLibrary:
    return MIOpenLibrary.from_functions(fake.functions(), version=(3, 5, 1))


_MAX = miopenPoolingMode_t.miopenPoolingMax


def test_a_descriptor_set_through_the_raw_library_answers(lib: MIOpenLibrary, fake: FakeLib) -> None:
    """Set through ``s.lib`` (the binding's function) or ``s.lib.cfunc`` (the ctypes function
    itself) rather than Session.call: the getter runs (before, UnsetDescriptorError)."""
    with Session(lib) as s:
        pool, lrn, act = s.descriptor("Pooling"), s.descriptor("LRN"), s.descriptor("Activation")
        s.lib.miopenSet2dPoolingDescriptor(pool, _MAX, 3, 2, 1, 0, 2, 1)
        s.lib.cfunc("miopenSetLRNDescriptor")(lrn, miopenLRNMode_t.miopenLRNCrossChannel, 5, 1e-4, 0.75, 2.0)
        cfunc, args = s.lib.prepare_call("miopenSetActivationDescriptor", act,
                                         miopenActivationMode_t.miopenActivationLEAKYRELU, 0.5, 0.0, 0.0)
        cfunc(*args)
        assert s.query("miopenGet2dPoolingDescriptor", pool) == (int(_MAX), 3, 2, 1, 0, 2, 1)
        assert s.query("miopenGetLRNDescriptor", lrn)[:2] == (int(miopenLRNMode_t.miopenLRNCrossChannel), 5)
        assert s.query("miopenGetActivationDescriptor", act)[:2] == (
            int(miopenActivationMode_t.miopenActivationLEAKYRELU), 0.5)
    assert fake.gets == ["miopenGet2dPoolingDescriptor", "miopenGetLRNDescriptor", "miopenGetActivationDescriptor"]


def test_never_set_or_failed_set_is_still_refused(lib: MIOpenLibrary, fake: FakeLib) -> None:
    """The crash protection stays: a fresh descriptor, one whose raw setter failed, and one set
    only after another descriptor was set, are refused before C; the getter is never called."""
    with Session(lib) as s:
        fresh, failed, other = s.descriptor("Pooling"), s.descriptor("Pooling"), s.descriptor("LRN")
        with pytest.raises(Exception, match="miopenSet2dPoolingDescriptor"):
            s.lib.miopenSet2dPoolingDescriptor(failed, _MAX, 0, 2, 1, 0, 2, 1)  # status 3
        s.lib.miopenSet2dPoolingDescriptor(s.descriptor("Pooling"), _MAX, 3, 2, 1, 0, 2, 1)
        for desc in (fresh, failed):
            with pytest.raises(UnsetDescriptorError, match=r"miopenGet2dPoolingDescriptor: parameter 'poolDesc'"):
                s.query("miopenGet2dPoolingDescriptor", desc)
        with pytest.raises(UnsetDescriptorError, match="miopenSetLRNDescriptor"):
            s.query("miopenGetLRNDescriptor", other)
        # a retry after the failed set works
        s.lib.miopenSet2dPoolingDescriptor(failed, _MAX, 2, 2, 0, 0, 2, 2)
        assert s.query("miopenGet2dPoolingDescriptor", failed)[1] == 2
    assert fake.gets == ["miopenGet2dPoolingDescriptor"]


def test_two_sessions_on_one_library_and_no_watch_left_behind(lib: MIOpenLibrary) -> None:
    """Each session tracks its own descriptors; a closed or collected session stops watching
    (nothing of it stays on the shared library object)."""
    a, b = Session(lib), Session(lib)
    pa, pb = a.descriptor("Pooling"), b.descriptor("Pooling")
    lib.miopenSet2dPoolingDescriptor(pa, _MAX, 2, 2, 0, 0, 2, 2)
    assert a.query("miopenGet2dPoolingDescriptor", pa)[1] == 2
    with pytest.raises(UnsetDescriptorError):
        b.query("miopenGet2dPoolingDescriptor", pb)
    a.close()
    assert len(lib._observers["miopenSet2dPoolingDescriptor"]) == 1  # b's
    b.descriptor("LRN")  # b watches once, however many descriptors it makes
    assert len(lib._observers["miopenSet2dPoolingDescriptor"]) == 1
    del b, pb
    gc.collect()
    assert lib._observers["miopenSet2dPoolingDescriptor"] == ()
    assert "miopenSet4dTensorDescriptor" not in lib._observers  # a tensor's rank is asked instead

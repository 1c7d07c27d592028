"""hipdnn.interop.dlpack.read: what an object's ``__dlpack__`` export says, read on every call by the
remembered-binding matchers (hipdnn/pipeline/packsig.py ``signature``) without consuming the capsule.

It must give exactly the fields :func:`hipdnn.interop.dlpack.export` gives (so a signature reads the
same as what ``resolve`` would check), leave the capsule unconsumed (the producer's destructor
releases the export: nothing leaks, nothing is released twice) and refuse what export refuses.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

import numpy as np
import pytest
from test_interop_dlpack import HandMade, Wrapped

from hipdnn.interop import dlpack as _dlpack
from hipdnn.pipeline import packsig as _packsig


def _export_fields(obj: Any) -> tuple[Any, ...]:
    e = _dlpack.export(obj)
    try:
        return (e.ptr, e.device_type, e.device_id, e.shape, e.strides, e.code, e.bits, e.lanes,
                e.readonly)
    finally:
        e.owner.release()


def _numpy_cases() -> list[Any]:
    base = np.arange(120, dtype=np.float32)
    ro = np.zeros((2, 3), np.float16)
    ro.flags.writeable = False
    return [base, base.reshape(2, 3, 4, 5), base.reshape(4, 30)[:, 3:9:2],
            base.reshape(2, 3, 4, 5).transpose(0, 2, 3, 1), base[7:8].reshape(()),
            np.zeros((0, 3), np.int32), np.zeros((3, 1, 2), np.float64)[:, :, ::2], ro]


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("case", range(len(_numpy_cases())))
def test_read_equals_export_for_numpy(case: int, legacy: bool) -> None:
    a = _numpy_cases()[case]
    try:
        want = _export_fields(Wrapped(a, legacy=legacy))
    except _dlpack.DLPackError:  # numpy refuses a legacy export of a read-only array
        with pytest.raises(_dlpack.DLPackError, match="failed"):
            _dlpack.read(Wrapped(a, legacy=legacy))
        return
    assert _dlpack.read(Wrapped(a, legacy=legacy)) == want


def test_read_equals_export_for_torch() -> None:
    torch = pytest.importorskip("torch")
    t = torch.arange(120, dtype=torch.float32)
    for v in (t, t.view(2, 3, 4, 5), t.view(2, 3, 4, 5).permute(0, 2, 3, 1), t[5:17].view(3, 4),
              t.view(4, 30)[:, 1::7], t[3], torch.zeros(0, 4), torch.zeros(2, 3, dtype=torch.float16),
              t.view(2, 60).t()):
        assert _dlpack.read(Wrapped(v)) == _export_fields(Wrapped(v)), (v.shape, v.stride())


def test_read_equals_export_for_hand_made_exports() -> None:
    mem = np.arange(24, dtype=np.float32)
    for kwargs in ({}, {"strides": (1, 3)}, {"byte_offset": 8, "flags": 1},
                   {"versioned": False, "strides": (1, 3), "byte_offset": 4},
                   {"device_type": 10, "code": 2, "bits": 16}):
        want = _export_fields(HandMade(mem, (3, 2), **kwargs))  # type: ignore[arg-type]
        assert _dlpack.read(HandMade(mem, (3, 2), **kwargs)) == want, kwargs  # type: ignore[arg-type]


@pytest.mark.parametrize("versioned", [True, False])
def test_read_leaves_the_capsule_to_its_producer(versioned: bool) -> None:
    producer = HandMade(np.arange(6, dtype=np.float32), (2, 3), versioned=versioned)
    w = Wrapped(producer)
    _dlpack.read(w)
    name = "dltensor_versioned" if versioned else "dltensor"
    assert f'"{name}"' in repr(w.capsule)  # not renamed to used_*: not consumed
    assert producer.calls == []  # and not deleted by the reader


def test_read_releases_real_exports() -> None:
    a = np.zeros((4, 5), np.float32)
    gc.collect()
    before = sys.getrefcount(a)
    for _ in range(100):
        _dlpack.read(a)  # numpy's export holds a reference to the array until released
    gc.collect()
    assert sys.getrefcount(a) == before


@pytest.mark.parametrize(("kwargs", "message"), [({"major": 2}, r"version \(2, 0\)")])
def test_read_refuses_what_export_refuses(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(_dlpack.DLPackError, match=message):
        _dlpack.read(HandMade(np.zeros(8, np.float32), (8,), **kwargs))


def test_read_refuses_consumed_and_corrupt_capsules() -> None:
    producer = HandMade(np.zeros(4, np.float32), (4,))
    capsule = producer.__dlpack__()
    e = _dlpack.consume(capsule)

    class Replays:
        def __dlpack__(self, **kwargs: Any) -> Any:
            return capsule

    with pytest.raises(_dlpack.DLPackError, match="not an unconsumed"):
        _dlpack.read(Replays())

    class NotACapsule:
        def __dlpack__(self, **kwargs: Any) -> Any:
            return object()

    with pytest.raises(_dlpack.DLPackError, match="not an unconsumed"):
        _dlpack.read(NotACapsule())
    e.owner.release()
    bad = HandMade(np.zeros(4, np.float32), (4,))
    bad.managed.dl_tensor.ndim = -1
    with pytest.raises(_dlpack.DLPackError, match="ndim -1"):
        _dlpack.read(bad)
    bad.managed.dl_tensor.ndim = 1
    bad.managed.dl_tensor.shape = None
    with pytest.raises(_dlpack.DLPackError, match="NULL shape"):
        _dlpack.read(bad)


def test_signature_of_a_dlpack_only_object_reads_the_export() -> None:
    a = np.zeros((2, 3), np.float32)
    w = Wrapped(a)
    assert _packsig.signature(w) == (Wrapped, "dlpack", *_export_fields(Wrapped(a)))
    m = _packsig.compile_matcher({1: w}, None, None, "run")
    assert m is not None and m({1: w}, None, None) == "run"
    w.producer = a.T  # the same object now exports another geometry
    assert m({1: w}, None, None) is None
    w.producer = a[:]  # another array object over the same memory and geometry
    assert m({1: w}, None, None) == "run"

"""Out-of-range integers on the real libMIOpen (3.4.0 and 3.5.1): what ctypes alone sends, and
hipdnn.direct refusing it first.

Through the raw binding, ``2**32 + 3`` for an ``int`` window height arrives as 3 and ``-1`` for
the ``unsigned int`` LRN size as 4294967295: the library stores the wrapped values and reports
success. A :class:`hipdnn.direct.Session` refuses both before the C call (the descriptor keeps
what it had), and the same session then sets the fitting values, which the getters read back.
Handle-free: no GPU needed.
"""

from __future__ import annotations

import pytest

from hipdnn.core.errors import ArgumentError
from hipdnn.direct import Session
from miopen_ctypes.enums import miopenLRNMode_t, miopenPoolingMode_t

MAX = miopenPoolingMode_t.miopenPoolingMax
CROSS = miopenLRNMode_t.miopenLRNCrossChannel


def test_ctypes_alone_wraps_what_the_session_refuses(live_library_path: str) -> None:
    with Session() as s:
        pool, lrn = s.descriptor("Pooling"), s.descriptor("LRN")
        s.lib.miopenSet2dPoolingDescriptor(pool, MAX, 2**32 + 3, 2, 0, 0, 2, 2)
        assert s.query("miopenGet2dPoolingDescriptor", pool)[1] == 3  # cut to 32 bits
        s.lib.miopenSetLRNDescriptor(lrn, CROSS, -1, 1e-4, 0.75, 1.0)
        assert s.query("miopenGetLRNDescriptor", lrn)[1] == 2**32 - 1  # wrapped


def test_a_refused_call_leaves_the_descriptor_and_a_retry_sets_it(live_library_path: str) -> None:
    with Session() as s:
        pool = s.descriptor("Pooling", "miopenSet2dPoolingDescriptor", MAX, 3, 2, 1, 0, 2, 1)
        with pytest.raises(ArgumentError, match=r"miopenSet2dPoolingDescriptor\(windowHeight\): the C "
                                                r"parameter is int \(valid: -2147483648\.\.2147483647\); "
                                                r"got 4294967299$"):
            s.call("miopenSet2dPoolingDescriptor", pool, MAX, 2**32 + 3, 2, 0, 0, 2, 2)
        with pytest.raises(ArgumentError, match=r"\(mode\): the C parameter is miopenPoolingMode_t \(an "
                                                r"enum: valid: miopenPoolingMax \(0\), .*\); got 7$"):
            s.call("miopenSet2dPoolingDescriptor", pool, 7, 2, 2, 0, 0, 2, 2)
        assert s.query("miopenGet2dPoolingDescriptor", pool) == (0, 3, 2, 1, 0, 2, 1)  # untouched
        s.call("miopenSet2dPoolingDescriptor", pool, miopenPoolingMode_t.miopenPoolingAverage, 4, 2, 0, 1, 2, 2)
        assert s.query("miopenGet2dPoolingDescriptor", pool) == (1, 4, 2, 0, 1, 2, 2)

        with pytest.raises(ArgumentError, match=r"miopenSetLRNDescriptor\(lrnN\): the C parameter is "
                                                r"unsigned int \(valid: 0\.\.4294967295\); got -1$"):
            s.descriptor("LRN", "miopenSetLRNDescriptor", CROSS, -1, 1e-4, 0.75, 1.0)
        lrn = s.descriptor("LRN", "miopenSetLRNDescriptor", CROSS, 5, 1e-4, 0.75, 1.0)
        assert s.query("miopenGetLRNDescriptor", lrn)[:2] == (int(CROSS), 5)

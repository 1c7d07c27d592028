"""miopenCreate on a machine without an AMD GPU: a typed error, MIOpen's reason on stderr."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest

from miopen_ctypes import errors
from miopen_ctypes import types as mt


def test_create_without_gpu_raises_typed_error(lib: Any, capfd: pytest.CaptureFixture[str]) -> None:
    handle = mt.miopenHandle_t()
    # A dedicated "no AMD GPU" class, if the binding grows one, must still be a status error.
    expected = getattr(errors, "MIOpenNoDeviceError", errors.MIOpenUnknownError)
    with pytest.raises(expected) as info:
        lib.miopenCreate(ctypes.byref(handle))
    exc = info.value
    assert isinstance(exc, errors.MIOpenStatusError)
    assert exc.function == "miopenCreate"
    assert exc.status == 7
    assert "miopenCreate failed: miopenStatusUnknownError (7)" in str(exc)
    assert not handle, "a failed miopenCreate must leave the handle NULL"
    assert "No device" in capfd.readouterr().err


def test_create_with_stream_without_gpu(lib: Any, capfd: pytest.CaptureFixture[str]) -> None:
    handle = mt.miopenHandle_t()
    with pytest.raises(errors.MIOpenStatusError) as info:
        lib.miopenCreateWithStream(ctypes.byref(handle), None)
    assert info.value.function == "miopenCreateWithStream"
    assert "No device" in capfd.readouterr().err

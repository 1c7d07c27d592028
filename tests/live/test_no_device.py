"""miopenCreate on a machine without an AMD GPU: a typed error, MIOpen's reason on stderr."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest

from miopen_ctypes import errors
from miopen_ctypes import types as mt


def test_create_without_gpu_raises_typed_error(lib: Any, capfd: pytest.CaptureFixture[str]) -> None:
    handle = mt.miopenHandle_t()
    with pytest.raises(errors.MIOpenNoDeviceError) as info:
        lib.miopenCreate(ctypes.byref(handle))
    exc = info.value
    assert isinstance(exc, errors.MIOpenStatusError)
    assert exc.function == "miopenCreate"
    assert exc.status == 7
    assert isinstance(exc, errors.MIOpenUnknownError)
    assert "miopenCreate failed: miopenStatusUnknownError (7)" in str(exc)
    assert str(exc).startswith("no AMD GPU available")
    assert "/dev/kfd" in str(exc) and "CPU_REFERENCE_ENGINE" in str(exc)
    assert not handle, "a failed miopenCreate must leave the handle NULL"
    assert "No device" in capfd.readouterr().err


def test_create_with_stream_without_gpu(lib: Any, capfd: pytest.CaptureFixture[str]) -> None:
    handle = mt.miopenHandle_t()
    with pytest.raises(errors.MIOpenNoDeviceError) as info:
        lib.miopenCreateWithStream(ctypes.byref(handle), None)
    assert info.value.function == "miopenCreateWithStream"
    assert "No device" in capfd.readouterr().err

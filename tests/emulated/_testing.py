"""Helpers for the device's own tests: put logical arrays on the device in a layout, read them back."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from hipdnn.core.shapes import packed_strides

from ._client import Client
from .device import EmulatedDevice

__all__ = ["NP_OF", "DevTensor", "f32", "fetch", "put", "scratch"]

#: miopenDataType_t -> numpy dtype of the float types the tests use.
NP_OF = {0: np.dtype(np.float16), 1: np.dtype(np.float32), 5: np.dtype(ml_dtypes.bfloat16)}


@dataclass
class DevTensor:
    """A tensor on the emulated device: descriptor, pointer, logical dims and element strides."""

    desc: Any
    ptr: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: int


def f32(value: float) -> Any:
    """``&(float)value`` for alpha/beta arguments."""
    return ctypes.byref(ctypes.c_float(value))


def put(dev: EmulatedDevice, client: Client, array: np.ndarray, dtype: int = 1,
        layout: str | None = None) -> DevTensor:
    """Upload the logical N,C,(D),H,W ``array`` stored in ``layout`` (default channel-first)."""
    dims = tuple(int(d) for d in array.shape)
    strides = packed_strides(dims, layout) if layout else packed_strides(dims)
    host = np.empty(int(np.prod(dims)), NP_OF[dtype])
    view = np.lib.stride_tricks.as_strided(host, dims, tuple(s * host.itemsize for s in strides))
    view[...] = array.astype(NP_OF[dtype])
    return DevTensor(client.tensor(dtype, dims, strides), dev.upload(host), dims, strides, dtype)


def scratch(dev: EmulatedDevice, client: Client, dims: Sequence[int], dtype: int = 1,
            layout: str | None = None) -> DevTensor:
    """An output tensor (garbage-filled, like fresh device memory)."""
    dims = tuple(int(d) for d in dims)
    strides = packed_strides(dims, layout) if layout else packed_strides(dims)
    nbytes = int(np.prod(dims)) * NP_OF[dtype].itemsize
    return DevTensor(client.tensor(dtype, dims, strides), dev.alloc(nbytes), dims, strides, dtype)


def fetch(dev: EmulatedDevice, t: DevTensor) -> np.ndarray:
    """The logical float32 contents of ``t``."""
    return dev.download(t.ptr, t.dims, NP_OF[t.dtype], t.strides).astype(np.float32)

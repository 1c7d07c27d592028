"""miopen_ctypes: a literal, typed ctypes binding of MIOpen's C API (+ the HIP calls we need).

Importing never loads a native library; ``load()`` does, on first use::

    >>> import miopen_ctypes
    >>> "miopenConvolutionForwardImmediate" in miopen_ctypes.PROTOTYPES
    True
    >>> lib = miopen_ctypes.load()                 # doctest: +SKIP
    >>> handle = miopen_ctypes.types.miopenHandle_t()
    >>> lib.miopenCreate(ctypes.byref(handle))     # doctest: +SKIP

Submodules: ``types`` (handle pointer types, structs), ``enums``, ``errors``, ``hip``.
"""

from __future__ import annotations

from . import enums, errors, hip, types
from ._proto import Prototype
from .capabilities import Capabilities
from .errors import (
    MIOpenError,
    MIOpenNoDeviceError,
    MIOpenNotFoundError,
    MIOpenStatusError,
    MIOpenVersionError,
    NullArgumentError,
)
from .loader import MIOpenLibrary, load
from .prototypes import PROTOTYPES

__all__ = [
    "PROTOTYPES",
    "Capabilities",
    "MIOpenError",
    "MIOpenLibrary",
    "MIOpenNoDeviceError",
    "MIOpenNotFoundError",
    "MIOpenStatusError",
    "MIOpenVersionError",
    "NullArgumentError",
    "Prototype",
    "enums",
    "errors",
    "hip",
    "load",
    "types",
]

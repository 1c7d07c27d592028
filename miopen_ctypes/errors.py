"""Exceptions of the binding: one class per ``miopenStatus_t``, raised in one place.

``check_status`` (used as the ``errcheck`` of every status-returning function) maps a status to
its class through ``STATUS_ERRORS``; the library's text is added when it says more than the
status name (``miopenGetErrorString`` usually returns just the name)::

    >>> try:
    ...     check_status("miopenSet4dTensorDescriptor", 3, "miopenStatusBadParm")
    ... except MIOpenBadParmError as exc:
    ...     print(exc)
    miopenSet4dTensorDescriptor failed: miopenStatusBadParm (3)
    >>> print(MIOpenBadParmError("miopenSet4dTensorDescriptor", 3, "a stride is negative"))
    miopenSet4dTensorDescriptor failed: miopenStatusBadParm (3): a stride is negative
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .enums import miopenStatus_t

__all__ = [
    "STATUS_ERRORS",
    "HipError",
    "HipNotFoundError",
    "LibraryNotFoundError",
    "MIOpenAllocFailedError",
    "MIOpenBadParmError",
    "MIOpenError",
    "MIOpenGpuOperationsSkippedError",
    "MIOpenInternalError",
    "MIOpenInvalidValueError",
    "MIOpenNoDeviceError",
    "MIOpenNotFoundError",
    "MIOpenNotImplementedError",
    "MIOpenNotInitializedError",
    "MIOpenStatusError",
    "MIOpenUnknownError",
    "MIOpenUnknownStatusError",
    "MIOpenUnsupportedOpError",
    "MIOpenVersionError",
    "MIOpenVersionMismatchError",
    "NullArgumentError",
    "check_status",
]


class MIOpenError(Exception):
    """Base of every error this binding raises."""


class MIOpenStatusError(MIOpenError):
    """A C function returned a status other than ``miopenStatusSuccess``.

    ``function`` is the C symbol, ``status`` the raw value, ``text`` miopenGetErrorString's text
    (``None`` when the library could not provide it).
    """

    status_value: int = -1

    def __init__(self, function: str, status: int, text: str | None = None) -> None:
        self.function = function
        self.status = status
        self.text = text
        try:
            status_name = miopenStatus_t(status).name
        except ValueError:
            status_name = "unknown miopenStatus_t"
        message = f"{function} failed: {status_name} ({status})"
        if text and text != status_name:  # miopenGetErrorString often gives just the name
            message += f": {text}"
        super().__init__(message)


class MIOpenNotInitializedError(MIOpenStatusError):
    """miopenStatusNotInitialized (1)."""

    status_value = 1


class MIOpenInvalidValueError(MIOpenStatusError):
    """miopenStatusInvalidValue (2)."""

    status_value = 2


class MIOpenBadParmError(MIOpenStatusError):
    """miopenStatusBadParm (3): an argument was rejected by MIOpen."""

    status_value = 3


class MIOpenAllocFailedError(MIOpenStatusError):
    """miopenStatusAllocFailed (4)."""

    status_value = 4


class MIOpenInternalError(MIOpenStatusError):
    """miopenStatusInternalError (5)."""

    status_value = 5


class MIOpenNotImplementedError(MIOpenStatusError):
    """miopenStatusNotImplemented (6): no solver/kernel supports this configuration."""

    status_value = 6


class MIOpenUnknownError(MIOpenStatusError):
    """miopenStatusUnknownError (7)."""

    status_value = 7


class MIOpenNoDeviceError(MIOpenUnknownError):
    """No AMD GPU available: handle creation failed with miopenStatusUnknownError (7).

    MIOpen reports a missing or unusable ROCm device this way (its stderr says "No device").
    The advice is written for the platform this runs on.
    """

    def __init__(self, function: str, status: int, text: str | None = None) -> None:
        super().__init__(function, status, text)
        if sys.platform == "win32":
            check = ("that AMD's GPU driver for Windows (which installs amdhip64_N.dll in "
                     "System32) is installed and current")
        else:
            check = ("that /dev/kfd and /dev/dri are accessible to this user (groups 'video' "
                     "and 'render')")
        self.args = (
            f"no AMD GPU available: {self.args[0]}. MIOpen found no usable ROCm device. Check that "
            f"an AMD GPU supported by this ROCm release is present, {check}, and that "
            "HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES do not hide it. Without a GPU, use "
            "hipdnn's CPU_REFERENCE_ENGINE.",
        )


class MIOpenUnsupportedOpError(MIOpenStatusError):
    """miopenStatusUnsupportedOp (8): e.g. a fusion plan that does not compile."""

    status_value = 8


class MIOpenGpuOperationsSkippedError(MIOpenStatusError):
    """miopenStatusGpuOperationsSkipped (9)."""

    status_value = 9


class MIOpenVersionMismatchError(MIOpenStatusError):
    """miopenStatusVersionMismatch (10): e.g. a serialized solution from another version."""

    status_value = 10


class MIOpenUnknownStatusError(MIOpenStatusError):
    """A status value the bound headers do not declare."""


#: status value -> exception class (every non-success member of miopenStatus_t).
STATUS_ERRORS: dict[int, type[MIOpenStatusError]] = {
    cls.status_value: cls
    for cls in (
        MIOpenNotInitializedError,
        MIOpenInvalidValueError,
        MIOpenBadParmError,
        MIOpenAllocFailedError,
        MIOpenInternalError,
        MIOpenNotImplementedError,
        MIOpenUnknownError,
        MIOpenUnsupportedOpError,
        MIOpenGpuOperationsSkippedError,
        MIOpenVersionMismatchError,
    )
}


#: Functions whose miopenStatusUnknownError means "no usable device" (upstream handlehip.cpp).
_HANDLE_CREATORS = frozenset({"miopenCreate", "miopenCreateWithStream"})


def check_status(function: str, status: int, text: str | None = None) -> None:
    """Raise the ``MIOpenStatusError`` subclass for ``status`` unless it is success (0)."""
    if status == 0:
        return
    if status == MIOpenUnknownError.status_value and function in _HANDLE_CREATORS:
        raise MIOpenNoDeviceError(function, status, text)
    raise STATUS_ERRORS.get(status, MIOpenUnknownStatusError)(function, status, text)


class MIOpenVersionError(MIOpenError, NotImplementedError):
    """The loaded library lacks a bound function (it was added in a later MIOpen, or HIP)."""

    def __init__(
        self,
        function: str,
        since: tuple[int, int, int],
        loaded: tuple[int, int, int],
        product: str = "MIOpen",
    ) -> None:
        self.function = function
        self.since = since
        self.loaded = loaded
        need = ".".join(map(str, since))
        have = ".".join(map(str, loaded))
        if loaded >= since:
            message = f"{function} requires {product} >= {need}, but the loaded {have} does not export it"
        else:
            message = f"{function} requires {product} >= {need}, loaded {have}"
        super().__init__(message)


class NullArgumentError(MIOpenError, ValueError):
    """A NULL (``None`` or empty pointer) was passed where the C API requires a live object."""

    def __init__(self, function: str, parameter: str, ctype: str) -> None:
        self.function = function
        self.parameter = parameter
        super().__init__(
            f"{function}: parameter {parameter!r} ({ctype}) must not be NULL; pass a live "
            f"{ctype} (created by its Create call)"
        )


class LibraryNotFoundError(MIOpenError, OSError):
    """No candidate shared library could be loaded; ``attempts`` lists (place, reason).

    The last line of the message is the fix, written for ``windows`` (default: this platform).
    """

    library = "library"
    env_var = ""
    linux_hint = ""
    windows_hint = ""

    def __init__(self, attempts: Sequence[tuple[str, str]], *, windows: bool | None = None) -> None:
        self.attempts = list(attempts)
        windows = sys.platform == "win32" if windows is None else windows
        lines = [f"could not load {self.library}; tried, in order:"]
        lines += [f"  - {place}: {reason}" for place, reason in self.attempts]
        lines.append(self.windows_hint if windows else self.linux_hint)
        super().__init__("\n".join(lines))


class MIOpenNotFoundError(LibraryNotFoundError):
    """libMIOpen could not be found or loaded."""

    library = "MIOpen (libMIOpen.so.1 / MIOpen.dll)"
    env_var = "HIPDNN_MIOPEN_LIBRARY"
    linux_hint = ("Point the package at a library with HIPDNN_MIOPEN_LIBRARY=/path/to/libMIOpen.so.1, "
                  "install ROCm (or TheRock's rocm-sdk wheels), or set ROCM_PATH.")
    windows_hint = ("On Windows MIOpen.dll comes from TheRock's ROCm Python wheels (package 'rocm' "
                    "with its libraries; import rocm_sdk) or from PyTorch ROCm for Windows (which "
                    "installs those wheels); AMD's HIP SDK for Windows ships no MIOpen. Or point the package "
                    "at it: set HIPDNN_MIOPEN_LIBRARY=C:\\path\\to\\MIOpen.dll (its dependencies "
                    "must be in its folder, System32 or a folder added with os.add_dll_directory).")


class HipNotFoundError(LibraryNotFoundError):
    """The HIP runtime (libamdhip64 / amdhip64_N.dll) could not be found or loaded."""

    library = "the HIP runtime (libamdhip64.so / amdhip64_N.dll)"
    env_var = "HIPDNN_HIP_LIBRARY"
    linux_hint = ("Point the package at a library with HIPDNN_HIP_LIBRARY=/path/to/libamdhip64.so.7, "
                  "install ROCm (or TheRock's rocm-sdk wheels), or set ROCM_PATH.")
    windows_hint = ("On Windows amdhip64_7.dll / amdhip64_6.dll comes with AMD's GPU driver "
                    "(System32), TheRock's ROCm Python wheels (rocm_sdk) or the HIP SDK ($HIP_PATH"
                    "\\bin). Or set HIPDNN_HIP_LIBRARY=C:\\path\\to\\amdhip64_7.dll.")


class HipError(MIOpenError):
    """A HIP runtime call returned a ``hipError_t`` other than ``hipSuccess``."""

    def __init__(self, function: str, status: int, text: str | None = None) -> None:
        self.function = function
        self.status = status
        self.text = text
        message = f"{function} failed: hipError_t {status}"
        if text:
            message += f": {text}"
        super().__init__(message)

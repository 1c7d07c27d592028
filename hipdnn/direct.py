"""Calling MIOpen's C functions directly with the arrays you have (docs/MIOPEN_DIRECT.md).

``miopen_ctypes`` binds every function of ``miopen.h`` literally. A :class:`Session` is the short
way to call them from a notebook: it owns a ``miopenHandle_t`` (made on first need, so handle-free
calls work without a GPU) and the objects it makes for you, and :meth:`Session.call` reads the
function's prototype to fill in what the C signature wants::

    with Session() as s:
        pool = s.descriptor("Pooling", "miopenSet2dPoolingDescriptor",
                            miopenPoolingMode_t.miopenPoolingMax, 2, 2, 0, 0, 2, 2)
        ws = s.workspace(s.query("miopenPoolingGetWorkSpaceSizeV2", pool, y))
        s.call("miopenPoolingForward", pool, 1.0, x, 0.0, y, True, ws)

- the leading ``handle`` is the session's;
- an array (torch tensor on the GPU, :class:`DeviceArray`, anything with
  ``__cuda_array_interface__``/``__dlpack__``) given where the header has ``xDesc, x`` fills both:
  a tensor descriptor from its shape, strides and dtype, and its data pointer;
- a Python number given for ``const void* alpha``/``beta`` is passed as a host ``float``
  (``double`` when the call's first array is float64), as MIOpen reads it;
- a :class:`DeviceArray` given for a workspace / reserve pointer also fills the size parameter
  that follows it; before the call its size is checked against MIOpen's own query for that call
  (:data:`WORKSPACE_RULES`): too small is a :class:`~hipdnn.core.errors.WorkspaceError` naming the
  function and both sizes, never a C call writing past the buffer (MIOpen PR #3715 was a segfault
  on a small pooling workspace);
- anything else (ints, enums, ctypes objects, handles, ``None``) passes as is, an int (a Python
  or numpy integer, an enum member, a bool as 0/1) only if the parameter's C type holds it: its
  range as ``ctypes.sizeof`` gives it on this platform, an enum's declared values
  (:func:`_params`); ctypes itself would wrap ``-1`` into a ``size_t`` and cut ``2**40``
  into an ``int``.

A failing status raises the binding's ``MIOpenStatusError`` subclass naming the function.
:meth:`Session.query` passes fresh out-parameters for every trailing ``T*`` and returns their
values. Host numpy arrays are refused (MIOpen reads device memory): copy them with
:meth:`Session.to_device`.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from ctypes import POINTER, byref, c_double, c_float, c_int, c_size_t, c_void_p
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

import miopen_ctypes
from hipdnn.core.errors import ArgumentError, HipdnnError, VariantPackError, WorkspaceError
from hipdnn.core.types import DataType
from hipdnn.interop.buffers import Buffer, resolve
from hipdnn.interop.dtypes import dtype_to_numpy, dtype_to_torch, numpy_to_dtype
from miopen_ctypes.enums import ENUMS, miopenDataType_t
from miopen_ctypes.hip import hipMemcpyKind
from miopen_ctypes.prototypes import PROTOTYPES
from miopen_ctypes.spellings import c_type_name
from miopen_ctypes.types import (
    HANDLE_TYPES,
    miopenHandle_t,
    miopenTensorDescriptor_t,
)

__all__ = ["HEADER_DEFAULTS", "MIOPEN_DATA_TYPES", "UNSET_GUARDS", "WORKSPACE_RULES", "DeviceArray",
           "Session", "SessionClosedError", "UnsetDescriptorError"]

#: hipdnn DataType -> miopenDataType_t, for descriptors made from arrays.
MIOPEN_DATA_TYPES = {
    DataType.FLOAT: miopenDataType_t.miopenFloat,
    DataType.HALF: miopenDataType_t.miopenHalf,
    DataType.BFLOAT16: miopenDataType_t.miopenBFloat16,
    DataType.DOUBLE: miopenDataType_t.miopenDouble,
    DataType.INT32: miopenDataType_t.miopenInt32,
    DataType.INT8: miopenDataType_t.miopenInt8,
    DataType.INT64: miopenDataType_t.miopenInt64,
}

_C_INT_MAX = 2**31 - 1

_HANDLE = object()  # placeholder for the session's handle in a prepared call

#: C++ default arguments in miopen.h (3.4.0 and 3.5.1 alike; tests/conformance reads both headers):
#: function -> {parameter: value}. :meth:`Session.call` fills trailing parameters left out from
#: here, as a C++ caller would get them.
HEADER_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "miopenKthvalueForward": {"dim": -1, "keepDim": False},
    "miopenSoftMarginLossForward": {"workspace": None, "workspaceSizeInBytes": 0},
}

_SCALARS = frozenset({"alpha", "beta", "alpha1", "alpha2", "alphaDataDiff", "betaDataDiff",
                      "alphaParamDiff", "betaParamDiff"})


class SessionClosedError(HipdnnError, RuntimeError):
    """A :class:`Session`, or a :class:`DeviceArray` or descriptor it made, was used after the
    session closed (its memory freed, its descriptors destroyed); the message names which."""


def _host_array(array: Any) -> np.ndarray[Any, Any]:
    """A contiguous host numpy array of ``array``: numpy arrays as they are; torch CPU tensors
    (bfloat16 included, as ``ml_dtypes.bfloat16``, which torch's ``.numpy()`` refuses) and
    anything with ``__array_interface__`` / ``__dlpack__`` through hipdnn's interop."""
    if isinstance(array, np.ndarray):
        return np.ascontiguousarray(array)
    if type(array).__module__.startswith("torch") or hasattr(array, "__dlpack__"):
        buf = resolve(array)
        if buf.array is None:
            raise VariantPackError(f"to_device: a {buf.kind} on the {buf.device}; pass a host array "
                                   f"(a GPU tensor is device memory already: pass it to Session.call)")
        return np.ascontiguousarray(buf.array)
    return np.ascontiguousarray(array)


def _numpy_dtype(dtype: Any) -> np.dtype[Any]:
    """numpy dtype of a numpy dtype, a :class:`DataType` or a torch dtype (bfloat16 is
    ``ml_dtypes.bfloat16``)."""
    if isinstance(dtype, DataType):
        return dtype_to_numpy(dtype)
    if type(dtype).__module__.startswith("torch"):
        from hipdnn.interop.dtypes import torch_to_dtype  # noqa: PLC0415

        return dtype_to_numpy(torch_to_dtype(dtype))
    try:
        return np.dtype(dtype)
    except TypeError:
        raise VariantPackError(f"dtype {dtype!r} is not a numpy dtype, DataType or torch dtype") from None


class DeviceArray:
    """Device memory from ``hipMalloc`` with a shape and dtype: a workspace, or a numpy array
    copied to the GPU (``__cuda_array_interface__``, so every hipdnn API takes it).

    Made by :meth:`Session.workspace` / :meth:`Session.to_device` / :meth:`Session.empty`;
    freed when the session closes.
    """

    def __init__(self, hip: Any, shape: Sequence[int], dtype: Any) -> None:
        self.hip = hip
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self._ptr = c_void_p()
        self._lock = threading.Lock()  # free() from several threads: one hipFree
        #: why the memory is gone (None while it is live): "it was freed" / "its Session is closed"
        self.freed: str | None = None
        if self.nbytes:
            hip.hipMalloc(byref(self._ptr), self.nbytes)

    def __repr__(self) -> str:
        state = f", freed: {self.freed}" if self.freed else ""
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype.name}{state})"

    def check_live(self, where: str = "") -> None:
        """Raise :class:`SessionClosedError` naming this array (and ``where`` it was used) if its
        memory was freed: reading or writing it would touch freed device memory."""
        if self.freed is not None:
            at = f"{where}: " if where else ""
            raise SessionClosedError(f"{at}DeviceArray(shape={self.shape}, dtype={self.dtype.name}) cannot "
                                     f"be used: {self.freed}; its device memory "
                                     f"is gone (copy results out with .numpy() before closing)")

    @property
    def ptr(self) -> int:
        """The device address (0 for an empty or freed array)."""
        return self._ptr.value or 0

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        self.check_live("__cuda_array_interface__")
        iface: dict[str, Any] = {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                                 "strides": None, "version": 3}
        if self.dtype.kind == "V":  # bfloat16 (ml_dtypes) has no typestr of its own: name it
            iface["descr"] = [(self.dtype.name, self.dtype.str)]
        return iface

    def copy_from(self, array: Any) -> None:
        """Copy a host array (numpy, or a torch CPU tensor) of the same shape and dtype in."""
        self.check_live("copy_from")
        host = _host_array(array)
        if host.dtype != self.dtype:
            if host.dtype.kind == "V" or self.dtype.kind == "V":  # bfloat16 <-> others: no astype guessing
                raise VariantPackError(f"copy_from: dtype {host.dtype.name} != {self!r}")
            host = np.ascontiguousarray(host, dtype=self.dtype)
        if host.shape != self.shape:
            raise VariantPackError(f"copy_from: shape {host.shape} != {self!r}")
        if self.nbytes:
            self.hip.hipMemcpy(self.ptr, host.ctypes.data, self.nbytes,
                               int(hipMemcpyKind.hipMemcpyHostToDevice))

    def numpy(self) -> np.ndarray[Any, Any]:
        """A host copy (bfloat16 as ``ml_dtypes.bfloat16``)."""
        self.check_live("numpy")
        host = np.empty(self.shape, self.dtype)
        if self.nbytes:
            self.hip.hipMemcpy(host.ctypes.data, self.ptr, self.nbytes,
                               int(hipMemcpyKind.hipMemcpyDeviceToHost))
        return host

    def torch(self) -> Any:
        """A host copy as a CPU ``torch.Tensor`` of the same dtype (bfloat16 included)."""
        host = self.numpy()
        dtype = dtype_to_torch(numpy_to_dtype(host.dtype))
        import torch  # noqa: PLC0415

        raw = host.view(f"u{host.dtype.itemsize}") if host.dtype.kind == "V" else host
        if raw.dtype == np.uint16:  # torch has no uint16 view source before 2.3: go through int16
            raw = raw.view(np.int16)
        return torch.from_numpy(raw).view(dtype)

    def free(self, why: str = "it was freed") -> None:
        """Give the memory back (idempotent, also from several threads at once: exactly one
        ``hipFree``; the array reads as freed, ``ptr`` 0, from the moment it starts)."""
        with self._lock:
            ptr, self._ptr = self._ptr, c_void_p()
            if self.freed is None:
                self.freed = why
        if ptr.value:
            self.hip.hipFree(ptr)


@dataclass(frozen=True)
class _Call:
    """One prepared call: the C arguments by parameter name, and the sizes we know of them."""

    name: str
    args: dict[str, Any]
    sizes: dict[str, int]  # parameter name -> bytes of a DeviceArray passed there
    session: Session

    def query(self, function: str, *names_or_values: Any) -> int:
        """A size query's single out-value, with arguments taken from this call by name."""
        return int(self.query_all(function, *names_or_values))

    def query_all(self, function: str, *names_or_values: Any) -> Any:
        """A size query's out-values (one value, or a tuple), arguments from this call by name."""
        args = [self.args[v] if isinstance(v, str) else v for v in names_or_values]
        args = [self.session.handle if a is _HANDLE else a for a in args]
        return self.session.query(function, *args)


def _needs(pointer: str, query: Callable[[_Call], int], when: Callable[[_Call], bool] | None = None) -> Any:
    return pointer, query, when


#: function -> [(pointer parameter, required bytes from MIOpen's own query, condition)].
WORKSPACE_RULES: Mapping[str, list[tuple[str, Callable[[_Call], int], Callable[[_Call], bool] | None]]] = {
    "miopenPoolingForward": [_needs(
        "workSpace", lambda c: c.query("miopenPoolingGetWorkSpaceSizeV2", "poolDesc", "yDesc"),
        lambda c: bool(c.args["do_backward"]))],
    "miopenPoolingBackward": [_needs(
        "workSpace", lambda c: c.query("miopenPoolingGetWorkSpaceSizeV2", "poolDesc", "yDesc"))],
    "miopenLRNForward": [_needs(
        "workSpace", lambda c: c.query("miopenLRNGetWorkSpaceSize", "yDesc"),
        lambda c: bool(c.args["do_backward"]))],
    "miopenLRNBackward": [_needs("workSpace", lambda c: c.query("miopenLRNGetWorkSpaceSize", "yDesc"))],
    "miopenDropoutForward": [_needs(
        "reserveSpace", lambda c: c.query("miopenDropoutGetReserveSpaceSize", "xDesc"))],
    "miopenDropoutBackward": [_needs(
        "reserveSpace", lambda c: c.query("miopenDropoutGetReserveSpaceSize", "dyDesc"))],
    "miopenReduceTensor": [
        _needs("workspace", lambda c: c.query("miopenGetReductionWorkspaceSize", "reduceTensorDesc", "aDesc", "cDesc")),
        _needs("indices", lambda c: c.query("miopenGetReductionIndicesSize", "reduceTensorDesc", "aDesc", "cDesc")),
    ],
    "miopenT5LayerNormBackward": [_needs("workspace", lambda c: c.query(
        "miopenGetT5LayerNormBackwardWorkspaceSize", "mode", "dyDesc", "xDesc", "weightDesc", "rstdDesc",
        "dxDesc", "dwDesc"))],
    "miopenLayerNormBackward": [_needs("workspace", lambda c: c.query(
        "miopenGetLayerNormBackwardWorkspaceSize", "mode", "dyDesc", "xDesc", "weightDesc", "meanDesc",
        "rstdDesc", "normalized_dim", "dxDesc", "dwDesc", "dbDesc"))],
    "miopenCTCLoss": [_needs("workSpace", lambda c: c.query(
        "miopenGetCTCLossWorkspaceSize", "probsDesc", "gradientsDesc", "labels", "labelLengths",
        "inputLengths", "algo", "ctcLossDesc"))],
    "miopenPReLUBackward": [_needs("workspace", lambda c: c.query(
        "miopenGetPReLUBackwardWorkspaceSize", "inputDesc", "weightDesc"))],
    "miopenMultiMarginLossForward": [_needs("workspace", lambda c: c.query(
        "miopenGetMultiMarginLossForwardWorkspaceSize", "inputDesc", "targetDesc", "weightDesc",
        "outputDesc", "p", "margin", "reduction"))],
    "miopenSoftMarginLossForward": [_needs("workspace", lambda c: c.query(
        "miopenGetSoftMarginLossForwardWorkspaceSize", "inputDesc", "targetDesc", "outputDesc",
        "reduction"))],
    "miopenReduceCalculationForward": [_needs("workspace", lambda c: c.query(
        "miopenGetReduceCalculationWorkspaceSize", "xDesc", "dim", "reduceCalculationOp", "reduceDesc"))],
    "miopenRNNForward": [
        _needs("workSpace", lambda c: c.query_all("miopenGetRNNTempSpaceSizes", "rnnDesc", "xDesc",
                                                  "fwdMode")[0]),
        _needs("reserveSpace", lambda c: c.query_all("miopenGetRNNTempSpaceSizes", "rnnDesc", "xDesc",
                                                     "fwdMode")[1]),
    ],
}


class UnsetDescriptorError(HipdnnError, ValueError):
    """A call the real libMIOpen crashes in (SIGSEGV) was given a descriptor that was created but
    never set; refused before the C call. The message names the call, the parameter and the
    setter to call first."""


#: Calls that crash the real libMIOpen (3.4.0 and 3.5.1: SIGSEGV, tests/live/test_direct_guards.py)
#: when the descriptor at the named parameter was created but never set: function ->
#: (parameter, descriptor kind, the calls that set it). A :class:`Session` refuses them with
#: :class:`UnsetDescriptorError` for descriptors it made and has not seen set.
#:
#: How set-ness is known: a tensor descriptor is asked its rank (``miopenGetTensorDescriptorSize``,
#: safe on a fresh one) whoever made it. The other kinds have no call that is safe on a fresh
#: descriptor (their getters read the parameter arrays a setter fills: the crash itself), so the
#: session watches their setters instead: every successful call of one on the session's library
#: binding (``MIOpenLibrary.observe``) marks its descriptor set, whether made through
#: :meth:`Session.call`, ``s.lib.<setter>(...)``, ``s.lib.cfunc(setter)(...)`` or any other code
#: using that binding (``miopen_ctypes.load()`` returns the same one). A setter that fails leaves
#: the descriptor refused. Only a set the session cannot see (through another binding of the
#: file, or from C) still reads as unset: set it through ``s.lib`` or :meth:`Session.call`.
UNSET_GUARDS: Mapping[str, tuple[str, str, tuple[str, ...]]] = {
    "miopenGet2dPoolingDescriptor": ("poolDesc", "Pooling",
                                     ("miopenSet2dPoolingDescriptor", "miopenSetNdPoolingDescriptor")),
    "miopenGetNdPoolingDescriptor": ("poolDesc", "Pooling",
                                     ("miopenSet2dPoolingDescriptor", "miopenSetNdPoolingDescriptor")),
    "miopenGetLRNDescriptor": ("lrnDesc", "LRN", ("miopenSetLRNDescriptor",)),
    "miopenGetActivationDescriptor": ("activDesc", "Activation", ("miopenSetActivationDescriptor",)),
    "miopenGetRNNDataSeqTensorDescriptor": ("seqTensorDesc", "SeqTensor",
                                            ("miopenSetRNNDataSeqTensorDescriptor",)),
    "miopenGet4dTensorDescriptor": ("tensorDesc", "Tensor",
                                    ("miopenSet4dTensorDescriptor", "miopenSetTensorDescriptor",
                                     "miopenSetTensorDescriptorV2", "miopenSetNdTensorDescriptorWithLayout")),
}


def _address(handle: Any) -> int:
    """The C pointer a descriptor handle holds (0 for NULL or a non-pointer value)."""
    try:
        return int(ctypes.cast(handle, c_void_p).value or 0)
    except (TypeError, ctypes.ArgumentError):
        return 0


#: Every call that sets a guarded descriptor kind (see UNSET_GUARDS).
_SETTERS = frozenset(name for _, _, setters in UNSET_GUARDS.values() for name in setters)
#: The guarded kinds whose set-ness the session tracks (a tensor descriptor is asked its rank),
#: and their setters: the only functions it watches (not the tensor setters plan builds call).
_WATCHED_KINDS = frozenset(kind for _, kind, _ in UNSET_GUARDS.values()) - {"Tensor"}
_WATCHED_SETTERS = frozenset(name for _, kind, setters in UNSET_GUARDS.values()
                             if kind in _WATCHED_KINDS for name in setters)


class Session:
    """A handle (made on first need) plus the objects made for you; ``with Session() as s:``.

    ``lib`` defaults to ``miopen_ctypes.load()``, ``hip`` to ``miopen_ctypes.hip.load_hip()``
    (loaded when device memory is first needed); ``stream`` (an int) is set on the handle.
    """

    def __init__(self, lib: Any = None, hip: Any = None, stream: int | None = None) -> None:
        self.lib = lib if lib is not None else miopen_ctypes.load()
        self._hip = hip
        self._stream = stream
        self._handle: Any = None
        self._owned: list[tuple[str, Any]] = []  # (destroy function, handle), newest last
        self._memory: list[DeviceArray] = []
        #: descriptors this session made and has not seen set: address -> kind
        self._unset: dict[int, str] = {}
        self._unwatch: Callable[[], None] | None = None  # stops watching the setters
        self.closed = False
        self._close_lock = threading.Lock()  # close() from several threads: one of each destroy

    # ---------------------------------------------------------------- lifetime
    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Destroy what the session made, newest first, then the handle; free its memory.
        Idempotent; from several threads at once, one closes and the others wait for it."""
        with self._close_lock:
            if self.closed:
                return
            self.closed = True
            while self._owned:
                destroy, handle = self._owned.pop()
                getattr(self.lib, destroy)(handle)
                _mark_gone(handle, f"it was destroyed ({destroy}) when its Session closed")
            self._unset.clear()
            if self._unwatch is not None:
                self._unwatch()
            for array in self._memory:
                array.free("its Session is closed")
            self._memory.clear()
            handle, self._handle = self._handle, None
            if handle is not None:
                self.lib.miopenDestroy(handle)

    @property
    def handle(self) -> Any:
        """The ``miopenHandle_t`` (``miopenCreate`` on first use: needs a GPU)."""
        self._check_open()
        if self._handle is None:
            handle = miopenHandle_t()
            self.lib.miopenCreate(byref(handle))
            if self._stream is not None:
                self.lib.miopenSetStream(handle, self._stream)
            self._handle = handle
        return self._handle

    @property
    def hip(self) -> Any:
        """The HIP runtime (loaded on first use)."""
        if self._hip is None:
            self._hip = miopen_ctypes.hip.load_hip()
        return self._hip

    def _check_open(self, what: str = "this Session") -> None:
        if self.closed:
            raise SessionClosedError(f"{what}: the Session is closed; make a new one")

    # ---------------------------------------------------------------- objects and memory
    def descriptor(self, kind: str, setter: str | None = None, *args: Any) -> Any:
        """A new ``miopen<kind>Descriptor_t`` (``miopenCreate<kind>Descriptor``), set with
        ``setter(desc, *args)`` when given, destroyed when the session closes.
        ``kind`` is e.g. "Tensor", "Pooling", "LRN", "Dropout", "CTCLoss", "RNN", "ReduceTensor".
        """
        self._check_open()
        create, destroy = f"miopenCreate{kind}Descriptor", f"miopenDestroy{kind}Descriptor"
        if create not in PROTOTYPES:
            kinds = sorted(n[len("miopenCreate"):-len("Descriptor")] for n in PROTOTYPES
                           if n.startswith("miopenCreate") and n.endswith("Descriptor"))
            raise ValueError(f"no miopenCreate{kind}Descriptor; kinds: {', '.join(kinds)}")
        if setter is not None:  # refuse a wrong argument before anything is made
            _check_setter_args(setter, args)
        ctype = PROTOTYPES[create].argtypes[0]._type_
        desc = ctype()
        getattr(self.lib, create)(byref(desc))
        if destroy in PROTOTYPES:  # softmax and MHA descriptors have no destroy function
            self._owned.append((destroy, desc))
        if kind in _WATCHED_KINDS:
            self._watch_setters()
        self._unset[_address(desc)] = kind
        if setter is not None:
            self.call(setter, desc, *args)
        return desc

    def _watch_setters(self) -> None:
        """Mark this session's descriptors set when a setter of a guarded kind succeeds on its
        library binding, however it is called (see :data:`UNSET_GUARDS`). Started with the first
        such descriptor; stopped by :meth:`close` (or when the session is collected)."""
        observe = getattr(self.lib, "observe", None)
        if self._unwatch is not None or observe is None:  # a library object without it: only
            return                                         # Session.call's sets are seen
        session_ref = weakref.ref(self)  # the watcher must not keep the session alive

        def seen(name: str, args: tuple[Any, ...]) -> None:
            session = session_ref()
            if session is not None and args:
                session._unset.pop(_address(args[0]), None)

        self._unwatch = stop = observe(_WATCHED_SETTERS, seen)
        weakref.finalize(self, stop)

    def tensor(self, array: Any) -> Any:
        """A tensor descriptor of ``array``'s shape, strides and dtype (owned by the session)."""
        self._check_open("Session.tensor")
        if isinstance(array, DeviceArray):
            array.check_live("Session.tensor")
        buf = _shaped(array, "tensor")
        return self._tensor_descriptor(buf, self._owned)

    def _tensor_descriptor(self, buf: Buffer, owner: list[tuple[str, Any]]) -> Any:
        assert buf.shape is not None and buf.strides is not None
        dtype = _miopen_dtype(buf)
        desc = miopenTensorDescriptor_t()
        self.lib.miopenCreateTensorDescriptor(byref(desc))
        owner.append(("miopenDestroyTensorDescriptor", desc))
        dims = buf.shape or (1,)
        strides = buf.strides or (1,)
        self.lib.miopenSetTensorDescriptor(desc, int(dtype), len(dims), (c_int * len(dims))(*dims),
                                           (c_int * len(strides))(*strides))
        return desc

    def empty(self, shape: Sequence[int], dtype: Any = np.float32) -> DeviceArray:
        """Uninitialised device memory (freed when the session closes); ``dtype`` a numpy dtype,
        a :class:`~hipdnn.core.types.DataType` or a torch dtype (bfloat16: ``ml_dtypes.bfloat16``)."""
        self._check_open("Session.empty")
        array = DeviceArray(self.hip, shape, _numpy_dtype(dtype))
        self._memory.append(array)
        return array

    def workspace(self, nbytes: int) -> DeviceArray:
        """``nbytes`` of device memory for a workspace or reserve parameter."""
        return self.empty((int(nbytes),), np.uint8)

    def to_device(self, array: Any) -> DeviceArray:
        """A device copy of a host array: numpy, or a torch CPU tensor (bfloat16 too)."""
        self._check_open("Session.to_device")
        host = _host_array(array)
        device = self.empty(host.shape, host.dtype)
        try:
            device.copy_from(host)
        except BaseException:
            self._memory.remove(device)
            device.free()
            raise
        return device

    # ---------------------------------------------------------------- calls
    def call(self, name: str, *args: Any) -> None:
        """``lib.<name>`` with the handle, descriptors, scalars and sizes filled in (module doc)."""
        self._check_open(name)
        temporaries: list[tuple[str, Any]] = []
        try:
            prepared = self._prepare(name, args, temporaries)
            self._check_set(prepared)
            self._check_sizes(prepared)
            args_ = [self.handle if a is _HANDLE else a for a in prepared.args.values()]
            getattr(self.lib, name)(*args_)
            if name in _SETTERS and args_:  # the descriptor is set now
                self._unset.pop(_address(args_[0]), None)
        finally:
            for destroy, handle in reversed(temporaries):
                getattr(self.lib, destroy)(handle)

    def query(self, name: str, *args: Any) -> Any:
        """Call ``name`` with fresh out-parameters for its trailing ``T*`` parameters; their
        values (one value, or a tuple)."""
        self._check_open(name)
        proto = _prototype(name)
        trailing = 0
        for argtype in reversed(proto.argtypes):
            out_param = isinstance(argtype, type) and issubclass(argtype, ctypes._Pointer) \
                and argtype not in HANDLE_TYPES and argtype is not POINTER(miopenTensorDescriptor_t)
            if not out_param:
                break
            trailing += 1
        outs = [argtype._type_() for argtype in proto.argtypes[len(proto.argtypes) - trailing:]]
        self.call(name, *args, *(byref(o) for o in outs))
        values = tuple(o.value if hasattr(o, "value") else o for o in outs)
        return values[0] if len(values) == 1 else values

    def _prepare(self, name: str, args: tuple[Any, ...], temporaries: list[tuple[str, Any]]) -> _Call:
        proto = _prototype(name)
        names, types = proto.argnames, proto.argtypes
        defaults = HEADER_DEFAULTS.get(name, {})
        out: dict[str, Any] = {}
        sizes: dict[str, int] = {}
        explicit: list[tuple[str, str]] = []  # (descriptor given as is, its data parameter)
        describe: list[str] = []  # parameters given an array to describe
        given = list(args)
        scalar_type: Any = None
        i = 0
        while i < len(names):
            pname, ptype = names[i], types[i]
            if i == 0 and ptype is miopenHandle_t and pname == "handle":
                out[pname] = _HANDLE  # filled after the size checks (they need no GPU)
                i += 1
                continue
            if not given:
                if pname in defaults:  # a C++ default argument of the header
                    out[pname] = defaults[pname]
                    i += 1
                    continue
                raise TypeError(f"{name}: missing an argument for {pname!r} "
                                f"(C parameters: {', '.join(names)})")
            value = given.pop(0)
            where = f"{name}({pname})"
            gone = getattr(value, "_hipdnn_gone", None)
            if gone is not None:
                raise SessionClosedError(f"{where}: this descriptor cannot be used: {gone}")
            if isinstance(value, DeviceArray):
                value.check_live(where)
            nxt = names[i + 1] if i + 1 < len(names) else ""
            # "xDesc, x" and "aDesc, A" (miopenReduceTensor): the pointer's name, any case; the
            # pointer a void* or a typed T* (miopenKthvalueForward's "size_t* indices")
            pairs = bool(nxt) and (nxt + "Desc").lower() == pname.lower() and _is_data_pointer(types[i + 1])
            if ptype is miopenTensorDescriptor_t and _is_array(value):
                buf = _shaped(value, where)
                _miopen_dtype(buf)  # refused here, before any C call
                out[pname] = _Describe(buf)  # made once every argument passed its checks
                describe.append(pname)
                if scalar_type is None:
                    scalar_type = c_double if buf.dtype == DataType.DOUBLE else c_float
                if pairs:
                    if isinstance(value, DeviceArray):
                        sizes[nxt] = value.nbytes
                    out[nxt] = _typed_pointer(_device_pointer(buf, f"{name}({nxt})"), types[i + 1], buf,
                                              name, nxt)
                    i += 2
                    continue
            elif ptype is miopenTensorDescriptor_t and pairs:
                out[pname] = value
                explicit.append((pname, nxt))
            elif explicit and explicit[-1][1] == pname and _is_array(value) and _is_data_pointer(ptype):
                # an array (a GPU tensor, ...) as the data of a descriptor given as is
                buf = _shaped(value, where)
                out[pname] = _typed_pointer(_device_pointer(buf, where), ptype, buf, name, pname)
                assert buf.nbytes is not None  # _shaped() gives shape, strides and dtype
                sizes[pname] = buf.nbytes
            elif ptype is c_void_p and pname in _SCALARS and isinstance(value, (int, float)) \
                    and not isinstance(value, bool):
                out[pname] = byref((scalar_type or c_float)(value))
            elif isinstance(value, DeviceArray):
                out[pname] = _typed_pointer(value.ptr, ptype, resolve(value) if value.nbytes else None,
                                            name, pname)
                sizes[pname] = value.nbytes
                if nxt.lower().startswith(pname.lower()) and types[i + 1] is c_size_t:
                    out[nxt] = value.nbytes
                    i += 2
                    continue
            else:
                out[pname] = value
            i += 1
        if given:
            raise TypeError(f"{name}: {len(given)} argument(s) too many (C parameters: {', '.join(names)})")
        _check_types(name, out)
        for pname in describe:  # the checks passed: now the C calls
            out[pname] = self._tensor_descriptor(out[pname].buf, temporaries)
        self._check_described(name, out, sizes, explicit)
        return _Call(name, out, sizes, self)

    def _check_described(self, name: str, out: dict[str, Any], sizes: dict[str, int],
                         explicit: list[tuple[str, str]]) -> None:
        """A tensor descriptor given as is, with a DeviceArray as its data: the array must hold
        what the descriptor describes (``miopenGetTensorNumBytes``), or MIOpen reads and writes
        past it."""
        for desc_param, data_param in explicit:
            have = sizes.get(data_param)
            desc = out[desc_param]
            if have is None or not _address(desc):
                continue
            rank, need = c_int(0), c_size_t(0)
            self.lib.miopenGetTensorDescriptorSize(desc, byref(rank))
            if rank.value == 0:  # never set: nothing to compare (MIOpen refuses it itself)
                continue
            self.lib.miopenGetTensorNumBytes(desc, byref(need))
            if have < need.value:
                raise VariantPackError(f"{name}({data_param}): the array holds {have} bytes, its "
                                       f"descriptor {desc_param!r} describes {need.value}; MIOpen "
                                       f"would read or write past it (pass the array itself for "
                                       f"{desc_param!r} to describe it)")

    def _check_set(self, call: _Call) -> None:
        """Refuse a call the real library crashes in when its descriptor was never set."""
        guard = UNSET_GUARDS.get(call.name)
        if guard is None:
            return
        param, kind, setters = guard
        desc = call.args.get(param)
        unset = _address(desc) in self._unset
        if kind == "Tensor" and desc is not None and not unset:
            rank = c_int(0)
            self.lib.miopenGetTensorDescriptorSize(desc, byref(rank))
            unset = rank.value == 0
        if unset:
            raise UnsetDescriptorError(
                f"{call.name}: parameter {param!r} is a {kind} descriptor that was created but "
                f"never set; the real libMIOpen crashes (SIGSEGV) reading it. Set it first "
                f"({' or '.join(setters)}, through Session.call, Session.descriptor(kind, "
                f"setter, ...) or this session's s.lib; a set through another binding of the "
                f"library is not seen)")

    def _check_sizes(self, call: _Call) -> None:
        for pointer, required, when in WORKSPACE_RULES.get(call.name, ()):
            if when is not None and not when(call):
                continue
            need = required(call)
            size_param = next((n for n in call.args if n != pointer and n.lower().startswith(pointer.lower())), None)
            have = call.args[size_param] if size_param is not None else call.sizes.get(pointer)
            if have is None:  # a raw pointer with no size: nothing to check against
                continue
            if need and not call.args[pointer]:
                raise WorkspaceError(f"{call.name}: {pointer} is NULL but MIOpen needs {need} bytes "
                                     f"for this call; pass s.workspace({need})")
            if int(have) < need:
                raise WorkspaceError(f"{call.name}: {pointer} holds {int(have)} bytes, MIOpen needs "
                                     f"{need} for this call (its own size query); pass s.workspace({need})")


def _prototype(name: str) -> Any:
    try:
        return PROTOTYPES[name]
    except (KeyError, TypeError):
        import difflib  # noqa: PLC0415

        close = difflib.get_close_matches(str(name), PROTOTYPES, n=3)
        raise ArgumentError(f"{name!r} is not a function of miopen.h"
                            + (f"; did you mean {', '.join(close)}?" if close else "")) from None


def _miopen_dtype(buf: Buffer) -> miopenDataType_t:
    """The MIOpen data type of an array to describe; refused if it has none or its shape or
    strides do not fit the C ints of ``miopenSetTensorDescriptor``."""
    assert buf.shape is not None and buf.strides is not None and buf.dtype is not None
    try:
        dtype = MIOPEN_DATA_TYPES[buf.dtype]
    except KeyError:
        raise VariantPackError(f"{buf.dtype.name} has no MIOpen data type; valid: "
                               f"{', '.join(d.name for d in MIOPEN_DATA_TYPES)}") from None
    bad = [v for v in (*buf.shape, *buf.strides) if not 0 <= int(v) <= _C_INT_MAX]
    if bad:  # miopenSetTensorDescriptor takes C ints: 2**32 + 5 would arrive as 5
        raise VariantPackError(f"an array of shape {tuple(buf.shape)} and strides (elements) "
                               f"{tuple(buf.strides)} cannot be described to MIOpen: "
                               f"miopenSetTensorDescriptor takes dims and strides as C ints; "
                               f"valid: 0..2**31-1 each (no negative strides: pass "
                               f"np.ascontiguousarray(a))")
    return dtype


@dataclass(frozen=True)
class _Describe:
    """An array given for a tensor descriptor, described once every argument is checked."""

    buf: Buffer


def _mark_gone(handle: Any, why: str) -> None:
    """Mark a destroyed descriptor and make it NULL in place: passed anywhere later it is refused
    (by Session.call, naming why, and by the binding as a NULL handle), never a dangling pointer."""
    try:
        handle._hipdnn_gone = why
        ctypes.memset(ctypes.addressof(handle), 0, ctypes.sizeof(handle))
    except (AttributeError, TypeError):
        pass


def _is_data_pointer(ctype: Any) -> bool:
    """``void*`` or a pointer to a C scalar (``size_t*``, ``float*``): where array data goes."""
    if ctype is c_void_p:
        return True
    return isinstance(ctype, type) and issubclass(ctype, ctypes._Pointer) \
        and ctype not in HANDLE_TYPES and issubclass(ctype._type_, ctypes._SimpleCData)


def _typed_pointer(address: int, ctype: Any, buf: Buffer | None, function: str, param: str) -> Any:
    """A device address as ``ctype``: as is for ``void*``; cast for a typed ``T*``, whose element
    size the array's must equal (an int32 array where MIOpen writes size_t would be overrun)."""
    if ctype is c_void_p or not _is_data_pointer(ctype):
        return address
    want = ctypes.sizeof(ctype._type_)
    if buf is not None and buf.dtype is not None:
        got = dtype_to_numpy(buf.dtype).itemsize
        if got != want:
            integer = issubclass(ctype._type_, (ctypes.c_ulong, ctypes.c_long, ctypes.c_int, ctypes.c_uint,
                                                ctypes.c_longlong, ctypes.c_ulonglong))
            raise VariantPackError(f"{function}({param}): the C parameter is "
                                   f"{c_type_name(function, param)} ({want}-byte elements); the "
                                   f"array's dtype {buf.dtype.name} has {got}-byte elements"
                                   + (f" (valid: a {want * 8}-bit integer array)" if integer else ""))
    return ctypes.cast(c_void_p(address), ctype) if address else None


@dataclass(frozen=True)
class _IntRange:
    """What an integer parameter holds: ``low..high`` and, for an enum, its declared values."""

    low: int
    high: int
    spelling: str  # the header's C type
    enum: type[IntEnum] | None
    values: frozenset[int] | None  # an enum's declared values (all in range; None: the range)

    def valid(self) -> str:
        """The valid values, for a message."""
        if self.enum is None:
            return f"{self.low}..{self.high}"
        members = sorted(self.enum, key=int)
        names = [f"{m.name} ({int(m)})" for m in members[:12]]
        more = f", ... ({len(members)} names: miopen_ctypes.enums.{self.enum.__name__})" \
            if len(members) > 12 else ""
        return ", ".join(names) + more


#: ctypes format codes of the C integer types (``c_int._type_`` is "i", ``c_size_t``'s "L" or
#: "Q"); lower case is signed. ``void*`` ("P") takes an address: 0..2**bits-1.
_INT_CODES = frozenset("bBhHiIlLqQP")
_INTEGERS = (int, np.integer)
#: function -> its parameters (name, ctypes type, what an int there may be): built once per
#: function, on its first call.
_PARAMS: dict[str, tuple[tuple[str, Any, _IntRange | None], ...]] = {}


def _params(name: str) -> tuple[tuple[str, Any, _IntRange | None], ...]:
    """The parameters of ``name`` with what each integer one holds, from the ctypes type's size
    on this platform (``long`` is 32-bit on Windows) and, where the header spells an enum that
    :data:`miopen_ctypes.enums.ENUMS` knows, the enum's declared values (3.4 and 3.5 together).
    ``bool`` parameters have no range: any value is true or false."""
    params = _PARAMS.get(name)
    if params is not None:
        return params
    proto = _prototype(name)
    table: list[tuple[str, Any, _IntRange | None]] = []
    for pname, ptype in zip(proto.argnames, proto.argtypes, strict=True):
        code = getattr(ptype, "_type_", None)
        if not (isinstance(ptype, type) and issubclass(ptype, ctypes._SimpleCData)
                and isinstance(code, str) and code in _INT_CODES):
            table.append((pname, ptype, None))
            continue
        bits = 8 * ctypes.sizeof(ptype)
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if code.islower() else (0, 2**bits - 1)
        spelling = c_type_name(name, pname)
        enum = ENUMS.get(spelling)
        values = frozenset(int(m) for m in enum if low <= int(m) <= high) if enum is not None else None
        table.append((pname, ptype, _IntRange(low, high, spelling, enum, values)))
    params = _PARAMS[name] = tuple(table)
    return params


def _check_types(name: str, args: Mapping[str, Any]) -> None:
    """Every argument (of ``args``, by parameter name) as ctypes would convert it, before the
    call: a wrong-typed one is an ArgumentError naming the parameter, its C type as the header
    spells it (``int``, ``size_t``, ``miopenPoolingMode_t``: not the ctypes type, whose name
    depends on the platform) and the Python value given. An integer (a bool counts as 0/1, as in
    C) must fit the parameter's C type (ctypes would wrap or cut it silently) and, for an enum,
    be one of its values: an ArgumentError naming the valid range or names otherwise."""
    for pname, ptype, span in _params(name):
        value = args.get(pname)
        if value is _HANDLE or value is None or type(value) is _Describe:
            continue
        try:
            ptype.from_param(value)
        except (TypeError, ValueError, ctypes.ArgumentError):
            given = repr(value) if isinstance(value, (int, float, str, bytes)) else type(value).__name__
            raise ArgumentError(f"{name}({pname}): the C parameter is {c_type_name(name, pname)}; "
                                f"got {given}") from None
        if span is not None and isinstance(value, _INTEGERS):
            number = int(value)
            if number not in span.values if span.values is not None else not span.low <= number <= span.high:
                kind = "an enum: valid" if span.enum is not None else "valid"
                raise ArgumentError(f"{name}({pname}): the C parameter is {span.spelling} ({kind}: "
                                    f"{span.valid()}); got {number}")


def _check_setter_args(setter: str, args: Sequence[Any]) -> None:
    """The plain arguments of ``setter(desc, *args)`` (up to the first array, after which they
    may shift) as :meth:`Session.call` will check them, before the descriptor is made."""
    plain: dict[str, Any] = {}
    for pname, value in zip(_prototype(setter).argnames[1:], args, strict=False):
        if _is_array(value) or isinstance(value, DeviceArray):
            break
        plain[pname] = value
    _check_types(setter, plain)


def _is_array(value: Any) -> bool:
    """An array-like (not a number, ctypes object, handle or None) to make a descriptor from."""
    plain = (int, float, bool, np.generic, ctypes._SimpleCData, ctypes._Pointer, ctypes.Array)
    return value is not None and not isinstance(value, plain)


def _shaped(value: Any, where: str) -> Buffer:
    buf = resolve(value)
    if buf.shape is None or buf.strides is None or buf.dtype is None:
        raise VariantPackError(f"{where}: a {buf.kind} reveals no shape/strides/dtype; pass an "
                               "array (torch tensor, DeviceArray, DLPack or CUDA-array-interface object)")
    return buf


def _device_pointer(buf: Buffer, where: str) -> int:
    if buf.is_host:
        raise VariantPackError(f"{where}: a host array ({buf.kind}); MIOpen reads device memory: "
                               "pass a GPU tensor or s.to_device(array)")
    return buf.ptr

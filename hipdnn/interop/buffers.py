"""Variant-pack values -> :class:`Buffer` (pointer, device, shape, strides, dtype).

One function, :func:`resolve`, turns whatever a user puts in a variant pack (a raw int
pointer, a Python float, a numpy array, a torch tensor, any ``__dlpack__`` object, any
``__cuda_array_interface__`` or ``__array_interface__`` object) into a :class:`Buffer`.
:func:`check_against` compares what the object reveals with the graph's tensor, and
:func:`host_view` gives engines a writable strided numpy view of host memory.

>>> import numpy as np
>>> buf = resolve(np.zeros((2, 3), np.float32))
>>> buf.device, buf.shape, buf.strides, buf.dtype.name
('cpu', (2, 3), (3, 1), 'FLOAT')

Importing this module never imports torch: torch tensors are recognised by their type's
module name and their dtypes by name.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hipdnn.core.errors import VariantPackError
from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import DataType
from hipdnn.interop import dlpack
from hipdnn.interop.array_fit import permutation_hint, regrouped_strides
from hipdnn.interop.dtypes import (
    dlpack_to_dtype,
    dtype_to_numpy,
    numpy_to_dtype,
    torch_to_dtype,
)
from hipdnn.interop.hostmem import element_span, host_array

__all__ = [
    "ACCEPTED_KINDS",
    "Buffer",
    "by_pointer",
    "check_against",
    "describe",
    "host_view",
    "own_strides",
    "resolve",
]

#: What :func:`resolve` accepts, as named in its error message.
ACCEPTED_KINDS = (
    "int (raw pointer)",
    "float (pass-by-value scalar)",
    "numpy.ndarray",
    "torch.Tensor",
    "object with __dlpack__",
    "object with __cuda_array_interface__",
    "object with __array_interface__",
    "hipdnn.interop.buffers.Buffer",
)


@dataclass(eq=False)
class Buffer:
    """A variant-pack value as engines see it.

    ``shape``/``strides`` (in elements)/``dtype`` are ``None`` when the object does not
    reveal them (a raw int pointer). ``array`` is a numpy view when the memory is on the
    host; ``scalar`` is set for a pass-by-value float. ``owner`` keeps the source alive
    (and, for DLPack, releases the producer's export when collected).
    ``device_known`` is False when ``device`` is a guess (raw int pointers).
    ``by_pointer`` is True for :func:`by_pointer`'s buffers: the tensor is laid out from the
    data pointer by its own strides, whatever shape the object states.

    >>> import numpy as np
    >>> buf = resolve(np.zeros((4, 2), np.float16).T)
    >>> buf.kind, buf.shape, buf.strides, buf.dtype.name, buf.nbytes
    ('numpy.ndarray', (2, 4), (1, 2), 'HALF', 16)
    """

    ptr: int
    device: str = "gpu"
    device_id: int = 0
    shape: tuple[int, ...] | None = None
    strides: tuple[int, ...] | None = None
    dtype: DataType | None = None
    array: np.ndarray[Any, Any] | None = field(default=None, repr=False)
    scalar: float | None = None
    owner: object = field(default=None, repr=False)
    kind: str = "int"
    readonly: bool = False
    device_known: bool = True
    stream: int | None = None
    #: For a torch view with the negative or conjugate bit (e.g. ``z.conj().imag``): which
    #: bit ("negative", "conjugate"), and a callable copying the view's current values into
    #: the resolved copy this Buffer points at (bindings call it before every run).
    view_bit: str | None = None
    refresh: Callable[[], None] | None = field(default=None, repr=False)
    by_pointer: bool = False
    #: Host views already made over this buffer, by the tensor's (data type, dim, stride): set
    #: (empty) on the buffers a bound variant pack keeps, whose memory and layout every later
    #: run it serves has again (see :func:`host_view`).
    views: dict[tuple[Any, ...], np.ndarray[Any, Any]] | None = field(default=None, repr=False)

    @property
    def is_host(self) -> bool:
        """True when the memory is host memory (``device == "cpu"``)."""
        return self.device == "cpu"

    @property
    def itemsize(self) -> int | None:
        """Bytes per element, when the dtype is known."""
        return None if self.dtype is None else dtype_to_numpy(self.dtype).itemsize

    @property
    def numel(self) -> int | None:
        """Number of elements, when the shape is known."""
        return None if self.shape is None else int(np.prod(self.shape, dtype=np.int64))

    @property
    def span(self) -> tuple[int, int] | None:
        """Byte range ``[lo, hi)`` relative to ``ptr`` that the elements cover, when known."""
        if self.shape is None or self.strides is None or self.itemsize is None:
            return None
        lo, hi = element_span(self.shape, self.strides)
        return lo * self.itemsize, hi * self.itemsize

    @property
    def nbytes(self) -> int | None:
        """Bytes the elements cover (the span's length), when known."""
        span = self.span
        return None if span is None else span[1] - span[0]


# ---------------------------------------------------------------------------- host memory


_NUMPY_NAMES = {DataType.FLOAT: "np.float32", DataType.HALF: "np.float16",
                DataType.DOUBLE: "np.float64", DataType.INT32: "np.int32", DataType.INT8: "np.int8",
                DataType.UINT8: "np.uint8"}
_TORCH_NAMES = {DataType.FLOAT: ".float()", DataType.HALF: ".half()",
                DataType.BFLOAT16: ".bfloat16()", DataType.DOUBLE: ".double()"}


def _cast_hint(expected: Any) -> str:
    """``; cast it: a.astype(np.float32) (numpy) or t.float() (torch)`` for the expected type."""
    dt = DataType(expected)
    parts = []
    if dt in _NUMPY_NAMES:
        parts.append(f"a.astype({_NUMPY_NAMES[dt]}) (numpy)")
    if dt in _TORCH_NAMES:
        parts.append(f"t{_TORCH_NAMES[dt]} (torch)")
    return f"; cast it: {' or '.join(parts)}" if parts else ""


def host_view(buffer: Buffer, tensor: Any) -> np.ndarray[Any, Any]:
    """Writable numpy view of ``buffer``'s host memory with ``tensor``'s dim/stride/dtype.

    Engines write outputs through it, so the writes land in the caller's array. An array of
    the tensor's shape in another layout is viewed through its own strides (see
    :func:`check_against`); raw int pointers (assumed host memory) and buffers of another shape
    are laid out from the pointer with the tensor's strides, bounds-checked where the buffer's
    extent is known. A pass-by-value scalar gives a new array filled with the value.

    >>> import numpy as np
    >>> class T: dim = (2, 2); stride = (1, 2); data_type = DataType.FLOAT; name = "x"; uid = 1
    >>> a = np.zeros((2, 2), np.float32)
    >>> host_view(resolve(a), T())[0, 1] = 5.0   # the array's own (row-major) layout
    >>> float(a[0, 1])
    5.0
    >>> host_view(resolve(a.ctypes.data), T())[0, 1] = 7.0   # a pointer: column-major
    >>> float(a[1, 0])
    7.0
    """
    try:
        np_dtype = dtype_to_numpy(tensor.data_type)
    except VariantPackError as exc:
        raise VariantPackError(f"{_label(tensor)}: {exc}", tensor=tensor.name) from None
    views = buffer.views
    if views is not None and buffer.scalar is None:
        key = (tensor.data_type, _as_key(tensor.dim), _as_key(tensor.stride))
        view = views.get(key)
        if view is None:
            view = views[key] = _host_view(buffer, tensor, np_dtype)
        return view.view()  # a new array object over the same memory
    return _host_view(buffer, tensor, np_dtype)


def _as_key(values: Any) -> tuple[int, ...] | None:
    return None if values is None else tuple(values)


def _host_view(buffer: Buffer, tensor: Any, np_dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    dim, stride = _geometry(tensor)
    if buffer.scalar is not None:
        return np.full(dim, buffer.scalar, np_dtype)
    own = own_strides(buffer, dim)
    if own is not None:  # the same logical tensor in the buffer's layout: follow the buffer
        stride = own
    label = _label(tensor)
    if not buffer.is_host and buffer.device_known:
        raise VariantPackError(
            f"{label}: a {buffer.kind} on {buffer.device}:{buffer.device_id} is not host memory; "
            "this engine needs host (CPU) memory",
            tensor=tensor.name,
        )
    lo, hi = element_span(dim, stride)
    if hi > lo:
        if buffer.ptr == 0:
            raise VariantPackError(
                f"{label}: null pointer for a tensor of dim {dim}", tensor=tensor.name
            )
        have = buffer.span
        need = (lo * np_dtype.itemsize, hi * np_dtype.itemsize)
        if have is not None and (need[0] < have[0] or need[1] > have[1]):
            raise VariantPackError(
                f"{label}: dim {dim} with stride {stride} covers bytes {need} of the pointer, "
                f"but the {buffer.kind} covers only {have}",
                tensor=tensor.name,
            )
    if buffer.ptr + hi * np_dtype.itemsize > _ADDRESS_LIMIT:
        raise VariantPackError(
            f"{label}: dim {dim} with stride {stride} from pointer {buffer.ptr:#x} reaches past "
            f"the end of the address space ({hi * np_dtype.itemsize} bytes); valid: strides "
            f"whose extent fits in memory", tensor=tensor.name)
    owner = buffer.owner if buffer.owner is not None else buffer.array
    try:
        return host_array(buffer.ptr, dim, stride, np_dtype, owner, buffer.readonly)
    except (OverflowError, ValueError, MemoryError) as exc:  # numpy's own limits
        raise VariantPackError(f"{label}: dim {dim} with stride {stride} cannot be viewed in "
                               f"host memory: {exc}", tensor=tensor.name) from None


#: Byte addresses a host view may reach (numpy's byte strides and offsets are signed 64-bit).
_ADDRESS_LIMIT = 2**63 - 1
_POINTER_END = 1 << 64  # ints from here on are no 64-bit address (ctypes would truncate them)
#: Addresses below are never mapped (every OS keeps the first page, at least, unmapped)
_FIRST_PAGE_END = 4096


# ---------------------------------------------------------------------------- resolve


def _int_strides(byte_strides: Sequence[int], itemsize: int, kind: str) -> tuple[int, ...]:
    if any(int(s) % itemsize for s in byte_strides):
        raise VariantPackError(
            f"{kind}: byte strides {tuple(byte_strides)} are not multiples of the item size "
            f"{itemsize}"
        )
    return tuple(int(s) // itemsize for s in byte_strides)


def _from_numpy(arr: np.ndarray[Any, Any]) -> Buffer:
    dtype = numpy_to_dtype(arr.dtype)
    return Buffer(
        ptr=int(arr.__array_interface__["data"][0]),
        device="cpu",
        shape=tuple(int(d) for d in arr.shape),
        strides=_int_strides(arr.strides, arr.itemsize, "numpy.ndarray"),
        dtype=dtype,
        array=arr,
        owner=arr,
        kind="numpy.ndarray",
        readonly=not arr.flags.writeable,
    )


def _is_torch_tensor(obj: object) -> bool:
    return any(
        c.__name__ == "Tensor" and c.__module__.split(".")[0] == "torch"
        for c in type(obj).__mro__
    )


def _from_torch(t: Any) -> Buffer:
    kind = "torch.Tensor"
    device_type = t.device.type
    if device_type not in ("cpu", "cuda", "hip"):
        raise VariantPackError(f"{kind} on device {t.device} has no addressable memory")
    layout = str(getattr(t, "layout", "torch.strided"))
    if layout != "torch.strided" or getattr(t, "is_nested", False) or \
            getattr(t, "is_mkldnn", False) or getattr(t, "is_quantized", False):
        what = "quantized" if getattr(t, "is_quantized", False) else f"with layout {layout}"
        raise VariantPackError(f"{kind} {what} has no plain strided memory; valid: a dense "
                               f"torch.strided tensor (e.g. .to_dense() / .dequantize())")
    try:
        strides = tuple(int(s) for s in t.stride())
    except RuntimeError as exc:  # other layouts without strides
        raise VariantPackError(f"{kind} with layout {layout} is not strided: {exc}") from None
    dtype = torch_to_dtype(t.dtype)
    shape = tuple(int(d) for d in t.shape)
    view_bit = "conjugate" if t.is_conj() else "negative" if t.is_neg() else None
    refresh = None
    source = t
    if view_bit is not None:
        # its memory holds the values before negation/conjugation: read a resolved copy
        # (as torch's own DLPack export would need), refreshed before every bound run
        t = t.resolve_conj().resolve_neg()
        strides = tuple(int(s) for s in t.stride())
        refresh = _copier(t, source)
    try:
        ptr = int(t.data_ptr())
    except RuntimeError as exc:  # a tensor without storage (functional/fake tensors, ...)
        raise VariantPackError(f"{kind} has no data pointer: {exc}") from None
    on_host = device_type == "cpu"
    array = host_array(ptr, shape, strides, dtype_to_numpy(dtype), t) if on_host else None
    return Buffer(
        ptr=ptr, device="cpu" if on_host else "gpu", device_id=int(t.device.index or 0),
        shape=shape, strides=strides, dtype=dtype, array=array, owner=t, kind=kind,
        readonly=view_bit is not None, view_bit=view_bit, refresh=refresh,
    )


def _copier(copy: Any, view: Any) -> Callable[[], None]:
    def refresh() -> None:
        copy.copy_(view)
    return refresh


def _interface_dtype(iface: Mapping[str, Any], kind: str) -> DataType:
    typestr = str(iface.get("typestr", ""))
    descr = iface.get("descr") or []
    if typestr[1:] == "V2" and any("bf" in str(entry).lower() for entry in descr):
        return DataType.BFLOAT16  # the convention for bf16, which has no typestr
    try:
        np_dtype = np.dtype(typestr)
    except TypeError:
        raise VariantPackError(f"{kind}: unknown typestr {typestr!r}") from None
    if np_dtype.kind == "V":
        raise VariantPackError(
            f"{kind}: typestr {typestr!r} is opaque; bfloat16 needs a 'descr' naming it"
        )
    if not np_dtype.isnative:
        raise VariantPackError(f"{kind}: typestr {typestr!r} is not in native byte order")
    return numpy_to_dtype(np_dtype)


def _from_interface(obj: object, iface: Any, on_host: bool, kind: str) -> Buffer:
    """A Buffer from an (array or CUDA array) interface dict; a malformed dict (not a dict, a
    missing key, a value of the wrong type) is a VariantPackError naming what is wrong."""
    if not isinstance(iface, Mapping):
        raise VariantPackError(f"{kind}: the interface is a {type(iface).__name__}, not a dict")
    missing = [k for k in ("shape", "typestr", "data") if k not in iface]
    if missing:
        raise VariantPackError(f"{kind}: the interface dict lacks {missing}; valid: a dict with "
                               f"'shape', 'typestr' and 'data': (pointer, read_only) (and "
                               f"optionally 'strides')")
    try:
        return _interface_buffer(obj, iface, on_host, kind)
    except (TypeError, ValueError, OverflowError, IndexError, KeyError) as exc:
        if isinstance(exc, VariantPackError):
            raise
        raise VariantPackError(f"{kind}: malformed interface dict ({type(exc).__name__}: "
                               f"{exc}); valid: 'shape' a tuple of ints >= 0, 'typestr' a "
                               f"numpy type string, 'data' a (pointer int, read_only bool) "
                               f"tuple, 'strides' None or a tuple of byte strides") from None


def _interface_buffer(obj: object, iface: Mapping[str, Any], on_host: bool,
                      kind: str) -> Buffer:
    if iface.get("mask") is not None:
        raise VariantPackError(f"{kind}: masked arrays are not supported")
    dtype = _interface_dtype(iface, kind)
    itemsize = dtype_to_numpy(dtype).itemsize
    shape = tuple(operator.index(d) for d in iface["shape"])
    if any(d < 0 for d in shape):
        raise VariantPackError(f"{kind}: shape {shape} has a negative extent")
    data = iface["data"]
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise VariantPackError(f"{kind}: 'data' is {data!r:.40}; this reader takes a "
                               f"(pointer int, read_only bool) tuple (not a buffer object)")
    ptr, readonly = data
    ptr = operator.index(ptr or 0)
    if ptr < 0:
        raise VariantPackError(f"{kind}: data pointer {ptr:#x} is negative")
    if ptr >= _POINTER_END:
        raise VariantPackError(f"{kind}: data pointer {ptr:#x} does not fit in 64 bits")
    if 0 < ptr < _FIRST_PAGE_END:
        raise VariantPackError(f"{kind}: data pointer {ptr:#x} lies in the first page of "
                               f"memory, where nothing is ever allocated")
    byte_strides = iface.get("strides")
    if byte_strides is None:  # C-contiguous
        strides = tuple(int(s) for s in np.cumprod((1, *shape[:0:-1]))[::-1]) if shape else ()
    else:
        strides = _int_strides(byte_strides, itemsize, kind)
    if ptr == 0 and element_span(shape, strides)[1] > 0:
        raise VariantPackError(f"{kind}: null data pointer for shape {shape}")
    owner = obj
    array = host_array(ptr, shape, strides, dtype_to_numpy(dtype), owner, bool(readonly)) \
        if on_host else None
    stream = iface.get("stream")
    return Buffer(
        ptr=ptr, device="cpu" if on_host else "gpu", shape=shape, strides=strides,
        dtype=dtype, array=array, owner=owner, kind=kind, readonly=bool(readonly),
        stream=None if stream is None else int(stream),
    )


def _from_dlpack(obj: Any) -> Buffer:
    kind = f"__dlpack__ object ({type(obj).__module__}.{type(obj).__qualname__})"
    try:
        exp = dlpack.export(obj)
    except dlpack.DLPackError as exc:
        raise VariantPackError(f"{kind}: {exc}") from None
    device = dlpack.HOST_DEVICES.get(exp.device_type)
    if device is None:
        device = "gpu" if exp.device_type in dlpack.GPU_DEVICES else None
    if device is None:
        raise VariantPackError(
            f"{kind}: DLPack device type {exp.device_type} is not supported; valid: "
            f"{sorted(dlpack.HOST_DEVICES.keys() | dlpack.GPU_DEVICES)}"
        )
    try:
        dtype = dlpack_to_dtype(exp.code, exp.bits, exp.lanes)
    except VariantPackError as exc:
        raise VariantPackError(f"{kind}: {exc}") from None
    strides = exp.strides
    if strides is None:  # NULL strides = compact row-major
        strides = tuple(int(s) for s in np.cumprod((1, *exp.shape[:0:-1]))[::-1]) \
            if exp.shape else ()
    owner = exp.owner
    on_host = device == "cpu"
    array = host_array(exp.ptr, exp.shape, strides, dtype_to_numpy(dtype), owner, exp.readonly) \
        if on_host else None
    return Buffer(
        ptr=exp.ptr, device=device, device_id=exp.device_id, shape=exp.shape, strides=strides,
        dtype=dtype, array=array, owner=owner, kind="__dlpack__ object", readonly=exp.readonly,
    )



def _has(value: object, attr: str) -> bool:
    """hasattr, except that an attribute raising something other than AttributeError counts
    as present (reading it again reports the failure as a VariantPackError)."""
    try:
        return hasattr(value, attr)
    except Exception:
        return True


def _interface_of(value: object, attr: str) -> Any:
    try:
        return getattr(value, attr)
    except Exception as exc:  # a property raising anything: the object's own failure
        raise VariantPackError(f"{type(value).__qualname__}.{attr} raised "
                               f"{type(exc).__name__}: {exc}") from None


def resolve(value: object, *, default_device: str = "gpu") -> Buffer:
    """Turn a variant-pack value into a :class:`Buffer`.

    Accepts the kinds in :data:`ACCEPTED_KINDS`. A raw int pointer reveals nothing but
    its address; its device is ``default_device`` (a guess: ``device_known`` is False).
    Anything else raises :class:`VariantPackError` naming the type and the accepted kinds.

    >>> resolve(2.5).scalar
    2.5
    >>> resolve(0x1000, default_device="cpu").device
    'cpu'
    """
    if type(value) is int and _FIRST_PAGE_END <= value < _POINTER_END:  # the common case
        return Buffer(ptr=value, device=default_device, kind="int", device_known=False)
    if isinstance(value, Buffer):
        return value
    if isinstance(value, (bool, np.bool_, enum.Enum)):
        pass  # neither a pointer nor a scalar value (DataType.FLOAT is an int): the error
    elif isinstance(value, (int, np.integer)):
        ptr = operator.index(value)
        if ptr < 0:
            raise VariantPackError(f"int pointer {ptr:#x} is negative")
        if ptr >= _POINTER_END:  # ctypes would pass its low 64 bits: another address
            raise VariantPackError(f"int pointer {ptr:#x} does not fit in 64 bits; valid: an "
                                   f"address below 2**64")
        if 0 < ptr < _FIRST_PAGE_END:  # reading it would crash the process, on CPU or GPU
            raise VariantPackError(f"int pointer {ptr:#x} lies in the first page of memory, "
                                   f"where nothing is ever allocated (a count or an index "
                                   f"passed as a pointer?); valid: the address of memory "
                                   f"holding the tensor, or 0 for an empty one")
        return Buffer(ptr=ptr, device=default_device, kind="int", device_known=False)
    elif isinstance(value, (float, np.floating)):
        return Buffer(ptr=0, device="cpu", scalar=float(value), kind="float")
    elif isinstance(value, np.ndarray):
        if isinstance(value, np.ma.MaskedArray):
            raise VariantPackError(
                "numpy.ma.MaskedArray: its mask would be ignored (every element is read and "
                "written); valid: a plain numpy.ndarray, e.g. a.filled(fill_value) or "
                "np.asarray(a) (a.data)")
        return _from_numpy(value)
    elif _is_torch_tensor(value):
        return _from_torch(value)
    elif _has(value, "__cuda_array_interface__"):
        iface = _interface_of(value, "__cuda_array_interface__")
        return _from_interface(value, iface, False, "__cuda_array_interface__ object")
    elif _has(value, "__dlpack__"):
        return _from_dlpack(value)
    elif _has(value, "__array_interface__"):
        iface = _interface_of(value, "__array_interface__")
        return _from_interface(value, iface, True, "__array_interface__ object")
    raise VariantPackError(
        f"cannot use a {type(value).__module__}.{type(value).__qualname__} as a variant-pack "
        f"value; accepted: {', '.join(ACCEPTED_KINDS)}"
    )


#: cudnn-frontend's newer Python API calls this ``_describe``; same function.
describe = resolve


def by_pointer(value: object) -> Buffer:
    """``value``'s memory taken by its data pointer, as cuDNN takes a ``data_ptr()``.

    A variant-pack value of another shape than its tensor is refused, since an array states
    what it holds (an NHWC-shaped array for NCHW dims would be read as the wrong tensor).
    Wrapping it says the memory is meant: the tensor is laid out from the data pointer by the
    graph tensor's own strides, whatever shape the array states. The array must be one gap-free
    block of the tensor's dtype at least as large as the tensor's extent (it may be larger);
    the check is against what the array reveals, as for a raw pointer. Wrap at the call: the
    pointer is read when wrapping.

    >>> import numpy as np
    >>> arena = np.zeros(1000, np.float32)
    >>> by_pointer(arena).by_pointer, by_pointer(arena).ptr == arena.ctypes.data
    (True, True)
    """
    buf = resolve(value)
    if buf.scalar is not None:
        raise VariantPackError(f"by_pointer() takes memory (an array, tensor or pointer); got "
                               f"the {type(value).__name__} value {value!r:.40}")
    return dataclasses.replace(buf, by_pointer=True)


# ---------------------------------------------------------------------------- checking


def _geometry(tensor: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The graph tensor's dim and stride (packed channel-first when the stride is unset)."""
    if tensor.dim is None:
        raise VariantPackError(f"{_label(tensor)} has no dim set", tensor=tensor.name)
    dim = tuple(int(d) for d in tensor.dim)
    stride = packed_strides(dim) if tensor.stride is None else tuple(int(s) for s in tensor.stride)
    return dim, stride


def _label(tensor: Any) -> str:
    return f"tensor '{getattr(tensor, 'name', '?')}' (uid {getattr(tensor, 'uid', '?')})"


def _non_unit(shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(d) for d in shape if d != 1)


def own_strides(buffer: Buffer, dim: Sequence[int]) -> tuple[int, ...] | None:
    """``buffer``'s own strides laid over the logical ``dim`` (0 on size-1 axes) when the buffer
    reveals a shape equal to ``dim`` up to size-1 axes, else None.

    >>> import numpy as np
    >>> own_strides(resolve(np.zeros((3, 2), np.float32).T), (1, 2, 3))
    (0, 1, 2)
    """
    if buffer.shape is None or buffer.strides is None or buffer.by_pointer:
        return None
    if _non_unit(buffer.shape) != _non_unit(dim):
        return None
    mine = iter(int(s) for d, s in zip(buffer.shape, buffer.strides, strict=True) if d != 1)
    return tuple(next(mine) if d != 1 else 0 for d in dim)


def _one_block(buffer: Buffer) -> bool:
    """True when the buffer's elements fill one gap-free block starting at its data pointer."""
    span, numel, itemsize = buffer.span, buffer.numel, buffer.itemsize
    return (span is not None and numel is not None and itemsize is not None and span[0] == 0
            and span[1] == numel * itemsize)


def check_against(buffer: Buffer, tensor: Any, where: str) -> bool:
    """Raise :class:`VariantPackError` if ``buffer`` cannot back the graph's ``tensor``.

    Only what the object reveals is checked. The dtype must match. An object that states its
    shape (numpy, torch, DLPack, ``__cuda_array_interface__``) must hold the tensor:

    - the same shape up to size-1 axes (a ``(C,)`` array may back a ``(1, C, 1, 1)`` tensor)
      and the same strides: the usual case;
    - the same shape in another layout (e.g. a packed NCHW tensor for a channels-last graph
      tensor): returns True, meaning the engine must read and write it through the buffer's own
      strides (CPU_REFERENCE_ENGINE does; MIOPEN_ENGINE refuses it, see ``graph_exec``);
    - a regrouping that keeps memory order (see :mod:`hipdnn.interop.array_fit`): ``(2, 3, 64)`` for
      a packed ``(2, 3, 8, 8)``, or one flat gap-free block of exactly the tensor's size for
      any dense tensor; the tensor is laid out from the data pointer by its own strides.

    Any other shape is a ``VariantPackError`` naming the tensor and both shapes (with the
    strides to use when the shape is a permutation of the dims). As cuDNN does, raw pointers
    and :func:`by_pointer` buffers hold the tensor from the data pointer by its own strides;
    a by-pointer buffer that reveals its extent must be one gap-free block at least that large.
    Zero-size and non-finite data are fine. ``where`` prefixes the message (e.g.
    ``"execute: variant pack"``).
    """
    label = f"{where}: {_label(tensor)}"
    if buffer.scalar is None and buffer.dtype is None and buffer.shape is None:
        # a raw pointer reveals nothing to check but where the tensor would end
        dim, stride = _geometry(tensor)
        end = buffer.ptr + element_span(dim, stride)[1] * (DataType(tensor.data_type).itemsize
                                                          or 1)
        if end > _POINTER_END:
            raise VariantPackError(
                f"{label}: dim {dim} with stride {stride} from pointer {buffer.ptr:#x} ends "
                f"past the 64-bit address space; valid: a pointer to memory holding the tensor",
                tensor=tensor.name)
        return False
    dim, stride = _geometry(tensor)
    if buffer.scalar is not None:
        if not getattr(tensor, "is_pass_by_value", False) and int(np.prod(dim)) != 1:
            raise VariantPackError(
                f"{label}: got a Python float, but only pass-by-value or one-element tensors "
                f"take a scalar (dim {dim})",
                tensor=tensor.name,
            )
        return False
    if buffer.dtype is not None and buffer.dtype != tensor.data_type:
        raise VariantPackError(
            f"{label}: data type mismatch: graph expects {DataType(tensor.data_type).name}, "
            f"got {buffer.dtype.name} from a {buffer.kind}{_cast_hint(tensor.data_type)}",
            tensor=tensor.name,
        )
    if buffer.shape is None:
        return False
    lo, hi = element_span(dim, stride)
    need = hi * DataType(tensor.data_type).itemsize
    if buffer.by_pointer:
        if lo < 0 or not _one_block(buffer) or (buffer.nbytes or 0) < need:
            raise VariantPackError(
                f"{label}: by_pointer: dim {dim} with stride {stride} needs {need} bytes from "
                f"the data pointer; got shape {buffer.shape} with strides {buffer.strides} from "
                f"a {buffer.kind}; valid: one gap-free block of at least {need} bytes of the "
                f"same dtype", tensor=tensor.name)
        return False
    if _non_unit(buffer.shape) != _non_unit(dim):
        if buffer.strides is not None and _holds_in_order(buffer, dim, stride, hi - lo):
            return False  # the same elements in the same memory order: read from the pointer
        hint = permutation_hint(buffer.shape, buffer.strides, dim, stride) or (
            f"; an array must have the tensor's dims (size-1 axes may be left out or added, "
            f"axes merged in memory order); to lay the tensor out from its data pointer "
            f"instead, as cuDNN does, pass hipdnn.by_pointer(a) (one gap-free block of at "
            f"least {need} bytes of the same dtype)")
        raise VariantPackError(
            f"{label}: shape mismatch: graph expects dim {dim} (stride {stride}), got shape "
            f"{buffer.shape} with strides {buffer.strides} from a {buffer.kind}{hint}",
            tensor=tensor.name)
    if buffer.strides is None or 0 in dim:
        return False
    own = own_strides(buffer, dim)
    return own is not None and any(d != 1 and a != b
                                   for d, a, b in zip(dim, own, stride, strict=True))


def _holds_in_order(buffer: Buffer, dim: tuple[int, ...], stride: tuple[int, ...],
                    extent: int) -> bool:
    """The buffer's shape regroups ``dim`` and, viewed with ``dim``, has ``stride`` (so both
    readings agree), or it is one flat block of exactly the dense tensor's elements."""
    assert buffer.strides is not None and buffer.shape is not None
    if sorted(_non_unit(buffer.shape)) == sorted(_non_unit(dim)):
        return False  # the dims permuted (NHWC for NCHW), even where sizes also regroup
    numel = int(np.prod(dim, dtype=np.int64))
    if len(_non_unit(buffer.shape)) == 1 and _one_block(buffer) and buffer.numel == numel \
            and extent == numel:
        return True  # a flat array states no axes: the tensor's layout from its pointer
    view = regrouped_strides(buffer.shape, buffer.strides, dim)
    return view is not None and all(d == 1 or a == b for d, a, b in zip(dim, view, stride,
                                                                         strict=True))

"""Handle: the device and stream a graph runs on, plus per-engine state (e.g. a miopenHandle_t).

Creating a Handle loads nothing: engines create their state lazily through :meth:`Handle.state`
the first time they need it, and :meth:`Handle.close` closes every state that has ``close()``.

>>> h = Handle(device=0)
>>> h.state("counter", lambda handle: [handle.device])
[0]
>>> h.close()
"""

from __future__ import annotations

import collections
import itertools
import operator
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

from hipdnn.core.errors import (
    ArgumentError,
    GraphStateError,
    HandleError,
    HipdnnError,
    ValidationError,
)

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Handle", "check_handle", "collected_serials", "create_handle", "default_handle",
           "destroy_handle", "get_stream", "on_close", "set_stream"]

T = TypeVar("T")
_INT_MAX = 2**31 - 1  # the largest C int: a device ordinal is one
_serials = itertools.count(1)
#: Called with a Handle's serial when it closes, before its engine states (hipdnn/pipeline/plan_cache.py
#: drops the plans and answers cached for it, so their MIOpen objects go before the handle), and
#: for a thread's default handles when that thread ends.
_close_listeners: list[Callable[[int], None]] = []


#: Serials of Handles garbage-collected without close(). Their finalizers only queue them (a
#: finalizer may run inside any code, cache code included); caches drain the queue themselves.
_collected: collections.deque[int] = collections.deque()


def collected_serials() -> list[int]:
    """Serials of Handles collected without ``close()`` since the last call (each returned once)."""
    out = []
    while _collected:
        try:
            out.append(_collected.popleft())
        except IndexError:  # drained by another thread meanwhile
            break
    return out


def on_close(listener: Callable[[int], None]) -> None:
    """Call ``listener(handle.serial)`` whenever a Handle closes (once per Handle), and for each
    default handle of a thread that ended (:func:`default_handle`)."""
    _close_listeners.append(listener)


def _device(device: Any) -> int:
    """A device ordinal: an int (or numpy integer) >= 0; ArgumentError/ValidationError else."""
    try:  # a one-element numpy array has __index__ and raises TypeError from it
        ordinal = None if isinstance(device, bool) else operator.index(device)
    except TypeError:
        ordinal = None
    if ordinal is None:
        raise ArgumentError(f"Handle device: {device!r} ({type(device).__name__}) is not a "
                            f"device ordinal; device takes an int >= 0 (0 is the first GPU)")
    if ordinal < 0:
        raise ValidationError(f"Handle device: {ordinal} is negative; device takes an int >= 0 "
                              f"(0 is the first GPU)")
    if ordinal > _INT_MAX:  # ctypes would keep the low 32 bits: 2**32 + 1 would be GPU 1
        raise ValidationError(f"Handle device: {ordinal} is out of range; device takes an int "
                              f">= 0 and <= 2**31 - 1 (hipSetDevice's C int; 0 is the first GPU)")
    return ordinal


def _stream(stream: Any) -> int | None:
    """A stream: None or 0 (the default stream) or an int ``hipStream_t`` address > 0."""
    if stream is None:
        return None
    try:  # a one-element numpy array has __index__ and raises TypeError from it
        value = None if isinstance(stream, bool) else operator.index(stream)
    except TypeError:
        value = None
    if value is None:
        raise ArgumentError(f"stream: {stream!r} ({type(stream).__name__}) is not a stream; "
                            f"stream takes None (the default stream) or an int hipStream_t "
                            f"address >= 0")
    if value < 0:
        raise ValidationError(f"stream: {value:#x} is negative; stream takes None (the default "
                              f"stream) or an int hipStream_t address >= 0")
    if value >= 1 << 64:  # ctypes' c_void_p would keep the low 64 bits
        raise ValidationError(f"stream: {value:#x} is out of range; stream takes None (the "
                              f"default stream) or an int hipStream_t address >= 0 and < 2**64")
    return value or None


def check_handle(handle: Any, what: str) -> Handle | None:
    """``handle`` when it is a :class:`Handle` or None; else ArgumentError naming ``what``."""
    if handle is None or isinstance(handle, Handle):
        return handle
    raise ArgumentError(f"{what}: {handle!r:.60} ({type(handle).__name__}) is not a "
                        f"hipdnn.Handle; {what} takes a hipdnn.Handle or None (the default)")


class Handle:
    """A device (ordinal) and a stream (an int ``hipStream_t``, None = the default stream).

    Parameters
    ----------
    device : int
        The GPU ordinal, >= 0 (0 is the first GPU).
    stream : int or None
        A ``hipStream_t`` address, or None / 0 for the default stream.

    Raises
    ------
    ArgumentError
        ``device`` or ``stream`` is not an int.
    ValidationError
        ``device`` or ``stream`` is negative or out of range.
    """

    def __init__(self, device: int = 0, stream: int | None = None) -> None:
        self.device = _device(device)
        self.stream: int | None = _stream(stream)
        self._states: dict[Hashable, Any] = {}
        self._lock = threading.Lock()
        #: Held for the whole of close(): a second close() waits until the first one is done.
        self._close_lock = threading.RLock()
        self._closed = False
        #: Unique per Handle object in this process (plan-cache key; never reused).
        self.serial = next(_serials)
        # dropped without close(): its serial is queued for the caches (see collected_serials)
        weakref.finalize(self, _collected.append, self.serial).atexit = False

    def state(self, key: Hashable, factory: Callable[[Handle], T]) -> T:
        """The engine state stored under ``key``, created with ``factory(self)`` on first use.

        Parameters
        ----------
        key : Hashable
            The engine's key (one state per engine and Handle).
        factory : callable
            Called once with this Handle to make the state.

        Returns
        -------
        T
            The state (the same object on every later call).

        Raises
        ------
        GraphStateError
            The Handle is closed.
        """
        if self._closed:
            raise GraphStateError(f"{self!r} is closed")
        with self._lock:
            if self._closed:  # closed meanwhile: a state made now would never be closed
                raise GraphStateError(f"{self!r} is closed")
            if key not in self._states:
                self._states[key] = factory(self)
            return self._states[key]  # type: ignore[no-any-return,unused-ignore]

    def peek_state(self, key: Hashable) -> Any:
        """The state under ``key`` if it was created, else None (never creates it).

        Parameters
        ----------
        key : Hashable
            The engine's key.

        Returns
        -------
        Any
            The state, or None.
        """
        return self._states.get(key)

    def set_stream(self, stream: int | None) -> None:
        """Switch stream; engine states with ``set_stream`` follow (idempotent when unchanged).

        All or nothing: when an engine state cannot switch (e.g. ``miopenSetStream`` fails),
        the states already switched are set back, the Handle keeps its stream (``get_stream()``
        and every engine still use the old one) and :class:`~hipdnn.core.errors.HandleError` names
        the call; calling ``set_stream`` again retries.

        Parameters
        ----------
        stream : int or None
            A ``hipStream_t`` address, or None / 0 for the default stream.

        Raises
        ------
        ArgumentError, ValidationError
            ``stream`` is not an int, or out of range.
        HandleError
            An engine state could not switch (nothing switched).
        """
        stream = _stream(stream)
        if stream == self.stream:
            return
        old = self.stream
        switched: list[Any] = []
        for st in list(self._states.values()):
            setter = getattr(st, "set_stream", None)
            if not callable(setter):
                continue
            try:
                setter(stream)
            except Exception as exc:
                for done in reversed(switched):
                    try:
                        done.set_stream(old)
                    except Exception:  # the first failure is the one reported
                        pass
                if isinstance(exc, HipdnnError):
                    raise
                raise _handle_error(self, f"set_stream({_stream_name(stream)})", exc) from exc
            switched.append(st)
        self.stream = stream

    def get_stream(self) -> int | None:
        """The current stream.

        Returns
        -------
        int or None
            The ``hipStream_t`` address, None for the default stream.
        """
        return self.stream

    def synchronize(self) -> None:
        """Wait for work on the stream: engine states with ``synchronize`` are asked to.

        Raises
        ------
        HandleError
            A wait failed; the error names the call.
        """
        for st in list(self._states.values()):
            sync = getattr(st, "synchronize", None)
            if callable(sync):
                try:
                    sync()
                except HipdnnError:
                    raise
                except Exception as exc:
                    raise _handle_error(self, "synchronize", exc) from exc

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def close(self) -> None:
        """Close the Handle (idempotent): executes on it from now on raise
        :class:`~hipdnn.core.errors.PlanClosedError`; executes (and plan builds) already running on
        it in other threads are waited for (engine states with ``drain()``); then what was
        cached for it is forgotten (:func:`on_close` listeners) and every engine state closed
        (its MIOpen handle destroyed). So closing a Handle that another thread is executing on
        is safe: that execute finishes (with its results), the next one is refused. Closing
        from several threads at once is too: one closes, the others wait until it is done
        and return (nothing is freed twice)."""
        with self._close_lock:  # a second close() waits here until the first is done
            with self._lock:  # state() checks under this lock: no state is made after this
                if self._closed:
                    return
                self._closed = True
                states = list(self._states.values())
            for st in states:
                drain = getattr(st, "drain", None)
                if callable(drain):
                    drain()
            for listener in list(_close_listeners):
                listener(self.serial)
            with self._lock:
                states, self._states = list(self._states.values()), {}
            for st in states:
                closer = getattr(st, "close", None)
                if callable(closer):
                    closer()

    def __copy__(self) -> Handle:
        """A Handle is one device context (its engine states, e.g. the MIOpen handle, and its
        serial in the plan cache): a copy would close the original's states with its own
        ``close()``, so copying gives the Handle itself (a copied graph shares its handle)."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Handle:
        return self

    def __reduce__(self) -> Any:
        raise ArgumentError(f"{self!r} cannot be pickled: it holds this process's device "
                            f"state; create a Handle(device, stream) where it is needed (a "
                            f"pickled Graph leaves its handle out)")

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        stream = "default" if self.stream is None else hex(self.stream)
        return f"<hipdnn.Handle device={self.device} stream={stream}{' closed' if self._closed else ''}>"


def _stream_name(stream: int | None) -> str:
    return "default stream" if stream is None else hex(stream)


def _handle_error(handle: Handle, operation: str, exc: Exception) -> HandleError:
    """``exc`` (an engine state's failure, e.g. a binding error) as a HandleError naming
    ``Handle.<operation>`` and the C call."""
    function = getattr(exc, "function", None)
    return HandleError(f"Handle.{operation} on {handle!r} failed: {exc}",
                       operation=f"Handle.{operation}", function=function,
                       status=getattr(exc, "status", None))


_default = threading.local()


class _ThreadHandles(dict[int, Handle]):
    """One thread's default handles by device. When the thread ends, its thread-local storage
    goes and the ``on_close`` listeners hear each handle's serial: what was cached for them is
    dropped (a graph still using one keeps working; the handle is not closed), so a dead
    thread's MIOpen handle and plans are freed with the last graph that uses them."""

    def __init__(self) -> None:
        super().__init__()
        self.serials: list[int] = []
        finalizer = weakref.finalize(self, _forget, self.serials)
        finalizer.atexit = False

    def new(self, device: int) -> Handle:
        h = self[device] = Handle(device)
        self.serials.append(h.serial)
        return h


def _forget(serials: list[int]) -> None:
    for serial in serials:
        for listener in list(_close_listeners):
            listener(serial)


def default_handle(device: int = 0) -> Handle:
    """The calling thread's default handle for ``device`` (created on first use)."""
    handles: _ThreadHandles | None = getattr(_default, "handles", None)
    if handles is None:
        handles = _default.handles = _ThreadHandles()
    h = handles.get(device)
    if h is None or h.closed:
        h = handles.new(device)
    return h


def create_handle(device: int = 0, stream: int | None = None) -> Handle:
    """cudnn-frontend spelling: a new :class:`Handle`."""
    return Handle(device, stream)


def destroy_handle(handle: Handle) -> None:
    """cudnn-frontend spelling of ``handle.close()``."""
    handle.close()


def set_stream(handle: Handle, stream: int | None) -> None:
    """cudnn-frontend spelling of ``handle.set_stream(stream)``."""
    handle.set_stream(stream)


def get_stream(handle: Handle) -> int | None:
    """cudnn-frontend spelling of ``handle.get_stream()``."""
    return handle.get_stream()

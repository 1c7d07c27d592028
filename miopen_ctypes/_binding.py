"""Binding a prototype table onto a shared library or onto Python callables (one code path).

Every bound function is a real ctypes function object whose ``argtypes``/``restype`` come from the
table, so arguments are converted (and wrong types rejected) by ctypes itself, then:

- a Python-side guard rejects NULL handles the C API forbids and wrong argument counts;
- ``errcheck`` turns a failing status into an exception -- the only place that happens;
- a symbol the library lacks becomes a stub raising ``MIOpenVersionError``.

Injected Python callables (``from_functions``) are wrapped as ``CFUNCTYPE(restype, *argtypes)``;
an exception raised inside one is carried across the C boundary and re-raised to the caller
(ctypes would otherwise print it and return 0, i.e. "success"). A callable may return ``None``
for success.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._proto import Prototype
from .errors import MIOpenVersionError, NullArgumentError

__all__ = ["BoundLibrary", "StatusRaiser", "check_arguments"]

_PLAIN = (int, float, bool)

StatusRaiser = Callable[[str, int], None]

_pending = threading.local()  # an exception raised inside an injected callable, per thread
_FAILED_STATUS = 7  # reported to C when an injected callable raised (miopenStatusUnknownError)


def _take_pending() -> BaseException | None:
    error: BaseException | None = getattr(_pending, "error", None)
    _pending.error = None
    return error


def _signature(proto: Prototype) -> str:
    return f"{proto.name}({', '.join(proto.argnames)})"


class _CallbackReturn:
    """Converts what an injected callable returns into the C return value."""

    def __init__(self, proto: Prototype) -> None:
        self.proto = proto
        self.char_result = proto.restype is ctypes.c_char_p
        self._strings: dict[bytes, ctypes.Array[ctypes.c_char]] = {}  # keeps returned text alive

    def __call__(self, value: Any) -> Any:
        if self.char_result:
            if value is None:
                return None
            data = value.encode() if isinstance(value, str) else bytes(value)
            buffer = self._strings.setdefault(data, ctypes.create_string_buffer(data))
            return ctypes.addressof(buffer)
        if self.proto.returns_status:
            if value is None:
                return 0
            if not isinstance(value, int):  # ctypes would print it and report success
                raise TypeError(
                    f"injected {self.proto.name} must return a status (int) or None, got {value!r}"
                )
        return value


def _wrap_python(proto: Prototype, function: Callable[..., Any]) -> Any:
    """``CFUNCTYPE(restype, *argtypes)`` around ``function`` (a char* result travels as void*)."""
    convert = _CallbackReturn(proto)
    restype = ctypes.c_void_p if convert.char_result else proto.restype
    functype = ctypes.CFUNCTYPE(restype, *proto.argtypes)

    def trampoline(*args: Any) -> Any:
        try:
            return convert(function(*args))
        except BaseException as exc:  # carried to the caller by errcheck
            _pending.error = exc
            if proto.returns_status:
                return _FAILED_STATUS
            return None if restype is None or restype is ctypes.c_void_p else 0

    cfunc: Any = functype(trampoline)
    cfunc.injected = True  # only these can leave a pending exception for errcheck
    return cfunc


def _make_errcheck(proto: Prototype, raise_status: StatusRaiser, injected: bool) -> Callable[..., Any]:
    """The status check of one function; for an ``injected`` callable it first re-raises what
    the callable raised (a library function cannot leave one, so its check skips that step:
    it runs on every call)."""
    name = proto.name
    returns_status = proto.returns_status
    char_result = proto.restype is ctypes.c_char_p

    def errcheck(result: Any, func: Any, args: Any) -> Any:
        if returns_status:
            if result != 0:
                raise_status(name, int(result))
            return None
        if char_result and isinstance(result, int):  # injected callable: void* -> bytes
            return ctypes.string_at(result)
        return result

    if not injected:
        return errcheck

    def injected_errcheck(result: Any, func: Any, args: Any) -> Any:
        error = _take_pending()
        if error is not None:
            raise error
        return errcheck(result, func, args)

    return injected_errcheck


ArgumentChecks = tuple[tuple[int, str, str, Any], ...]


def _argument_checks(proto: Prototype, required: tuple[tuple[int, str, str], ...]) -> ArgumentChecks:
    """(position, parameter, C type name, handle type) of each handle that must not be NULL."""
    return tuple((i, parameter, ctype, proto.argtypes[i]) for i, parameter, ctype in required)


def check_arguments(proto: Prototype, checks: ArgumentChecks, args: tuple[Any, ...]) -> None:
    """The checks every call of ``proto`` gets before C: the argument count and no NULL handle
    where the header forbids one (``TypeError`` / ``NullArgumentError``)."""
    if len(args) != len(proto.argtypes):
        raise TypeError(f"{_signature(proto)} takes {len(proto.argtypes)} arguments, "
                        f"{len(args)} given")
    for index, parameter, ctype, handle_type in checks:
        value = args[index]
        # a NULL of the wrong kind is left to ctypes, which reports the type mismatch
        if value is None or (isinstance(value, handle_type) and not value):
            raise NullArgumentError(proto.name, parameter, ctype)


def _make_caller(proto: Prototype, cfunc: Any, checks: ArgumentChecks) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        check_arguments(proto, checks, args)
        return cfunc(*args)

    call.__name__ = call.__qualname__ = proto.name
    call.__doc__ = f"{_signature(proto)} -> " + (
        "None (raises on a failing status)" if proto.returns_status else "the C result"
    )
    return call


def _make_missing(proto: Prototype, library: BoundLibrary) -> Callable[..., Any]:
    def missing(*args: Any) -> Any:  # the library's version when called: known after binding
        raise MIOpenVersionError(proto.name, proto.since, library.version, library._kind)

    missing.__name__ = missing.__qualname__ = proto.name
    missing.__doc__ = f"{_signature(proto)}: not exported by the loaded library"
    return missing


class BoundLibrary:
    """A prototype table bound onto a library; ``lib.<C name>(*args)`` calls the function.

    Subclasses provide the table, the NULL rules and how a failing status is raised.
    """

    _kind = "library"

    def __init__(
        self,
        prototypes: Mapping[str, Prototype],
        cfuncs: Mapping[str, Any],
        version: tuple[int, int, int],
        path: str | None,
        raise_status: StatusRaiser,
        required: Callable[[Prototype], tuple[tuple[int, str, str], ...]],
    ) -> None:
        self.path = path
        self.version = version
        self._prototypes = prototypes
        self._cfuncs = dict(cfuncs)
        self._functions: dict[str, Callable[..., Any]] = {}
        self._checks: dict[str, ArgumentChecks] = {}
        #: observe(): name -> callbacks, and the lock their changes take
        self._observers: dict[str, tuple[Callable[[str, tuple[Any, ...]], None], ...]] = {}
        self._observe_lock = threading.Lock()
        for name, proto in prototypes.items():
            cfunc = self._cfuncs.get(name)
            if cfunc is None:
                self._functions[name] = _make_missing(proto, self)
                continue
            cfunc.errcheck = _make_errcheck(proto, raise_status, getattr(cfunc, "injected", False))
            self._checks[name] = checks = _argument_checks(proto, required(proto))
            self._functions[name] = _make_caller(proto, cfunc, checks)
        # plain attribute lookup finds them: reaching __getattr__ costs a failed lookup per call
        self.__dict__.update(self._functions)

    @staticmethod
    def _resolve_cdll(cdll: ctypes.CDLL, prototypes: Mapping[str, Prototype]) -> dict[str, Any]:
        """A fresh, declared ctypes function object for every exported prototype."""
        found: dict[str, Any] = {}
        for name, proto in prototypes.items():
            try:
                cfunc = cdll[name]
            except AttributeError:
                continue
            cfunc.restype = proto.restype
            cfunc.argtypes = proto.argtypes
            found[name] = cfunc
        return found

    @staticmethod
    def _wrap_functions(
        functions: Mapping[str, Callable[..., Any]], prototypes: Mapping[str, Prototype]
    ) -> dict[str, Any]:
        unknown = sorted(set(functions) - set(prototypes))
        if unknown:
            raise ValueError(f"not bound functions (absent from the prototype table): {unknown}")
        return {name: _wrap_python(prototypes[name], fn) for name, fn in functions.items()}

    @property
    def symbols(self) -> frozenset[str]:
        """The bound names this library provides."""
        return frozenset(self._cfuncs)

    def cfunc(self, name: str) -> Any:
        """The underlying ctypes function object (no NULL guard), or ``None`` if absent."""
        return self._cfuncs.get(name)

    def observe(self, names: Iterable[str],
                callback: Callable[[str, tuple[Any, ...]], None]) -> Callable[[], None]:
        """Call ``callback(name, args)`` after every call of one of ``names`` that succeeds,
        however it is made through this binding (``lib.<name>``, ``lib.cfunc(name)``, a
        :meth:`prepare_call` pair): the function's ``errcheck`` reports it, after the status
        check (a failing call raises and is not reported). ``args`` are the arguments as given.
        Calls made through another binding of the same file, or from C, are not seen. Names the
        library lacks are skipped. Returns the function that stops it (idempotent). The
        callback runs on the calling thread and must not raise."""
        watched = [n for n in names if n in self._cfuncs]
        with self._observe_lock:
            for name in watched:
                if name not in self._observers:
                    self._observers[name] = ()
                    self._report_after(name)
                self._observers[name] += (callback,)

        def stop() -> None:
            with self._observe_lock:
                for name in watched:
                    self._observers[name] = tuple(c for c in self._observers[name] if c is not callback)

        return stop

    def _report_after(self, name: str) -> None:
        """Wrap ``name``'s errcheck to report its successful calls to its observers (once per
        name; the few functions never observed keep their plain check)."""
        cfunc = self._cfuncs[name]
        check = cfunc.errcheck
        observers = self._observers

        def reporting_errcheck(result: Any, func: Any, args: Any) -> Any:
            out = check(result, func, args)
            for callback in observers.get(name, ()):
                callback(name, tuple(args))
            return out

        cfunc.errcheck = reporting_errcheck

    def prepare_call(self, name: str, *args: Any) -> tuple[Any, tuple[Any, ...]]:
        """``(cfunc, cargs)`` such that ``cfunc(*cargs)`` is ``lib.<name>(*args)`` minus the checks.

        For callers that repeat one call with the same arguments (bound plans): the checks of
        ``lib.<name>`` (:func:`check_arguments`) run here, once; Python ints, floats and ``None``
        are converted to their ``argtypes`` instances once, so each later call only crosses
        ctypes. ``cfunc`` is the bound ctypes function itself, so a failing status still raises
        (its ``errcheck``). A symbol the library lacks raises ``MIOpenVersionError`` here.
        """
        proto = self._prototypes[name]
        cfunc = self._cfuncs.get(name)
        if cfunc is None:
            self._functions[name](*args)  # the stub raises MIOpenVersionError
        check_arguments(proto, self._checks[name], args)
        converted = tuple(
            argtype(value)
            if issubclass(argtype, ctypes._SimpleCData) and (value is None or type(value) in _PLAIN
                                                            or isinstance(value, int))
            else value
            for argtype, value in zip(proto.argtypes, args, strict=True)
        )
        return cfunc, converted

    if not TYPE_CHECKING:  # hidden from type checkers: they see the generated _functions.pyi

        def __getattr__(self, name: str) -> Callable[..., Any]:
            functions = self.__dict__.get("_functions")
            if functions is not None and name in functions:
                return functions[name]
            raise AttributeError(f"{name!r} is not a function bound by this {self._kind} binding")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.__dict__.get("_functions", {})})

    def __repr__(self) -> str:
        version = ".".join(map(str, self.version))
        return f"<{type(self).__name__} {version} from {self.path or 'injected functions'}>"

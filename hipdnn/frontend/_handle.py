"""hipdnn_frontend's ``Handle``: the native :class:`hipdnn.Handle` with upstream's conventions.

Upstream's first constructor argument is the stream (``Handle(stream)``); the default stream
reads back as 0; a destroyed handle raises RuntimeError on every use and says ``destroyed`` in
its repr; ``int(handle)``/``handle.get()`` give the handle as an int. There is no C hipDNN
library here, so that int is an opaque non-zero id of the Python object, not a
``hipdnnHandle_t``. Engines are Python objects in :mod:`hipdnn.engines`, so "plugin paths" are
the files of their modules.

>>> h = create_handle()
>>> get_stream(h), int(h) != 0
(0, True)
>>> destroy_handle(h); "destroyed" in repr(h)
True
"""

from __future__ import annotations

import ctypes
import importlib.util
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hipdnn import __version__
from hipdnn.backend.engine import Engine
from hipdnn.core.handle import Handle as NativeHandle
from hipdnn.engines import register, registry, unregister
from hipdnn.frontend._enums import PluginLoadingMode
from miopen_ctypes.hip import load_hip

__all__ = [
    "EngineInfo",
    "Handle",
    "create_handle",
    "destroy_handle",
    "get_loaded_engine_plugin_paths",
    "get_stream",
    "hip_get_device_count",
    "set_engine_plugin_paths",
    "set_stream",
]

_DESTROYED = "Handle has been destroyed"

#: ``EngineInfo.plugin_name`` of the engines that stand where an upstream plugin stands: the
#: name of that plugin (MIOPEN_ENGINE comes from AMD's ``miopen_provider_plugin``). Other
#: engines report their Python module.
UPSTREAM_PLUGIN_NAMES: dict[str, str] = {"MIOPEN_ENGINE": "miopen_provider_plugin"}


@dataclass(frozen=True)
class EngineInfo:
    """What ``Handle.get_engine_info(engine_id)`` reports (read-only)."""

    engine_id: int
    engine_name: str
    plugin_name: str
    version: str
    type: str


class Handle(NativeHandle):
    """A hipDNN handle: ``Handle(stream=None, *, device=0)``."""

    def __init__(self, stream: int | None = None, *, device: int = 0) -> None:
        super().__init__(device=device, stream=stream)

    def _check(self) -> None:
        if self.closed:
            raise RuntimeError(f"{_DESTROYED}: create a new one with create_handle()")

    def get(self) -> int:
        """The handle as an int (opaque id, non-zero); RuntimeError once destroyed.

        Returns
        -------
        int
            The handle as an int (opaque id, non-zero).

        Raises
        ------
        RuntimeError
            Once destroyed.
        """
        self._check()
        return id(self)

    def __int__(self) -> int:
        return self.get()

    def get_stream(self) -> int:
        """The stream as an int (0: the default stream).

        Returns
        -------
        int
            The stream as an int (0: the default stream).
        """
        self._check()
        return self.stream or 0

    def set_stream(self, stream: int | None) -> None:
        """Switch stream (0 or None: the default stream).

        Parameters
        ----------
        stream : int, optional
            The stream as an int (0 or None: the default stream).
        """
        self._check()
        super().set_stream(stream)

    def get_engine_info(self, engine_id: int) -> EngineInfo:
        """Metadata of a loaded engine; IndexError when no engine has ``engine_id``.

        Parameters
        ----------
        engine_id : int
            The engine's id.

        Returns
        -------
        EngineInfo
            Metadata of a loaded engine.

        Raises
        ------
        IndexError
            When no engine has ``engine_id``.
        """
        self._check()
        engine = registry().get(int(engine_id))
        if engine is None:
            raise IndexError(f"Engine ID is not loaded: {engine_id}; loaded: "
                             f"{ {e.name: eid for eid, e in registry().items()} }")

        return EngineInfo(engine.engine_id, engine.name,
                          UPSTREAM_PLUGIN_NAMES.get(engine.name, type(engine).__module__),
                          __version__, "HIPDNN_PLUGIN_TYPE_ENGINE")

    def get_loaded_engine_plugin_paths(self) -> list[str]:
        """The source file of each registered engine's module.

        Returns
        -------
        list of str
            The source file of each registered engine's module.
        """
        self._check()
        return [inspect.getfile(type(engine)) for engine in registry().values()]

    def __repr__(self) -> str:
        if self.closed:
            return f"<hipdnn.frontend.Handle device={self.device} destroyed>"
        return f"<hipdnn.frontend.Handle device={self.device} stream={self.stream or 0}>"


def create_handle(stream: int | None = None) -> Handle:
    """A new :class:`Handle` on ``stream`` (default stream when None/0)."""
    return Handle(stream)


def destroy_handle(handle: NativeHandle) -> None:
    """Destroy ``handle``: later uses raise RuntimeError."""
    handle.close()


def set_stream(handle: Handle, stream: int | None) -> None:
    """``handle.set_stream(stream)``."""
    handle.set_stream(stream)


def get_stream(handle: Handle) -> int:
    """``handle.get_stream()`` (0: the default stream)."""
    return handle.get_stream()


def get_loaded_engine_plugin_paths(handle: Handle) -> list[str]:
    """``handle.get_loaded_engine_plugin_paths()``."""
    return handle.get_loaded_engine_plugin_paths()


def set_engine_plugin_paths(paths: Sequence[str],
                            mode: PluginLoadingMode = PluginLoadingMode.ADDITIVE) -> None:
    """Load engines from Python files, each defining ``ENGINE`` (a :class:`hipdnn.engines.Engine`).

    ADDITIVE registers them next to the built-in engines; ABSOLUTE makes them the only ones.
    A path that is not such a Python file raises RuntimeError (engines here are Python objects,
    not shared-library plugins).
    """
    engines = []
    for path in paths:
        spec = importlib.util.spec_from_file_location(f"hipdnn_plugin_{abs(hash(path))}", path)
        if spec is None or spec.loader is None or not str(path).endswith(".py"):
            raise RuntimeError(f"engine plugin {path!r}: engines here are Python modules "
                               f"defining ENGINE (a hipdnn.engines.Engine), not shared libraries")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        engine = getattr(module, "ENGINE", None)
        if not isinstance(engine, Engine):
            raise RuntimeError(f"engine plugin {path!r} defines no ENGINE (a hipdnn.engines."
                               f"Engine instance)")
        engines.append(engine)
    if PluginLoadingMode(mode) == PluginLoadingMode.ABSOLUTE:
        for engine_id in list(registry()):
            unregister(engine_id)
    for engine in engines:
        register(engine)


def hip_get_device_count() -> int:
    """Number of HIP devices; 0 when no HIP runtime loads (the CPU reference engine still
    runs every graph it supports)."""

    try:
        hip = load_hip()
        count = ctypes.c_int(0)
        hip.hipGetDeviceCount(ctypes.byref(count))
    except Exception:
        return 0
    return int(count.value)


def optional_handle(handle: Any) -> NativeHandle | None:
    """``None``, or :func:`native_handle` of ``handle`` (the optional ``handle=`` argument of
    upstream's name-reporting accessors)."""
    return None if handle is None else native_handle(handle)


def native_handle(handle: Any) -> NativeHandle:
    """The native handle behind a frontend argument: a Handle (RuntimeError once destroyed),
    or upstream's duck type with ``get()`` (a null one raises RuntimeError)."""
    if isinstance(handle, Handle):
        handle._check()
        return handle
    if isinstance(handle, NativeHandle):
        if handle.closed:
            raise RuntimeError(f"{_DESTROYED}: create a new one with create_handle()")
        return handle
    getter = getattr(handle, "get", None)
    if callable(getter) and not getter():
        raise RuntimeError("handle must not be null")
    raise TypeError(f"expected a hipdnn Handle (create_handle()), got {type(handle).__name__}")

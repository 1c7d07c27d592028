"""cudnn-frontend's decorator forms: ``cudnn.jit``, ``cudnn.graph_cache`` (and ``cudnn.graph``,
which is :func:`hipdnn.graph.graph.graph_context`, reachable as ``hipdnn.graph(handle)``).

>>> import numpy as np, hipdnn as cudnn
>>> @cudnn.jit(heur_modes=[cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
... @cudnn.graph_cache(key_fn=lambda handle, x: (x.shape, x.dtype.str))
... def relu_graph(handle, x):
...     with cudnn.graph(handle, io_data_type=cudnn.data_type.FLOAT) as (g, _):
...         X = g.tensor_like(x)
...         Y = g.relu(X).set_output(True)
...     return g, [X, Y]
>>> x = np.array([[-1.0, 2.0]], dtype=np.float32)
>>> g, (x_uid, y_uid) = relu_graph(None, x)
>>> y = np.empty_like(x)
>>> g.execute({x_uid: x, y_uid: y})
>>> y.tolist(), relu_graph(None, x)[0] is g
([[0.0, 2.0]], True)
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from hipdnn.core.errors import ArgumentError, ValidationError
from hipdnn.core.types import HeurMode

__all__ = ["graph_cache", "jit"]


def graph_cache(key_fn: Callable[..., Any], maxsize: int = 256) -> Callable[[Callable[..., Any]],
                                                                           Callable[..., Any]]:
    """Cache a graph-building function's result under ``key_fn(*args, **kwargs)``.

    Least-recently-used entries beyond ``maxsize`` are dropped (their graphs are not closed:
    callers may still hold them). An entry whose graph was closed, or whose graph's Handle was
    closed, is dropped when next looked up and built again (a closed handle's graph could only
    raise). ``wrapper.cache_clear()`` empties the cache.
    """
    if not isinstance(maxsize, int) or isinstance(maxsize, bool) or maxsize < 1:
        raise ValidationError(f"graph_cache: maxsize must be an int >= 1, got {maxsize!r}")

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        cache: OrderedDict[Any, Any] = OrderedDict()
        lock = threading.Lock()

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = key_fn(*args, **kwargs)
            try:
                hash(key)
            except TypeError:
                raise ArgumentError(
                    f"graph_cache: key_fn returned an unhashable {type(key).__name__} "
                    f"({key!r:.60}); valid: a hashable key, e.g. a tuple of shapes and dtype "
                    f"names (tuple(x.shape), str(x.dtype))") from None
            with lock:
                if key in cache:
                    if not _stale(cache[key]):
                        cache.move_to_end(key)
                        return cache[key]
                    del cache[key]
            result = func(*args, **kwargs)
            with lock:
                cache[key] = result
                while len(cache) > maxsize:
                    cache.popitem(last=False)
            return result

        wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
        return wrapper

    return decorator


def _stale(result: Any) -> bool:
    """True when a cached ``(graph, tensors)`` (or graph) can no longer run: the graph or the
    Handle it was given is closed."""
    g = result[0] if isinstance(result, (tuple, list)) and result else result
    handle = getattr(g, "_handle", None)
    return bool(getattr(g, "closed", False) or getattr(handle, "closed", False))


def jit(heur_modes: Sequence[Any] | Any = HeurMode.A, **kwargs: Any) -> Callable[
        [Callable[..., Any]], Callable[..., Any]]:
    """Build the graph a function returns as ``(graph, [tensors])``; the call returns
    ``(graph, [uids])``. A graph that already has plans (a :func:`graph_cache` hit) is not
    rebuilt. ``kwargs`` are cudnn-frontend build options with no meaning here; any given is an
    error naming it."""
    if kwargs:
        raise ValidationError(f"jit: unsupported options {sorted(kwargs)}; jit takes heur_modes")
    modes = list(heur_modes) if isinstance(heur_modes, (list, tuple)) else [heur_modes]

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kw: Any) -> tuple[Any, list[int]]:
            result = func(*args, **kw)
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise ValidationError(f"jit: {func.__name__} must return (graph, [tensors]), "
                                      f"got {type(result).__name__}")
            g, tensors = result
            if g.get_execution_plan_count() <= 0:
                g.build(modes)
            return g, [t.get_uid() for t in tensors]

        return wrapper

    return decorator

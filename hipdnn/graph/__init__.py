"""The user's Graph: its core, the op builders and the high-level (framework tensor) form.

``hipdnn.graph`` is this package and also cudnn-frontend's ``cudnn.graph(handle, ...)`` context
manager (:func:`hipdnn.graph.graph.graph_context`).
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Any

from hipdnn.graph.graph import Graph, graph_context


class _CallableModule(types.ModuleType):
    """``hipdnn.graph`` stays this package and is also cudnn-frontend's ``cudnn.graph(...)``."""

    def __call__(self, *args: Any, **kwargs: Any) -> contextlib.AbstractContextManager[
            tuple[Graph, list[Any]]]:
        return graph_context(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

"""Upstream's compiled module name, so ``from hipdnn_frontend.hipdnn_frontend_python import X``
ports by renaming too: every public name of :mod:`hipdnn.frontend`, plus ``_get_data_ptr``
(upstream's private hook turning a variant-pack value into a pointer, which its tests import).
"""

from __future__ import annotations

from hipdnn.frontend import *  # noqa: F403  (this module is that namespace, under upstream's name)
from hipdnn.frontend import __all__ as _public
from hipdnn.frontend._memory import get_data_ptr as _get_data_ptr

__all__ = [*_public, "_get_data_ptr"]

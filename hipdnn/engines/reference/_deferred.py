"""The contract of an output whose last pass has not run when its node's step returns.

The reference engine stages every output before it writes any caller memory; a deferred
output is the exception that avoids a full copy: once every other output is committed, its
pass writes straight into the caller's buffer. So a deferred pass must not fail once it has
started writing: everything it needs (operands, temporaries, scratch) is made before, in
:meth:`DeferredOutput.fits` at the latest, which runs while nothing has been written yet.
Where it does not fit, :meth:`DeferredOutput.materialize` computes the value into a new array
that is committed as usual. Kinds: batchnorm's last pass (:class:`._bn.Deferred`) and a oneDNN
convolution (:class:`._onednn.DeferredConv`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["DeferredOutput"]


class DeferredOutput:
    """An output of logical ``shape`` computed at commit time; ``reads`` are the arrays its pass
    reads (no commit may write them before it)."""

    shape: tuple[int, ...]
    reads: tuple[np.ndarray, ...]

    def fits(self, view: np.ndarray) -> bool:
        """True when the pass can write ``view`` directly (and is then ready to)."""
        raise NotImplementedError

    def write_into(self, view: np.ndarray) -> None:
        """Run the pass into ``view``, which :meth:`fits`."""
        raise NotImplementedError

    def materialize(self) -> np.ndarray:
        """Run the pass into a new array; returns its logical view."""
        raise NotImplementedError

    def then(self, step: Callable[[np.ndarray], None]) -> DeferredOutput | None:
        """This pass with an in-place element-wise ``step`` joined, or None (not supported)."""
        return None

"""Statistics nodes: genstats (per-channel sum and sum of squares) and reduction.

Both follow cudnn-frontend's inference rules (``include/cudnn_frontend/node/genstats.h`` and
``reduction.h`` there): output dims left unset are inferred (genstats: ``(1, C, 1, ...)``;
reduction: X's dims, which the user then shrinks to 1 on the reduced axes with ``set_dim``), and
output strides left unset are channels-last packed. No MIOpen seed row computes them, so only
CPU_REFERENCE_ENGINE runs them (MIOPEN_ENGINE declines the graph naming the node).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from hipdnn.core.errors import ValidationError
from hipdnn.core.shapes import layout_strides
from hipdnn.core.types import DataType, ReductionMode, to_enum
from hipdnn.ir.nodes.base import Node, check_dims

__all__ = ["GenstatsNode", "ReductionNode", "channels_last_strides"]


def channels_last_strides(dims: Sequence[int]) -> tuple[int, ...]:
    """Packed strides with the channel axis (1) fastest: cudnn-frontend's default for outputs
    whose strides are not set (``generate_NHWC_stride_order``)."""
    n = len(dims)
    order = [0, *range(2, n), 1] if n >= 3 else list(range(n))
    return layout_strides(dims, order)


def _default_output(node: Node, port: str, dims: Sequence[int], strict: bool) -> None:
    """Inferred dims (when not set by the user) and channels-last strides (when not set)."""
    t = node.outputs.get(port)
    if t is None:
        return
    if t.dim is None or t._dim_inferred:
        t._dim = tuple(int(d) for d in dims)
        t._dim_inferred = True
    dim = t.dim
    assert dim is not None  # set by the user or just inferred
    if t.stride is None or t._stride_inferred:
        t._stride = channels_last_strides(dim)
        t._stride_inferred = True
    elif strict and len(t.stride) != len(dim):
        raise ValidationError(f"stride {list(t.stride)} has {len(t.stride)} entries but dim "
                              f"{list(dim)} has {len(dim)}", node=node.name, port=port,
                              tensor=t.name)


class GenstatsNode(Node):
    """Per-channel statistics of X (N, C, ...): SUM = sum over every axis but C, SQ_SUM = sum of
    squares; both (1, C, 1, ...). cudnn-frontend's ``graph.genstats(input)``."""

    op = "genstats"
    INPUTS = ("X",)
    OUTPUTS = ("SUM", "SQ_SUM")

    def _stat_dims(self) -> tuple[int, ...] | None:
        x = self.inputs["X"]
        if x is None or x.dim is None or len(x.dim) < 2:
            return None
        return (1, int(x.dim[1]), *([1] * (len(x.dim) - 2)))

    def infer(self) -> None:
        dims = self._stat_dims()
        if dims is not None:
            for port in self.OUTPUTS:
                _default_output(self, port, dims, strict=False)

    def validate(self) -> None:
        x = check_dims(self, "X")
        if len(x.dim) < 2:
            raise ValidationError(f"X dims {list(x.dim)} need a channel axis (rank >= 2)",
                                  node=self.name, port="X", tensor=x.name)
        dims = self._stat_dims()
        assert dims is not None
        for port in self.OUTPUTS:
            _default_output(self, port, dims, strict=True)
            t = check_dims(self, port)
            if tuple(t.dim) != dims:
                raise ValidationError(f"dims {list(t.dim)} were set, but genstats of X "
                                      f"{list(x.dim)} produces {list(dims)}", node=self.name,
                                      port=port, tensor=t.name)


class ReductionNode(Node):
    """Reduce X over the axes where Y's dim is 1 and X's is not (cudnn-frontend's
    ``graph.reduction(input, mode)``): Y's dims default to X's, so set them with
    ``Y.set_dim([...])``; every Y dim must equal X's or be 1."""

    op = "reduction"
    INPUTS = ("X",)
    OUTPUTS = ("Y",)
    ATTRIBUTES: ClassVar[tuple[str, ...]] = ("mode", "is_deterministic")

    def __init__(self, name: str = "", compute_data_type: Any = DataType.NOT_SET, *,
                 mode: ReductionMode | int | str = ReductionMode.NOT_SET,
                 is_deterministic: bool = False, **ports: Any) -> None:
        super().__init__(name, compute_data_type, **ports)
        self.mode = to_enum(ReductionMode, mode, "reduction mode", node=self.name)
        self.is_deterministic = bool(is_deterministic)

    def infer(self) -> None:
        x = self.inputs["X"]
        if x is not None and x.dim is not None:
            _default_output(self, "Y", x.dim, strict=False)

    def reduced_axes(self) -> tuple[int, ...]:
        """The axes of X that Y reduces (Y's dim 1 where X's is larger)."""
        x, y = self.inputs["X"], self.outputs["Y"]
        assert x is not None and y is not None and x.dim is not None and y.dim is not None
        return tuple(i for i, (a, b) in enumerate(zip(x.dim, y.dim, strict=True)) if a != b)

    def validate(self) -> None:
        if self.mode == ReductionMode.NOT_SET:
            valid = ", ".join(m.name for m in ReductionMode if m != ReductionMode.NOT_SET)
            raise ValidationError(f"reduction mode is NOT_SET; valid: {valid}", node=self.name)
        x = check_dims(self, "X")
        _default_output(self, "Y", x.dim, strict=True)
        y = check_dims(self, "Y")
        if len(y.dim) != len(x.dim) or any(b not in (a, 1) for a, b in zip(x.dim, y.dim,
                                                                            strict=True)):
            raise ValidationError(
                f"Y dims {list(y.dim)} do not fit X {list(x.dim)}: Y needs X's rank, and each "
                f"Y dim must equal X's (kept) or be 1 (reduced)", node=self.name, port="Y",
                tensor=y.name)

    def attributes(self) -> dict[str, Any]:
        """Attribute values, JSON-able (mode by name)."""
        return {"mode": self.mode.name, "is_deterministic": self.is_deterministic}

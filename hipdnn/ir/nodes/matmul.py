"""The matmul node: C = A @ B over the last two axes, the leading axes batch.

cuDNN's rules (cudnn-frontend ``include/cudnn_frontend/node/matmul.h`` and the backend's
``CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR``): A (..., M, K) and B (..., K, N) have the same
rank (>= 2); each batch dim of A and B is equal, or one of them is 1 and broadcasts; C is
(max batch dims..., M, N), row-major packed when its strides are not set. No MIOpen seed row
computes it, so only CPU_REFERENCE_ENGINE runs it (MIOPEN_ENGINE declines the graph naming the
node).
"""

from __future__ import annotations

from collections.abc import Sequence

from hipdnn.core.errors import ValidationError
from hipdnn.core.shapes import packed_strides
from hipdnn.ir.nodes.base import FLOAT_TYPES, KnownTensor, Node, check_dims

__all__ = ["MatmulNode", "matmul_output_dims"]


def matmul_output_dims(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """C's dims for A ``a`` and B ``b`` (None when they do not fit: see :class:`MatmulNode`)."""
    if len(a) != len(b) or len(a) < 2 or a[-1] != b[-2]:
        return None
    batch = []
    for da, db in zip(a[:-2], b[:-2], strict=True):
        if da != db and 1 not in (da, db):
            return None
        batch.append(max(da, db))
    return (*batch, int(a[-2]), int(b[-1]))


class MatmulNode(Node):
    """C = A @ B (cudnn-frontend's ``graph.matmul(A, B)``): A (..., M, K), B (..., K, N),
    C (..., M, N); batch dims equal or 1 (broadcast)."""

    op = "matmul"
    INPUTS = ("A", "B")
    OUTPUTS = ("C",)

    def infer(self) -> None:
        a, b, c = self.inputs["A"], self.inputs["B"], self.outputs["C"]
        if a is None or b is None or c is None or a.dim is None or b.dim is None:
            return
        dims = matmul_output_dims(a.dim, b.dim)
        if dims is not None:
            self._set_c(dims)

    def _set_c(self, dims: tuple[int, ...]) -> None:
        c = self.outputs["C"]
        assert c is not None
        if c.dim is None or c._dim_inferred:
            c._dim = dims  # inference writes the private fields (a setter marks an edit)
            c._dim_inferred = True
        dim = c.dim
        assert dim is not None  # set by the user or just inferred
        if c.stride is None or c._stride_inferred:
            c._stride = packed_strides(dim)  # cuDNN: row-major
            c._stride_inferred = True

    def validate(self) -> None:
        a = check_dims(self, "A", FLOAT_TYPES)
        b = check_dims(self, "B", FLOAT_TYPES)
        for port, t in (("A", a), ("B", b)):
            if len(t.dim) < 2:
                raise ValidationError(f"dims {list(t.dim)} have rank {len(t.dim)}; a matmul "
                                      f"operand needs rank >= 2 (..., rows, columns)",
                                      node=self.name, port=port, tensor=t.name)
        if len(a.dim) != len(b.dim):
            raise ValidationError(
                f"rank mismatch: A {a.name!r} {list(a.dim)} has rank {len(a.dim)} but B "
                f"{b.name!r} {list(b.dim)} has rank {len(b.dim)}; A and B need the same rank "
                f"(give a missing batch axis a dim of 1)", node=self.name, port="B",
                tensor=b.name)
        if a.dim[-1] != b.dim[-2]:
            raise ValidationError(
                f"inner dims differ: A {a.name!r} {list(a.dim)} has K={a.dim[-1]} columns but "
                f"B {b.name!r} {list(b.dim)} has {b.dim[-2]} rows; valid: B (..., "
                f"{a.dim[-1]}, N)", node=self.name, port="B", tensor=b.name)
        _check_batch(self, a, b)
        dims = matmul_output_dims(a.dim, b.dim)
        assert dims is not None
        self._set_c(dims)
        c = check_dims(self, "C", FLOAT_TYPES)
        if tuple(c.dim) != dims:
            raise ValidationError(f"dims {list(c.dim)} were set, but A {list(a.dim)} @ B "
                                  f"{list(b.dim)} produces {list(dims)}", node=self.name,
                                  port="C", tensor=c.name)


def _check_batch(node: Node, a: KnownTensor, b: KnownTensor) -> None:
    for axis, (da, db) in enumerate(zip(a.dim[:-2], b.dim[:-2], strict=True)):
        if da != db and 1 not in (da, db):
            raise ValidationError(
                f"batch dim {axis} differs: A {a.name!r} {list(a.dim)} has {da}, B "
                f"{b.name!r} {list(b.dim)} has {db}; valid: equal, or 1 on one side "
                f"(broadcast)", node=node.name, port="B", tensor=b.name)

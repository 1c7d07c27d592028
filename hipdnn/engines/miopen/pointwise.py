"""Standalone pointwise rows: one activation (miopenActivationForward) and one binary op
(miopenOpTensor; SUB is ADD with IN_1 scaled by -1, as AMD's provider runs it)."""

from __future__ import annotations

import ctypes

from hipdnn.core.errors import VariantPackError
from hipdnn.core.shapes import layout_order, layout_strides
from hipdnn.core.types import DataType, PointwiseMode
from hipdnn.engines.miopen.descriptors import ActivationDesc, Resources, TensorDesc
from hipdnn.engines.miopen.fusion import ONE, ZERO
from hipdnn.engines.miopen.patterns import Match
from hipdnn.engines.miopen.roles import PointwiseActivation, PointwiseBinary
from hipdnn.engines.miopen.rules import Tensor
from hipdnn.engines.miopen.runtime import Call, CHandle, Ctx, Path, Runner
from hipdnn.ir.nodes import PointwiseNode
from miopen_ctypes.enums import miopenTensorOp_t
from miopen_ctypes.hip import HipLibrary
from miopen_ctypes.loader import MIOpenLibrary

__all__ = ["ActivationRunner", "BinaryRunner"]

_MINUS_ONE = ctypes.c_float(-1.0)
#: Address of a host float -1 (alpha2 of SUB).
MINUS_ONE = ctypes.addressof(_MINUS_ONE)

#: PointwiseMode -> (miopenTensorOp_t, alpha2)
_BINARY = {
    PointwiseMode.ADD: (miopenTensorOp_t.miopenTensorOpAdd, ONE),
    PointwiseMode.SUB: (miopenTensorOp_t.miopenTensorOpAdd, MINUS_ONE),
    PointwiseMode.MUL: (miopenTensorOp_t.miopenTensorOpMul, ONE),
    PointwiseMode.MIN: (miopenTensorOp_t.miopenTensorOpMin, ONE),
    PointwiseMode.MAX: (miopenTensorOp_t.miopenTensorOpMax, ONE),
}


def _desc(lib: MIOpenLibrary, res: Resources, t: Tensor) -> TensorDesc:
    return res.add(TensorDesc(lib, t.data_type, t.dim, t.stride))


class ActivationRunner(Runner[PointwiseActivation[int]]):
    """y = act(x): one miopenActivationForward (alpha 1, beta 0)."""

    path = Path.ACTIVATION

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, handle: CHandle) -> None:
        self.lib = lib
        t = m.t
        assert isinstance(t, PointwiseActivation) and m.activation is not None
        a = m.activation
        if tuple(t.x.stride) == tuple(t.y.stride):
            self.x, self.y = _desc(lib, res, t.x), _desc(lib, res, t.y)
        else:  # they differ on size-1 axes only: one packed layout for both (the same elements)
            strides = layout_strides(t.x.dim, layout_order(t.x.dim, t.x.stride))
            self.x, self.y = (res.add(TensorDesc(lib, v.data_type, v.dim, strides))
                              for v in (t.x, t.y))
        self.act = res.add(ActivationDesc(lib, a.mode, a.alpha, a.beta, a.gamma))

    def calls(self, ctx: Ctx[PointwiseActivation[int]]) -> list[Call] | None:
        p = ctx.ptr
        return [("miopenActivationForward",
                 (ctx.handle, self.act.raw, ONE, self.x.raw, p.x, ZERO, self.y.raw, p.y))]


class BinaryRunner(Runner[PointwiseBinary[int]]):
    """c = op(a, b) with b broadcast: one miopenOpTensor (alpha1 1, alpha2 1 or -1, beta 0).

    An output buffer that is one of the inputs is fine where every element reads only its own
    position (the same tensor); an output overlapping a broadcast IN_1 would be overwritten
    before other elements read it: refused with a :class:`VariantPackError`."""

    path = Path.TENSOR_OP

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, handle: CHandle) -> None:
        self.lib = lib
        t = m.t
        assert isinstance(t, PointwiseBinary)
        self.m = m
        self.a, self.b, self.c = (_desc(lib, res, x) for x in (t.a, t.b, t.c))
        node = m.nodes[0]
        assert isinstance(node, PointwiseNode)
        mode = PointwiseMode(node.mode)
        self.op, self.alpha2 = _BINARY[mode]
        size = DataType(t.c.data_type).itemsize
        self.nbytes = {"a": self.a.nbytes, "b": self.b.nbytes, "c": self.c.nbytes}
        self.itemsize = size
        self.b_full = tuple(t.b.dim) == tuple(t.c.dim)

    def _check_aliasing(self, p: PointwiseBinary[int]) -> None:
        c0, c1 = p.c, p.c + self.nbytes["c"]
        for role, ptr in (("a", p.a), ("b", p.b)):
            lo, hi = ptr, ptr + self.nbytes[role]
            if hi <= c0 or lo >= c1:
                continue
            if ptr == p.c and (role == "a" or self.b_full):
                continue  # the same tensor: each element reads its own position first
            port = "IN_0" if role == "a" else "IN_1"
            node = self.m.nodes[0].name
            raise VariantPackError(
                f"node {node!r}: the OUT_0 buffer overlaps the {port} buffer; "
                f"{self.m.row.value} (miopenOpTensor) writes OUT_0 while other elements still "
                f"read {port}: give OUT_0 its own buffer")

    def calls(self, ctx: Ctx[PointwiseBinary[int]]) -> list[Call] | None:
        p = ctx.ptr
        self._check_aliasing(p)
        return [("miopenOpTensor",
                 (ctx.handle, int(self.op), ONE, self.a.raw, p.a, self.alpha2, self.b.raw, p.b,
                  ZERO, self.c.raw, p.c))]

"""Convolution rows: a single conv (fprop/dgrad/wgrad), and conv + (bias) + activation through a
fusion plan whose compile decides applicability, else unfused conv, bias (miopenOpTensor add)
and miopenActivationForward with intermediates in the workspace."""

from __future__ import annotations

from hipdnn.core.shapes import packed_strides
from hipdnn.core.types import DataType
from hipdnn.engines.miopen.conv import DIRECTIONS, ConvOp
from hipdnn.engines.miopen.decision import PlanDecision
from hipdnn.engines.miopen.descriptors import ActivationDesc, Resources, TensorDesc
from hipdnn.engines.miopen.errors import MiopenNotSupportedError
from hipdnn.engines.miopen.fusion import ONE, ZERO, FusionPlan, rechecks_stored_decline
from hipdnn.engines.miopen.patterns import Match, Row
from hipdnn.engines.miopen.roles import ConvBiasAct, ConvDgrad, ConvFprop, ConvWgrad
from hipdnn.engines.miopen.rules import descriptor_strides
from hipdnn.engines.miopen.runtime import ALIGN, Arena, Call, CHandle, Ctx, Path, Runner
from miopen_ctypes.enums import miopenTensorOp_t
from miopen_ctypes.hip import HipLibrary
from miopen_ctypes.loader import MIOpenLibrary

__all__ = ["ConvBiasActRunner", "ConvRunner", "conv_op_for"]


def conv_op_for(lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match) -> ConvOp:
    """The ConvOp of a conv row (for conv + bias + act: forward into an intermediate Y of the
    input type, since MIOpen convolutions take one data type)."""
    t = m.t
    if isinstance(t, ConvBiasAct):
        direction = DIRECTIONS[Row.CONV_FPROP]
        operands = [(t.w.data_type, t.w.dim), (t.x.data_type, t.x.dim),
                    (t.x.data_type, t.conv_y.dim)]
    else:
        assert isinstance(t, (ConvFprop, ConvDgrad, ConvWgrad))
        direction = DIRECTIONS[m.row]
        operands = [(o.data_type, tuple(o.dim)) for o in t.operands()]
    assert m.conv is not None
    return ConvOp(lib, hip, res, m.conv, direction, operands, m.layout, m.deterministic)


class ConvRunner(Runner[ConvFprop[int] | ConvDgrad[int] | ConvWgrad[int]]):
    """One convolution: immediate mode or Find 2.0 (see :class:`ConvOp`)."""

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match,
                 handle: CHandle, benchmarking: int, limit: int | None,
                 solutions: list[tuple[int, int]] | None = None,
                 preset: PlanDecision | None = None) -> None:
        """``preset``: a stored plan decision (MiopenEngine.plan_decision) to apply."""
        self.lib = lib
        self.op = conv_op_for(lib, hip, res, m)
        if preset is not None:
            self.op.notes.extend(preset.get("notes", ()))
        self.workspace_size = self.op.prepare(handle, benchmarking, limit, solutions,
                                              None if preset is None else preset["conv"])
        self.path = Path.FIND2 if benchmarking else Path.IMMEDIATE
        self.notes = self.op.notes  # the same list: Find 2.0's fallback shows up in describe()

    def calls(self, ctx: Ctx[ConvFprop[int] | ConvDgrad[int] | ConvWgrad[int]]) -> list[Call] | None:
        return self.op.calls(ctx.handle, ctx.ptr.operands(), ctx.ws)


class ConvBiasActRunner(Runner[ConvBiasAct[int]]):
    """Conv fprop + (bias) + activation: fused when the fusion plan compiles, else unfused."""

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match,
                 handle: CHandle, benchmarking: int, limit: int | None,
                 solutions: list[tuple[int, int]] | None = None, *,
                 workaround: str | None = None, preset: PlanDecision | None = None) -> None:
        """``workaround``: the note of an architecture workaround (hipdnn/engines/miopen/
        workarounds.py) that rules the fused path out: unfused without trying it.
        ``preset``: a stored plan decision (MiopenEngine.plan_decision): unfused as stored
        (the fusion compile is not tried again when MIOpen's decline was definitive; after
        miopenStatusUnknownError it is asked once: :func:`rechecks_stored_decline`), or fused
        (compiled again: MIOpen takes the kernels from its cache)."""
        self.lib, self.m = lib, m
        a = m.activation
        assert a is not None and isinstance(m.t, ConvBiasAct)
        self.t = t = m.t
        x, y, bias = t.x, t.y, t.bias
        self.x = res.add(TensorDesc(lib, x.data_type, x.dim, descriptor_strides(x, m.layout)))
        self.y = res.add(TensorDesc(lib, y.data_type, y.dim, descriptor_strides(y, m.layout)))
        self.bias = (res.add(TensorDesc(lib, bias.data_type, bias.dim,
                                        descriptor_strides(bias, m.layout)))
                     if bias is not None else None)
        self.op = conv_op_for(lib, hip, res, m)
        self.w = self.op.descs[0]  # forward: (w, x, y)
        self.fusion: FusionPlan | None = None
        self.notes = self.op.notes
        self._preset = None if preset is None else preset.get("conv")
        #: The miopenCompileFusionPlan status that declined the fused path (kept in the plan
        #: store's decision, so a later process knows whether to ask again).
        self.fusion_status: int | None = None
        attempts = 2
        if preset is not None and preset["path"] == "unfused":
            stored_notes = [str(n) for n in preset.get("notes", ())]
            self.notes.extend(stored_notes)
            status = preset.get("fusion_status")
            if not rechecks_stored_decline(status, stored_notes):
                self.fusion_status = status if isinstance(status, int) else None
                self._unfused(lib, res, m, handle, benchmarking, limit, solutions)
                return
            # declined after a status that may have been a passing fault: asked once more
            # (fused now: the plan store's decision no longer applies and is rewritten)
            attempts = 1
        if workaround is not None:
            self.notes.append(workaround)
            self._unfused(lib, res, m, handle, benchmarking, limit, solutions)
            return
        self.fusion = FusionPlan(lib, res, self.x)
        self.conv_op = self.fusion.conv_forward(self.op.conv, self.w)
        self.bias_op = self.fusion.bias_forward(self.bias) if self.bias is not None else None
        self.act_op = self.fusion.activation_forward(a.mode)
        if self.fusion.compile(handle, with_conv=True, attempts=attempts):
            self.path = Path.FUSED
            self.workspace_size = self.fusion.workspace_size
            return
        assert self.fusion.declined is not None
        self.fusion_status = self.fusion.declined_status
        if self.fusion.declined_note() not in self.notes:  # a stored decline asked again
            self.notes.append(self.fusion.declined_note())
        if m.data_type == DataType.BFLOAT16:
            raise MiopenNotSupportedError(
                f"{m.row.value} (node {', '.join(repr(n.name) for n in m.nodes)})",
                "bf16 conv + bias + activation runs only as a MIOpen fusion plan, and this "
                "library has no fused kernel for it (the plan did not compile); the unfused "
                "path is not offered because MIOpen's standalone activation kernels support "
                "fp32/fp16 only", "miopenCompileFusionPlan", self.fusion.declined)
        self.fusion = None
        self._unfused(lib, res, m, handle, benchmarking, limit, solutions)

    def _unfused(self, lib: MIOpenLibrary, res: Resources, m: Match, handle: CHandle,
                 benchmarking: int, limit: int | None,
                 solutions: list[tuple[int, int]] | None) -> None:
        a = m.activation
        assert a is not None
        self.path = Path.UNFUSED
        self.act = res.add(ActivationDesc(lib, a.mode, a.alpha, a.beta, a.gamma))
        conv_ws = self.op.prepare(handle, benchmarking, limit, solutions, self._preset)
        cy = self.t.conv_y
        self.cy = self.op.descs[2]
        if self.bias is not None:
            self.add_y, self.add_bias = _bias_add_descs(lib, res, self.cy, self.bias, m.layout)
        self.arena = Arena(conv_ws)
        nbytes = (1 + sum((d - 1) * s for d, s in zip(cy.dim, packed_strides(cy.dim, m.layout), strict=False)))
        self.arena.reserve("conv_y", nbytes * m.data_type.itemsize)
        self.workspace_size = -(-self.arena.size // ALIGN) * ALIGN

    def calls(self, ctx: Ctx[ConvBiasAct[int]]) -> list[Call] | None:
        p = ctx.ptr
        a = self.m.activation
        assert a is not None
        if self.fusion is not None:
            assert self.fusion.args is not None
            args = self.fusion.args.raw
            out: list[Call] = [("miopenSetOpArgsConvForward", (args, self.conv_op, ONE, ZERO, p.w))]
            if self.bias_op is not None:
                out.append(("miopenSetOpArgsBiasForward", (args, self.bias_op, ONE, ZERO, p.bias)))
            out.append(("miopenSetOpArgsActivForward",
                        (args, self.act_op, ONE, ZERO, a.alpha, a.beta, a.gamma)))
            out.append(self.fusion.execute_call(ctx.handle, self.x, p.x, self.y, p.y, ctx.ws))
            return out
        return self.op.calls(ctx.handle, self._conv_ptrs(ctx), ctx.ws) + self._epilogue(ctx)

    def _conv_ptrs(self, ctx: Ctx[ConvBiasAct[int]]) -> tuple[int, int, int]:
        """The forward convolution's (w, x, y): y is the intermediate in the workspace."""
        p = ctx.ptr
        return p.w, p.x, self.arena.at(ctx, "conv_y")

    def _epilogue(self, ctx: Ctx[ConvBiasAct[int]]) -> list[Call]:
        """The unfused bias add (miopenOpTensor, in place on the intermediate) and activation."""
        p, cy = ctx.ptr, self.arena.at(ctx, "conv_y")
        out: list[Call] = []
        if self.bias is not None:
            out.append(("miopenOpTensor", (ctx.handle, miopenTensorOp_t.miopenTensorOpAdd, ONE,
                                           self.add_y.raw, cy, ONE, self.add_bias.raw, p.bias,
                                           ZERO, self.add_y.raw, cy)))
        out.append(("miopenActivationForward", (ctx.handle, self.act.raw, ONE, self.cy.raw, cy,
                                                ZERO, self.y.raw, p.y)))
        return out


def _bias_add_descs(lib: MIOpenLibrary, res: Resources, y: TensorDesc, bias: TensorDesc,
                    layout: str) -> tuple[TensorDesc, TensorDesc]:
    """Descriptors of the unfused bias add (intermediate, bias), in memory order.

    MIOpen's OpTensorFwdBias kernel (chosen for any 4-D packed tensor whose B spans only C)
    assumes each channel's H*W elements are contiguous: given an NHWC-strided descriptor it adds
    the bias to the wrong elements (seen with AMD's kernel on the emulated gfx1100, lane
    amdkernels). For channels-last layouts the intermediate is therefore described as the
    packed (N, spatial..., C) tensor it is in memory, and the bias as (1, ..., 1, C).
    """
    if not layout.endswith("C"):
        return y, bias
    dims = (y.dims[0], *y.dims[2:], y.dims[1])
    bias_dims = (1,) * (len(dims) - 1) + (y.dims[1],)
    return (res.add(TensorDesc(lib, y.dtype, dims, packed_strides(dims))),
            res.add(TensorDesc(lib, bias.dtype, bias_dims, packed_strides(bias_dims))))

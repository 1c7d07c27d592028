"""Batchnorm rows: the _V2 calls (FP32 parameter descriptors), the 3.5 *Activation calls, the
3.4 fusion plans, and the unfused fallbacks with intermediates in the workspace."""

from __future__ import annotations

from hipdnn.core.types import DataType
from hipdnn.engines.miopen.descriptors import ActivationDesc, Resources, TensorDesc, bn_param_desc
from hipdnn.engines.miopen.fusion import ONE, ZERO, FusionPlan
from hipdnn.engines.miopen.memory import copy, tensor_nbytes
from hipdnn.engines.miopen.patterns import Match
from hipdnn.engines.miopen.roles import (
    BnBackward,
    BnInfDreluBnBwd,
    BnInference,
    BnInferenceAct,
    BnInferenceInv,
    BnInferenceInvAct,
    BnTraining,
    BnTrainingAct,
)
from hipdnn.engines.miopen.rules import Tensor, descriptor_strides
from hipdnn.engines.miopen.runtime import Arena, Call, CHandle, Ctx, Path, Runner, replay
from miopen_ctypes.enums import miopenBatchNormMode_t, miopenTensorOp_t
from miopen_ctypes.hip import HipLibrary
from miopen_ctypes.loader import MIOpenLibrary

__all__ = [
    "DEFAULT_EPSILON",
    "BnBackwardRunner",
    "BnInferenceRunner",
    "BnTrainingRunner",
    "FoldInverse",
]

_SPATIAL = miopenBatchNormMode_t.miopenBNSpatial
#: Epsilon passed where MIOpen uses the saved statistics and ignores it (hipDNN's default).
DEFAULT_EPSILON = 1e-5


#: Why a batchnorm + activation row on MIOpen 3.4 runs unfused in any layout but 4-D NCHW.
FUSION_NCHW_ONLY = ("MIOpen 3.4's batchnorm + activation fusion kernels compute 4-D NCHW only "
                    "(run by AMD's kernels in tests/amdkernels, a channels-last fusion plan "
                    "compiled and gave wrong results, a 5-D one left elements unwritten): unfused")


def _desc(lib: MIOpenLibrary, res: Resources, t: Tensor, layout: str) -> TensorDesc:
    return res.add(TensorDesc(lib, t.data_type, t.dim, descriptor_strides(t, layout)))


def _act(lib: MIOpenLibrary, res: Resources, m: Match) -> ActivationDesc:
    a = m.activation
    assert a is not None
    return res.add(ActivationDesc(lib, a.mode, a.alpha, a.beta, a.gamma))


class FoldInverse:
    """The inverse variance folded into the scale on the device: scale' = scale * inv_variance
    (miopenOpTensor Mul) and a variance of ones (miopenSetTensor) in workspace blocks. MIOpen's
    batchnorm call with epsilon 0 then computes rsqrt(1 + 0) = 1 exactly, so
    y = scale' * (x - mean) + bias: no host copy, one rounding (scale * inv) as in the formula.

    MIOpen 3.4 and 3.5 have no inverse-variance batchnorm inference call (the
    ``*InvVariance`` calls AMD's provider uses came later)."""

    def __init__(self, lib: MIOpenLibrary, res: Resources, channels: int, rank: int) -> None:
        dims = (1, channels) + (1,) * (rank - 2)
        self.desc = res.add(TensorDesc(lib, DataType.FLOAT, dims, (channels,) + (1,) * (rank - 1)))
        self.nbytes = channels * 4

    def calls(self, handle: CHandle, scale: int, inv_variance: int, scale_dst: int,
              ones_dst: int) -> list[Call]:
        d = self.desc.raw
        return [("miopenSetTensor", (handle, d, ones_dst, ONE)),
                ("miopenOpTensor", (handle, int(miopenTensorOp_t.miopenTensorOpMul), ONE, d, scale,
                                    ONE, d, inv_variance, ZERO, d, scale_dst))]


_InfRow = BnInference[int, float] | BnInferenceInv[int]


class BnInferenceRunner(Runner[_InfRow]):
    """BN inference, either form, optionally followed by an activation (AMD's fused rows).

    The variance form calls miopenBatchNormalizationForwardInference_V2 (with an activation:
    3.5's miopenBatchNormForwardInferenceActivation, else _V2 into the workspace then
    miopenActivationForward). The inverse-variance form first folds the inverse variance into
    the scale on the device (:class:`FoldInverse`) and passes a variance of ones, epsilon 0."""

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, handle: CHandle) -> None:
        self.lib, self.hip = lib, hip
        t = m.t
        assert isinstance(t, (BnInference, BnInferenceInv))
        self.x, self.y = _desc(lib, res, t.x, m.layout), _desc(lib, res, t.y, m.layout)
        self.p = res.add(bn_param_desc(lib, self.x))
        self.channels = int(t.x.dim[1])
        self.inv = isinstance(t, BnInferenceInv)
        self.arena = Arena()
        self.fold: FoldInverse | None = None
        if self.inv:
            self.fold = FoldInverse(lib, res, self.channels, len(t.x.dim))
            self.arena.reserve("scale", self.fold.nbytes)
            self.arena.reserve("variance", self.fold.nbytes)
        self.act: ActivationDesc | None = None
        if not isinstance(t, (BnInferenceAct, BnInferenceInvAct)):
            self.path = Path.V2
        elif lib.capabilities.has("miopenBatchNormForwardInferenceActivation"):
            self.path, self.act = Path.BN_ACTIVATION, _act(lib, res, m)
        else:
            self.path, self.act = Path.UNFUSED, _act(lib, res, m)
            self.notes = ("MIOpen 3.4 has no batchnorm inference + activation call "
                          "(miopenBatchNormForwardInferenceActivation is 3.5): _V2 into the "
                          "workspace, then miopenActivationForward",)
            self.arena.reserve("bn_y", tensor_nbytes(t.x))
        self.workspace_size = self.arena.size

    def calls(self, ctx: Ctx[_InfRow]) -> list[Call] | None:
        p, q = ctx.ptr, self.p.raw
        out: list[Call] = []
        if isinstance(p, BnInferenceInv):
            assert self.fold is not None
            scale, variance, eps = self.arena.at(ctx, "scale"), self.arena.at(ctx, "variance"), 0.0
            out += self.fold.calls(ctx.handle, p.scale, p.inv_variance, scale, variance)
        else:
            scale, variance, eps = p.scale, p.variance, p.epsilon
        params = (q, q, q, q, scale, p.bias, p.mean, variance, eps)
        common = (ctx.handle, _SPATIAL, ONE, ZERO, self.x.raw, p.x)
        if self.path == Path.BN_ACTIVATION:
            assert self.act is not None
            out.append(("miopenBatchNormForwardInferenceActivation",
                        (*common, self.y.raw, p.y, *params, self.act.raw)))
        elif self.path == Path.UNFUSED:
            assert self.act is not None
            bn_y = self.arena.at(ctx, "bn_y")
            out.append(("miopenBatchNormalizationForwardInference_V2",
                        (*common, self.x.raw, bn_y, *params)))
            out.append(("miopenActivationForward",
                        (ctx.handle, self.act.raw, ONE, self.x.raw, bn_y, ZERO, self.y.raw, p.y)))
        else:
            out.append(("miopenBatchNormalizationForwardInference_V2",
                        (*common, self.y.raw, p.y, *params)))
        return out


class BnTrainingRunner(Runner[BnTraining[int, float]]):
    """BN training (batch statistics; running statistics when the graph has them), optionally
    followed by an activation: 3.5 miopenBatchNormForwardTrainingActivation, else the fusion plan
    [BatchNormForward, ActivationForward], else _V2 then miopenActivationForward."""

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, handle: CHandle) -> None:
        self.lib, self.hip, self.m = lib, hip, m
        t = m.t
        assert isinstance(t, BnTraining)
        self.x, self.y = _desc(lib, res, t.x, m.layout), _desc(lib, res, t.y, m.layout)
        self.p = res.add(bn_param_desc(lib, self.x))
        self.running = t.prev_running_mean is not None
        self.param_bytes = int(t.x.dim[1]) * 4
        self.arena = Arena()
        self.fusion: FusionPlan | None = None
        self.act: ActivationDesc | None = None
        if not isinstance(t, BnTrainingAct):
            self.path = Path.V2
        elif lib.capabilities.has("miopenBatchNormForwardTrainingActivation"):
            self.path, self.act = Path.BN_ACTIVATION, _act(lib, res, m)
        elif m.layout == "NCHW":
            self._try_fusion(res, handle)
        else:
            self._unfused(res, (FUSION_NCHW_ONLY,))
        self.workspace_size = self.arena.size

    def _try_fusion(self, res: Resources, handle: CHandle) -> None:
        a = self.m.activation
        assert a is not None
        plan = FusionPlan(self.lib, res, self.x)
        self.bn_op = plan.batchnorm_forward(True)
        self.act_op = plan.activation_forward(a.mode)
        if plan.compile(handle):
            self.path, self.fusion = Path.FUSED, plan
            # the fused kernel always writes saved stats and read-modify-writes running stats
            for name in ("mean", "inv_variance", "run_mean", "run_var"):
                self.arena.reserve(name, self.param_bytes)
        else:
            self._unfused(res, (plan.declined_note(),))

    def _unfused(self, res: Resources, notes: tuple[str, ...]) -> None:
        self.path, self.notes = Path.UNFUSED, notes
        self.act = _act(self.lib, res, self.m)
        assert isinstance(self.m.t, BnTrainingAct)
        self.arena.reserve("bn_y", tensor_nbytes(self.m.t.x))

    def _running(self, ctx: Ctx[BnTraining[int, float]], *,
                 copy_prev: bool) -> tuple[int | None, int | None, float] | None:
        """Running-stat pointers and factor; the previous stats are copied to the next ones
        first when they differ (``copy_prev``), else None is returned for such a pack."""
        p = ctx.ptr
        if not self.running:
            return None, None, 0.0
        assert (p.prev_running_mean is not None and p.prev_running_variance is not None
                and p.next_running_mean is not None and p.next_running_variance is not None
                and p.momentum is not None)
        for prev, nxt in ((p.prev_running_mean, p.next_running_mean),
                          (p.prev_running_variance, p.next_running_variance)):
            if prev != nxt:
                if not copy_prev:
                    return None
                copy(self.hip, nxt, prev, self.param_bytes)
        return p.next_running_mean, p.next_running_variance, p.momentum

    def calls(self, ctx: Ctx[BnTraining[int, float]]) -> list[Call] | None:
        running = self._running(ctx, copy_prev=False)  # copies between calls: not prebuilt
        return None if running is None else self._calls(ctx, *running)

    def run_with_host_work(self, ctx: Ctx[BnTraining[int, float]]) -> None:
        """Running statistics in other buffers: copy them to the next ones, then the calls."""
        running = self._running(ctx, copy_prev=True)
        assert running is not None
        replay(self.lib, self._calls(ctx, *running))

    def _calls(self, ctx: Ctx[BnTraining[int, float]], run_mean: int | None, run_var: int | None,
               factor: float) -> list[Call]:
        p, q = ctx.ptr, self.p.raw
        eps = p.epsilon
        mean, inv = p.mean, p.inv_variance
        if self.path == Path.FUSED:
            assert self.fusion is not None and self.fusion.args is not None and self.m.activation
            a, ar = self.m.activation, self.arena
            if run_mean is None:
                run_mean, run_var = ar.at(ctx, "run_mean"), ar.at(ctx, "run_var")
            args = self.fusion.args.raw
            return [
                ("miopenSetOpArgsBatchNormForward",
                 (args, self.bn_op, ONE, ZERO, p.scale, p.bias,
                  mean or ar.at(ctx, "mean"), inv or ar.at(ctx, "inv_variance"),
                  run_mean, run_var, factor, eps)),
                ("miopenSetOpArgsActivForward",
                 (args, self.act_op, ONE, ZERO, a.alpha, a.beta, a.gamma)),
                self.fusion.execute_call(ctx.handle, self.x, p.x, self.y, p.y, ctx.ws)]
        common = (ctx.handle, _SPATIAL, ONE, ZERO, self.x.raw, p.x)
        if self.path == Path.BN_ACTIVATION:
            assert self.act is not None
            return [("miopenBatchNormForwardTrainingActivation",
                     (*common, self.y.raw, p.y, q, q, q, q, p.scale, p.bias, factor,
                      run_mean, run_var, eps, mean, inv, self.act.raw))]
        unfused = self.path == Path.UNFUSED
        y = self.arena.at(ctx, "bn_y") if unfused else p.y
        out: list[Call] = [("miopenBatchNormalizationForwardTraining_V2",
                            (*common, self.x.raw if unfused else self.y.raw, y, q, q, q, q,
                             p.scale, p.bias, factor, run_mean, run_var, eps, mean, inv))]
        if unfused:
            assert self.act is not None
            out.append(("miopenActivationForward",
                        (ctx.handle, self.act.raw, ONE, self.x.raw, y, ZERO, self.y.raw, p.y)))
        return out


class BnBackwardRunner(Runner[BnBackward[int] | BnInfDreluBnBwd[int]]):
    """BN backward (_V2), and BN inference + DReLU + BN backward: 3.5
    miopenBatchNormBackwardActivation, else the fusion plan [BatchNormBackward,
    ActivationBackward], else recompute (ForwardInference_V2 with the saved inverse variance folded into
    the scale on the device) + miopenActivationBackward + Backward_V2."""

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, handle: CHandle) -> None:
        self.lib, self.hip, self.m = lib, hip, m
        t = m.t
        assert isinstance(t, (BnBackward, BnInfDreluBnBwd))
        self.x = _desc(lib, res, t.x, m.layout)
        self.dy, self.dx = _desc(lib, res, t.dy, m.layout), _desc(lib, res, t.dx, m.layout)
        self.p = res.add(bn_param_desc(lib, self.x))
        self.channels = int(t.x.dim[1])
        self.arena = Arena()
        self.fusion: FusionPlan | None = None
        self.act: ActivationDesc | None = None
        self.fold: FoldInverse | None = None
        if isinstance(t, BnBackward):
            self.path = Path.V2
        elif lib.capabilities.has("miopenBatchNormBackwardActivation"):
            self.path, self.act = Path.BN_ACTIVATION, _act(lib, res, m)
        else:
            a = m.activation
            assert a is not None
            plan: FusionPlan | None = None
            if m.layout == "NCHW":
                plan = FusionPlan(lib, res, self.dy)
                self.bn_op = plan.batchnorm_backward()
                self.act_op = plan.activation_backward(a.mode)
            if plan is not None and plan.compile(handle):
                self.path, self.fusion = Path.FUSED, plan
            else:
                self.path, self.act = Path.UNFUSED, _act(lib, res, m)
                self.notes = (plan.declined_note() if plan is not None else FUSION_NCHW_ONLY,)
                nbytes = tensor_nbytes(t.x)
                self.fold = FoldInverse(lib, res, self.channels, len(t.x.dim))
                self.arena.reserve("scale", self.fold.nbytes)
                self.arena.reserve("variance", self.fold.nbytes)
                self.arena.reserve("bn_y", nbytes)
                self.arena.reserve("drelu", nbytes)
        self.workspace_size = self.arena.size

    def _backward_v2(self, ctx: Ctx[BnBackward[int] | BnInfDreluBnBwd[int]], dy: int) -> Call:
        p, q = ctx.ptr, self.p.raw
        return ("miopenBatchNormalizationBackward_V2",
                (ctx.handle, _SPATIAL, ONE, ZERO, ONE, ZERO, self.x.raw, p.x, self.dy.raw, dy,
                 self.dx.raw, p.dx, q, q, q, q, p.scale, p.dscale, p.dbias,
                 DEFAULT_EPSILON, p.mean, p.inv_variance))  # None: recompute

    def calls(self, ctx: Ctx[BnBackward[int] | BnInfDreluBnBwd[int]]) -> list[Call] | None:
        p, q = ctx.ptr, self.p.raw
        if isinstance(p, BnBackward):
            return [self._backward_v2(ctx, p.dy)]
        if self.path == Path.BN_ACTIVATION:
            assert self.act is not None
            return [("miopenBatchNormBackwardActivation",
                     (ctx.handle, _SPATIAL, ONE, ZERO, ONE, ZERO, self.x.raw, p.x, self.dy.raw,
                      p.dy, self.dx.raw, p.dx, q, q, q, q, p.scale, p.bias,
                      p.dscale, p.dbias, DEFAULT_EPSILON, p.mean, p.inv_variance,
                      self.act.raw))]
        if self.path == Path.FUSED:
            assert self.fusion is not None and self.fusion.args is not None and self.m.activation
            a, args = self.m.activation, self.fusion.args.raw
            # y must be a valid buffer of x's shape; the ReLU derivative uses the recomputed BN output
            return [("miopenSetOpArgsBatchNormBackward",
                     (args, self.bn_op, ONE, ZERO, p.x, p.scale, p.bias, p.dscale,
                      p.dbias, p.mean, p.inv_variance)),
                    ("miopenSetOpArgsActivBackward",
                     (args, self.act_op, ONE, ZERO, p.x, None, a.alpha, a.beta, a.gamma)),
                    self.fusion.execute_call(ctx.handle, self.dy, p.dy, self.dx, p.dx,
                                             ctx.ws)]
        return self._unfused(ctx, p)

    def _unfused(self, ctx: Ctx[BnBackward[int] | BnInfDreluBnBwd[int]],
                 p: BnInfDreluBnBwd[int]) -> list[Call]:
        """Recompute (the inverse variance folded into the scale on the device), activation
        backward, backward."""
        q, ar = self.p.raw, self.arena
        var, bn_y, drelu = ar.at(ctx, "variance"), ar.at(ctx, "bn_y"), ar.at(ctx, "drelu")
        scale = ar.at(ctx, "scale")
        assert self.act is not None and self.fold is not None
        return [
            *self.fold.calls(ctx.handle, p.scale, p.inv_variance, scale, var),
            ("miopenBatchNormalizationForwardInference_V2",
             (ctx.handle, _SPATIAL, ONE, ZERO, self.x.raw, p.x, self.x.raw, bn_y,
              q, q, q, q, scale, p.bias, p.mean, var, 0.0)),
            # y = x = the recomputed pre-activation: ReLU/clipped ReLU/clamp derivatives gate on x
            ("miopenActivationBackward",
             (ctx.handle, self.act.raw, ONE, self.x.raw, bn_y, self.dy.raw, p.dy, self.x.raw,
              bn_y, ZERO, self.x.raw, drelu)),
            self._backward_v2(ctx, drelu)]

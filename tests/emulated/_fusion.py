"""Fusion plans: create, add ops in data-flow order, compile (the applicability test), args, execute.

``miopenCompileFusionPlan`` returns miopenStatusUnsupportedOp unless ``device.fusion_applicable``
(a predicate returning the reason a plan cannot fuse, or None) accepts it; a reason of type
:class:`BuildFailure` returns miopenStatusUnknownError instead (MIOpen picked a fused solver
whose kernel it cannot build). The default mirrors what the Debian 6.4.3/7.2.4 builds can fuse
(miopen-semantics.md 6.6): conv(+bias)(+activation 0..9) fp32, 2-D NCHW packed, group 1, no
dilation; and the NA pairs [BNInference|BNForward, ActivationForward] / [BNBackward,
ActivationBackward], fp32/fp16, 4-D NCHW packed. For convolutions it follows what the REAL
library decided in the stubgpu lane (tests/stubgpu/test_crosscheck.py ties the two): on gfx942
the fused Winograd solvers (fp32 always, fp16 at stride 1 on 3.5; 3.4 has no fp16 one) and on gfx90a/gfx908 the 1x1 fused
asm solver are chosen, and Debian's builds lack their assembly sources, so the compile fails
with status 7 ("Failed to load kernel source"); elsewhere fp32 fuses (ConvOclDirectFwdFused).
"""

from __future__ import annotations

from ctypes import c_float, c_int, c_size_t, c_uint
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hipdnn.engines.reference import kernels

from ._base import DeviceBase
from ._compute import (
    activation_backward,
    activation_forward,
    bn_apply_inv,
    bn_backward,
    bn_inference,
    bn_train,
)
from ._conv import ConvProblem, check_conv, layout_kind
from ._core import (
    BAD_PARM,
    UNKNOWN_ERROR,
    UNSUPPORTED_OP,
    Args,
    Status,
    addr,
    api,
    read_scalar,
    require,
    write_out,
)
from ._objects import FLOAT, HALF, ConvDesc, TensorDesc, conv_output_dims, strides_for

__all__ = ["BuildFailure", "FusionApi", "FusionOp", "FusionPlan", "default_fusion_applicable"]


class BuildFailure(str):
    """A fusion_applicable reason meaning "the solver MIOpen picks cannot build its kernel
    here": miopenCompileFusionPlan returns miopenStatusUnknownError (7), not UnsupportedOp."""


@dataclass
class FusionOp:
    """One op of a plan: kind is conv, bias, act_fwd, act_bwd, bn_inf, bn_fwd or bn_bwd."""

    plan: int
    kind: str
    conv: ConvDesc | None = None
    w: TensorDesc | None = None
    desc: TensorDesc | None = None  # bias or BN-inference parameter descriptor
    mode: int = 0  # activation or BN mode
    running: bool = False  # BN forward runningMeanVariance


@dataclass
class FusionPlan:
    """miopenFusionPlanDescriptor_t."""

    input: TensorDesc
    direction: int = 0
    ops: list[int] = field(default_factory=list)
    compiled_on: int = 0
    algo: int = 1
    output: TensorDesc | None = None
    arch: str = "gfx942"  # the device's gcnArchName (without features) when the plan was made


def default_fusion_applicable(plan: FusionPlan, ops: list[FusionOp], version: tuple[int, int, int]) -> str | None:
    """Why the Debian builds of MIOpen 3.4/3.5 cannot fuse ``ops`` (None: they can)."""
    kinds = [op.kind for op in ops]
    x = plan.input
    acts = [op.mode for op in ops if op.kind in ("act_fwd", "act_bwd")]
    if any(m > 9 for m in acts):
        return f"activation mode {acts} is outside the fused kernels' set (0..9; CLAMP is not fusable)"
    if kinds and kinds[0] == "conv":
        if kinds[1:] not in ([], ["bias"], ["act_fwd"], ["bias", "act_fwd"]):
            return f"no fused conv solver for {kinds}"
        conv, w = ops[0].conv, ops[0].w
        assert conv is not None and w is not None
        if len(x.dims) != 4 or not x.is_nchw_packed or not w.is_nchw_packed:
            return "fused convolutions need 2-D packed NCHW tensors"
        if conv.group_count != 1 or any(d != 1 for d in conv.dilations):
            return "fused convolutions need group count 1 and no dilation"
        arch = plan.arch.split(":", 1)[0]
        if arch == "gfx942" and x.dtype == FLOAT:
            return BuildFailure("ConvBinWinogradRxSf2x3g1Fused: Failed to load kernel source "
                                "Conv_Winograd_v30_3_1_fp32_f2x3_stride*.s (not in Debian's build)")
        if arch == "gfx942" and x.dtype == HALF and all(s == 1 for s in conv.strides) and version >= (3, 5, 0):
            return BuildFailure("ConvWinoRageRxSFused<2-3>: Failed to load kernel source "
                                "Conv_Winograd_Rage_v4_*_fp16_fp32acc_f2x3_stride1.s (not in Debian's build)")
        if x.dtype != FLOAT or w.dtype != FLOAT:
            return "fused convolutions are fp32 only in these builds"
        if arch in ("gfx90a", "gfx908") and w.dims[2:] == (1, 1):
            return BuildFailure("ConvBiasActivAsm1x1U: Failed to load kernel source "
                                "conv1x1u_bias_activ.s (not in Debian's build)")
        return None
    if kinds in (["bn_inf", "act_fwd"], ["bn_fwd", "act_fwd"], ["bn_bwd", "act_bwd"]):
        if x.dtype not in (FLOAT, HALF):
            return "fused batchnorm + activation is fp32/fp16 only"
        if len(x.dims) != 4 or not x.is_nchw_packed:
            return "fused batchnorm + activation needs 4-D packed NCHW"
        return None
    return f"no fused solver for the op sequence {kinds}"


class FusionApi(DeviceBase):
    """Mixin: the fusion plan entry points."""

    fusion_applicable: Any  # Callable[[FusionPlan, list[FusionOp], version], str | None]
    #: miopenFusionPlanGetWorkSpaceSize's answer for every plan.
    fusion_workspace_size: int = 0

    def __init__(self) -> None:
        super().__init__()
        #: Reasons miopenCompileFusionPlan gave for returning UnsupportedOp, in order.
        self.fusion_rejections: list[str] = []

    def _plan(self, handle: object) -> FusionPlan:
        return self.handles.get("fusion_plan", handle, "fusePlanDesc", FusionPlan)

    def _op(self, handle: object, kind: str | tuple[str, ...] | None = None) -> FusionOp:
        op = self.handles.get("fusion_op", handle, "op", FusionOp)
        if kind is not None:
            kinds = (kind,) if isinstance(kind, str) else kind
            # the library's dynamic_cast fails: std::bad_cast -> miopenStatusUnknownError
            require(op.kind in kinds, f"op is a {op.kind} op, expected {kinds}", UNKNOWN_ERROR)
        return op

    def _args(self, handle: object) -> dict[int, dict[str, Any]]:
        return self.handles.get("op_args", handle, "args", dict)

    # ------------------------------------------------------------------ plans and ops
    @api("miopenCreateFusionPlan")
    def _create_plan(self, a: Args) -> None:
        x = self.set_tensor_desc(a.inputDesc, "inputDesc")
        plan = FusionPlan(TensorDesc(x.dtype, x.dims, x.strides), direction=a.fuseDirection,
                          arch=self.gcn_arch_name)
        require(addr(a.fusePlanDesc), "fusePlanDesc: Dereferencing nullptr")
        write_out(a.fusePlanDesc, c_size_t, self.handles.new("fusion_plan", plan), "fusePlanDesc")

    @api("miopenDestroyFusionPlan")
    def _destroy_plan(self, a: Args) -> None:
        plan = self.handles.destroy("fusion_plan", a.fusePlanDesc, "fusePlanDesc")
        for op in plan.ops:  # destroying the plan destroys its ops
            self.handles.destroy("fusion_op", op, "op")

    def _add(self, a: Args, out_name: str, op: FusionOp) -> None:
        plan = self._plan(a.fusePlanDesc)
        require(not plan.compiled_on, "ops cannot be added to a compiled plan")
        op.plan = addr(a.fusePlanDesc)
        require(addr(getattr(a, out_name)), f"{out_name}: Dereferencing nullptr")
        handle = self.handles.new("fusion_op", op)
        plan.ops.append(handle)
        write_out(getattr(a, out_name), c_size_t, handle, out_name)

    @api("miopenCreateOpConvForward")
    def _op_conv(self, a: Args) -> None:
        w = self.set_tensor_desc(a.wDesc, "wDesc")
        conv = self.conv_desc(a.convDesc, "convDesc").copy()
        self._add(a, "convOp", FusionOp(0, "conv", conv=conv, w=TensorDesc(w.dtype, w.dims, w.strides)))

    @api("miopenCreateOpBiasForward")
    def _op_bias(self, a: Args) -> None:
        b = self.set_tensor_desc(a.bDesc, "bDesc")
        self._add(a, "biasOp", FusionOp(0, "bias", desc=TensorDesc(b.dtype, b.dims, b.strides)))

    @api("miopenCreateOpActivationForward")
    def _op_act_fwd(self, a: Args) -> None:
        self._add(a, "activFwdOp", FusionOp(0, "act_fwd", mode=a.mode))

    @api("miopenCreateOpActivationBackward")
    def _op_act_bwd(self, a: Args) -> None:
        self._add(a, "activBwdOp", FusionOp(0, "act_bwd", mode=a.mode))

    @api("miopenCreateOpBatchNormInference")
    def _op_bn_inf(self, a: Args) -> None:
        d = self.set_tensor_desc(a.bnScaleBiasMeanVarDesc, "bnScaleBiasMeanVarDesc")
        self._add(a, "bnOp", FusionOp(0, "bn_inf", desc=TensorDesc(d.dtype, d.dims, d.strides), mode=a.bn_mode))

    @api("miopenCreateOpBatchNormForward")
    def _op_bn_fwd(self, a: Args) -> None:
        self._add(a, "bnFwdOp", FusionOp(0, "bn_fwd", mode=a.bn_mode, running=bool(a.runningMeanVariance)))

    @api("miopenCreateOpBatchNormBackward")
    def _op_bn_bwd(self, a: Args) -> None:
        self._add(a, "bnBwdOp", FusionOp(0, "bn_bwd", mode=a.bn_mode))

    @api("miopenFusionPlanGetOp")
    def _get_op(self, a: Args) -> None:
        plan = self._plan(a.fusePlanDesc)
        require(0 <= a.op_idx < len(plan.ops), f"op index {a.op_idx} out of range ({len(plan.ops)} ops)")
        write_out(a.op, c_size_t, plan.ops[a.op_idx], "op")

    @api("miopenFusionPlanGetWorkSpaceSize")
    def _plan_ws(self, a: Args) -> None:
        self.handle_state(a.handle)
        self._plan(a.fusePlanDesc)
        write_out(a.workSpaceSize, c_size_t, self.fusion_workspace_size, "workSpaceSize")

    @api("miopenFusionPlanConvolutionGetAlgo")
    def _plan_algos(self, a: Args) -> None:
        self._plan(a.fusePlanDesc)
        algos = [1, 3][: max(a.requestAlgoCount, 0)]  # always {Direct, Winograd}
        where = addr(a.returnedAlgos)
        require(where, "returnedAlgos: Dereferencing nullptr")
        out = (c_uint * max(len(algos), 1)).from_address(where)
        for i, algo in enumerate(algos):
            out[i] = algo
        write_out(a.returnedAlgoCount, c_int, len(algos), "returnedAlgoCount")

    @api("miopenFusionPlanConvolutionSetAlgo")
    def _plan_set_algo(self, a: Args) -> None:
        self._plan(a.fusePlanDesc).algo = a.algo

    def _output_of(self, plan: FusionPlan, ops: list[FusionOp]) -> TensorDesc:
        cur = plan.input
        for op in ops:
            if op.kind == "conv":
                assert op.conv is not None and op.w is not None
                out = TensorDesc()
                out.set(cur.dtype, conv_output_dims(op.conv, cur, op.w), None)
                cur = out
            elif op.kind == "bias":
                assert op.desc is not None
                want = (1, cur.dims[1], *((1,) * (len(cur.dims) - 2)))
                require(op.desc.dims == want, f"bias descriptor dims {op.desc.dims} != {want}")
        return cur

    @api("miopenCompileFusionPlan")
    def _compile_plan(self, a: Args) -> None:
        self.handle_state(a.handle)
        plan = self._plan(a.fusePlanDesc)
        ops = [self._op(h) for h in plan.ops]
        require(ops, "the fusion plan has no ops")
        if plan.direction != 0:
            raise Status(UNSUPPORTED_OP, "horizontal fusion is not implemented")
        plan.output = self._output_of(plan, ops)
        reason = self.fusion_applicable(plan, ops, self.version)
        if isinstance(reason, BuildFailure):
            self.fusion_rejections.append(reason)
            raise Status(UNKNOWN_ERROR, reason)
        if reason is not None:
            self.fusion_rejections.append(reason)
            raise Status(UNSUPPORTED_OP, f"no fusion solver applies: {reason}")
        plan.compiled_on = addr(a.handle)

    # ------------------------------------------------------------------ operator args
    @api("miopenCreateOperatorArgs")
    def _create_args(self, a: Args) -> None:
        require(addr(a.args), "args: Dereferencing nullptr")
        write_out(a.args, c_size_t, self.handles.new("op_args", {}), "args")

    @api("miopenDestroyOperatorArgs")
    def _destroy_args(self, a: Args) -> None:
        self.handles.destroy("op_args", a.args, "args")

    def _set(self, a: Args, op_name: str, kind: str, **values: Any) -> None:
        self._op(getattr(a, op_name), kind)
        self._args(a.args)[addr(getattr(a, op_name))] = values

    @api("miopenSetOpArgsConvForward")
    def _args_conv(self, a: Args) -> None:
        alpha = read_scalar(a.alpha, c_float, "alpha")
        beta = read_scalar(a.beta, c_float, "beta")
        require(alpha == 1.0 and beta == 0.0, "conv op: Only alpha=1 and beta=0 is supported")
        self._set(a, "convOp", "conv", w=addr(a.w))

    @api("miopenSetOpArgsBiasForward")
    def _args_bias(self, a: Args) -> None:
        self._set(a, "biasOp", "bias", bias=addr(a.bias))

    @api("miopenSetOpArgsActivForward")
    def _args_act_fwd(self, a: Args) -> None:
        self._set(a, "activFwdOp", "act_fwd", alpha=a.activAlpha, beta=a.activBeta, gamma=a.activGamma)

    @api("miopenSetOpArgsActivBackward")
    def _args_act_bwd(self, a: Args) -> None:
        self._set(a, "activBwdOp", "act_bwd", y=addr(a.y), alpha=a.activAlpha, beta=a.activBeta,
                  gamma=a.activGamma)

    @api("miopenSetOpArgsBatchNormInference")
    def _args_bn_inf(self, a: Args) -> None:
        self._set(a, "bnOp", "bn_inf", scale=addr(a.bnScale), bias=addr(a.bnBias),
                  mean=addr(a.estimatedMean), var=addr(a.estimatedVariance), eps=a.epsilon)

    @api("miopenSetOpArgsBatchNormForward")
    def _args_bn_fwd(self, a: Args) -> None:
        op = self._op(a.bnOp, "bn_fwd")
        if op.running:
            require(addr(a.runningMean) and addr(a.runningVariance),
                    "runningMeanVariance was requested but a running pointer is NULL")
        self._set(a, "bnOp", "bn_fwd", scale=addr(a.bnScale), bias=addr(a.bnBias),
                  save_mean=addr(a.savedMean), save_inv=addr(a.savedInvVariance),
                  run_mean=addr(a.runningMean), run_var=addr(a.runningVariance),
                  factor=a.expAvgFactor, eps=a.epsilon)

    @api("miopenSetOpArgsBatchNormBackward")
    def _args_bn_bwd(self, a: Args) -> None:
        self._set(a, "bnOp", "bn_bwd", x=addr(a.x), scale=addr(a.bnScale), bias=addr(a.bnBias),
                  dscale=addr(a.resultBnScaleDiff), dbias=addr(a.resultBnBiasDiff),
                  mean=addr(a.savedMean), inv=addr(a.savedInvVariance))

    # ------------------------------------------------------------------ execute
    @api("miopenExecuteFusionPlan")
    def _execute_plan(self, a: Args) -> None:
        self._run_plan(a)

    @api("miopenExecuteFusionPlan_v2")
    def _execute_v2(self, a: Args) -> None:
        require(addr(a.workspace) or a.workspaceSize == 0, "workspace is NULL but workspaceSize != 0")
        self.use_workspace(a.workspace, a.workspaceSize, self.fusion_workspace_size, "workspace")
        self._run_plan(a)

    def _run_plan(self, a: Args) -> None:
        self.handle_state(a.handle)
        plan = self._plan(a.fusePlanDesc)
        require(plan.compiled_on, "the fusion plan was not compiled")
        require(plan.compiled_on == addr(a.handle), "the fusion plan was compiled on another handle")
        x = self.set_tensor_desc(a.inputDesc, "inputDesc")
        y = self.set_tensor_desc(a.outputDesc, "outputDesc")
        require(x.same_as(plan.input), "inputDesc differs from the plan's input descriptor")
        assert plan.output is not None
        require(y.dims == plan.output.dims and y.dtype == plan.output.dtype,
                f"outputDesc {y.dims} differs from the plan's output {plan.output.dims}")
        ops = [self._op(h) for h in plan.ops]
        table = self._args(a.args)
        missing = [op.kind for h, op in zip(plan.ops, ops, strict=True) if h not in table]
        require(not missing, f"operator args were not set for ops {missing}")
        values = [table[h] for h in plan.ops]
        if [op.kind for op in ops] == ["bn_bwd", "act_bwd"]:
            self._run_bn_bwd(x, a.input, y, a.output, ops, values)
            return
        cur = self.read(x, a.input, "input")
        cur_desc = x
        for op, v in zip(ops, values, strict=True):
            cur, cur_desc = self._forward_op(op, v, cur, cur_desc, a.input)
        self.store(y, a.output, cur, "output")

    def _param_desc(self, x: TensorDesc, op: FusionOp) -> TensorDesc:
        if op.desc is not None:
            return op.desc
        lens = (1, x.dims[1], *((1,) * (len(x.dims) - 2))) if op.mode == 1 else (1, *x.dims[1:])
        desc = TensorDesc()
        desc.set(FLOAT, lens, None)  # fused NA kernels take fp32 parameters (FPMIX builds)
        return desc

    def _forward_op(
        self, op: FusionOp, v: dict[str, Any], cur: np.ndarray, cur_desc: TensorDesc, input_ptr: object
    ) -> tuple[np.ndarray, TensorDesc]:
        if op.kind == "conv":
            assert op.conv is not None and op.w is not None
            dims = conv_output_dims(op.conv, cur_desc, op.w)
            out_desc = TensorDesc()  # the conv output keeps the input's layout (NCHW or NHWC)
            order = (0, *range(2, len(dims)), 1) if layout_kind(cur_desc) == "cl" else None
            out_desc.set(cur_desc.dtype, dims, None if order is None else strides_for(dims, order))
            check_conv(ConvProblem("fwd", op.conv, cur_desc, op.w, out_desc))
            w = self.read(op.w, v["w"], "conv weights")
            out = kernels.conv_fprop(cur, w, list(op.conv.pads), list(op.conv.pads), list(op.conv.strides),
                                     list(op.conv.dilations), op.conv.group_count)
            return out, out_desc
        if op.kind == "bias":
            assert op.desc is not None
            return cur + self.read(op.desc, v["bias"], "bias"), cur_desc
        if op.kind == "act_fwd":
            return activation_forward(op.mode, cur, v["alpha"], v["beta"], v["gamma"]), cur_desc
        p = self._param_desc(cur_desc, op)
        spatial = op.mode == 1
        if op.kind == "bn_inf":
            scale, bias = self.read(p, v["scale"], "scale"), self.read(p, v["bias"], "bias")
            mean, var = self.read(p, v["mean"], "mean"), self.read(p, v["var"], "var")
            return bn_inference(cur, scale, bias, mean, var, v["eps"], spatial), cur_desc
        if op.kind == "bn_fwd":
            scale, bias = self.read(p, v["scale"], "scale"), self.read(p, v["bias"], "bias")
            # the fused kernel always writes the saved stats and read-modify-writes the running ones
            for k in ("save_mean", "save_inv", "run_mean", "run_var"):
                require(v[k], f"fused BN forward dereferences {k}: it must not be NULL")
            out, mean, inv, unbiased = bn_train(cur, scale, bias, v["eps"], spatial)
            rm, rv = self.read(p, v["run_mean"], "run_mean"), self.read(p, v["run_var"], "run_var")
            new_rm, new_rv = kernels.bn_running_update(rm, rv, mean, unbiased, v["factor"])
            for k, val in (("save_mean", mean), ("save_inv", inv), ("run_mean", new_rm), ("run_var", new_rv)):
                self.store(p, v[k], val.reshape(p.dims), k)
            return out, cur_desc
        raise Status(BAD_PARM, f"a {op.kind} op cannot appear in a forward plan")

    def _run_bn_bwd(
        self, dy_desc: TensorDesc, dy_ptr: object, dx_desc: TensorDesc, dx_ptr: object,
        ops: list[FusionOp], values: list[dict[str, Any]],
    ) -> None:
        bn, act = ops
        v, av = values
        p = self._param_desc(dy_desc, bn)
        spatial = bn.mode == 1
        xv = self.read(dy_desc, v["x"], "x")
        require(av["y"], "fused activation backward dereferences y: it must not be NULL")
        self.view(dy_desc, av["y"], "y")  # the kernel reads it: it must be a valid buffer of x's shape
        scale, bias = self.read(p, v["scale"], "scale"), self.read(p, v["bias"], "bias")
        mean, inv = self.read(p, v["mean"], "savedMean"), self.read(p, v["inv"], "savedInvVariance")
        pre = bn_apply_inv(xv, scale, bias, mean, inv, spatial)
        post = activation_forward(act.mode, pre, av["alpha"], av["beta"], av["gamma"])
        dyv = activation_backward(act.mode, self.read(dy_desc, dy_ptr, "dy"), pre, post,
                                  av["alpha"], av["beta"], av["gamma"])
        dx, dscale, dbias = bn_backward(dyv, xv, scale, mean, inv, spatial)
        self.store(dx_desc, dx_ptr, dx, "dx")
        self.store(p, v["dscale"], dscale.reshape(p.dims), "dscale")
        self.store(p, v["dbias"], dbias.reshape(p.dims), "dbias")


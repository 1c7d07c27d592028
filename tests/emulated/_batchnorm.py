"""Batch normalization: forward inference / training / backward (V1, _V2, 3.5 *Activation).

MIOpen's rules enforced: alpha/beta read as float 1/0; x fully packed, rank 3..5; x and y (dx
and dy) same dtype and dims; parameter descriptors of x's rank with the mode's shape
(1,C,1,1[,1] spatial, 1,C,H,W[,D] per-activation) and a dtype the kernels exist for (fp32, or
x's fp16; bf16 x needs fp32 parameters); scale/bias/data pointers non-NULL; the optional
saved/running pairs are used only when both pointers are non-NULL.
"""

from __future__ import annotations

from ctypes import c_float

from hipdnn.engines.reference import kernels

from ._base import DeviceBase
from ._compute import (
    activation_backward,
    activation_forward,
    bn_apply_inv,
    bn_backward,
    bn_batch_stats,
    bn_inference,
    bn_train,
)
from ._core import BAD_PARM, NOT_IMPLEMENTED, Args, Status, addr, api, read_scalar, require
from ._objects import BFLOAT16, FLOAT, HALF, ActivationDesc, TensorDesc

__all__ = ["BN_ACTIVATION_MODES", "BatchNormApi"]

#: Activations the 3.5 miopenBatchNorm*Activation kernels implement (PASTHRU, RELU, CLIPPEDRELU, CLAMP).
BN_ACTIVATION_MODES = (0, 3, 7, 10)


class _Params:
    """The four parameter descriptors of one BN call (V1 passes the same one four times)."""

    def __init__(self, scale: TensorDesc, bias: TensorDesc, mean: TensorDesc, var: TensorDesc) -> None:
        self.scale, self.bias, self.mean, self.var = scale, bias, mean, var


class BatchNormApi(DeviceBase):
    """Mixin: the batchnorm entry points."""

    # ------------------------------------------------------------------ checks
    def _bn_check(self, mode: int, x: TensorDesc, y: TensorDesc, p: _Params, what: str) -> bool:
        require(mode in (0, 1), f"{what}: bn_mode {mode} is not a miopenBatchNormMode_t")
        require(3 <= len(x.dims) <= 5, f"{what}: x must have 3 to 5 dims, has {len(x.dims)}")
        require(x.is_packed, f"{what}: Only fully packed tensors supported.")
        require(y.dims == x.dims and y.dtype == x.dtype, f"{what}: x and y descriptors differ")
        spatial = mode == 1
        want = (1, x.dims[1], *((1,) * (len(x.dims) - 2))) if spatial else (1, *x.dims[1:])
        allowed = {FLOAT: (FLOAT,), HALF: (HALF, FLOAT), BFLOAT16: (FLOAT,)}.get(x.dtype)
        require(allowed is not None, f"{what}: x data type {x.dtype} has no batchnorm kernels")
        assert allowed is not None
        for name in ("scale", "bias", "mean", "var"):
            d: TensorDesc = getattr(p, name)
            require(d.dims == want, f"{what}: {name} descriptor dims {d.dims} != {want}")
            require(d.dtype in allowed, f"{what}: {name} data type {d.dtype} not allowed with x type "
                                        f"{x.dtype} (allowed {allowed})")
        return spatial

    def _alpha_beta(self, alpha: object, beta: object, what: str, label: str = "alpha/beta") -> None:
        a = read_scalar(alpha, c_float, f"{what} {label} alpha")
        b = read_scalar(beta, c_float, f"{what} {label} beta")
        if a != 1.0 or b != 0.0:
            raise Status(BAD_PARM, f"{what}: Only {label}=1/0 is supported (got {a}, {b})")

    def _v1(self, a: Args, name: str) -> _Params:
        d = self.set_tensor_desc(getattr(a, name), name)
        return _Params(d, d, d, d)

    def _v2(self, a: Args, *names: str) -> _Params:
        s, b, m, v = (self.set_tensor_desc(getattr(a, n), n) for n in names)
        return _Params(s, b, m, v)

    def _bn_activation(self, a: Args, spatial: bool) -> ActivationDesc | None:
        act = self.activation_desc(a.activDesc, "activDesc")
        if not spatial:
            return None  # the per-activation solvers ignore the activation (upstream behaviour)
        if act.mode not in BN_ACTIVATION_MODES:
            raise Status(NOT_IMPLEMENTED, f"batchnorm with activation mode {act.mode}: the kernels "
                                          f"implement only modes {BN_ACTIVATION_MODES}")
        return act

    def _forward_checks(
        self, a: Args, p: _Params, what: str, activation: bool
    ) -> tuple[TensorDesc, TensorDesc, bool, ActivationDesc | None]:
        """The checks training and inference share: (x, y, spatial, activation or None)."""
        self.handle_state(a.handle)
        self._alpha_beta(a.alpha, a.beta, what)
        x = self.set_tensor_desc(a.xDesc, "xDesc")
        y = self.set_tensor_desc(a.yDesc, "yDesc")
        spatial = self._bn_check(a.bn_mode, x, y, p, what)
        act = self._bn_activation(a, spatial) if activation else None
        require(addr(a.bnScale) and addr(a.bnBias), f"{what}: bnScale/bnBias must not be NULL")
        return x, y, spatial, act

    # ------------------------------------------------------------------ forward training
    def _train(self, a: Args, p: _Params, what: str, activation: bool = False) -> None:
        x, y, spatial, act = self._forward_checks(a, p, what, activation)
        scale = self.read(p.scale, a.bnScale, "bnScale")
        bias = self.read(p.bias, a.bnBias, "bnBias")
        out, mean, inv, unbiased = bn_train(self.read(x, a.x, "x"), scale, bias, a.epsilon, spatial)
        if act is not None:
            out = activation_forward(act.mode or 0, out, act.alpha, act.beta, act.gamma)
        save = addr(a.resultSaveMean) and addr(a.resultSaveInvVariance)
        running = addr(a.resultRunningMean) and addr(a.resultRunningVariance)
        new_rm = new_rv = None
        if running:
            rm = self.read(p.mean, a.resultRunningMean, "resultRunningMean")
            rv = self.read(p.var, a.resultRunningVariance, "resultRunningVariance")
            new_rm, new_rv = kernels.bn_running_update(rm, rv, mean, unbiased, a.expAvgFactor)
        self.store(y, a.y, out, "y")
        if save:
            self.store(p.mean, a.resultSaveMean, mean.reshape(p.mean.dims), "resultSaveMean")
            self.store(p.var, a.resultSaveInvVariance, inv.reshape(p.var.dims), "resultSaveInvVariance")
        if new_rm is not None and new_rv is not None:
            self.store(p.mean, a.resultRunningMean, new_rm.reshape(p.mean.dims), "resultRunningMean")
            self.store(p.var, a.resultRunningVariance, new_rv.reshape(p.var.dims), "resultRunningVariance")

    @api("miopenBatchNormalizationForwardTraining")
    def _train_v1(self, a: Args) -> None:
        self._train(a, self._v1(a, "bnScaleBiasMeanVarDesc"), "BatchNormalizationForwardTraining")

    @api("miopenBatchNormalizationForwardTraining_V2")
    def _train_v2(self, a: Args) -> None:
        p = self._v2(a, "scaleDesc", "biasVarDesc", "savedMeanDesc", "savedVarDesc")
        self._train(a, p, "BatchNormalizationForwardTraining_V2")

    @api("miopenBatchNormForwardTrainingActivation")
    def _train_act(self, a: Args) -> None:
        p = self._v2(a, "scaleDesc", "biasVarDesc", "savedMeanDesc", "savedVarDesc")
        self._train(a, p, "BatchNormForwardTrainingActivation", activation=True)

    # ------------------------------------------------------------------ forward inference
    def _infer(self, a: Args, p: _Params, what: str, activation: bool = False) -> None:
        x, y, spatial, act = self._forward_checks(a, p, what, activation)
        if self.version < (3, 5, 0) and not x.is_nchw_packed:  # type: ignore[attr-defined]
            # the real 3.4.0: "BnFwdInference: Not applicable", "No solver found" (stubgpu lane)
            raise Status(NOT_IMPLEMENTED, f"{what}: no solver found (3.4's BnFwdInference is NCHW only)")
        xv = self.read(x, a.x, "x")
        scale = self.read(p.scale, a.bnScale, "bnScale")
        bias = self.read(p.bias, a.bnBias, "bnBias")
        if addr(a.estimatedMean) and addr(a.estimatedVariance):
            mean = self.read(p.mean, a.estimatedMean, "estimatedMean")
            var = self.read(p.var, a.estimatedVariance, "estimatedVariance")
            out = bn_inference(xv, scale, bias, mean, var, a.epsilon, spatial)
        else:  # documented: NULL estimates -> batch statistics
            out = bn_train(xv, scale, bias, a.epsilon, spatial)[0]
        if act is not None:
            out = activation_forward(act.mode or 0, out, act.alpha, act.beta, act.gamma)
        self.store(y, a.y, out, "y")

    @api("miopenBatchNormalizationForwardInference")
    def _infer_v1(self, a: Args) -> None:
        self._infer(a, self._v1(a, "bnScaleBiasMeanVarDesc"), "BatchNormalizationForwardInference")

    @api("miopenBatchNormalizationForwardInference_V2")
    def _infer_v2(self, a: Args) -> None:
        p = self._v2(a, "scaleDesc", "biasDesc", "estMeanDesc", "estVarianceDesc")
        self._infer(a, p, "BatchNormalizationForwardInference_V2")

    @api("miopenBatchNormForwardInferenceActivation")
    def _infer_act(self, a: Args) -> None:
        p = self._v2(a, "scaleDesc", "biasDesc", "estMeanDesc", "estVarianceDesc")
        self._infer(a, p, "BatchNormForwardInferenceActivation", activation=True)

    # ------------------------------------------------------------------ backward
    def _backward(self, a: Args, p: _Params, what: str, activation: bool = False) -> None:
        self.handle_state(a.handle)
        self._alpha_beta(a.alphaDataDiff, a.betaDataDiff, what, "alphaDataDiff/betaDataDiff")
        self._alpha_beta(a.alphaParamDiff, a.betaParamDiff, what, "alphaParamDiff/betaParamDiff")
        x = self.set_tensor_desc(a.xDesc, "xDesc")
        dy = self.set_tensor_desc(a.dyDesc, "dyDesc")
        dx = self.set_tensor_desc(a.dxDesc, "dxDesc")
        spatial = self._bn_check(a.bn_mode, x, dy, p, what)
        self._bn_check(a.bn_mode, x, dx, p, what)
        if spatial and x.dtype == HALF and p.scale.dtype == HALF:
            # upstream: WORKAROUND_ISSUE_1549_FP16_BUILD_ERROR disables this kernel combination
            raise Status(NOT_IMPLEMENTED, f"{what}: spatial backward of fp16 x with fp16 parameters")
        act = self._bn_activation(a, spatial) if activation else None
        require(addr(a.bnScale), f"{what}: bnScale must not be NULL")
        require(addr(a.resultBnScaleDiff) and addr(a.resultBnBiasDiff),
                f"{what}: resultBnScaleDiff/resultBnBiasDiff must not be NULL")
        xv = self.read(x, a.x, "x")
        dyv = self.read(dy, a.dy, "dy")
        scale = self.read(p.scale, a.bnScale, "bnScale")
        if addr(a.savedMean) and addr(a.savedInvVariance):
            mean = self.read(p.mean, a.savedMean, "savedMean")
            inv = self.read(p.var, a.savedInvVariance, "savedInvVariance")
        else:  # documented: without both saved values the statistics are recomputed from x
            mean, inv = bn_batch_stats(xv, a.epsilon, spatial)
        if act is not None:
            require(addr(a.bnBias), f"{what}: bnBias must not be NULL")
            bias = self.read(p.bias, a.bnBias, "bnBias")
            pre = bn_apply_inv(xv, scale, bias, mean, inv, spatial)  # the recomputed BN output
            post = activation_forward(act.mode or 0, pre, act.alpha, act.beta, act.gamma)
            dyv = activation_backward(act.mode or 0, dyv, pre, post, act.alpha, act.beta, act.gamma)
        dxv, dscale, dbias = bn_backward(dyv, xv, scale, mean, inv, spatial)
        self.store(dx, a.dx, dxv, "dx")
        self.store(p.scale, a.resultBnScaleDiff, dscale.reshape(p.scale.dims), "resultBnScaleDiff")
        self.store(p.bias, a.resultBnBiasDiff, dbias.reshape(p.bias.dims), "resultBnBiasDiff")

    @api("miopenBatchNormalizationBackward")
    def _backward_v1(self, a: Args) -> None:
        self._backward(a, self._v1(a, "bnScaleBiasDiffDesc"), "BatchNormalizationBackward")

    @api("miopenBatchNormalizationBackward_V2")
    def _backward_v2(self, a: Args) -> None:
        p = self._v2(a, "scaleDesc", "biasDesc", "savedMeanDesc", "savedVarDesc")
        self._backward(a, p, "BatchNormalizationBackward_V2")

    @api("miopenBatchNormBackwardActivation")
    def _backward_act(self, a: Args) -> None:
        p = self._v2(a, "scaleDesc", "biasDesc", "savedMeanDesc", "savedVarianceDesc")
        self._backward(a, p, "BatchNormBackwardActivation", activation=True)

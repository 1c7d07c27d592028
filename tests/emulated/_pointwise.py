"""Element-wise entry points: activation forward/backward, OpTensor, conv forward bias, transforms.

Where beta is 0 the destination is never read (as MIOpen's kernels do), so garbage in a fresh
buffer cannot leak into a result.
"""

from __future__ import annotations

from ctypes import c_float

import numpy as np

from ._base import DeviceBase
from ._compute import activation_backward, activation_forward
from ._core import (
    BAD_PARM,
    NOT_IMPLEMENTED,
    UNKNOWN_ERROR,
    Args,
    Status,
    addr,
    api,
    read_scalar,
    require,
)
from ._objects import FLOAT, HALF, TensorDesc

__all__ = ["PointwiseApi"]

_OPS = {
    0: np.add,
    1: np.multiply,
    2: np.minimum,
    3: np.maximum,
}


class PointwiseApi(DeviceBase):
    """Mixin: activation, tensor arithmetic and bias."""

    #: Data types ActivationForward/Backward accept: fp32 and fp16, like upstream's activation
    #: solvers (ActivFwdSolver0/1, ActivBwdSolver0/1), whose kernel source MIOpenNeuron.cl (as
    #: embedded in the real 7.2.4 libMIOpen.so) defines _FLOAT for MIOPEN_USE_FP16 / FP32 /
    #: FPMIX / BFPMIX only, with no bf16 path. Add BFLOAT16 to emulate a build that has one.
    activation_dtypes: tuple[int, ...] = (FLOAT, HALF)

    def _check_act_layouts(self, descs: list[TensorDesc], what: str) -> None:
        # the packed kernel walks memory linearly: packed tensors in different layouts get mixed up
        # (a size-1 axis's stride addresses nothing: only the other axes' strides must agree)
        if all(d.is_packed for d in descs) and len(
                {tuple(s for n, s in zip(d.dims, d.strides, strict=True) if n != 1)
                  for d in descs}) > 1:
            raise Status(BAD_PARM, f"{what}: packed tensors in different layouts (strides "
                                   f"{sorted({d.strides for d in descs})}) would be mixed up by the packed kernel")

    def _check_act_rank(self, descs: list[TensorDesc], what: str) -> None:
        # only the packed kernel handles 5-D; the strided one stops at 4 dims (NotImplemented)
        if not all(d.is_packed for d in descs) and any(len(d.dims) > 4 for d in descs):
            raise Status(NOT_IMPLEMENTED, f"{what}: activation does not support non-packed tensors of rank > 4")

    def _check_act_dtype(self, desc: TensorDesc, what: str) -> None:
        if desc.dtype not in self.activation_dtypes:
            raise Status(NOT_IMPLEMENTED, f"{what}: activation on data type {desc.dtype} is not supported "
                                          f"(configured: {self.activation_dtypes})")

    @api("miopenActivationForward")
    def _act_fwd(self, a: Args) -> None:
        self.handle_state(a.handle)
        act = self.activation_desc(a.activDesc, "activDesc")
        self.check_alpha_beta(a.alpha, a.beta, "ActivationForward")
        x = self.set_tensor_desc(a.xDesc, "xDesc")
        y = self.set_tensor_desc(a.yDesc, "yDesc")
        require(x.dims == y.dims and x.dtype == y.dtype, "ActivationForward: x and y descriptors differ")
        self._check_act_dtype(x, "ActivationForward")
        self._check_act_layouts([x, y], "ActivationForward")
        self._check_act_rank([x, y], "ActivationForward")
        out = activation_forward(act.mode or 0, self.read(x, a.x, "x"), act.alpha, act.beta, act.gamma)
        self.store(y, a.y, out, "y")

    @api("miopenActivationBackward")
    def _act_bwd(self, a: Args) -> None:
        self.handle_state(a.handle)
        act = self.activation_desc(a.activDesc, "activDesc")
        self.check_alpha_beta(a.alpha, a.beta, "ActivationBackward")
        descs = [self.set_tensor_desc(getattr(a, n), n) for n in ("yDesc", "dyDesc", "xDesc", "dxDesc")]
        require(all(d.dims == descs[0].dims and d.dtype == descs[0].dtype for d in descs),
                "ActivationBackward: y, dy, x and dx descriptors must agree")
        self._check_act_dtype(descs[0], "ActivationBackward")
        self._check_act_layouts(descs, "ActivationBackward")
        self._check_act_rank(descs, "ActivationBackward")
        y, dy, x = (self.read(d, getattr(a, n), n) for d, n in zip(descs, ("y", "dy", "x"), strict=False))
        out = activation_backward(act.mode or 0, dy, x, y, act.alpha, act.beta, act.gamma)
        self.store(descs[3], a.dx, out, "dx")

    @api("miopenOpTensor")
    def _op_tensor(self, a: Args) -> None:
        self.handle_state(a.handle)
        require(a.tensorOp in _OPS, f"OpTensor: unknown miopenTensorOp_t {a.tensorOp}")
        ad, bd, cd = (self.set_tensor_desc(getattr(a, n), n) for n in ("aDesc", "bDesc", "cDesc"))
        require(ad.dims == cd.dims, f"OpTensor: A dims {ad.dims} != C dims {cd.dims}")
        require(len(bd.dims) == len(ad.dims) and all(b in (1, n) for b, n in zip(bd.dims, ad.dims, strict=True)),
                f"OpTensor: B dims {bd.dims} do not broadcast to {ad.dims}")
        # the real 3.5.1 throws without a status: miopenStatusUnknownError (tests/stubgpu)
        require(ad.dtype == cd.dtype, "OpTensor: A and C must have the same data type")
        require(bd.dtype == cd.dtype, "OpTensor: Datatypes for B and C tensors do not match !",
                UNKNOWN_ERROR)
        for d, n in ((ad, "A"), (cd, "C")):
            require(not _fwd_bias_misread(d, bd),
                    f"OpTensor: {n} is a dense 4-D tensor with strides {d.strides} (not NCHW-packed) "
                    f"and B spans only C: real MIOpen picks its OpTensorFwdBias kernel, which assumes "
                    f"each channel's H*W elements are contiguous, and adds the bias to the wrong "
                    f"elements (AMD's kernel on the emulated gfx1100, lane amdkernels)")
        alpha1 = read_scalar(a.alpha1, c_float, "alpha1")
        alpha2 = read_scalar(a.alpha2, c_float, "alpha2")
        beta = read_scalar(a.beta, c_float, "beta")
        result = _OPS[a.tensorOp](np.float32(alpha1) * self.read(ad, a.A, "A"),
                                  np.float32(alpha2) * self.read(bd, a.B, "B"))
        if beta != 0.0:
            result = result + np.float32(beta) * self.read(cd, a.C, "C")
        self.store(cd, a.C, result, "C")

    @api("miopenConvolutionForwardBias")
    def _fwd_bias(self, a: Args) -> None:
        self.handle_state(a.handle)
        self.check_alpha_beta(a.alpha, a.beta, "ConvolutionForwardBias")
        bd = self.set_tensor_desc(a.bDesc, "bDesc")
        yd = self.set_tensor_desc(a.yDesc, "yDesc")
        want = (1, yd.dims[1], *((1,) * (len(yd.dims) - 2)))
        require(bd.dims == want, f"ConvolutionForwardBias: bias dims {bd.dims} != {want}")
        require(bd.dtype == yd.dtype, "ConvolutionForwardBias: bias and y data types differ")
        result = self.read(yd, a.y, "y") + self.read(bd, a.b, "b")  # y += bias (in place)
        self.store(yd, a.y, result, "y")

    @api("miopenConvolutionBackwardBias")
    def _bwd_bias(self, a: Args) -> None:
        self.handle_state(a.handle)
        self.check_alpha_beta(a.alpha, a.beta, "ConvolutionBackwardBias")
        dyd = self.set_tensor_desc(a.dyDesc, "dyDesc")
        dbd = self.set_tensor_desc(a.dbDesc, "dbDesc")
        want = (1, dyd.dims[1], *((1,) * (len(dyd.dims) - 2)))
        require(dbd.dims == want, f"ConvolutionBackwardBias: db dims {dbd.dims} != {want}")
        axes = (0, *range(2, len(dyd.dims)))
        self.store(dbd, a.db, self.read(dyd, a.dy, "dy").sum(axis=axes, keepdims=True), "db")

    @api("miopenTransformTensor")
    def _transform(self, a: Args) -> None:
        self.handle_state(a.handle)
        xd = self.set_tensor_desc(a.xDesc, "xDesc")
        yd = self.set_tensor_desc(a.yDesc, "yDesc")
        require(xd.dims == yd.dims, f"TransformTensor: x dims {xd.dims} != y dims {yd.dims}")
        alpha = read_scalar(a.alpha, c_float, "alpha")
        beta = read_scalar(a.beta, c_float, "beta")
        result = np.float32(alpha) * self.read(xd, a.x, "x")
        if beta != 0.0:
            result = result + np.float32(beta) * self.read(yd, a.y, "y")
        self.store(yd, a.y, result, "y")

    @api("miopenSetTensor")
    def _set_tensor(self, a: Args) -> None:
        self.handle_state(a.handle)
        yd = self.set_tensor_desc(a.yDesc, "yDesc")
        value = read_scalar(a.alpha, c_float, "alpha")
        self.store(yd, a.y, np.full(yd.dims, value, np.float32), "y")

    @api("miopenScaleTensor")
    def _scale_tensor(self, a: Args) -> None:
        self.handle_state(a.handle)
        yd = self.set_tensor_desc(a.yDesc, "yDesc")
        value = read_scalar(a.alpha, c_float, "alpha")
        self.store(yd, a.y, np.float32(value) * self.read(yd, a.y, "y"), "y")

    @api("miopenConvolutionBiasActivationForward")
    def _cba(self, a: Args) -> None:
        from ._conv import ConvProblem, check_conv, run_conv

        self.handle_state(a.handle)
        act = self.activation_desc(a.activationDesc, "activationDesc")
        if act.mode != 3:
            raise Status(BAD_PARM, "only Activation Mode == miopenActivationRELU is supported")
        conv = self.conv_desc(a.convDesc, "convDesc").copy()
        x, w, y = (self.set_tensor_desc(getattr(a, n), n) for n in ("xDesc", "wDesc", "yDesc"))
        problem = ConvProblem("fwd", conv, x, w, y)
        check_conv(problem)
        alpha1 = read_scalar(a.alpha1, c_float, "alpha1")
        alpha2 = read_scalar(a.alpha2, c_float, "alpha2")
        run_conv(self, problem, a.x, a.w, a.y)
        out = np.float32(alpha1) * self.read(y, a.y, "y")
        if alpha2 != 0.0 and addr(a.z):
            out = out + np.float32(alpha2) * self.read(self.set_tensor_desc(a.zDesc, "zDesc"), a.z, "z")
        out = out + self.read(self.set_tensor_desc(a.biasDesc, "biasDesc"), a.bias, "bias")
        self.store(y, a.y, activation_forward(3, out, 0.0, 0.0, 0.0), "y")


def _fwd_bias_misread(d: TensorDesc, b: TensorDesc) -> bool:
    """MIOpen's OpTensorFwdBias case with a tensor it misreads: 4-D, B broadcast over all but C,
    the tensor dense (MIOpen's IsPacked) but not in NCHW order."""
    if len(d.dims) != 4 or b.dims[1] == 1 or any(x != 1 for i, x in enumerate(b.dims) if i != 1):
        return False
    n, c, h, w = d.dims
    span = 1 + sum((x - 1) * s for x, s in zip(d.dims, d.strides, strict=True))
    nchw = (c * h * w, h * w, w, 1)
    dense = span == n * c * h * w
    return dense and any(x > 1 and s != e for x, s, e in zip(d.dims, d.strides, nchw, strict=True))

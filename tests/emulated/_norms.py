"""Layer norm and T5 layer norm (RMS norm), forward and backward, and their workspace queries.

Our reading of MIOpenLayerNorm.cpp as embedded in the real 3.4.0 / 3.5.1 libraries: every
tensor packed (IsAllPacked), x and y (dy and dx) of one type and dims; the kernels index memory
contiguously (row * inner_size + i, the descriptors' strides unused) and read weight, bias, mean
and rstd as arrays of x's data type (INPUT_TYPE / OUTPUT_TYPE), which the emulation demands of
their descriptors. Statistics in FLOAT_ACCUM (float32): mean = sum(x)/n, var = sum(x^2)/n -
mean^2, rstd = rsqrt(var + eps); mean/rstd written only where the pointer is non-NULL; the weight
and bias read unless the mode is MIOPEN_ELEMENTWISE_AFFINE (T5: MIOPEN_ELEMENTWISE_AFFINE_T5).
Layer norm normalizes from ``normalized_dim`` on, T5 the last axis. The backward calls' workspace
follows upstream's parallelism rule (LOCAL_SIZE 256 x compute units x 4 work items wanted).
"""

from __future__ import annotations

import math
from ctypes import c_size_t

import numpy as np

from ._base import DeviceBase
from ._core import Args, api, require, write_out
from ._objects import TensorDesc, strides_for

__all__ = ["NormApi"]

_LOCAL = 256
_AFFINE, _AFFINE_T5 = 0, 4
#: miopenNormMode_t values the layer norm calls accept (the fused-add modes are AddLayerNorm's).
_LAYER_MODES = (0, 1)
_T5_MODES = (4, 5)


class NormApi(DeviceBase):
    """Mixin: miopenLayerNorm*, miopenT5LayerNorm*."""

    #: multiProcessorCount of the emulated device (_runtime.py's properties)
    compute_units = 304

    def _row_major(self, desc: TensorDesc, ptr: object, what: str) -> np.ndarray:
        """The tensor as the kernel addresses it: ``desc``'s dims over contiguous memory."""
        d = TensorDesc()
        d.dtype, d.dims = desc.dtype, desc.dims
        d.strides = strides_for(desc.dims, tuple(range(len(desc.dims))))
        return self.view(d, ptr, what)

    def _packed(self, descs: dict[str, TensorDesc], what: str) -> None:
        for name, d in descs.items():
            require(d.is_packed, f"{what}: Unpacked tensors not supported ({name} {d.dims} {d.strides})")

    def _same_type(self, x: TensorDesc, descs: dict[str, TensorDesc], what: str) -> None:
        for name, d in descs.items():
            require(d.dtype == x.dtype, f"{what}: {name} has data type {d.dtype}, x {x.dtype}: "
                                        "the kernels read it as x's data type")

    def _split(self, x: TensorDesc, normalized_dim: int, what: str) -> tuple[int, int]:
        require(0 <= normalized_dim <= len(x.dims), f"{what}: normalized dim is greater than 0 "
                                                    "and less than or equal Tensor dimension length.")
        return (math.prod(x.dims[:normalized_dim]), math.prod(x.dims[normalized_dim:]))

    def _parallel_ws(self, outer: int, inner: int, itemsize: int, factor: int) -> int:
        want = _LOCAL * self.compute_units * 4
        if inner > want or inner * outer <= want:
            return 0
        p = 1
        while p * inner < want and p < math.sqrt(outer):
            p *= 2
        return factor * p * inner * itemsize

    @staticmethod
    def _stats(x: np.ndarray, eps: float, rms: bool) -> tuple[np.ndarray, np.ndarray]:
        n = x.shape[1]
        mean = x.sum(axis=1, dtype=np.float32) / np.float32(n)
        sq = (x * x).sum(axis=1, dtype=np.float32) / np.float32(n)
        var = sq if rms else sq - mean * mean
        return mean, (np.float32(1.0) / np.sqrt(var + np.float32(eps))).astype(np.float32)

    # ------------------------------------------------------------------ layer norm
    @api("miopenLayerNormForward")
    def _ln_fwd(self, a: Args) -> None:
        what = "LayerNormForward"
        self.handle_state(a.handle)
        require(a.mode in _LAYER_MODES, f"{what}: mode {a.mode} is not a layer norm mode")
        x, y = self.set_tensor_desc(a.xDesc, "xDesc"), self.set_tensor_desc(a.yDesc, "yDesc")
        w, b = self.set_tensor_desc(a.weightDesc, "weightDesc"), self.set_tensor_desc(a.biasDesc, "biasDesc")
        m, r = self.set_tensor_desc(a.meanDesc, "meanDesc"), self.set_tensor_desc(a.rstdDesc, "rstdDesc")
        require(x.dtype == y.dtype, f"{what}: Tensor types do not match.")
        require(x.dims == y.dims, f"{what}: Tensor dimension lengths do not match.")
        self._packed({"x": x, "weight": w, "bias": b, "y": y, "mean": m, "rstd": r}, what)
        self._same_type(x, {"weight": w, "bias": b, "mean": m, "rstd": r}, what)
        outer, inner = self._split(x, int(a.normalized_dim), what)
        xs = self._row_major(x, a.x, "x").astype(np.float32).reshape(outer, inner)
        mean, rstd = self._stats(xs, float(a.epsilon), rms=False)
        out = (xs - mean[:, None]) * rstd[:, None]
        if a.mode != _AFFINE:
            wv = self._row_major(w, a.weight, "weight").astype(np.float32).reshape(-1)[:inner]
            bv = self._row_major(b, a.bias, "bias").astype(np.float32).reshape(-1)[:inner]
            out = out * wv + bv
        ys = self._row_major(y, a.y, "y")
        ys[...] = out.reshape(ys.shape).astype(ys.dtype)
        for desc, ptr, v, name in ((m, a.mean, mean, "mean"), (r, a.rstd, rstd, "rstd")):
            if ptr:
                self._row_major(desc, ptr, name).reshape(-1)[:outer] = v.astype(desc.np_dtype)

    @api("miopenGetLayerNormBackwardWorkspaceSize")
    def _ln_bwd_ws(self, a: Args) -> None:
        self.handle_state(a.handle)
        dy = self.set_tensor_desc(a.dyDesc, "dyDesc")
        outer, inner = self._split(dy, int(a.normalized_dim), "LayerNormBackward")
        write_out(a.sizeInBytes, c_size_t,
                  self._parallel_ws(outer, inner, dy.np_dtype.itemsize, 2), "sizeInBytes")

    @api("miopenLayerNormBackward")
    def _ln_bwd(self, a: Args) -> None:
        what = "LayerNormBackward"
        self.handle_state(a.handle)
        require(a.mode in _LAYER_MODES, f"{what}: mode {a.mode} is not a layer norm mode")
        dy, x = self.set_tensor_desc(a.dyDesc, "dyDesc"), self.set_tensor_desc(a.xDesc, "xDesc")
        w = self.set_tensor_desc(a.weightDesc, "weightDesc")
        m, r = self.set_tensor_desc(a.meanDesc, "meanDesc"), self.set_tensor_desc(a.rstdDesc, "rstdDesc")
        dx = self.set_tensor_desc(a.dxDesc, "dxDesc")
        dw, db = self.set_tensor_desc(a.dwDesc, "dwDesc"), self.set_tensor_desc(a.dbDesc, "dbDesc")
        require(dy.dtype == dx.dtype, f"{what}: Tensor types do not match.")
        require(dy.dims == dx.dims == x.dims, f"{what}: Tensor dimension lengths do not match.")
        self._packed({"dy": dy, "x": x, "weight": w, "rstd": r, "dx": dx, "dw": dw, "db": db}, what)
        self._same_type(x, {"dy": dy, "weight": w, "mean": m, "rstd": r, "dw": dw, "db": db}, what)
        outer, inner = self._split(dy, int(a.normalized_dim), what)
        need = self._parallel_ws(outer, inner, dy.np_dtype.itemsize, 2)
        self.use_workspace(a.workspace, int(a.workspaceSizeInBytes), need, what)
        dys = self._row_major(dy, a.dy, "dy").astype(np.float32).reshape(outer, inner)
        xs = self._row_major(x, a.x, "x").astype(np.float32).reshape(outer, inner)
        mean = self._row_major(m, a.mean, "mean").astype(np.float32).reshape(-1)[:outer, None]
        rstd = self._row_major(r, a.rstd, "rstd").astype(np.float32).reshape(-1)[:outer, None]
        wv = (np.ones(inner, np.float32) if a.mode == _AFFINE
              else self._row_major(w, a.weight, "weight").astype(np.float32).reshape(-1)[:inner])
        g = dys * wv
        s1 = g.sum(axis=1, keepdims=True, dtype=np.float32)
        s2 = (g * xs).sum(axis=1, keepdims=True, dtype=np.float32)
        scale = np.float32(1.0 / inner)
        ca = rstd * rstd * rstd * scale * (s2 - s1 * mean)
        cb = rstd * s1 * scale - ca * mean
        out = rstd * g - ca * xs - cb
        dxs = self._row_major(dx, a.dx, "dx")
        dxs[...] = out.reshape(dxs.shape).astype(dxs.dtype)
        if a.dw:
            dwv = (rstd * dys * (xs - mean)).sum(axis=0, dtype=np.float32)
            self._row_major(dw, a.dw, "dw").reshape(-1)[:inner] = dwv.astype(dw.np_dtype)
        if a.db:
            self._row_major(db, a.db, "db").reshape(-1)[:inner] = dys.sum(axis=0, dtype=np.float32).astype(db.np_dtype)

    # ------------------------------------------------------------------ T5 layer norm (RMS norm)
    @api("miopenT5LayerNormForward")
    def _t5_fwd(self, a: Args) -> None:
        what = "T5LayerNormForward"
        self.handle_state(a.handle)
        require(a.mode in _T5_MODES, f"{what}: mode {a.mode} is not a T5 layer norm mode")
        x, y = self.set_tensor_desc(a.xDesc, "xDesc"), self.set_tensor_desc(a.yDesc, "yDesc")
        w, r = self.set_tensor_desc(a.weightDesc, "weightDesc"), self.set_tensor_desc(a.rstdDesc, "rstdDesc")
        require(x.dtype == y.dtype, f"{what}: Tensor types do not match.")
        require(x.dims == y.dims, f"{what}: Tensor dimension lengths do not match.")
        self._packed({"x": x, "weight": w, "y": y, "rstd": r}, what)
        self._same_type(x, {"weight": w, "rstd": r}, what)
        outer, inner = self._split(x, len(x.dims) - 1, what)
        xs = self._row_major(x, a.x, "x").astype(np.float32).reshape(outer, inner)
        _, rstd = self._stats(xs, float(a.epsilon), rms=True)
        out = xs * rstd[:, None]
        if a.mode != _AFFINE_T5:
            out = out * self._row_major(w, a.weight, "weight").astype(np.float32).reshape(-1)[:inner]
        ys = self._row_major(y, a.y, "y")
        ys[...] = out.reshape(ys.shape).astype(ys.dtype)
        if a.rstd:
            self._row_major(r, a.rstd, "rstd").reshape(-1)[:outer] = rstd.astype(r.np_dtype)

    @api("miopenGetT5LayerNormBackwardWorkspaceSize")
    def _t5_bwd_ws(self, a: Args) -> None:
        self.handle_state(a.handle)
        dy = self.set_tensor_desc(a.dyDesc, "dyDesc")
        outer, inner = self._split(dy, len(dy.dims) - 1, "T5LayerNormBackward")
        write_out(a.sizeInBytes, c_size_t,
                  self._parallel_ws(outer, inner, dy.np_dtype.itemsize, 1), "sizeInBytes")

    @api("miopenT5LayerNormBackward")
    def _t5_bwd(self, a: Args) -> None:
        what = "T5LayerNormBackward"
        self.handle_state(a.handle)
        require(a.mode in _T5_MODES, f"{what}: mode {a.mode} is not a T5 layer norm mode")
        dy, x = self.set_tensor_desc(a.dyDesc, "dyDesc"), self.set_tensor_desc(a.xDesc, "xDesc")
        w, r = self.set_tensor_desc(a.weightDesc, "weightDesc"), self.set_tensor_desc(a.rstdDesc, "rstdDesc")
        dx, dw = self.set_tensor_desc(a.dxDesc, "dxDesc"), self.set_tensor_desc(a.dwDesc, "dwDesc")
        require(dy.dtype == dx.dtype, f"{what}: Tensor types do not match.")
        require(dy.dims == dx.dims == x.dims, f"{what}: Tensor dimension lengths do not match.")
        self._packed({"dy": dy, "x": x, "weight": w, "rstd": r, "dx": dx, "dw": dw}, what)
        self._same_type(x, {"dy": dy, "weight": w, "rstd": r, "dw": dw}, what)
        outer, inner = self._split(dy, len(dy.dims) - 1, what)
        need = self._parallel_ws(outer, inner, dy.np_dtype.itemsize, 1)
        self.use_workspace(a.workspace, int(a.workspaceSizeInBytes), need, what)
        dys = self._row_major(dy, a.dy, "dy").astype(np.float32).reshape(outer, inner)
        xs = self._row_major(x, a.x, "x").astype(np.float32).reshape(outer, inner)
        rstd = self._row_major(r, a.rstd, "rstd").astype(np.float32).reshape(-1)[:outer, None]
        wv = (np.ones(inner, np.float32) if a.mode == _AFFINE_T5
              else self._row_major(w, a.weight, "weight").astype(np.float32).reshape(-1)[:inner])
        ds = (dys * xs * wv).sum(axis=1, keepdims=True, dtype=np.float32)
        ca = ds * rstd * rstd * rstd * np.float32(1.0 / inner)
        dxs = self._row_major(dx, a.dx, "dx")
        dxs[...] = (rstd * dys * wv - ca * xs).reshape(dxs.shape).astype(dxs.dtype)
        if a.dw:
            dwv = (dys * xs * rstd).sum(axis=0, dtype=np.float32)
            self._row_major(dw, a.dw, "dw").reshape(-1)[:inner] = dwv.astype(dw.np_dtype)

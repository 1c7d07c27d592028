"""The layer norm and RMS norm rows: MIOpen's ``miopenLayerNormForward`` / ``Backward`` and its
T5 layer norm (RMS norm) ``miopenT5LayerNormForward`` / ``Backward``, one call per execute.

The descriptors hold X in memory order (hipdnn/engines/miopen/norm_patterns.py): x, y, dy and dx
as one packed tensor of :attr:`NormGeometry.dims`; the weight (SCALE), bias and their gradients
as the normalized shape; the statistics as one value per row. T5 normalizes the last axis, so
its descriptors merge the normalized axes into one. Statistics the graph does not keep (forward
INFERENCE, or virtual) go to the plan's workspace, as does the backward calls' own workspace
(sized by ``miopenGet[T5]LayerNormBackwardWorkspaceSize`` when the plan is built).
"""

from __future__ import annotations

import ctypes
from typing import TypeVar

from hipdnn.core.shapes import packed_strides
from hipdnn.engines.miopen.descriptors import Resources, TensorDesc
from hipdnn.engines.miopen.norm_patterns import NormGeometry, norm_geometry
from hipdnn.engines.miopen.patterns import Match
from hipdnn.engines.miopen.roles import (
    LayerNormBackward,
    LayerNormForward,
    RmsNormBackward,
    RmsNormForward,
)
from hipdnn.engines.miopen.runtime import Arena, Call, CHandle, Ctx, Path, Runner
from hipdnn.ir.nodes.layernorm import NormNodeBase
from miopen_ctypes.enums import miopenNormMode_t
from miopen_ctypes.hip import HipLibrary
from miopen_ctypes.loader import MIOpenLibrary

__all__ = ["LayerNormBackwardRunner", "LayerNormRunner", "RmsNormBackwardRunner", "RmsNormRunner"]

#: Learnable weight and bias (the graph always has a SCALE; layer norm also a BIAS).
_LAYER_MODE = int(miopenNormMode_t.MIOPEN_WEIGHT_BIAS)
_T5_MODE = int(miopenNormMode_t.MIOPEN_WEIGHT_BIAS_T5)


#: The row class of a norm runner (hipdnn/engines/miopen/roles.py).
P = TypeVar("P")


class _NormRunner(Runner[P]):
    """The descriptors every norm row shares."""

    path = Path.NORM

    def __init__(self, lib: MIOpenLibrary, res: Resources, m: Match, *, t5: bool) -> None:
        self.lib = lib
        self.m = m
        t, node = m.t, m.nodes[0]
        assert isinstance(t, (LayerNormForward, LayerNormBackward, RmsNormForward,
                              RmsNormBackward)) and isinstance(node, NormNodeBase)
        g: NormGeometry = norm_geometry(node, t.x, t.scale)
        self.geometry = g
        dims = g.outer + ((_prod(g.inner),) if t5 else g.inner)
        inner = (_prod(g.inner),) if t5 else g.inner
        # T5's rstd descriptor: x's dims with the last set to 1 (one value per row)
        stats = (*g.outer, 1) if t5 else g.outer
        self.normalized_dim = g.normalized_dim
        dt = m.data_type

        def desc(d: tuple[int, ...]) -> TensorDesc:
            return res.add(TensorDesc(lib, dt, d, packed_strides(d)))

        self.x = desc(dims)
        self.w = desc(inner)
        self.stats = desc(stats)
        self.arena = Arena()
        self.stat_bytes = g.rows * dt.itemsize

    def _stat(self, ctx: Ctx[P], ptr: int | None, name: str) -> int:
        return ptr if ptr is not None else self.arena.at(ctx, name)


def _prod(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


class LayerNormRunner(_NormRunner[LayerNormForward[int, float]]):
    """y (and mean, inv_variance) = layer norm of x: one miopenLayerNormForward."""

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, handle: CHandle) -> None:
        super().__init__(lib, res, m, t5=False)
        t = m.t
        assert isinstance(t, LayerNormForward)
        for name in ("mean", "inv_variance"):
            if getattr(t, name) is None:
                self.arena.reserve(name, self.stat_bytes)
        self.workspace_size = self.arena.size

    def calls(self, ctx: Ctx[LayerNormForward[int, float]]) -> list[Call] | None:
        p = ctx.ptr
        return [("miopenLayerNormForward",
                 (ctx.handle, _LAYER_MODE, self.x.raw, p.x, self.w.raw, p.scale, self.w.raw, p.bias,
                  float(p.epsilon), self.normalized_dim, self.x.raw, p.y,
                  self.stats.raw, self._stat(ctx, p.mean, "mean"),
                  self.stats.raw, self._stat(ctx, p.inv_variance, "inv_variance")))]


class RmsNormRunner(_NormRunner[RmsNormForward[int, float]]):
    """y (and the inverse RMS) = RMS norm of x: one miopenT5LayerNormForward."""

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, handle: CHandle) -> None:
        super().__init__(lib, res, m, t5=True)
        t = m.t
        assert isinstance(t, RmsNormForward)
        if t.inv_variance is None:
            self.arena.reserve("inv_variance", self.stat_bytes)
        self.workspace_size = self.arena.size

    def calls(self, ctx: Ctx[RmsNormForward[int, float]]) -> list[Call] | None:
        p = ctx.ptr
        return [("miopenT5LayerNormForward",
                 (ctx.handle, _T5_MODE, self.x.raw, p.x, self.w.raw, p.scale, float(p.epsilon),
                  self.x.raw, p.y, self.stats.raw, self._stat(ctx, p.inv_variance, "inv_variance")))]


class LayerNormBackwardRunner(_NormRunner[LayerNormBackward[int]]):
    """dx, dscale, dbias: one miopenLayerNormBackward (MIOpen >= 3.5), its workspace sized when
    the plan is built."""

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, handle: CHandle) -> None:
        super().__init__(lib, res, m, t5=False)
        size = ctypes.c_size_t(0)
        lib.miopenGetLayerNormBackwardWorkspaceSize(
            handle, _LAYER_MODE, self.x.raw, self.x.raw, self.w.raw, self.stats.raw,
            self.stats.raw, self.normalized_dim, self.x.raw, self.w.raw, self.w.raw,
            ctypes.byref(size))
        self.miopen_ws = int(size.value)
        if self.miopen_ws:
            self.arena.reserve("miopen", self.miopen_ws)
        self.workspace_size = self.arena.size

    def calls(self, ctx: Ctx[LayerNormBackward[int]]) -> list[Call] | None:
        p = ctx.ptr
        ws = self.arena.at(ctx, "miopen") if self.miopen_ws else None
        return [("miopenLayerNormBackward",
                 (ctx.handle, _LAYER_MODE, ws, self.miopen_ws, self.x.raw, p.dy, self.x.raw, p.x,
                  self.w.raw, p.scale, self.stats.raw, p.mean, self.stats.raw, p.inv_variance,
                  self.normalized_dim, self.x.raw, p.dx, self.w.raw, p.dscale, self.w.raw,
                  p.dbias))]


class RmsNormBackwardRunner(_NormRunner[RmsNormBackward[int]]):
    """dx, dscale: one miopenT5LayerNormBackward, its workspace sized when the plan is built."""

    def __init__(self, lib: MIOpenLibrary, hip: HipLibrary, res: Resources, m: Match, handle: CHandle) -> None:
        super().__init__(lib, res, m, t5=True)
        size = ctypes.c_size_t(0)
        lib.miopenGetT5LayerNormBackwardWorkspaceSize(
            handle, _T5_MODE, self.x.raw, self.x.raw, self.w.raw, self.stats.raw, self.x.raw,
            self.w.raw, ctypes.byref(size))
        self.miopen_ws = int(size.value)
        if self.miopen_ws:
            self.arena.reserve("miopen", self.miopen_ws)
        self.workspace_size = self.arena.size

    def calls(self, ctx: Ctx[RmsNormBackward[int]]) -> list[Call] | None:
        p = ctx.ptr
        ws = self.arena.at(ctx, "miopen") if self.miopen_ws else None
        return [("miopenT5LayerNormBackward",
                 (ctx.handle, _T5_MODE, ws, self.miopen_ws, self.x.raw, p.dy, self.x.raw, p.x,
                  self.w.raw, p.scale, self.stats.raw, p.inv_variance, self.x.raw, p.dx,
                  self.w.raw, p.dscale))]

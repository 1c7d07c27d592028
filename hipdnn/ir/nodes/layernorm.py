"""Layernorm, RMSnorm and instancenorm nodes, forward and backward (re-exported by
:mod:`hipdnn.ir.nodes`), with cudnn-frontend's shape rules.

Layernorm and RMSnorm normalize each sample over the axes where SCALE's dim is not 1 (SCALE
(1, 1, E) of X (B, S, E): over E); their statistics have X's dims with those axes set to 1
((B, S, 1)). Instancenorm normalizes over the spatial axes: SCALE/BIAS (1, C, 1, 1), statistics
(N, C, 1, 1). Forward phase TRAINING also outputs the statistics; INFERENCE outputs Y only.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hipdnn.core.errors import ValidationError
from hipdnn.core.types import DataType, NormFwdPhase, to_enum
from hipdnn.ir.nodes.base import FLOAT_TYPES, KnownTensor, Node, check_dims, set_output_shape
from hipdnn.ir.nodes.norm import check_scalar

__all__ = [
    "InstancenormBackwardNode",
    "InstancenormNode",
    "LayernormBackwardNode",
    "LayernormNode",
    "NormNodeBase",
    "RmsnormBackwardNode",
    "RmsnormNode",
]

_STATS = ("MEAN", "INV_VARIANCE")


class NormNodeBase(Node):
    """Shared rules: which axes are normalized, the parameter and statistics dims."""

    #: True for instancenorm (spatial axes), False for layernorm/RMSnorm (SCALE's axes).
    SPATIAL: ClassVar[bool] = False
    #: Ports shaped like SCALE / like the statistics.
    PARAM_PORTS: ClassVar[tuple[str, ...]] = ()
    STATS_PORTS: ClassVar[tuple[str, ...]] = ()
    #: The data ports shaped like X.
    DATA_PORTS: ClassVar[tuple[str, ...]] = ()

    def norm_axes(self, x_dim: tuple[int, ...], scale_dim: tuple[int, ...] | None) -> tuple[int, ...]:
        """The axes each mean and variance are taken over."""
        if self.SPATIAL:
            return tuple(range(2, len(x_dim)))
        assert scale_dim is not None
        return tuple(i for i, d in enumerate(scale_dim) if d != 1)

    def param_dims(self, x_dim: tuple[int, ...]) -> tuple[int, ...] | None:
        """SCALE's dims (instancenorm: (1, C, 1, ...); layernorm/RMSnorm: SCALE's own)."""
        if self.SPATIAL:
            return (1, x_dim[1], *([1] * (len(x_dim) - 2)))
        scale = self.inputs.get("SCALE")
        return None if scale is None or scale.dim is None else tuple(scale.dim)

    def stats_dims(self, x_dim: tuple[int, ...]) -> tuple[int, ...] | None:
        """X's dims with the normalized axes set to 1."""
        p = self.param_dims(x_dim)
        if p is None or len(p) != len(x_dim):
            return None
        axes = self.norm_axes(x_dim, p)
        return tuple(1 if i in axes else d for i, d in enumerate(x_dim))

    def _shape_outputs(self, x: Any, strict: bool) -> None:
        x_dim = tuple(x.dim)
        for port in self.DATA_PORTS:
            set_output_shape(self, port, x_dim, x, strict=strict)
        stats, params = self.stats_dims(x_dim), self.param_dims(x_dim)
        for port in self.STATS_PORTS:
            if stats is not None:
                set_output_shape(self, port, stats, x, strict=strict)
        for port in self.PARAM_PORTS:
            if params is not None:
                set_output_shape(self, port, params, x, strict=strict)

    def infer(self) -> None:
        x = self.inputs.get("X")
        if x is None or x.dim is None or len(x.dim) < 2:
            return
        try:
            self._shape_outputs(x, strict=False)
        except ValidationError:
            return

    def _check_x(self) -> KnownTensor:
        x = check_dims(self, "X", FLOAT_TYPES)
        low = 3 if self.SPATIAL else 2
        if len(x.dim) < low:
            raise ValidationError(f"rank mismatch: dims {list(x.dim)} have rank {len(x.dim)}; "
                                  f"{self.op} needs rank >= {low}", node=self.name, port="X",
                                  tensor=x.name)
        return x

    def _check_scale_like(self, port: str, x: KnownTensor) -> KnownTensor:
        t = check_dims(self, port, FLOAT_TYPES)
        x_dim = tuple(x.dim)
        if self.SPATIAL:
            expect = self.param_dims(x_dim)
            if tuple(t.dim) != expect:
                raise ValidationError(f"dims {list(t.dim)} must be {list(expect or ())} (one value "
                                      f"per channel of X {list(x_dim)})", node=self.name,
                                      port=port, tensor=t.name)
            return t
        ok = (len(t.dim) == len(x_dim) and t.dim[0] == 1
              and all(d in (1, xd) for d, xd in zip(t.dim, x_dim, strict=True))
              and any(d != 1 for d in t.dim[1:]))
        if not ok:
            raise ValidationError(
                f"dims {list(t.dim)} do not fit X {list(x_dim)}: {port} must have X's rank, dim 0 "
                f"equal to 1, and each other dim equal to X's (a normalized axis) or 1, with at "
                f"least one normalized axis (e.g. {[1, *x_dim[1:]]} or "
                f"{[1] * (len(x_dim) - 1) + [x_dim[-1]]})", node=self.name, port=port,
                tensor=t.name)
        return t

    def _check_same_as(self, port: str, dims: tuple[int, ...], what: str) -> None:
        t = check_dims(self, port, FLOAT_TYPES)
        if tuple(t.dim) != dims:
            raise ValidationError(f"dims {list(t.dim)} must be {list(dims)} ({what})",
                                  node=self.name, port=port, tensor=t.name)

    def _check_params(self, x: KnownTensor, ports: tuple[str, ...]) -> tuple[int, ...]:
        scale = self._check_scale_like("SCALE", x)
        for port in ports:
            if self.inputs.get(port) is not None:
                self._check_same_as(port, tuple(scale.dim), "the dims of SCALE")
        return tuple(scale.dim)

    def default_output_type(self, port: str) -> DataType | None:
        """Statistics default to FLOAT (they are computed in FP32 or wider); DSCALE/DBIAS to
        SCALE's type."""
        if port in _STATS:
            return DataType.FLOAT
        return super().default_output_type(port)


class _ForwardBase(NormNodeBase):
    DATA_PORTS = ("Y",)
    ATTRIBUTES = ("forward_phase",)
    STATS_PORTS: ClassVar[tuple[str, ...]] = _STATS  # the statistics TRAINING outputs

    def __init__(self, name: str = "", compute_data_type: Any = DataType.NOT_SET, *,
                 forward_phase: NormFwdPhase | int | str = NormFwdPhase.NOT_SET,
                 **ports: Any) -> None:
        super().__init__(name, compute_data_type, **ports)
        self.forward_phase = to_enum(NormFwdPhase, forward_phase, "norm_forward_phase",
                                     node=self.name)

    def validate(self) -> None:
        if self.forward_phase not in (NormFwdPhase.TRAINING, NormFwdPhase.INFERENCE):
            raise ValidationError(f"norm_forward_phase is {self.forward_phase.name}; valid: "
                                  f"TRAINING or INFERENCE", node=self.name)
        x = self._check_x()
        self._check_params(x, ("BIAS",))
        check_scalar(self, "EPSILON")
        for port in self.STATS_PORTS:
            given = self.outputs.get(port) is not None
            if self.forward_phase == NormFwdPhase.TRAINING and not given:
                raise ValidationError("TRAINING needs this statistics output", node=self.name,
                                      port=port)
            if self.forward_phase == NormFwdPhase.INFERENCE and given:
                raise ValidationError("INFERENCE has no statistics outputs; use TRAINING",
                                      node=self.name, port=port)
        self._shape_outputs(x, strict=True)

    def attributes(self) -> dict[str, Any]:
        """The forward phase, by name."""
        return {"forward_phase": self.forward_phase.name}


class _BackwardBase(NormNodeBase):
    DATA_PORTS = ("DX",)

    def validate(self) -> None:
        x = self._check_x()
        dy = check_dims(self, "DY", FLOAT_TYPES)
        if tuple(dy.dim) != tuple(x.dim):
            raise ValidationError(f"DY dims {list(dy.dim)} differ from X dims {list(x.dim)}",
                                  node=self.name, port="DY", tensor=dy.name)
        self._check_params(x, ())
        stats = self.stats_dims(tuple(x.dim))
        assert stats is not None
        for port in self.INPUTS:
            if port in _STATS and self.inputs.get(port) is not None:
                self._check_same_as(port, stats, "the forward statistics' dims: X's with the "
                                    "normalized axes set to 1")
            elif port in _STATS:
                raise ValidationError("the saved statistics of the forward pass are required",
                                      node=self.name, port=port)
        self._shape_outputs(x, strict=True)


class LayernormNode(_ForwardBase):
    """Layernorm forward: Y = (X - mean) * inv_variance * SCALE + BIAS over SCALE's axes."""

    op = "layernorm"
    INPUTS = ("X", "SCALE", "BIAS", "EPSILON")
    OUTPUTS = ("Y", "MEAN", "INV_VARIANCE")
    OPTIONAL = frozenset(_STATS)


class LayernormBackwardNode(_BackwardBase):
    """Layernorm backward: DX, DSCALE, DBIAS from DY, X, SCALE and the saved statistics."""

    op = "layernorm_backward"
    INPUTS = ("DY", "X", "SCALE", "MEAN", "INV_VARIANCE")
    OUTPUTS = ("DX", "DSCALE", "DBIAS")
    PARAM_PORTS = ("DSCALE", "DBIAS")
    PARAM_OUTPUTS = frozenset(PARAM_PORTS)


class RmsnormNode(_ForwardBase):
    """RMSnorm forward: Y = X * inv_rms * SCALE (+ BIAS), inv_rms = 1/sqrt(mean(X^2) + eps)."""

    op = "rmsnorm"
    INPUTS = ("X", "SCALE", "BIAS", "EPSILON")
    OUTPUTS = ("Y", "INV_VARIANCE")
    OPTIONAL = frozenset({"BIAS", "INV_VARIANCE"})
    STATS_PORTS = ("INV_VARIANCE",)


class RmsnormBackwardNode(_BackwardBase):
    """RMSnorm backward: DX, DSCALE and (``has_dbias``) DBIAS from DY, X, SCALE, INV_VARIANCE."""

    op = "rmsnorm_backward"
    INPUTS = ("DY", "X", "SCALE", "INV_VARIANCE")
    OUTPUTS = ("DX", "DSCALE", "DBIAS")
    OPTIONAL = frozenset({"DBIAS"})
    PARAM_PORTS = ("DSCALE", "DBIAS")
    PARAM_OUTPUTS = frozenset(PARAM_PORTS)


class InstancenormNode(_ForwardBase):
    """Instancenorm forward: per sample and channel over the spatial axes."""

    op = "instancenorm"
    SPATIAL = True
    INPUTS = ("X", "SCALE", "BIAS", "EPSILON")
    OUTPUTS = ("Y", "MEAN", "INV_VARIANCE")
    OPTIONAL = frozenset(_STATS)


class InstancenormBackwardNode(_BackwardBase):
    """Instancenorm backward: DX, DSCALE, DBIAS from DY, X, SCALE and the saved statistics."""

    op = "instancenorm_backward"
    SPATIAL = True
    INPUTS = ("DY", "X", "SCALE", "MEAN", "INV_VARIANCE")
    OUTPUTS = ("DX", "DSCALE", "DBIAS")
    PARAM_PORTS = ("DSCALE", "DBIAS")
    PARAM_OUTPUTS = frozenset(PARAM_PORTS)

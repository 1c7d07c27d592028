"""The seed rows' contracts: one dataclass per row whose fields are the tensors the row binds.

A matched row (hipdnn/engines/miopen/patterns.py) holds its graph tensors in one of these
(``Match.t``); at execute the plan fills the same class with device pointers and scalar values
(``Ctx.ptr``, hipdnn/engines/miopen/plan.py), so a runner reads ``ctx.ptr.inv_variance`` and a
misspelled role is a mypy error and an AttributeError, never a silent KeyError at execute.

Type parameters: ``T`` is what a tensor in the variant pack is bound to (its graph
:class:`~hipdnn.engines.miopen.rules.Tensor` at match time, a device pointer ``int`` at execute),
``S`` what a pass-by-value scalar is bound to (its graph tensor, then a ``float``). Fields typed
:class:`Tensor` are the row's virtual intermediates: no memory of the variant pack, the same graph
tensor in both forms (a runner reads their dims, or places them in the workspace). A field that
may be ``None`` is optional in that row (absent from the graph, or virtual).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from hipdnn.engines.miopen.rules import Tensor

__all__ = [
    "BnBackward",
    "BnInfDreluBnBwd",
    "BnInference",
    "BnInferenceAct",
    "BnInferenceInv",
    "BnInferenceInvAct",
    "BnTraining",
    "BnTrainingAct",
    "ConvBiasAct",
    "ConvDgrad",
    "ConvFprop",
    "ConvWgrad",
    "LayerNormBackward",
    "LayerNormForward",
    "PointwiseActivation",
    "PointwiseBinary",
    "RmsNormBackward",
    "RmsNormForward",
    "RowTensors",
    "is_scalar",
]

T = TypeVar("T")
S = TypeVar("S")

#: Metadata of a pass-by-value scalar field (epsilon, momentum): a float at execute, not a pointer.
_SCALAR = {"scalar": True}


def is_scalar(f: dataclasses.Field[object]) -> bool:
    """Whether a row field is a pass-by-value scalar."""
    return bool(f.metadata.get("scalar"))


# Not frozen: the plan builds one instance of the row's class per execute (the pointers), and a
# frozen dataclass's __init__ (object.__setattr__ per field) costs about 3x a plain one there.
# Nothing assigns to a field after construction.
# ------------------------------------------------------------------------------ conv rows
@dataclass(slots=True)
class ConvFprop(Generic[T]):
    """Row.CONV_FPROP: y = conv(x, w)."""

    x: T
    w: T
    y: T

    def operands(self) -> tuple[T, T, T]:
        """MIOpen's descriptor order (A, B, C) for this direction: (w, x, y)."""
        return self.w, self.x, self.y


@dataclass(slots=True)
class ConvDgrad(Generic[T]):
    """Row.CONV_DGRAD: dx from dy and w."""

    dy: T
    w: T
    dx: T

    def operands(self) -> tuple[T, T, T]:
        """MIOpen's descriptor order (A, B, C) for this direction: (dy, w, dx)."""
        return self.dy, self.w, self.dx


@dataclass(slots=True)
class ConvWgrad(Generic[T]):
    """Row.CONV_WGRAD: dw from x and dy."""

    x: T
    dy: T
    dw: T

    def operands(self) -> tuple[T, T, T]:
        """MIOpen's descriptor order (A, B, C) for this direction: (dy, x, dw)."""
        return self.dy, self.x, self.dw


@dataclass(slots=True)
class ConvBiasAct(Generic[T]):
    """Row.CONV_BIAS_ACT: y = act(conv(x, w) [+ bias]); ``conv_y`` is the convolution's
    (virtual) output, ``bias_y`` the bias add's (virtual) output when there is a bias."""

    x: T
    w: T
    y: T
    bias: T | None
    conv_y: Tensor
    bias_y: Tensor | None


# -------------------------------------------------------------------------------- BN rows
@dataclass(slots=True)
class BnInference(Generic[T, S]):
    """Row.BN_INFERENCE: y = scale * (x - mean) / sqrt(variance + epsilon) + bias."""

    x: T
    y: T
    mean: T
    variance: T
    scale: T
    bias: T
    epsilon: S = field(metadata=_SCALAR)


@dataclass(slots=True)
class BnInferenceInv(Generic[T]):
    """Row.BN_INFERENCE_INV: y = scale * (x - mean) * inv_variance + bias."""

    x: T
    y: T
    mean: T
    inv_variance: T
    scale: T
    bias: T


@dataclass(slots=True)
class BnInferenceAct(BnInference[T, S]):
    """Row.BN_INFERENCE_ACT: BN inference (variance) then an activation; ``y`` is the
    activation's output, ``bn_y`` the batchnorm's (virtual) output."""

    bn_y: Tensor


@dataclass(slots=True)
class BnInferenceInvAct(BnInferenceInv[T]):
    """Row.BN_INFERENCE_INV_ACT: BN inference (inverse variance) then an activation."""

    bn_y: Tensor


@dataclass(slots=True)
class BnTraining(Generic[T, S]):
    """Row.BN_TRAINING: batch statistics; saved ``mean``/``inv_variance`` when the graph keeps
    them (non-virtual); the four running statistics and ``momentum`` all or none."""

    x: T
    y: T
    scale: T
    bias: T
    mean: T | None
    inv_variance: T | None
    prev_running_mean: T | None
    prev_running_variance: T | None
    next_running_mean: T | None
    next_running_variance: T | None
    epsilon: S = field(metadata=_SCALAR)
    momentum: S | None = field(metadata=_SCALAR)


@dataclass(slots=True)
class BnTrainingAct(BnTraining[T, S]):
    """Row.BN_TRAINING_ACT: BN training then an activation; ``y`` is the activation's output,
    ``bn_y`` the batchnorm's (virtual) output."""

    bn_y: Tensor


@dataclass(slots=True)
class BnBackward(Generic[T]):
    """Row.BN_BACKWARD: dx, dscale, dbias; without saved ``mean``/``inv_variance`` MIOpen
    recomputes them from x."""

    x: T
    dy: T
    dx: T
    dscale: T
    dbias: T
    scale: T
    mean: T | None
    inv_variance: T | None


@dataclass(slots=True)
class BnInfDreluBnBwd(Generic[T]):
    """Row.BN_INF_DRELU_BN_BWD: BN inference (recomputing ``bn_y``) -> ReLU backward of the
    loss gradient ``dy`` (RELU_BWD's IN_0) into ``drelu`` -> BN backward."""

    x: T
    dy: T
    dx: T
    dscale: T
    dbias: T
    scale: T
    bias: T
    mean: T
    inv_variance: T
    bn_y: Tensor
    drelu: Tensor


# ------------------------------------------------------------------------- pointwise rows
@dataclass(slots=True)
class PointwiseActivation(Generic[T]):
    """Row.POINTWISE_ACT: y = act(x), one node."""

    x: T
    y: T


@dataclass(slots=True)
class PointwiseBinary(Generic[T]):
    """Row.POINTWISE_BINARY: c = op(a, b), one node; ``b`` may broadcast (size-1 axes)."""

    a: T
    b: T
    c: T


# ------------------------------------------------------------------------------ norm rows
@dataclass(slots=True)
class LayerNormForward(Generic[T, S]):
    """Row.LAYERNORM: y = (x - mean) * inv_variance * scale + bias over scale's axes;
    ``mean``/``inv_variance`` are None in INFERENCE or when the graph keeps them virtual (the
    plan's workspace holds them then)."""

    x: T
    y: T
    scale: T
    bias: T
    mean: T | None
    inv_variance: T | None
    epsilon: S = field(metadata=_SCALAR)


@dataclass(slots=True)
class LayerNormBackward(Generic[T]):
    """Row.LAYERNORM_BACKWARD: dx, dscale, dbias from dy, x, scale and the saved statistics."""

    dy: T
    x: T
    scale: T
    mean: T
    inv_variance: T
    dx: T
    dscale: T
    dbias: T


@dataclass(slots=True)
class RmsNormForward(Generic[T, S]):
    """Row.RMSNORM: y = x * inv_rms * scale (no bias: MIOpen's T5 layer norm has none);
    ``inv_variance`` (the inverse RMS) None in INFERENCE or when virtual (workspace)."""

    x: T
    y: T
    scale: T
    inv_variance: T | None
    epsilon: S = field(metadata=_SCALAR)


@dataclass(slots=True)
class RmsNormBackward(Generic[T]):
    """Row.RMSNORM_BACKWARD: dx, dscale from dy, x, scale and the saved inverse RMS."""

    dy: T
    x: T
    scale: T
    inv_variance: T
    dx: T
    dscale: T


#: A matched row's tensors (``Match.t``).
RowTensors = (ConvFprop[Tensor] | ConvDgrad[Tensor] | ConvWgrad[Tensor] | ConvBiasAct[Tensor]
              | BnInference[Tensor, Tensor] | BnInferenceInv[Tensor] | BnTraining[Tensor, Tensor]
              | BnBackward[Tensor] | BnInfDreluBnBwd[Tensor] | PointwiseActivation[Tensor]
              | PointwiseBinary[Tensor] | LayerNormForward[Tensor, Tensor]
              | LayerNormBackward[Tensor] | RmsNormForward[Tensor, Tensor] | RmsNormBackward[Tensor])

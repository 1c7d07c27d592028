"""Layernorm, RMSnorm and instancenorm builders of :class:`hipdnn.Graph`, with cudnn-frontend's
names, keywords and return values. No MIOpen seed row has them: CPU_REFERENCE_ENGINE runs them
(MIOPEN_ENGINE declines the graph, saying so).

>>> import numpy as np, hipdnn as cudnn
>>> g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
>>> x = g.tensor(dim=[2, 1, 4], name="x")
>>> s = g.tensor(dim=[1, 1, 4], name="scale")
>>> b = g.tensor(dim=[1, 1, 4], name="bias")
>>> y, mean, inv_var = g.layernorm(cudnn.norm_forward_phase.INFERENCE, x, s, b, epsilon=1e-5)
>>> mean is None and inv_var is None
True
>>> _ = y.set_output(True); _ = g.build()
>>> out = np.empty((2, 1, 4), np.float32)
>>> g.execute({x: np.arange(8, dtype=np.float32).reshape(2, 1, 4),
...            s: np.ones((1, 1, 4), np.float32), b: np.zeros((1, 1, 4), np.float32), y: out})
>>> [round(float(v), 3) for v in out[0, 0]]
[-1.342, -0.447, 0.447, 1.342]
"""

from __future__ import annotations

from typing import Any

from hipdnn.core.errors import ValidationError
from hipdnn.core.types import DataType, NormFwdPhase, to_enum
from hipdnn.graph.ops import GraphOps
from hipdnn.ir.nodes import (
    InstancenormBackwardNode,
    InstancenormNode,
    LayernormBackwardNode,
    LayernormNode,
    RmsnormBackwardNode,
    RmsnormNode,
)
from hipdnn.ir.nodes.layernorm import NormNodeBase
from hipdnn.ir.tensor import Tensor, not_a_tensor_hint

__all__ = ["NormOps"]

NOT_SET = DataType.NOT_SET
#: cudnn-frontend names rmsnorm_backward's outputs "<node>::Dscale" / "::Dbias" (its other norms
#: use the port names), and 1.x high-level scripts list them by those names.
_RMS_BACKWARD_LABELS = {"DSCALE": "Dscale", "DBIAS": "Dbias"}


class NormOps(GraphOps):
    """Layernorm, RMSnorm and instancenorm forward and backward of :class:`hipdnn.Graph`."""

    def _norm(self, cls: type[NormNodeBase], op: str, name: str, phase: Any,
              tensors: dict[str, Any], optional: frozenset[str], epsilon: Any,
              outputs: tuple[str, ...], compute_data_type: Any,
              labels: dict[str, str] | None = None) -> list[Tensor | None]:
        """Add a ``cls`` node; its outputs are named ``"<node>::<label>"``, the label the port
        unless ``labels`` gives cudnn-frontend's own spelling."""
        name = self._node_name(name, op)
        attrs: dict[str, Any] = {}
        if phase is not None:
            forward_phase = to_enum(NormFwdPhase, phase, "norm_forward_phase", node=name)
            if forward_phase not in (NormFwdPhase.TRAINING, NormFwdPhase.INFERENCE):
                raise ValidationError(f"norm_forward_phase is {forward_phase.name}; valid: "
                                      f"TRAINING or INFERENCE", node=name)
            attrs["forward_phase"] = forward_phase
        for port, t in tensors.items():
            if t is None and port in optional:
                continue
            if not isinstance(t, Tensor):
                raise ValidationError(not_a_tensor_hint(t), node=name, port=port)
        if "EPSILON" in cls.INPUTS:
            if epsilon is None:
                raise ValidationError("epsilon is required (a float > 0 or a pass-by-value "
                                      "scalar tensor)", node=name, port="EPSILON")
            tensors["EPSILON"] = self._scalar(epsilon, name, "EPSILON")
        labels = labels or {}
        outs: dict[str, Tensor | None] = {p: self._output(name, labels.get(p, p))
                                          for p in outputs}
        self._add_node(cls(name, compute_data_type, **attrs, **tensors, **outs))
        return [outs.get(p) for p in cls.OUTPUTS]

    @staticmethod
    def _stats(phase: Any, ports: tuple[str, ...]) -> tuple[str, ...]:
        training = to_enum(NormFwdPhase, phase, "norm_forward_phase") == NormFwdPhase.TRAINING
        return ("Y", *ports) if training else ("Y",)

    # -- layernorm -------------------------------------------------------------------------------
    def layernorm(self, norm_forward_phase: NormFwdPhase | int | str, input: Tensor,
                  scale: Tensor | None = None, bias: Tensor | None = None,
                  epsilon: Tensor | float | None = None, compute_data_type: Any = NOT_SET,
                  name: str = "") -> list[Tensor | None]:
        """Layernorm over the axes where ``scale``'s dim is not 1; returns [Y, mean,
        inv_variance] (mean and inv_variance None in INFERENCE), the statistics with X's dims
        and the normalized axes set to 1 (X (B, S, E), scale (1, 1, E): (B, S, 1)).

        Parameters
        ----------
        norm_forward_phase : NormFwdPhase
            TRAINING (the statistics are outputs) or INFERENCE.
        input : Tensor
            The data tensor X.
        scale : Tensor, optional
            The scale; its dims that are not 1 are the normalized axes.
        bias : Tensor, optional
            The bias, of ``scale``'s dims.
        epsilon : Tensor or float, optional
            Added to the variance; a float becomes a pass-by-value scalar tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        list of Tensor or None
            [Y, MEAN, INV_VARIANCE]; MEAN and INV_VARIANCE are None for INFERENCE.

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        outs = self._stats(norm_forward_phase, ("MEAN", "INV_VARIANCE"))
        return self._norm(LayernormNode, "layernorm", name, norm_forward_phase,
                          {"X": input, "SCALE": scale, "BIAS": bias}, frozenset(), epsilon, outs,
                          compute_data_type)

    def layernorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor, mean: Tensor,
                           inv_variance: Tensor, compute_data_type: Any = NOT_SET,
                           name: str = "") -> list[Tensor | None]:
        """Layernorm backward from the saved statistics; returns [DX, DScale, DBias].

        Parameters
        ----------
        grad : Tensor
            The gradient of the loss with respect to the forward output (DY).
        input : Tensor
            The forward input X.
        scale : Tensor
            The per-channel scale (gamma).
        mean : Tensor
            The saved mean of the forward (TRAINING) pass.
        inv_variance : Tensor
            The saved inverse standard deviation, 1 / sqrt(variance + epsilon).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        list of Tensor or None
            [DX, DSCALE, DBIAS].

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._norm(LayernormBackwardNode, "layernorm_backward", name, None,
                          {"DY": grad, "X": input, "SCALE": scale, "MEAN": mean,
                           "INV_VARIANCE": inv_variance}, frozenset(), None,
                          ("DX", "DSCALE", "DBIAS"), compute_data_type)

    # -- rmsnorm ---------------------------------------------------------------------------------
    def rmsnorm(self, norm_forward_phase: NormFwdPhase | int | str, input: Tensor,
                scale: Tensor | None = None, bias: Tensor | None = None,
                epsilon: Tensor | float | None = None, compute_data_type: Any = NOT_SET,
                name: str = "") -> list[Tensor | None]:
        """RMSnorm (``bias`` optional) over the axes where ``scale``'s dim is not 1; returns
        [Y, inv_variance] (inv_variance None in INFERENCE).

        Parameters
        ----------
        norm_forward_phase : NormFwdPhase
            TRAINING (the statistics are outputs) or INFERENCE.
        input : Tensor
            The data tensor X.
        scale : Tensor, optional
            The scale; its dims that are not 1 are the normalized axes.
        bias : Tensor, optional
            The bias, of ``scale``'s dims.
        epsilon : Tensor or float, optional
            Added to the variance; a float becomes a pass-by-value scalar tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        list of Tensor or None
            [Y, INV_VARIANCE]; INV_VARIANCE is None for INFERENCE.

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        outs = self._stats(norm_forward_phase, ("INV_VARIANCE",))
        return self._norm(RmsnormNode, "rmsnorm", name, norm_forward_phase,
                          {"X": input, "SCALE": scale, "BIAS": bias}, frozenset({"BIAS"}),
                          epsilon, outs, compute_data_type)

    def rmsnorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor, inv_variance: Tensor,
                         has_dbias: bool, compute_data_type: Any = NOT_SET,
                         name: str = "") -> list[Tensor | None]:
        """RMSnorm backward; returns [DX, DScale, DBias] (DBias None unless ``has_dbias``).

        Parameters
        ----------
        grad : Tensor
            The gradient of the loss with respect to the forward output (DY).
        input : Tensor
            The forward input X.
        scale : Tensor
            The per-channel scale (gamma).
        inv_variance : Tensor
            The saved inverse standard deviation, 1 / sqrt(variance + epsilon).
        has_dbias : bool
            Whether DBIAS is an output.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        list of Tensor or None
            [DX, DSCALE, DBIAS]; DBIAS is None unless ``has_dbias``.

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        if not isinstance(has_dbias, bool):
            raise ValidationError(f"has_dbias must be True or False, got {has_dbias!r}",
                                  node=name or None)
        outs = ("DX", "DSCALE", "DBIAS") if has_dbias else ("DX", "DSCALE")
        return self._norm(RmsnormBackwardNode, "rmsnorm_backward", name, None,
                          {"DY": grad, "X": input, "SCALE": scale,
                           "INV_VARIANCE": inv_variance}, frozenset(), None, outs,
                          compute_data_type, _RMS_BACKWARD_LABELS)

    # -- instancenorm ----------------------------------------------------------------------------
    def instancenorm(self, norm_forward_phase: NormFwdPhase | int | str, input: Tensor,
                     scale: Tensor, bias: Tensor, epsilon: Tensor | float | None = None,
                     compute_data_type: Any = NOT_SET, name: str = "") -> list[Tensor | None]:
        """Instancenorm (per sample and channel over the spatial axes; scale and bias
        (1, C, 1, 1)); returns [Y, mean, inv_variance] ((N, C, 1, 1); None in INFERENCE).

        Parameters
        ----------
        norm_forward_phase : NormFwdPhase
            TRAINING (the statistics are outputs) or INFERENCE.
        input : Tensor
            The data tensor X, (N, C, spatial...).
        scale : Tensor
            The per-channel scale (gamma).
        bias : Tensor
            The per-channel bias (beta).
        epsilon : Tensor or float, optional
            Added to the variance; a float becomes a pass-by-value scalar tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        list of Tensor or None
            [Y, MEAN, INV_VARIANCE]; MEAN and INV_VARIANCE are None for INFERENCE.

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        outs = self._stats(norm_forward_phase, ("MEAN", "INV_VARIANCE"))
        return self._norm(InstancenormNode, "instancenorm", name, norm_forward_phase,
                          {"X": input, "SCALE": scale, "BIAS": bias}, frozenset(), epsilon, outs,
                          compute_data_type)

    def instancenorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor, mean: Tensor,
                              inv_variance: Tensor, compute_data_type: Any = NOT_SET,
                              name: str = "") -> list[Tensor | None]:
        """Instancenorm backward from the saved statistics; returns [DX, DScale, DBias].

        Parameters
        ----------
        grad : Tensor
            The gradient of the loss with respect to the forward output (DY).
        input : Tensor
            The forward input X.
        scale : Tensor
            The per-channel scale (gamma).
        mean : Tensor
            The saved mean of the forward (TRAINING) pass.
        inv_variance : Tensor
            The saved inverse standard deviation, 1 / sqrt(variance + epsilon).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        list of Tensor or None
            [DX, DSCALE, DBIAS].

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self._norm(InstancenormBackwardNode, "instancenorm_backward", name, None,
                          {"DY": grad, "X": input, "SCALE": scale, "MEAN": mean,
                           "INV_VARIANCE": inv_variance}, frozenset(), None,
                          ("DX", "DSCALE", "DBIAS"), compute_data_type)

"""Graph nodes: ports as hipDNN spells them, shape inference and per-node validation.

Each node class declares its ports (``INPUTS``/``OUTPUTS``, optional ones in ``OPTIONAL``) and its
attributes. ``infer()`` fills output dims/strides that can be derived (called when the op is
added and again at ``validate()``); ``validate()`` raises :class:`ValidationError` naming the node,
the port, the offending values and what is allowed. Dtypes are filled by the graph.

One module per family (base, conv, norm, stats, layernorm, matmul); this package is the node
classes' one import and :data:`NODE_TYPES`, the registry JSON documents are read with.
"""

from __future__ import annotations

from collections.abc import Mapping

from hipdnn.ir.nodes.base import FLOAT_TYPES, Node
from hipdnn.ir.nodes.conv import ConvDgradNode, ConvFpropNode, ConvWgradNode
from hipdnn.ir.nodes.layernorm import (
    InstancenormBackwardNode,
    InstancenormNode,
    LayernormBackwardNode,
    LayernormNode,
    RmsnormBackwardNode,
    RmsnormNode,
)
from hipdnn.ir.nodes.matmul import MatmulNode
from hipdnn.ir.nodes.norm import (
    BatchnormBackwardNode,
    BatchnormInferenceNode,
    BatchnormInferenceVarianceNode,
    BatchnormNode,
    PointwiseNode,
)
from hipdnn.ir.nodes.stats import GenstatsNode, ReductionNode

__all__ = [
    "FLOAT_TYPES",
    "NODE_TYPES",
    "BatchnormBackwardNode",
    "BatchnormInferenceNode",
    "BatchnormInferenceVarianceNode",
    "BatchnormNode",
    "ConvDgradNode",
    "ConvFpropNode",
    "ConvWgradNode",
    "GenstatsNode",
    "InstancenormBackwardNode",
    "InstancenormNode",
    "LayernormBackwardNode",
    "LayernormNode",
    "MatmulNode",
    "Node",
    "PointwiseNode",
    "ReductionNode",
    "RmsnormBackwardNode",
    "RmsnormNode",
]


#: JSON ``type`` -> node class.
NODE_TYPES: Mapping[str, type[Node]] = {
    cls.op: cls for cls in (
        ConvFpropNode, ConvDgradNode, ConvWgradNode, BatchnormNode, BatchnormInferenceNode,
        BatchnormInferenceVarianceNode, BatchnormBackwardNode, PointwiseNode, GenstatsNode,
        ReductionNode, LayernormNode, LayernormBackwardNode, RmsnormNode, RmsnormBackwardNode,
        InstancenormNode, InstancenormBackwardNode, MatmulNode)
}

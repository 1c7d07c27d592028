"""Convolution nodes (fprop, dgrad, wgrad): ports as hipDNN spells them, shape inference and
per-node validation.

Each node class declares its ports (``INPUTS``/``OUTPUTS``, optional ones in ``OPTIONAL``) and its
attributes. ``infer()`` fills output dims/strides that can be derived (called when the op is
added and again at ``validate()``); ``validate()`` raises :class:`ValidationError` naming the node,
the port, the offending values and what is allowed. Dtypes are filled by the graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from hipdnn.core.errors import ValidationError
from hipdnn.core.shapes import conv_output_dims
from hipdnn.core.types import ConvolutionMode, DataType, to_enum, to_int, to_int_tuple
from hipdnn.ir.nodes.base import (
    FLOAT_TYPES,
    KnownTensor,
    Node,
    channels_last_hint,
    check_dims,
    check_rank,
    set_output_shape,
    strides_like,
)

__all__ = ["ConvDgradNode", "ConvFpropNode", "ConvWgradNode"]


_INTS = frozenset({int})
#: Largest convolution padding, stride or dilation (a C int in MIOpen's and cuDNN's APIs).
_ATTR_MAX = 2**31 - 1

#: conv_fprop data types: floating point, or INT8 X and W (computed in INT32, as in cuDNN).
_FPROP_TYPES = FLOAT_TYPES | {DataType.INT8}


def _ints(values: Any, what: str, node: Node) -> tuple[int, ...]:
    """``to_int_tuple``, with a fast path for a tuple or list of plain ints."""
    if type(values) in (tuple, list) and _INTS.issuperset(map(type, values)):
        return tuple(values)
    return to_int_tuple(values, what, node=node.name)


def _spatial(values: Sequence[int] | None, n: int, default: int, what: str,
             node: Node) -> tuple[int, ...]:
    if values is None:
        return (default,) * n
    vals = _ints(values, what, node)
    if len(vals) != n:
        raise ValidationError(f"{what} has {len(vals)} value{'s' if len(vals) != 1 else ''} "
                              f"{list(vals)} but the data tensors have rank {n + 2}: a "
                              f"{'1-D' if n == 1 else f'{n}-D'} convolution (rank {n + 2}) takes "
                              f"{n} value{'s' if n != 1 else ''} (one per spatial dimension)",
                              node=node.name)
    return vals


class _ConvNode(Node):
    """Shared attributes and checks of the three convolution nodes."""

    ATTRIBUTES: ClassVar[tuple[str, ...]] = (
        "pre_padding", "post_padding", "stride", "dilation", "convolution_mode", "groups")
    #: (data port, weight port, the port whose dims the other two determine)
    X_PORT: ClassVar[str] = "X"
    W_PORT: ClassVar[str] = "W"
    Y_PORT: ClassVar[str] = "Y"

    def __init__(self, name: str = "", compute_data_type: Any = DataType.NOT_SET, *,
                 pre_padding: Sequence[int] | None = None,
                 post_padding: Sequence[int] | None = None,
                 stride: Sequence[int] | None = None, dilation: Sequence[int] | None = None,
                 convolution_mode: ConvolutionMode | int | str = ConvolutionMode.CROSS_CORRELATION,
                 groups: int | None = None, **ports: Any) -> None:
        super().__init__(name, compute_data_type, **ports)
        def ints(values: Sequence[int] | None, what: str) -> tuple[int, ...] | None:
            return None if values is None else _ints(values, what, self)

        self.pre_padding = ints(pre_padding, "pre_padding")
        self.post_padding = ints(post_padding, "post_padding")
        self.stride = ints(stride, "stride")
        self.dilation = ints(dilation, "dilation")
        self.convolution_mode = to_enum(ConvolutionMode, convolution_mode, "convolution_mode",
                                        node=self.name)
        self.groups = None if groups is None else to_int(groups, "groups", node=self.name,
                                                          minimum=1)

    def _geometry(self, rank: int) -> tuple[tuple[int, ...], ...]:
        n = rank - 2
        pre = _spatial(self.pre_padding, n, 0, "pre_padding", self)
        post = _spatial(self.post_padding, n, 0, "post_padding", self)
        stride = _spatial(self.stride, n, 1, "stride", self)
        dil = _spatial(self.dilation, n, 1, "dilation", self)
        return pre, post, stride, dil

    def _check_geometry(self, rank: int) -> tuple[tuple[int, ...], ...]:
        pre, post, stride, dil = self._geometry(rank)
        for what, vals, low in (("pre_padding", pre, 0), ("post_padding", post, 0),
                                ("stride", stride, 1), ("dilation", dil, 1)):
            if any(v < low for v in vals):
                raise ValidationError(f"{what} {list(vals)} must be >= {low} in every dimension",
                                      node=self.name)
            if any(v > _ATTR_MAX for v in vals):
                raise ValidationError(f"{what} {list(vals)} is too large; valid: {low}..2**31-1 "
                                      f"in every dimension (a 32-bit int, as MIOpen and cuDNN "
                                      f"take it)", node=self.name)
        if self.convolution_mode == ConvolutionMode.NOT_SET:
            raise ValidationError("convolution_mode is NOT_SET; use CROSS_CORRELATION or "
                                  "CONVOLUTION", node=self.name)
        self.pre_padding, self.post_padding, self.stride, self.dilation = pre, post, stride, dil
        return pre, post, stride, dil

    def _groups(self, data: KnownTensor, filt: KnownTensor, data_port: str,
                filter_port: str) -> int:
        c_data, c_filter, k = int(data.dim[1]), int(filt.dim[1]), int(filt.dim[0])
        if c_filter <= 0 or c_data % c_filter:
            # the usual cause: dims written in channels-last order (an NHWC array's shape)
            if c_filter > 0 and int(data.dim[-1]) % c_filter == 0:
                hint = channels_last_hint(data_port, data.dim)
            elif int(filt.dim[-1]) > 0 and c_data % int(filt.dim[-1]) == 0:
                hint = channels_last_hint(filter_port, filt.dim)
            else:
                hint = ""
            raise ValidationError(
                f"channel mismatch: {data_port} has C={c_data} but the filter has C/groups="
                f"{c_filter}; C must be a multiple of the filter's channel count{hint}",
                node=self.name, port=data_port)
        groups = c_data // c_filter
        if k % groups:
            raise ValidationError(f"the filter's K={k} is not a multiple of groups={groups} "
                                  f"(= C {c_data} / filter C {c_filter})", node=self.name)
        self.groups = groups
        return groups

    def attributes(self) -> dict[str, Any]:
        """Attribute values (JSON-able)."""
        return {
            "pre_padding": None if self.pre_padding is None else list(self.pre_padding),
            "post_padding": None if self.post_padding is None else list(self.post_padding),
            "stride": None if self.stride is None else list(self.stride),
            "dilation": None if self.dilation is None else list(self.dilation),
            "convolution_mode": self.convolution_mode.name,
            "groups": self.groups,
        }


class ConvFpropNode(_ConvNode):
    """Forward convolution (cross-correlation): X (N,C,..), W (K,C/g,..) -> Y (N,K,..)."""

    op = "conv_fprop"
    INPUTS = ("X", "W")
    OUTPUTS = ("Y",)

    def infer(self) -> None:
        x, w = self.inputs["X"], self.inputs["W"]
        if x is None or w is None or x.dim is None or w.dim is None or len(x.dim) != len(w.dim):
            return
        try:
            pre, post, stride, dil = self._geometry(len(x.dim))
        except ValidationError:
            return
        if min(stride + dil, default=1) < 1:
            return
        dims = conv_output_dims(x.dim, w.dim, pre, post, stride, dil)
        if all(d > 0 for d in dims):
            set_output_shape(self, "Y", dims, x, strict=False)

    def validate(self) -> None:
        x = check_dims(self, "X", _FPROP_TYPES)
        w = check_dims(self, "W", _FPROP_TYPES)
        if (x.data_type == DataType.INT8) != (w.data_type == DataType.INT8):
            raise ValidationError(f"INT8 convolution needs INT8 X and W; got X {x.data_type.name}"
                                  f" and W {w.data_type.name}", node=self.name, port="W",
                                  tensor=w.name)
        check_rank(self, "X", x, (3, 4, 5))
        check_rank(self, "W", w, (len(x.dim),))
        pre, post, stride, dil = self._check_geometry(len(x.dim))
        self._groups(x, w, "X", "W")
        y_dim = conv_output_dims(x.dim, w.dim, pre, post, stride, dil)
        if any(d < 1 for d in y_dim):
            raise ValidationError(
                f"output dims {list(y_dim)} are not positive: the filter {list(w.dim[2:])} "
                f"(dilation {list(dil)}) is larger than the padded input {list(x.dim[2:])}",
                node=self.name, port="Y")
        set_output_shape(self, "Y", y_dim, x, strict=True)


# Output strides the user did not set follow the layout (axis order) of the op's data input,
# for all three convolutions: Y follows X, DX follows DY, DW follows X. This is AMD hipDNN's
# frontend rule (its ConvolutionFprop/Dgrad/WgradNode infer_properties_node extract the input's
# stride order). NVIDIA's cudnn-frontend instead makes every unset conv output channels-last;
# following the input keeps one layout per convolution, which MIOpen needs: an NCHW DY with a
# channels-last DX would be a mixed-layout problem MIOPEN_ENGINE declines. Set the strides
# (``set_stride``) to get any other layout.
def _follow_if_unset(t: Any, like: Any) -> None:
    if t.dim is not None and (t.stride is None or t._stride_inferred):
        t._stride = strides_like(t.dim, like)
        t._stride_inferred = True


class ConvDgradNode(_ConvNode):
    """Data gradient: DY (N,K,..), W (K,C/g,..) -> DX (N,C,..).

    DX dims cannot be recovered from DY when a stride > 1 (several input sizes give the same
    output size), so then they must be set with ``DX.set_dim(...)`` as in cudnn-frontend. With
    all strides 1 they are inferred, assuming groups = 1 (set DX's dims for grouped dgrad).
    """

    op = "conv_dgrad"
    INPUTS = ("DY", "W")
    OUTPUTS = ("DX",)

    def _inferred_dx(self) -> tuple[int, ...] | None:
        dy, w = self.inputs["DY"], self.inputs["W"]
        if dy is None or w is None or dy.dim is None or w.dim is None or len(dy.dim) != len(w.dim):
            return None
        pre, post, stride, dil = self._geometry(len(dy.dim))
        if any(s != 1 for s in stride):
            return None
        spatial = [dy.dim[i + 2] - 1 - pre[i] - post[i] + dil[i] * (w.dim[i + 2] - 1) + 1
                   for i in range(len(dy.dim) - 2)]
        return (dy.dim[0], w.dim[1], *spatial)

    def infer(self) -> None:
        out = self.outputs.get("DX")
        if out is not None and out.dim is not None and not out._dim_inferred:
            return
        try:
            dims = self._inferred_dx()
        except ValidationError:
            return
        if dims is not None and all(d > 0 for d in dims):
            set_output_shape(self, "DX", dims, self.inputs["DY"], strict=False)

    def validate(self) -> None:
        dy = check_dims(self, "DY", FLOAT_TYPES)
        w = check_dims(self, "W", FLOAT_TYPES)
        check_rank(self, "DY", dy, (3, 4, 5))
        check_rank(self, "W", w, (len(dy.dim),))
        pre, post, stride, dil = self._check_geometry(len(dy.dim))
        dx = self.outputs["DX"]
        assert dx is not None
        _follow_if_unset(dx, dy)
        if dx.dim is None or dx._dim_inferred:
            dims = self._inferred_dx()
            if dims is None:
                raise ValidationError(
                    f"DX dims cannot be inferred with stride {list(stride)} (several input sizes "
                    f"fit DY {list(dy.dim)}); set them with DX.set_dim([N, C, ...])",
                    node=self.name, port="DX", tensor=dx.name)
            set_output_shape(self, "DX", dims, dy, strict=True)
        known_dx = check_dims(self, "DX", FLOAT_TYPES)
        check_rank(self, "DX", known_dx, (len(dy.dim),))
        assert dx.dim is not None
        self._groups(known_dx, w, "DX", "W")
        expect = conv_output_dims(dx.dim, w.dim, pre, post, stride, dil)
        if tuple(dy.dim) != expect:
            raise ValidationError(
                f"DY dims {list(dy.dim)} do not match the forward output {list(expect)} of "
                f"DX {list(dx.dim)} and W {list(w.dim)}", node=self.name, port="DY",
                tensor=dy.name)
        set_output_shape(self, "DX", dx.dim, dy, strict=True)


class ConvWgradNode(_ConvNode):
    """Weight gradient: X (N,C,..), DY (N,K,..) -> DW (K,C/g,..).

    DW dims are inferred only with all strides 1 and groups = 1; otherwise set them with
    ``DW.set_dim([K, C/groups, kh, kw])`` as in cudnn-frontend.
    """

    op = "conv_wgrad"
    INPUTS = ("X", "DY")
    OUTPUTS = ("DW",)

    def _inferred_dw(self) -> tuple[int, ...] | None:
        x, dy = self.inputs["X"], self.inputs["DY"]
        if x is None or dy is None or x.dim is None or dy.dim is None or len(x.dim) != len(dy.dim):
            return None
        pre, post, stride, dil = self._geometry(len(x.dim))
        if any(s != 1 for s in stride):
            return None
        ks = []
        for i in range(len(x.dim) - 2):
            span = x.dim[i + 2] + pre[i] + post[i] - dy.dim[i + 2]
            if dil[i] < 1 or span < 0 or span % dil[i]:
                return None
            ks.append(span // dil[i] + 1)
        return (dy.dim[1], x.dim[1], *ks)

    def infer(self) -> None:
        out = self.outputs.get("DW")
        if out is not None and out.dim is not None and not out._dim_inferred:
            return
        try:
            dims = self._inferred_dw()
        except ValidationError:
            return
        if dims is not None:
            set_output_shape(self, "DW", dims, self.inputs["X"], strict=False)

    def validate(self) -> None:
        x = check_dims(self, "X", FLOAT_TYPES)
        dy = check_dims(self, "DY", FLOAT_TYPES)
        check_rank(self, "X", x, (3, 4, 5))
        check_rank(self, "DY", dy, (len(x.dim),))
        pre, post, stride, dil = self._check_geometry(len(x.dim))
        dw = self.outputs["DW"]
        assert dw is not None
        _follow_if_unset(dw, x)
        if dw.dim is None or dw._dim_inferred:
            dims = self._inferred_dw()
            if dims is None:
                raise ValidationError(
                    f"DW dims cannot be inferred with stride {list(stride)}; set them with "
                    f"DW.set_dim([K, C/groups, kh, kw])", node=self.name, port="DW",
                    tensor=dw.name)
            set_output_shape(self, "DW", dims, x, strict=True)
        known_dw = check_dims(self, "DW", FLOAT_TYPES)
        check_rank(self, "DW", known_dw, (len(x.dim),))
        assert dw.dim is not None
        self._groups(x, known_dw, "X", "DW")
        if dw.dim[0] != dy.dim[1]:
            raise ValidationError(f"DW has K={dw.dim[0]} but DY has {dy.dim[1]} channels",
                                  node=self.name, port="DW", tensor=dw.name)
        expect = conv_output_dims(x.dim, dw.dim, pre, post, stride, dil)
        if tuple(dy.dim) != expect:
            raise ValidationError(
                f"DY dims {list(dy.dim)} do not match the forward output {list(expect)} of "
                f"X {list(x.dim)} and DW {list(dw.dim)}", node=self.name, port="DY",
                tensor=dy.name)
        set_output_shape(self, "DW", dw.dim, x, strict=True)

"""Descriptor functions (tensor, convolution, activation, derived BN) with the library's rules.

The rules (defaults, accepted values, statuses) were read off the real libMIOpen 3.4.0 and 3.5.1
(tests/live/test_emulated_crosscheck.py keeps them honest).
"""

from __future__ import annotations

from ctypes import c_double, c_int, c_size_t, c_uint

from ._base import DeviceBase
from ._core import (
    INVALID_VALUE,
    NOT_IMPLEMENTED,
    UNKNOWN_ERROR,
    Args,
    Status,
    addr,
    api,
    read_array,
    require,
    write_out,
)
from ._objects import (
    FLOAT,
    LAYOUTS,
    ActivationDesc,
    ConvDesc,
    TensorDesc,
    conv_output_dims,
    strides_for,
)

__all__ = ["DescriptorApi"]


class DescriptorApi(DeviceBase):
    """Mixin: the descriptor functions of the emulated libMIOpen."""

    # ------------------------------------------------------------------ tensors
    @api("miopenCreateTensorDescriptor")
    def _create_tensor(self, a: Args) -> None:
        require(addr(a.tensorDesc), "tensorDesc: Dereferencing nullptr")
        write_out(a.tensorDesc, c_size_t, self.handles.new("tensor", TensorDesc()), "tensorDesc")

    @api("miopenDestroyTensorDescriptor")
    def _destroy_tensor(self, a: Args) -> None:
        self.handles.destroy("tensor", a.tensorDesc, "tensorDesc")

    @api("miopenSet4dTensorDescriptor")
    def _set4d(self, a: Args) -> None:
        self.tensor_desc(a.tensorDesc, "tensorDesc").set(a.dataType, (a.n, a.c, a.h, a.w), None)

    @api("miopenSet4dTensorDescriptorEx")
    def _set4d_ex(self, a: Args) -> None:
        desc = self.tensor_desc(a.tensorDesc, "tensorDesc")
        desc.set(a.dataType, (a.n, a.c, a.h, a.w), (a.nStride, a.cStride, a.hStride, a.wStride))

    @api("miopenSetTensorDescriptor")
    def _set_nd(self, a: Args) -> None:
        desc = self.tensor_desc(a.tensorDesc, "tensorDesc")
        require(a.nbDims > 0 and addr(a.dimsA), "nbDims/dimsA invalid", INVALID_VALUE)
        dims = tuple(read_array(a.dimsA, c_int, a.nbDims, "dimsA"))
        strides = tuple(read_array(a.stridesA, c_int, a.nbDims, "stridesA")) if addr(a.stridesA) else None
        desc.set(a.dataType, dims, strides)

    @api("miopenSetTensorDescriptorV2")
    def _set_nd_v2(self, a: Args) -> None:
        desc = self.tensor_desc(a.tensorDesc, "tensorDesc")
        require(a.nbDims > 0 and addr(a.dimsA), "nbDims/dimsA invalid", INVALID_VALUE)
        dims = tuple(read_array(a.dimsA, c_size_t, a.nbDims, "dimsA"))
        strides = tuple(read_array(a.stridesA, c_size_t, a.nbDims, "stridesA")) if addr(a.stridesA) else None
        desc.set(a.dataType, dims, strides)

    @api("miopenSetNdTensorDescriptorWithLayout")
    def _set_layout(self, a: Args) -> None:
        desc = self.tensor_desc(a.tensorDesc, "tensorDesc")
        require(addr(a.lens), "lens: NULL", INVALID_VALUE)
        lens = tuple(read_array(a.lens, c_int, a.num_lens, "lens"))
        if a.tensorLayout in (3, 4, 5, 6):
            raise Status(NOT_IMPLEMENTED, "vectorised layouts are not emulated")
        require(a.tensorLayout in LAYOUTS, "Unsupported layout")
        rank, order = LAYOUTS[a.tensorLayout]
        require(len(lens) == rank, "Unsupported layout")
        require(all(n > 0 for n in lens), "Lengths must be > 0")
        desc.set(a.dataType, lens, strides_for(lens, order))

    @api("miopenGetTensorDescriptorSize")
    def _get_size(self, a: Args) -> None:
        desc = self.tensor_desc(a.tensorDesc, "tensorDesc")
        write_out(a.size, c_int, len(desc.dims), "size")  # the rank, despite the doc's wording

    @api("miopenGetTensorDescriptor")
    def _get_nd(self, a: Args) -> None:
        desc = self.tensor_desc(a.tensorDesc, "tensorDesc")
        if addr(a.dataType):  # every out-array is optional here
            write_out(a.dataType, c_uint, desc.dtype, "dataType")
        for name, values in (("dimsA", desc.dims), ("stridesA", desc.strides)):
            where = addr(getattr(a, name))
            if where:
                (c_int * len(values)).from_address(where)[:] = list(values)

    @api("miopenGet4dTensorDescriptor")
    def _get4d(self, a: Args) -> None:
        desc = self.tensor_desc(a.tensorDesc, "tensorDesc")
        require(len(desc.dims) >= 4, "Get4d on a descriptor of rank < 4 (undefined in the library)")
        write_out(a.dataType, c_uint, desc.dtype, "dataType")
        for name, value in zip(("n", "c", "h", "w"), desc.dims[:4], strict=True):
            write_out(getattr(a, name), c_int, value, name)
        for name, value in zip(("nStride", "cStride", "hStride", "wStride"), desc.strides[:4], strict=True):
            write_out(getattr(a, name), c_int, value, name)

    @api("miopenGetTensorNumBytes")
    def _num_bytes(self, a: Args) -> None:
        desc = self.tensor_desc(a.tensorDesc, "tensorDesc")
        write_out(a.numBytes, c_size_t, desc.num_bytes, "numBytes")

    # ------------------------------------------------------------------ convolution descriptors
    @api("miopenCreateConvolutionDescriptor")
    def _create_conv(self, a: Args) -> None:
        require(addr(a.convDesc), "convDesc: Dereferencing nullptr")
        write_out(a.convDesc, c_size_t, self.handles.new("conv", ConvDesc()), "convDesc")

    @api("miopenDestroyConvolutionDescriptor")
    def _destroy_conv(self, a: Args) -> None:
        self.handles.destroy("conv", a.convDesc, "convDesc")

    def _init_conv(self, conv: ConvDesc, mode: int, pads: list[int], strides: list[int], dils: list[int]) -> None:
        require(
            all(p >= 0 for p in pads) and all(s >= 1 for s in strides) and all(d >= 1 for d in dils),
            "MIOPEN expects padding >= 0, stride >= 1, dilation >= 1",
        )
        require(mode in (0, 1, 2, 3), "Convolution mode not supported")
        conv.spatial_dim = len(pads)
        conv.pads, conv.strides, conv.dilations = tuple(pads), tuple(strides), tuple(dils)
        conv.mode = 0 if mode in (2, 3) else mode  # the deprecated group/depthwise modes read back as 0
        conv.trans_output_pads = (0,) * len(pads)

    @api("miopenInitConvolutionDescriptor")
    def _init_conv2d(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        self._init_conv(conv, a.c_mode, [a.pad_h, a.pad_w], [a.stride_h, a.stride_w],
                        [a.dilation_h, a.dilation_w])

    @api("miopenInitConvolutionNdDescriptor")
    def _init_conv_nd(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        n = a.spatialDim
        require(n >= 0, "spatialDim must be >= 0")
        self._init_conv(conv, a.c_mode, read_array(a.padA, c_int, n, "padA"),
                        read_array(a.strideA, c_int, n, "strideA"),
                        read_array(a.dilationA, c_int, n, "dilationA"))

    @api("miopenGetConvolutionSpatialDim")
    def _conv_spatial_dim(self, a: Args) -> None:
        write_out(a.spatialDim, c_int, self.conv_desc(a.convDesc, "convDesc").spatial_dim, "spatialDim")

    @api("miopenGetConvolutionDescriptor")
    def _get_conv2d(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        require(conv.spatial_dim == 2, "miopenGetConvolutionDescriptor needs a 2-D descriptor")
        write_out(a.c_mode, c_uint, conv.mode, "c_mode")
        for prefix, values in (("pad", conv.pads), ("stride", conv.strides), ("dilation", conv.dilations)):
            write_out(getattr(a, prefix + "_h"), c_int, values[0], prefix + "_h")
            write_out(getattr(a, prefix + "_w"), c_int, values[1], prefix + "_w")

    @api("miopenGetConvolutionNdDescriptor")
    def _get_conv_nd(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        n = a.requestedSpatialDim
        require(n <= conv.spatial_dim, "requestedSpatialDim is larger than actual spatial dimension",
                UNKNOWN_ERROR)
        write_out(a.spatialDim, c_int, conv.spatial_dim, "spatialDim")
        for name, values in (("padA", conv.pads), ("strideA", conv.strides), ("dilationA", conv.dilations)):
            where = addr(getattr(a, name))
            require(where, f"{name}: Dereferencing nullptr")
            (c_int * n).from_address(where)[:] = list(values[:n])
        write_out(a.c_mode, c_uint, conv.mode, "c_mode")

    @api("miopenSetConvolutionGroupCount")
    def _set_groups(self, a: Args) -> None:
        # the library accepts any value here (0 and negatives included); use sites reject them
        self.conv_desc(a.convDesc, "convDesc").group_count = a.groupCount

    @api("miopenGetConvolutionGroupCount")
    def _get_groups(self, a: Args) -> None:
        write_out(a.groupCount, c_int, self.conv_desc(a.convDesc, "convDesc").group_count, "groupCount")

    @api("miopenSetTransposeConvNdOutputPadding")
    def _set_trans_pad(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        require(a.spatialDim == conv.spatial_dim, "spatialDim does not match the descriptor")
        conv.trans_output_pads = tuple(read_array(a.adjA, c_int, a.spatialDim, "adjA"))

    @api("miopenSetTransposeConvOutputPadding")
    def _set_trans_pad_2d(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        require(conv.spatial_dim == 2, "miopenSetTransposeConvOutputPadding needs a 2-D descriptor")
        conv.trans_output_pads = (a.adj_h, a.adj_w)

    @api("miopenSetConvolutionFindMode")
    def _set_find_mode(self, a: Args) -> None:
        valid = (1, 2, 3, 5, 6, 7) if self.version >= (3, 5, 0) else (1, 2, 3, 5)
        require(a.findMode in valid, "Invalid enum value specified for findMode")
        self.conv_desc(a.convDesc, "convDesc").find_mode = a.findMode

    @api("miopenGetConvolutionFindMode")
    def _get_find_mode(self, a: Args) -> None:
        write_out(a.findMode, c_uint, self.conv_desc(a.convDesc, "convDesc").find_mode, "findMode")

    @api("miopenSetConvolutionAttribute")
    def _set_attr(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        valid = {0: (-1, 0, 1), 1: (0, 1), 2: (0, 1)}
        require(a.attr in valid, f"Attribute [{a.attr}] does not exist.")
        require(a.value in valid[a.attr], f"Attemp to set invalid value for attribute {a.attr}: {a.value}")
        conv.attributes[a.attr] = a.value

    @api("miopenGetConvolutionAttribute")
    def _get_attr(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        require(a.attr in conv.attributes, f"Attribute [{a.attr}] does not exist.")
        write_out(a.value, c_int, conv.attributes[a.attr], "value")

    @api("miopenGetConvolutionNdForwardOutputDim")
    def _conv_out_nd(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        dims = conv_output_dims(conv, self.tensor_desc(a.inputTensorDesc, "inputTensorDesc"),
                                self.tensor_desc(a.filterDesc, "filterDesc"))
        write_out(a.nDim, c_int, len(dims), "nDim")
        where = addr(a.outputTensorDimA)
        require(where, "outputTensorDimA: Dereferencing nullptr")
        (c_int * len(dims)).from_address(where)[:] = list(dims)

    @api("miopenGetConvolutionForwardOutputDim")
    def _conv_out_2d(self, a: Args) -> None:
        conv = self.conv_desc(a.convDesc, "convDesc")
        dims = conv_output_dims(conv, self.tensor_desc(a.inputTensorDesc, "inputTensorDesc"),
                                self.tensor_desc(a.filterDesc, "filterDesc"))
        require(len(dims) == 4, "miopenGetConvolutionForwardOutputDim needs 4-D tensors")
        for name, value in zip("nchw", dims, strict=True):
            write_out(getattr(a, name), c_int, value, name)

    # ------------------------------------------------------------------ activation descriptors
    @api("miopenCreateActivationDescriptor")
    def _create_act(self, a: Args) -> None:
        require(addr(a.activDesc), "activDesc: Dereferencing nullptr")
        write_out(a.activDesc, c_size_t, self.handles.new("activation", ActivationDesc()), "activDesc")

    @api("miopenDestroyActivationDescriptor")
    def _destroy_act(self, a: Args) -> None:
        self.handles.destroy("activation", a.activDesc, "activDesc")

    @api("miopenSetActivationDescriptor")
    def _set_act(self, a: Args) -> None:
        # the library stores any mode value; using an unknown one fails later
        desc = self.handles.get("activation", a.activDesc, "activDesc", ActivationDesc)
        desc.mode, desc.alpha, desc.beta, desc.gamma = a.mode, a.activAlpha, a.activBeta, a.activGamma

    @api("miopenGetActivationDescriptor")
    def _get_act(self, a: Args) -> None:
        desc = self.activation_desc(a.activDesc, "activDesc")
        write_out(a.mode, c_uint, desc.mode, "mode")
        write_out(a.activAlpha, c_double, desc.alpha, "activAlpha")
        write_out(a.activBeta, c_double, desc.beta, "activBeta")
        write_out(a.activGamma, c_double, desc.gamma, "activGamma")

    # ------------------------------------------------------------------ batchnorm descriptor
    @api("miopenDeriveBNTensorDescriptor")
    def _derive_bn(self, a: Args) -> None:
        derived = self.tensor_desc(a.derivedBnDesc, "derivedBnDesc")
        x = self.set_tensor_desc(a.xDesc, "xDesc")
        require(a.bn_mode in (0, 1), f"bn_mode {a.bn_mode} is not a miopenBatchNormMode_t")
        lens = (1, x.dims[1], *((1,) * (len(x.dims) - 2))) if a.bn_mode == 1 else (1, *x.dims[1:])
        derived.set(FLOAT, lens, None)  # always fp32, packed, whatever x's type and layout

"""The operator families beyond convolution/BN on the real libMIOpen, without a GPU.

Every descriptor's create/set/get/destroy round trip and every size query that takes no handle:
pooling, LRN, softmax (descriptor and Find 2.0 problem), dropout, CTC loss, tensor reduction,
RNN (descriptor, sequence tensor, layer parameter layout), MHA, and the backend graph API
(``miopenBackend*``). What needs a handle (workspace/reserve sizes, dropout states) is in
tests/stubgpu/test_op_family_sizes.py.
"""

from __future__ import annotations

import ctypes
import itertools
from ctypes import byref, c_bool, c_double, c_float, c_int, c_int64, c_size_t, c_uint
from typing import Any

import pytest
from live_util import get_tensor, int_array, objects

from miopen_ctypes import errors
from miopen_ctypes import types as mt
from miopen_ctypes.enums import (
    miopenBackendAttributeName_t,
    miopenBackendAttributeType_t,
    miopenBackendDescriptorType_t,
    miopenDataType_t,
    miopenIndexType_t,
    miopenIndicesType_t,
    miopenLRNMode_t,
    miopenPoolingMode_t,
    miopenPoolingWorkspaceIndexMode_t,
    miopenProblemDirection_t,
    miopenReduceTensorOp_t,
    miopenRNNMode_t,
    miopenSoftmaxAlgorithm_t,
    miopenSoftmaxMode_t,
)

FLOAT, HALF = int(miopenDataType_t.miopenFloat), int(miopenDataType_t.miopenHalf)
INDEX_BYTES = {miopenIndexType_t.miopenIndexUint8: 1, miopenIndexType_t.miopenIndexUint16: 2,
               miopenIndexType_t.miopenIndexUint32: 4, miopenIndexType_t.miopenIndexUint64: 8}


def _new(lib: Any, ctype: Any, create: str) -> Any:
    handle = ctype()
    getattr(lib, create)(byref(handle))
    assert handle, f"{create} returned success and NULL"
    return handle


def _out_dim(size: int, window: int, pad: int, stride: int) -> int:
    return (size + 2 * pad - window) // stride + 1


# ------------------------------------------------------------------------------------ pooling


@pytest.mark.parametrize("mode", list(miopenPoolingMode_t))
def test_pooling_2d_round_trip_and_output_dims(lib: Any, mode: miopenPoolingMode_t) -> None:
    pool = _new(lib, mt.miopenPoolingDescriptor_t, "miopenCreatePoolingDescriptor")
    try:
        window, pad, stride = (3, 2), (1, 0), (2, 1)
        lib.miopenSet2dPoolingDescriptor(pool, int(mode), *window, *pad, *stride)
        got = [c_int() for _ in range(6)]
        m = c_uint()
        lib.miopenGet2dPoolingDescriptor(pool, byref(m), *(byref(v) for v in got))
        assert (m.value, tuple(v.value for v in got)) == (mode, (*window, *pad, *stride))
        with objects(lib) as o:
            x = o.tensor(FLOAT, (2, 3, 9, 7))
            n, c, h, w = (c_int() for _ in range(4))
            lib.miopenGetPoolingForwardOutputDim(pool, x, byref(n), byref(c), byref(h), byref(w))
            expected = (2, 3, *(_out_dim(s, k, p, st) for s, k, p, st in zip((9, 7), window, pad, stride, strict=True)))
            assert (n.value, c.value, h.value, w.value) == expected
    finally:
        lib.miopenDestroyPoolingDescriptor(pool)


@pytest.mark.parametrize("spatial", [2, 3])
def test_pooling_nd_round_trip_and_output_dims(lib: Any, spatial: int) -> None:
    window, pad, stride = [3, 2, 2][:spatial], [1, 0, 1][:spatial], [2, 1, 2][:spatial]
    dims = [2, 5, 8, 6, 7][: 2 + spatial]
    pool = _new(lib, mt.miopenPoolingDescriptor_t, "miopenCreatePoolingDescriptor")
    try:
        lib.miopenSetNdPoolingDescriptor(pool, int(miopenPoolingMode_t.miopenPoolingAverage), spatial,
                                         int_array(window), int_array(pad), int_array(stride))
        mode, nb = c_uint(), c_int()
        w, p, s = ((c_int * spatial)() for _ in range(3))
        lib.miopenGetNdPoolingDescriptor(pool, spatial, byref(mode), byref(nb), w, p, s)
        assert (mode.value, nb.value, list(w), list(p), list(s)) == (1, spatial, window, pad, stride)
        with objects(lib) as o:
            x = o.tensor(FLOAT, dims)
            out = (c_int * len(dims))()
            lib.miopenGetPoolingNdForwardOutputDim(pool, x, len(dims), out)
            spatial_out = [_out_dim(*t) for t in zip(dims[2:], window, pad, stride, strict=True)]
            assert list(out) == [*dims[:2], *spatial_out]
    finally:
        lib.miopenDestroyPoolingDescriptor(pool)


def test_pooling_index_settings_round_trip(lib: Any) -> None:
    pool = _new(lib, mt.miopenPoolingDescriptor_t, "miopenCreatePoolingDescriptor")
    try:
        value = c_uint()
        for index_type in miopenIndexType_t:
            lib.miopenSetPoolingIndexType(pool, int(index_type))
            lib.miopenGetPoolingIndexType(pool, byref(value))
            assert value.value == index_type
        for mode in miopenPoolingWorkspaceIndexMode_t:
            lib.miopenSetPoolingWorkSpaceIndexMode(pool, int(mode))
            lib.miopenGetPoolingWorkSpaceIndexMode(pool, byref(value))
            assert value.value == mode
    finally:
        lib.miopenDestroyPoolingDescriptor(pool)


@pytest.mark.parametrize(("mode", "index_type"), list(itertools.product(miopenPoolingMode_t, miopenIndexType_t)))
def test_pooling_workspace_is_one_index_per_output(lib: Any, mode: Any, index_type: Any) -> None:
    """MIOpen's answer: max pooling keeps one index of the pooling index type per output element
    (the V1 query assumes uint8); the average modes need none."""
    pool = _new(lib, mt.miopenPoolingDescriptor_t, "miopenCreatePoolingDescriptor")
    try:
        lib.miopenSet2dPoolingDescriptor(pool, int(mode), 2, 2, 0, 0, 2, 2)
        lib.miopenSetPoolingIndexType(pool, int(index_type))
        with objects(lib) as o:
            for dtype in (FLOAT, HALF):
                y = o.tensor(dtype, (2, 3, 4, 5))
                v1, v2 = c_size_t(), c_size_t()
                lib.miopenPoolingGetWorkSpaceSize(y, byref(v1))
                lib.miopenPoolingGetWorkSpaceSizeV2(pool, y, byref(v2))
                assert v1.value == 120
                max_mode = mode == miopenPoolingMode_t.miopenPoolingMax
                assert v2.value == (120 * INDEX_BYTES[index_type] if max_mode else 0)
    finally:
        lib.miopenDestroyPoolingDescriptor(pool)


# ------------------------------------------------------------------------------------ LRN


@pytest.mark.parametrize("mode", list(miopenLRNMode_t))
def test_lrn_round_trip_and_workspace(lib: Any, mode: miopenLRNMode_t) -> None:
    lrn = _new(lib, mt.miopenLRNDescriptor_t, "miopenCreateLRNDescriptor")
    try:
        lib.miopenSetLRNDescriptor(lrn, int(mode), 5, 1e-4, 0.75, 2.0)
        m, n = c_uint(), c_uint()
        a, b, k = c_double(), c_double(), c_double()
        lib.miopenGetLRNDescriptor(lrn, byref(m), byref(n), byref(a), byref(b), byref(k))
        assert (m.value, n.value, a.value, b.value, k.value) == (mode, 5, 1e-4, 0.75, 2.0)
        with objects(lib) as o:
            for dtype in (FLOAT, HALF):  # MIOpen's answer: one float scale per element, any dtype
                size = c_size_t()
                lib.miopenLRNGetWorkSpaceSize(o.tensor(dtype, (2, 3, 4, 5)), byref(size))
                assert size.value == 120 * 4
    finally:
        lib.miopenDestroyLRNDescriptor(lrn)


# ------------------------------------------------------------------------------------ softmax


@pytest.mark.parametrize(("algorithm", "mode"), list(itertools.product(miopenSoftmaxAlgorithm_t, miopenSoftmaxMode_t)))
def test_softmax_descriptor_round_trip_and_problem(lib: Any, algorithm: Any, mode: Any) -> None:
    """No destroy function exists for the softmax (and MHA) descriptor in either header."""
    desc = _new(lib, mt.miopenSoftmaxDescriptor_t, "miopenCreateSoftmaxDescriptor")
    lib.miopenSetSoftmaxDescriptor(desc, 0.5, 0.25, int(algorithm), int(mode))
    alpha, beta = c_float(), c_float()
    alg, m = c_uint(), c_uint()
    lib.miopenGetSoftmaxDescriptor(desc, byref(alpha), byref(beta), byref(alg), byref(m))
    assert (alpha.value, beta.value, alg.value, m.value) == (0.5, 0.25, algorithm, mode)
    for direction in (miopenProblemDirection_t.miopenProblemDirectionForward,
                      miopenProblemDirection_t.miopenProblemDirectionBackward):
        problem = mt.miopenProblem_t()
        lib.miopenCreateSoftmaxProblem(byref(problem), desc, int(direction))
        assert problem
        lib.miopenDestroyProblem(problem)


# ------------------------------------------------------------------------------------ dropout, CTC


@pytest.mark.parametrize("dtype", [FLOAT, HALF, int(miopenDataType_t.miopenBFloat16)])
def test_dropout_reserve_is_one_byte_per_element(lib: Any, dtype: int) -> None:
    dropout = _new(lib, mt.miopenDropoutDescriptor_t, "miopenCreateDropoutDescriptor")
    try:
        with objects(lib) as o:
            size = c_size_t()
            lib.miopenDropoutGetReserveSpaceSize(o.tensor(dtype, (2, 3, 4, 5)), byref(size))
            assert size.value == 120  # MIOpen's answer: a byte mask
    finally:
        lib.miopenDestroyDropoutDescriptor(dropout)


def test_ctc_loss_descriptor_default_and_round_trip(lib: Any) -> None:
    ctc = _new(lib, mt.miopenCTCLossDescriptor_t, "miopenCreateCTCLossDescriptor")
    try:
        dtype, blank, softmax = c_uint(), c_int(), c_bool()
        lib.miopenGetCTCLossDescriptor(ctc, byref(dtype), byref(blank), byref(softmax))
        assert (dtype.value, blank.value, softmax.value) == (FLOAT, 0, True)  # MIOpen's defaults
        lib.miopenSetCTCLossDescriptor(ctc, FLOAT, 3, False)
        lib.miopenGetCTCLossDescriptor(ctc, byref(dtype), byref(blank), byref(softmax))
        assert (dtype.value, blank.value, softmax.value) == (FLOAT, 3, False)
    finally:
        lib.miopenDestroyCTCLossDescriptor(ctc)


@pytest.mark.parametrize("op", list(miopenReduceTensorOp_t))
def test_reduce_tensor_descriptor_round_trip(lib: Any, op: Any) -> None:
    reduce = _new(lib, mt.miopenReduceTensorDescriptor_t, "miopenCreateReduceTensorDescriptor")
    try:
        # op, compute type, NaN propagate, flattened indices, 32-bit indices
        setting = (int(op), FLOAT, 1, 1, int(miopenIndicesType_t.MIOPEN_32BIT_INDICES))
        lib.miopenSetReduceTensorDescriptor(reduce, *setting)
        got = [c_uint() for _ in range(5)]
        lib.miopenGetReduceTensorDescriptor(reduce, *(byref(v) for v in got))
        assert tuple(v.value for v in got) == setting
        # MIOpen's answer to other index widths: "Only int32 type is supported" as UnknownError
        with pytest.raises(errors.MIOpenUnknownError, match="miopenSetReduceTensorDescriptor"):
            lib.miopenSetReduceTensorDescriptor(reduce, *setting[:4], int(miopenIndicesType_t.MIOPEN_16BIT_INDICES))
    finally:
        lib.miopenDestroyReduceTensorDescriptor(reduce)


# ------------------------------------------------------------------------------------ RNN


@pytest.mark.parametrize(("mode", "bidirectional"), list(itertools.product(miopenRNNMode_t, (0, 1))))
def test_rnn_descriptor_and_parameter_layout(lib: Any, mode: Any, bidirectional: int) -> None:
    """Round trip, then the layer parameter/bias layout read without a handle: the blocks tile the
    weight space without gaps or overlap, and hold as many elements as PyTorch's module of the same
    shape has parameters (an independent count)."""
    torch = pytest.importorskip("torch")
    hidden, layers, inputs = 16, 2, 8
    rnn = _new(lib, mt.miopenRNNDescriptor_t, "miopenCreateRNNDescriptor")
    try:
        # inMode linear, direction, mode, bias on, algo default, float
        lib.miopenSetRNNDescriptor(rnn, hidden, layers, 0, bidirectional, int(mode), 1, 0, FLOAT)
        got = [c_uint() for _ in range(5)]
        size, count = c_int(), c_int()
        lib.miopenGetRNNDescriptor(rnn, *(byref(v) for v in got), byref(size), byref(count))
        assert (tuple(v.value for v in got), size.value, count.value) == ((mode, 0, 0, bidirectional, 1), hidden, layers)
        padding = c_uint()
        lib.miopenSetRNNPaddingMode(rnn, 1)
        lib.miopenGetRNNPaddingMode(rnn, byref(padding))
        assert padding.value == 1
        per_layer = {miopenRNNMode_t.miopenLSTM: 8, miopenRNNMode_t.miopenGRU: 6}.get(mode, 2)
        blocks = []
        with objects(lib) as o:
            x = o.tensor(FLOAT, (4, inputs))
            for layer in range(layers * (1 + bidirectional)):
                for index in range(per_layer):
                    for query in ("miopenGetRNNLayerParamOffset", "miopenGetRNNLayerBiasOffset"):
                        desc, offset = o.new("tensor"), c_size_t()
                        getattr(lib, query)(rnn, layer, x, index, desc, byref(offset))
                        dims = get_tensor(lib, desc)[1]
                        blocks.append((offset.value, int(torch.tensor(dims).prod())))
        blocks.sort()
        assert blocks[0][0] == 0
        assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(blocks)), blocks
        module = {miopenRNNMode_t.miopenLSTM: torch.nn.LSTM, miopenRNNMode_t.miopenGRU: torch.nn.GRU}.get(mode)
        kwargs = {"num_layers": layers, "bidirectional": bool(bidirectional)}
        if module is None:
            module = torch.nn.RNN
            kwargs["nonlinearity"] = "relu" if mode == miopenRNNMode_t.miopenRNNRELU else "tanh"
        expected = sum(p.numel() for p in module(inputs, hidden, **kwargs).parameters())
        assert sum(n for _, n in blocks) == expected
    finally:
        lib.miopenDestroyRNNDescriptor(rnn)


def test_sequence_tensor_round_trip(lib: Any) -> None:
    seq = _new(lib, mt.miopenSeqTensorDescriptor_t, "miopenCreateSeqTensorDescriptor")
    try:
        lengths = [5, 3, 2]
        lib.miopenSetRNNDataSeqTensorDescriptor(seq, FLOAT, 1, 5, 3, 8, int_array(lengths), None)
        dtype, layout = c_uint(), c_uint()
        longest, batch, vector = c_int(), c_int(), c_int()
        out = (c_int * 3)()
        lib.miopenGetRNNDataSeqTensorDescriptor(seq, byref(dtype), byref(layout), byref(longest),
                                                byref(batch), byref(vector), 3, out, None)
        assert (dtype.value, layout.value, longest.value, batch.value, vector.value, list(out)) == (
            FLOAT, 1, 5, 3, 8, lengths)
    finally:
        lib.miopenDestroySeqTensorDescriptor(seq)


# ------------------------------------------------------------------------------------ MHA, backend


def test_mha_descriptor_round_trip_and_problems(lib: Any) -> None:
    mha = _new(lib, mt.miopenMhaDescriptor_t, "miopenCreateMhaDescriptor")
    lib.miopenSetMhaDescriptor(mha, 0.125)
    scale = c_float()
    lib.miopenGetMhaDescriptor(mha, byref(scale))
    assert scale.value == 0.125
    for direction in (miopenProblemDirection_t.miopenProblemDirectionForward,
                      miopenProblemDirection_t.miopenProblemDirectionBackward):
        problem = mt.miopenProblem_t()
        lib.miopenCreateMhaProblem(byref(problem), mha, int(direction))
        lib.miopenDestroyProblem(problem)


#: What a graph needs from the backend API; MIOpen creates these (and declines others typed).
GRAPH_KINDS = ("TENSOR", "OPERATIONGRAPH", "ENGINE", "ENGINECFG", "ENGINEHEUR", "EXECUTION_PLAN",
               "VARIANT_PACK", "POINTWISE", "OPERATION_POINTWISE", "OPERATION_CONVOLUTION_FORWARD")


def test_backend_descriptor_kinds(lib: Any) -> None:
    created, declined = [], []
    for kind in miopenBackendDescriptorType_t:
        desc = mt.miopenBackendDescriptor_t()
        try:
            lib.miopenBackendCreateDescriptor(int(kind), byref(desc))
        except errors.MIOpenUnsupportedOpError:
            declined.append(kind.name)
            continue
        created.append(kind.name)
        lib.miopenBackendDestroyDescriptor(desc)
    names = {k.removeprefix("MIOPEN_BACKEND_").removesuffix("_DESCRIPTOR") for k in created}
    assert set(GRAPH_KINDS) <= names, sorted(names)
    assert declined, "every kind created: the typed refusal is not exercised"


def test_backend_tensor_attributes(lib: Any) -> None:
    names, types = miopenBackendAttributeName_t, miopenBackendAttributeType_t
    desc = mt.miopenBackendDescriptor_t()
    lib.miopenBackendCreateDescriptor(int(miopenBackendDescriptorType_t.MIOPEN_BACKEND_TENSOR_DESCRIPTOR), byref(desc))

    def put(name: Any, kind: Any, values: list[int], ctype: Any) -> None:
        lib.miopenBackendSetAttribute(desc, int(name), int(kind), len(values), (ctype * len(values))(*values))

    try:
        put(names.MIOPEN_ATTR_TENSOR_DATA_TYPE, types.MIOPEN_TYPE_DATA_TYPE, [FLOAT], c_uint)
        put(names.MIOPEN_ATTR_TENSOR_DIMENSIONS, types.MIOPEN_TYPE_INT64, [2, 3, 4, 5], c_int64)
        put(names.MIOPEN_ATTR_TENSOR_STRIDES, types.MIOPEN_TYPE_INT64, [60, 20, 5, 1], c_int64)
        put(names.MIOPEN_ATTR_TENSOR_UNIQUE_ID, types.MIOPEN_TYPE_INT64, [7], c_int64)
        with pytest.raises(errors.MIOpenNotImplementedError, match="miopenBackendSetAttribute"):
            put(names.MIOPEN_ATTR_TENSOR_BYTE_ALIGNMENT, types.MIOPEN_TYPE_INT64, [16], c_int64)
        out, count = (c_int64 * 4)(), c_int64()
        with pytest.raises(errors.MIOpenNotInitializedError, match="miopenBackendGetAttribute"):
            lib.miopenBackendGetAttribute(desc, int(names.MIOPEN_ATTR_TENSOR_DIMENSIONS),
                                          int(types.MIOPEN_TYPE_INT64), 4, byref(count), out)
        lib.miopenBackendFinalize(desc)
        for name, expected in ((names.MIOPEN_ATTR_TENSOR_DIMENSIONS, [2, 3, 4, 5]),
                               (names.MIOPEN_ATTR_TENSOR_STRIDES, [60, 20, 5, 1]),
                               (names.MIOPEN_ATTR_TENSOR_UNIQUE_ID, [7])):
            out = (c_int64 * 4)()
            lib.miopenBackendGetAttribute(desc, int(name), int(types.MIOPEN_TYPE_INT64), len(expected),
                                          byref(count), out)
            assert list(out)[: count.value] == expected
        with pytest.raises(errors.MIOpenNotInitializedError):  # finalized: read-only
            put(names.MIOPEN_ATTR_TENSOR_UNIQUE_ID, types.MIOPEN_TYPE_INT64, [8], c_int64)
    finally:
        lib.miopenBackendDestroyDescriptor(desc)


# ------------------------------------------------------------------------------------ versions


def test_layer_norm_backward_needs_3_5(lib: Any, expected_api: tuple[int, int, int]) -> None:
    """3.4 lacks miopenLayerNormBackward: the typed version error names it (no C call happens)."""
    if expected_api >= (3, 5, 0):
        assert lib.capabilities.has("miopenLayerNormBackward")
        return
    assert not lib.capabilities.has("miopenLayerNormBackward")
    with pytest.raises(errors.MIOpenVersionError, match="miopenGetLayerNormBackwardWorkspaceSize"):
        lib.miopenGetLayerNormBackwardWorkspaceSize(*([None] * 12))
    with pytest.raises(errors.MIOpenVersionError, match="miopenLayerNormBackward"):
        lib.miopenLayerNormBackward(*([None] * 21))


def test_every_header_function_resolves(lib: Any, expected_api: tuple[int, int, int]) -> None:
    """Every bound function this version declares is a real symbol of the loaded library."""
    import miopen_ctypes

    expected = {n for n, p in miopen_ctypes.PROTOTYPES.items() if tuple(p.since) <= expected_api}
    assert expected <= lib.symbols, sorted(expected - lib.symbols)
    assert len(expected) == (266 if expected_api >= (3, 5, 0) else 258)
    assert ctypes.cast(lib.cfunc("miopenBackendExecute"), ctypes.c_void_p).value

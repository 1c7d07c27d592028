"""The sizes MIOpen computes with a handle for the operator families beyond convolution/BN.

The real libMIOpen (3.4.0, 3.5.1) on the stub GPU answers the workspace / reserve / parameter
size queries of RNN, CTC loss, dropout, tensor reductions and the beta norms; each answer is
checked against an independent count (PyTorch's parameter count, element counts) or against
another MIOpen query that must agree with it. docs/MIOPEN_DIRECT.md records the numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from ctypes import byref, c_bool, c_float, c_int, c_size_t, c_uint, c_ulonglong, c_void_p
from typing import Any

import pytest

from miopen_ctypes import errors
from miopen_ctypes import types as mt
from miopen_ctypes.enums import (
    miopenDataType_t,
    miopenNormMode_t,
    miopenReduceTensorIndices_t,
    miopenReduceTensorOp_t,
    miopenRNNFWDMode_t,
    miopenRNNMode_t,
)

FLOAT = int(miopenDataType_t.miopenFloat)


@pytest.fixture
def handle(lib: Any) -> Iterator[Any]:
    h = mt.miopenHandle_t()
    lib.miopenCreate(byref(h))
    yield h
    lib.miopenDestroy(h)


@pytest.fixture
def tensors(lib: Any) -> Iterator[Any]:
    made: list[Any] = []

    def tensor(*dims: int) -> Any:
        desc = mt.miopenTensorDescriptor_t()
        lib.miopenCreateTensorDescriptor(byref(desc))
        made.append(desc)
        lib.miopenSetTensorDescriptor(desc, FLOAT, len(dims), (c_int * len(dims))(*dims), None)
        return desc

    yield tensor
    for desc in made:
        lib.miopenDestroyTensorDescriptor(desc)


def test_dropout_states_and_restore(lib: Any, hip: Any, handle: Any) -> None:
    """States size is MIOpen's (one PRNG state per thread it launches); restore stores the
    settings without running the state-initialising kernel (set compiles MIOpenDropoutHIP.cpp,
    which needs rocrand headers the Debian sysroot lacks: a typed failure here)."""
    size = c_size_t()
    lib.miopenDropoutGetStatesSize(handle, byref(size))
    assert size.value > 0  # MIOpen 3.4: 786432 bytes, 3.5: 655360 (see docs/MIOPEN_DIRECT.md)
    states = c_void_p()
    hip.hipMalloc(byref(states), size.value)
    dropout = mt.miopenDropoutDescriptor_t()
    lib.miopenCreateDropoutDescriptor(byref(dropout))
    try:
        lib.miopenRestoreDropoutDescriptor(dropout, handle, 0.25, states, size.value, 1234, True, False, 0)
        rate, where, seed = c_float(), c_void_p(), c_ulonglong()
        use_mask, evolve, rng = c_bool(), c_bool(), c_uint()
        lib.miopenGetDropoutDescriptor(dropout, handle, byref(rate), byref(where), byref(seed),
                                       byref(use_mask), byref(evolve), byref(rng))
        assert (rate.value, seed.value, use_mask.value, evolve.value, rng.value) == (0.25, 1234, True, False, 0)
        rnn = mt.miopenRNNDescriptor_t()
        lib.miopenCreateRNNDescriptor(byref(rnn))
        try:  # V2 keeps the dropout descriptor (it crashes MIOpen with an unset one: needs set/restore)
            lib.miopenSetRNNDescriptor_V2(rnn, 16, 2, dropout, 0, 1, int(miopenRNNMode_t.miopenLSTM), 1, 0, FLOAT)
            hidden, layers, kept = c_int(), c_int(), mt.miopenDropoutDescriptor_t()
            modes = [c_uint() for _ in range(6)]
            lib.miopenGetRNNDescriptor_V2(rnn, byref(hidden), byref(layers), byref(kept), *(byref(m) for m in modes))
            assert (hidden.value, layers.value, [m.value for m in modes]) == (16, 2, [0, 1, 2, 1, 0, FLOAT])
            assert mt.pointer_value(kept) == mt.pointer_value(dropout)
        finally:
            lib.miopenDestroyRNNDescriptor(rnn)
    finally:
        lib.miopenDestroyDropoutDescriptor(dropout)
        hip.hipFree(states)


@pytest.mark.parametrize("mode", list(miopenRNNMode_t))
def test_rnn_sizes(lib: Any, handle: Any, tensors: Any, mode: Any) -> None:
    torch = pytest.importorskip("torch")
    hidden, layers, inputs, batch, steps = 16, 2, 8, 4, 5
    rnn = mt.miopenRNNDescriptor_t()
    lib.miopenCreateRNNDescriptor(byref(rnn))
    seq = mt.miopenSeqTensorDescriptor_t()
    lib.miopenCreateSeqTensorDescriptor(byref(seq))
    try:
        lib.miopenSetRNNDescriptor(rnn, hidden, layers, 0, 1, int(mode), 1, 0, FLOAT)  # bidirectional
        x = tensors(batch, inputs)
        per_step = (mt.miopenTensorDescriptor_t * steps)(*([x] * steps))
        params = c_size_t()
        lib.miopenGetRNNParamsSize(handle, rnn, x, byref(params), FLOAT)
        module = {miopenRNNMode_t.miopenLSTM: torch.nn.LSTM, miopenRNNMode_t.miopenGRU: torch.nn.GRU}.get(mode)
        kwargs: dict[str, Any] = {"num_layers": layers, "bidirectional": True}
        if module is None:
            module = torch.nn.RNN
            kwargs["nonlinearity"] = "relu" if mode == miopenRNNMode_t.miopenRNNRELU else "tanh"
        count = sum(p.numel() for p in module(inputs, hidden, **kwargs).parameters())
        assert params.value == 4 * count
        w = mt.miopenTensorDescriptor_t()
        lib.miopenCreateTensorDescriptor(byref(w))
        lib.miopenGetRNNParamsDescriptor(handle, rnn, x, w, FLOAT)
        nbytes = c_size_t()
        lib.miopenGetTensorNumBytes(w, byref(nbytes))
        lib.miopenDestroyTensorDescriptor(w)
        assert nbytes.value == params.value
        sizes = {}
        for query in ("miopenGetRNNWorkspaceSize", "miopenGetRNNTrainingReserveSize",
                      "miopenGetRNNInputTensorSize", "miopenGetRNNHiddenTensorSize"):
            value = c_size_t()
            getattr(lib, query)(handle, rnn, steps, per_step, byref(value))
            sizes[query] = value.value
        assert sizes["miopenGetRNNInputTensorSize"] == 4 * steps * batch * inputs
        assert sizes["miopenGetRNNHiddenTensorSize"] == 4 * layers * 2 * batch * hidden
        layer, bias = c_size_t(), c_size_t()
        lib.miopenGetRNNLayerParamSize(handle, rnn, 0, x, 0, byref(layer))
        lib.miopenGetRNNLayerBiasSize(handle, rnn, 0, 0, byref(bias))
        assert (layer.value, bias.value) == (4 * hidden * inputs, 4 * hidden)
        # the sequence-tensor API answers what the per-step API answers
        lib.miopenSetRNNDataSeqTensorDescriptor(seq, FLOAT, 1, steps, batch, inputs,
                                                (c_int * batch)(*([steps] * batch)), None)
        work, reserve = c_size_t(), c_size_t()
        lib.miopenGetRNNTempSpaceSizes(handle, rnn, seq, int(miopenRNNFWDMode_t.miopenRNNTraining), byref(work), byref(reserve))
        assert (work.value, reserve.value) == (sizes["miopenGetRNNWorkspaceSize"], sizes["miopenGetRNNTrainingReserveSize"])
        assert reserve.value > 0
        lib.miopenGetRNNTempSpaceSizes(handle, rnn, seq, int(miopenRNNFWDMode_t.miopenRNNInference), byref(work), byref(reserve))
        assert work.value == sizes["miopenGetRNNWorkspaceSize"]
    finally:
        lib.miopenDestroySeqTensorDescriptor(seq)
        lib.miopenDestroyRNNDescriptor(rnn)


def test_ctc_loss_workspace(lib: Any, handle: Any, tensors: Any) -> None:
    steps, batch, classes = 10, 2, 5
    ctc = mt.miopenCTCLossDescriptor_t()
    lib.miopenCreateCTCLossDescriptor(byref(ctc))
    try:
        lib.miopenSetCTCLossDescriptor(ctc, FLOAT, 0, True)
        probs, grads = tensors(steps, batch, classes), tensors(steps, batch, classes)
        labels, label_lengths, input_lengths = (c_int * 6)(1, 2, 3, 1, 1, 4), (c_int * 2)(3, 3), (c_int * 2)(10, 8)
        size = c_size_t()
        lib.miopenGetCTCLossWorkspaceSize(handle, probs, grads, labels, label_lengths, input_lengths, 0, ctc, byref(size))
        assert size.value >= 4 * steps * batch * classes  # at least one float per probability
        longer = c_size_t()
        lib.miopenGetCTCLossWorkspaceSize(handle, tensors(2 * steps, batch, classes), tensors(2 * steps, batch, classes),
                                          labels, label_lengths, (c_int * 2)(20, 16), 0, ctc, byref(longer))
        assert longer.value > size.value
    finally:
        lib.miopenDestroyCTCLossDescriptor(ctc)


@pytest.mark.parametrize("op", list(miopenReduceTensorOp_t))
def test_reduction_sizes(lib: Any, handle: Any, tensors: Any, op: Any) -> None:
    """Indices are 4 bytes per output element for MIN/MAX/AMAX asked to keep them, else none."""
    reduce = mt.miopenReduceTensorDescriptor_t()
    lib.miopenCreateReduceTensorDescriptor(byref(reduce))
    try:
        with_indices = op in (miopenReduceTensorOp_t.MIOPEN_REDUCE_TENSOR_MIN, miopenReduceTensorOp_t.MIOPEN_REDUCE_TENSOR_MAX,
                              miopenReduceTensorOp_t.MIOPEN_REDUCE_TENSOR_AMAX)
        flag = miopenReduceTensorIndices_t.MIOPEN_REDUCE_TENSOR_FLATTENED_INDICES if with_indices else \
            miopenReduceTensorIndices_t.MIOPEN_REDUCE_TENSOR_NO_INDICES
        lib.miopenSetReduceTensorDescriptor(reduce, int(op), FLOAT, 0, int(flag), 0)
        a, c = tensors(4, 8, 16), tensors(4, 1, 16)
        indices, workspace = c_size_t(), c_size_t()
        lib.miopenGetReductionIndicesSize(handle, reduce, a, c, byref(indices))
        lib.miopenGetReductionWorkspaceSize(handle, reduce, a, c, byref(workspace))
        assert indices.value == (4 * 4 * 16 if with_indices else 0)
        assert workspace.value >= 4 * 4 * 16  # one float partial per output at least
    finally:
        lib.miopenDestroyReduceTensorDescriptor(reduce)


def test_beta_workspace_queries(lib: Any, handle: Any, tensors: Any) -> None:
    """The beta norms and PReLU: MIOpen's workspace answers (0 where it needs none)."""
    x, weight, stats = tensors(4, 6, 32), tensors(32), tensors(4, 6)
    size = c_size_t()
    mode = int(miopenNormMode_t.MIOPEN_WEIGHT_BIAS)
    lib.miopenGetT5LayerNormBackwardWorkspaceSize(handle, mode, x, x, weight, stats, x, weight, byref(size))
    assert size.value == 0
    if lib.capabilities.has("miopenGetLayerNormBackwardWorkspaceSize"):
        lib.miopenGetLayerNormBackwardWorkspaceSize(handle, mode, x, x, weight, stats, stats, 2, x, weight, weight,
                                                    byref(size))
        assert size.value == 0
    else:
        with pytest.raises(errors.MIOpenVersionError, match="miopenGetLayerNormBackwardWorkspaceSize"):
            lib.miopenGetLayerNormBackwardWorkspaceSize(handle, mode, x, x, weight, stats, stats, 2, x, weight,
                                                        weight, byref(size))
    a = tensors(4, 8, 16)
    lib.miopenGetPReLUBackwardWorkspaceSize(handle, a, tensors(8), byref(size))
    assert size.value == 4 * 4 * 8 * 16  # one float per input element (MIOpen's partial sums)
    lib.miopenGetReduceCalculationWorkspaceSize(handle, a, 1, 1, tensors(4, 16), byref(size))
    assert size.value == 0
    with pytest.raises(errors.MIOpenBadParmError, match="miopenGetReduceCalculationWorkspaceSize"):
        lib.miopenGetReduceCalculationWorkspaceSize(handle, a, 1, 1, tensors(4, 1, 16), byref(size))

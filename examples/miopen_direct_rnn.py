"""Calling MIOpen directly: an LSTM's weight layout read from MIOpen (docs/MIOPEN_DIRECT.md).

    python examples/miopen_direct_rnn.py

Needs libMIOpen. Without a GPU: the RNN descriptor and where each layer's matrices and biases sit
in the packed weight buffer (miopenGetRNNLayerParamOffset/BiasOffset take no handle), checked to
tile the buffer and to hold as many numbers as torch.nn.LSTM of the same shape. With a GPU: also
MIOpen's parameter, workspace and reserve sizes.
"""

from __future__ import annotations

import ctypes
import itertools

import numpy as np
from _check import torch

import miopen_ctypes
from hipdnn.direct import Session
from miopen_ctypes.enums import (
    miopenRNNAlgo_t,
    miopenRNNBiasMode_t,
    miopenRNNDirectionMode_t,
    miopenRNNInputMode_t,
    miopenRNNMode_t,
)

HIDDEN, LAYERS, INPUTS, BATCH, STEPS = 16, 2, 8, 4, 5


def main() -> int:
    x_host = np.zeros((BATCH, INPUTS), np.float32)  # one time step's shape (data not needed)
    with Session() as s:
        rnn = s.descriptor("RNN", "miopenSetRNNDescriptor", HIDDEN, LAYERS,
                           miopenRNNInputMode_t.miopenRNNlinear, miopenRNNDirectionMode_t.miopenRNNunidirection,
                           miopenRNNMode_t.miopenLSTM, miopenRNNBiasMode_t.miopenRNNwithBias,
                           miopenRNNAlgo_t.miopenRNNdefault, 1)
        blocks = []
        for layer in range(LAYERS):
            for index in range(8):  # LSTM: 4 input and 4 recurrent matrices, 8 biases per layer
                for query, kind in (("miopenGetRNNLayerParamOffset", "weight"), ("miopenGetRNNLayerBiasOffset", "bias")):
                    block = s.descriptor("Tensor")
                    offset = s.query(query, rnn, layer, x_host, index, block)
                    size = s.query("miopenGetTensorNumBytes", block) // 4
                    blocks.append((offset, size, f"layer {layer} {kind} {index}"))
        blocks.sort()
        for offset, size, name in blocks[:3] + blocks[-2:]:
            print(f"  {name}: elements [{offset}, {offset + size})")
        tiles = blocks[0][0] == 0 and all(a + n == b for (a, n, _), (b, _, _) in itertools.pairwise(blocks))
        total = blocks[-1][0] + blocks[-1][1]
        print(f"blocks tile the weight buffer without gaps: {'PASS' if tiles else 'FAIL'}")
        ok = tiles
        if torch is not None:
            want = sum(p.numel() for p in torch.nn.LSTM(INPUTS, HIDDEN, num_layers=LAYERS).parameters())
            print(f"{total} weights, torch.nn.LSTM has {want} -> {'PASS' if total == want else 'FAIL'}")
            ok &= total == want
        try:
            s.handle  # noqa: B018  (made here: needs a GPU)
        except miopen_ctypes.MIOpenError as exc:
            print(f"no GPU, the handle-bound sizes are not asked: {exc}")
            return 0 if ok else 1
        params = ctypes.c_size_t()  # an out-parameter before the last one: passed by hand
        s.call("miopenGetRNNParamsSize", rnn, x_host, ctypes.byref(params), 1)
        print(f"miopenGetRNNParamsSize: {params.value} bytes -> {'PASS' if params.value == 4 * total else 'FAIL'}")
        ok &= params.value == 4 * total
        steps = (miopen_ctypes.types.miopenTensorDescriptor_t * STEPS)(*([s.tensor(x_host)] * STEPS))
        work = s.query("miopenGetRNNWorkspaceSize", rnn, STEPS, steps)
        reserve = s.query("miopenGetRNNTrainingReserveSize", rnn, STEPS, steps)
        print(f"workspace {work} bytes, training reserve {reserve} bytes")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""A cudnn-frontend Python sample (conv + bias + ReLU in FP16, FP32 compute), ported.

    python examples/cudnn_frontend_port.py

Why more than the import changes (each such line carries a ``# port:`` comment): the arrays are
host numpy arrays, not CUDA tensors, and the bias node's compute type is HALF because MIOpen's
fused conv + bias + activation adds the bias in the I/O type (with FLOAT, MIOPEN_ENGINE
declines and CPU_REFERENCE_ENGINE runs the graph; ``engine_reasons()`` says so). The result is
checked against PyTorch on the CPU (numpy without PyTorch).
"""

from __future__ import annotations

import numpy as np
from _check import check, conv_fprop, report

import hipdnn as cudnn  # port: was "import cudnn"


def main() -> int:
    n, c, h, w, k, r, s = 4, 16, 14, 14, 32, 3, 3
    rng = np.random.default_rng(12)
    # port: cudnn-frontend samples make CUDA tensors (torch.randn(...).cuda()); hipdnn takes host
    # numpy arrays (and torch tensors) and stages them itself
    x_gpu = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float16)
    w_gpu = rng.uniform(-1, 1, (k, c, r, s)).astype(np.float16)
    b_gpu = rng.uniform(-1, 1, (1, k, 1, 1)).astype(np.float16)

    handle = cudnn.create_handle()
    graph = cudnn.pygraph(
        io_data_type=cudnn.data_type.HALF,
        intermediate_data_type=cudnn.data_type.FLOAT,
        compute_data_type=cudnn.data_type.FLOAT,
        handle=handle,
    )
    X = graph.tensor(name="X", dim=x_gpu.shape, stride=[c * h * w, h * w, w, 1],
                     data_type=cudnn.data_type.HALF)
    W = graph.tensor(name="W", dim=w_gpu.shape, stride=[c * r * s, r * s, s, 1],
                     data_type=cudnn.data_type.HALF)
    B = graph.tensor(name="B", dim=b_gpu.shape, stride=[k, 1, 1, 1],
                     data_type=cudnn.data_type.HALF)
    conv_output = graph.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[1, 1],
                                   dilation=[1, 1], compute_data_type=cudnn.data_type.FLOAT)
    # port: compute_data_type=HALF added: MIOPEN_ENGINE runs FP16 conv + bias + activation with the
    # bias in the data type (else it declines, and engine_reasons() says so)
    bias_output = graph.bias(name="bias", input=conv_output, bias=B,
                             compute_data_type=cudnn.data_type.HALF)
    Y = graph.relu(name="relu", input=bias_output)
    Y.set_output(True).set_data_type(cudnn.data_type.HALF)

    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()

    y_gpu = np.empty(Y.get_dim(), np.float16)  # port: was torch.empty(...).cuda()
    workspace = np.empty(graph.get_workspace_size(), np.uint8)  # port: was torch.empty(..., device="cuda")
    graph.execute({X: x_gpu, W: w_gpu, B: b_gpu, Y: y_gpu}, workspace, handle=handle)

    report(graph)
    want = np.maximum(conv_fprop(x_gpu, w_gpu, 1) + b_gpu, 0)
    ok = check("Y", y_gpu, want, 1e-2, 1e-2)  # FP16 output rounding
    cudnn.destroy_handle(handle)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

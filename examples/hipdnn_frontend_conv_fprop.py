"""A script in AMD hipdnn_frontend's style (its conv_fprop sample's flow) running on hipdnn.

    python examples/hipdnn_frontend_conv_fprop.py

Everything below the import is written against the compiled ``hipdnn_frontend`` wheel's API:
handle, graph settings, ``Tensor.create``, an attribute object, the five pipeline steps checked
with ``is_good()``, ``DeviceBuffer`` copies, a variant pack of uid -> pointer, and
``execute(handle, variant_pack, workspace)``. With that wheel the import would read
``import hipdnn_frontend as hipdnn``; nothing else changes. Here ``DeviceBuffer`` is host memory
and the graph runs on MIOPEN_ENGINE when libMIOpen and a GPU are found, else on
CPU_REFERENCE_ENGINE. tests/hipdnn_frontend_style/test_example.py checks it against PyTorch.
"""

from __future__ import annotations

import numpy as np

import hipdnn.frontend as hipdnn  # the one change: was `import hipdnn_frontend as hipdnn`


def run_conv_fprop(n: int = 4, c: int = 8, h: int = 12, w: int = 12, k: int = 16, r: int = 3,
                   s: int = 3, stride: int = 1, pad: int = 1, dil: int = 1,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Build, run and read back one convolution; returns (x, w, y) as numpy arrays."""
    out_h = (h + 2 * pad - dil * (r - 1) - 1) // stride + 1
    out_w = (w + 2 * pad - dil * (s - 1) - 1) // stride + 1

    handle = hipdnn.Handle()
    graph = hipdnn.Graph()
    graph.set_name("conv_fprop_example")
    graph.set_io_data_type(hipdnn.DataType.FLOAT)
    graph.set_intermediate_data_type(hipdnn.DataType.FLOAT)
    graph.set_compute_data_type(hipdnn.DataType.FLOAT)

    x = hipdnn.Tensor.create([n, c, h, w], hipdnn.DataType.FLOAT)
    x.set_name("x")
    weight = hipdnn.Tensor.create([k, c, r, s], hipdnn.DataType.FLOAT)
    weight.set_name("w")

    attributes = hipdnn.ConvFpropAttributes()
    attributes.set_name("conv")
    attributes.set_padding([pad, pad])
    attributes.set_stride([stride, stride])
    attributes.set_dilation([dil, dil])
    y = graph.conv_fprop(x, weight, attributes)
    y.set_name("y")
    y.set_output(True)

    steps = [("validate", graph.validate),
             ("build_operation_graph", lambda: graph.build_operation_graph(handle)),
             ("create_execution_plans", graph.create_execution_plans),
             ("check_support", graph.check_support),
             ("build_plans", graph.build_plans)]
    for name, step in steps:
        result = step()
        if not result.is_good():
            raise RuntimeError(f"{name} failed: {result.get_message()}")
    print(f"plan: {graph.get_plan_name()}, workspace {graph.get_workspace_size()} bytes")

    rng = np.random.default_rng(seed)
    x_data = rng.uniform(0.0, 1.0, (n, c, h, w)).astype(np.float32)
    w_data = rng.uniform(-1.0, 1.0, (k, c, r, s)).astype(np.float32)
    x_buffer = hipdnn.DeviceBuffer(x_data.nbytes)
    w_buffer = hipdnn.DeviceBuffer(w_data.nbytes)
    y_buffer = hipdnn.DeviceBuffer(n * k * out_h * out_w * 4)
    x_buffer.copy_from_host(x_data.tobytes())
    w_buffer.copy_from_host(w_data.tobytes())

    variant_pack = {x.get_uid(): x_buffer.ptr(), weight.get_uid(): w_buffer.ptr(),
                    y.get_uid(): y_buffer.ptr()}
    workspace_size = graph.get_workspace_size()
    workspace = hipdnn.DeviceBuffer(workspace_size) if workspace_size > 0 else None
    result = graph.execute(handle, variant_pack, workspace.ptr() if workspace else 0)
    if not result.is_good():
        raise RuntimeError(f"execute failed: {result.get_message()}")

    y_data = np.frombuffer(y_buffer.copy_to_host(), np.float32).reshape(n, k, out_h, out_w)
    hipdnn.destroy_handle(handle)
    return x_data, w_data, y_data


def reference(x: np.ndarray, w: np.ndarray, pad: int = 1) -> np.ndarray:
    """Cross-correlation by the definition (stride 1, dilation 1), in float64."""
    _, _, r, s = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out_h, out_w = xp.shape[2] - r + 1, xp.shape[3] - s + 1
    y = np.zeros((x.shape[0], w.shape[0], out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            y[:, :, i, j] = np.einsum("ncrs,kcrs->nk", xp[:, :, i:i + r, j:j + s], w)
    return y


def main() -> int:
    x, w, y = run_conv_fprop()
    err = float(np.abs(y - reference(x, w)).max())
    ok = err < 1e-4
    print(f"output {list(y.shape)}, max abs error vs numpy: {err:.2e} -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Autotuning in AMD hipdnn_frontend's style (its autotune sample's flow) running on hipdnn.

    python examples/hipdnn_frontend_autotune.py

Discover the engines that can run a convolution and their knobs, add them all as autotune
candidates, time them, and execute: ``autotune()`` leaves the fastest plan active. With the
compiled ``hipdnn_frontend`` wheel the import would read ``import hipdnn_frontend as hipdnn``;
nothing else changes. Times are host wall clock (DeviceBuffer is host memory here).
tests/hipdnn_frontend_style/test_example.py checks the result against PyTorch.
"""

from __future__ import annotations

import numpy as np

import hipdnn.frontend as hipdnn  # the one change: was `import hipdnn_frontend as hipdnn`


def run_autotune(n: int = 2, c: int = 8, h: int = 10, w: int = 10, k: int = 8,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """Tune and run a 3x3 convolution (padding 1); returns (x, w, y, autotune results)."""
    handle = hipdnn.create_handle()
    graph = hipdnn.Graph()
    graph.set_name("autotune_example")
    graph.set_io_data_type(hipdnn.DataType.FLOAT)
    graph.set_intermediate_data_type(hipdnn.DataType.FLOAT)
    graph.set_compute_data_type(hipdnn.DataType.FLOAT)

    x = hipdnn.Tensor.create([n, c, h, w], hipdnn.DataType.FLOAT)
    weight = hipdnn.Tensor.create([k, c, 3, 3], hipdnn.DataType.FLOAT)
    attributes = hipdnn.ConvFpropAttributes()
    attributes.set_padding([1, 1])
    attributes.set_stride([1, 1])
    attributes.set_dilation([1, 1])
    y = graph.conv_fprop(x, weight, attributes)
    y.set_output(True)

    for name, result in (("validate", graph.validate()),
                         ("build_operation_graph", graph.build_operation_graph(handle))):
        if not result.is_good():
            raise RuntimeError(f"{name} failed: {result.get_message()}")

    for config in graph.get_engine_configs():
        knobs = ", ".join(f"{knob.knob_id}={knob.default_value}" for knob in config.knobs)
        print(f"engine {config.engine_name}: exhaustive={config.supports_exhaustive}, "
              f"knobs: {knobs or 'none'}")
    result = graph.add_all_engines()
    if not result.is_good():
        raise RuntimeError(f"add_all_engines failed: {result.get_message()}")
    workspace_size = max(2 * graph.get_estimated_max_workspace_size(), 1 << 20)

    rng = np.random.default_rng(seed)
    data = {x: rng.standard_normal((n, c, h, w)).astype(np.float32),
            weight: rng.standard_normal((k, c, 3, 3)).astype(np.float32),
            y: np.zeros((n, k, h, w), np.float32)}
    buffers = {}
    for tensor, array in data.items():
        buffers[tensor] = hipdnn.DeviceBuffer(array.nbytes)
        buffers[tensor].copy_from_host(array.tobytes())
    workspace = hipdnn.DeviceBuffer(workspace_size)

    config = hipdnn.AutotuneConfig()
    config.strategy = hipdnn.AutotuneStrategy.RUN_UNTIL_STABLE
    config.warmup_iterations = 1
    config.max_iterations = 10
    results = graph.autotune(handle, {t: b.ptr() for t, b in buffers.items()}, workspace.ptr(),
                             workspace_size=workspace_size, config=config)
    for r in results:
        print(f"  #{r.rank} {r.engine_name}: min {r.min_time_ms:.3f} ms, avg "
              f"{r.avg_time_ms:.3f} ms over {r.iterations_run} run(s)" if r.succeeded else
              f"  -- {r.engine_name} failed: {r.error_message}")

    result = graph.execute(handle, {t.get_uid(): b.ptr() for t, b in buffers.items()},
                           workspace.ptr())
    if not result.is_good():
        raise RuntimeError(f"execute failed: {result.get_message()}")
    out = np.frombuffer(buffers[y].copy_to_host(), np.float32).reshape(n, k, h, w)
    return data[x], data[weight], out, results


def main() -> int:
    x, w, y, _ = run_autotune()
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros(y.shape)
    for i in range(y.shape[2]):
        for j in range(y.shape[3]):
            ref[:, :, i, j] = np.einsum("ncrs,kcrs->nk", xp[:, :, i:i + 3, j:j + 3], w)
    err = float(np.abs(y - ref).max())
    ok = err < 1e-4
    print(f"max abs error vs numpy: {err:.2e} -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

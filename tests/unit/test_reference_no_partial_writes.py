"""CPU_REFERENCE_ENGINE never leaves a partial result: every output is computed into a temporary,
staged in its own dtype, and the caller's buffers are written only when all of that succeeded.

Faults are injected (by monkeypatching, in the test only) into each kernel a graph runs and into
the staging of each output in turn; every failure leaves every sentinel-filled output untouched,
and the next execute writes them all correctly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn.core.errors import ExecutionError
from hipdnn.engines.reference import engine as reference_engine
from hipdnn.engines.reference import kernels as K

F32 = hipdnn.DataType.FLOAT
SENTINEL = -7.25


class Injected(ValueError):
    """The fault the test injects (a ValueError: the engine turns it into ExecutionError)."""


def _reference(g: hipdnn.Graph) -> None:
    g.build_operation_graph()
    g.create_execution_plan_ext("CPU_REFERENCE_ENGINE", {})
    g.build_plans()


def _bn_training(dtype: hipdnn.DataType) -> tuple[hipdnn.Graph, dict[Any, np.ndarray], list[Any]]:
    rng = np.random.default_rng(0)
    n, c, h, w = 2, 3, 4, 5
    x = rng.normal(1.0, 2.0, (n, c, h, w)).astype(np.float32)
    g = hipdnn.Graph(io_data_type=dtype, intermediate_data_type=F32, compute_data_type=F32)
    np_dtype = hipdnn.interop.dtypes.dtype_to_numpy(dtype)
    xt = g.tensor(dim=[n, c, h, w], data_type=dtype, name="x")
    st, bt, rmt, rvt = (g.tensor(dim=[1, c, 1, 1], data_type=F32, name=k)
                        for k in ("scale", "bias", "running_mean", "running_var"))
    outs = list(g.batchnorm(xt, st, bt, 1e-5, momentum=0.1, in_running_mean=rmt,
                            in_running_var=rvt))
    for t in outs:
        t.set_output(True)
    outs[0].set_data_type(dtype)
    pack = {xt: x.astype(np_dtype), st: np.full(c, 1.5, np.float32), bt: np.zeros(c, np.float32),
            rmt: np.zeros(c, np.float32), rvt: np.ones(c, np.float32)}
    return g, pack, outs


def _conv_bias_relu() -> tuple[hipdnn.Graph, dict[Any, np.ndarray], list[Any]]:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 6, 6)).astype(np.float32)
    w = rng.normal(size=(4, 3, 3, 3)).astype(np.float32)
    b = rng.normal(size=(1, 4, 1, 1)).astype(np.float32)
    g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    xt, wt, bt = g.tensor_like(x, "x"), g.tensor_like(w, "w"), g.tensor_like(b, "b")
    conv = g.conv_fprop(xt, wt, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    biased = g.bias(conv, bt)
    y = g.relu(biased)
    outs = [conv, biased, y]  # every intermediate is an output too
    for t in outs:
        t.set_output(True)
    return g, {xt: x, wt: w, bt: b}, outs


GRAPHS: dict[str, Callable[[], tuple[hipdnn.Graph, dict[Any, np.ndarray], list[Any]]]] = {
    "bn_training_fp32": lambda: _bn_training(F32),
    "bn_training_fp16": lambda: _bn_training(hipdnn.DataType.HALF),
    "bn_training_bf16": lambda: _bn_training(hipdnn.DataType.BFLOAT16),
    "conv_bias_relu": _conv_bias_relu,
}
#: The kernels each graph calls (each one is failed in turn).
KERNELS = {"bn_training": ("bn_train_forward_deferred", "bn_running_update"),
           "conv_bias_relu": ("conv_fprop", "relu_forward")}


def _sentinels(outs: list[Any]) -> dict[Any, np.ndarray]:
    return {t: np.full(t.get_dim(), SENTINEL,
                       hipdnn.interop.dtypes.dtype_to_numpy(t.get_data_type())) for t in outs}


def _expect_untouched(g: hipdnn.Graph, pack: dict[Any, np.ndarray], outs: list[Any]) -> None:
    arrays = _sentinels(outs)
    before = {t: a.tobytes() for t, a in arrays.items()}
    with pytest.raises(ExecutionError, match="injected"):
        g.execute({**pack, **arrays})
    for t, a in arrays.items():
        assert a.tobytes() == before[t], f"output {t.get_name()!r} was written by a failing execute"


def _expect_written(g: hipdnn.Graph, pack: dict[Any, np.ndarray], outs: list[Any]) -> None:
    arrays = _sentinels(outs)
    g.execute({**pack, **arrays})
    for t, a in arrays.items():
        assert not np.any(a.astype(np.float32) == SENTINEL), t.get_name()


@pytest.mark.parametrize("name", list(GRAPHS))
def test_a_failing_kernel_writes_no_output(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    g, pack, outs = GRAPHS[name]()
    _reference(g)
    for kernel in KERNELS[name.rsplit("_", 1)[0] if name.startswith("bn") else name]:
        real = getattr(K, kernel)

        def failing(*args: Any, _kernel: str = kernel, **kwargs: Any) -> Any:
            raise Injected(f"{_kernel} injected failure")

        monkeypatch.setattr(K, kernel, failing)
        _expect_untouched(g, pack, outs)
        monkeypatch.setattr(K, kernel, real)
    _expect_written(g, pack, outs)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_a_failing_staging_writes_no_output(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    g, pack, outs = GRAPHS[name]()
    _reference(g)
    real = reference_engine.stage_output
    for nth in range(1, len(outs) + 1):
        count = [0]

        def failing(value: np.ndarray, view: np.ndarray, commits: Any = (), _nth: int = nth,
                    _count: list[int] = count) -> np.ndarray:
            _count[0] += 1
            if _count[0] == _nth:
                raise MemoryError(f"staging output {_nth}: injected")
            return real(value, view, commits)

        monkeypatch.setattr(reference_engine, "stage_output", failing)
        arrays = _sentinels(outs)
        before = {t: a.tobytes() for t, a in arrays.items()}
        with pytest.raises(ExecutionError, match=r"out of host memory.*injected") as info:
            g.execute({**pack, **arrays})
        assert isinstance(info.value.__cause__, MemoryError)
        assert count[0] == nth
        for t, a in arrays.items():
            assert a.tobytes() == before[t], f"{t.get_name()!r} written when staging {nth} failed"
    monkeypatch.setattr(reference_engine, "stage_output", real)
    _expect_written(g, pack, outs)


def test_an_output_aliasing_an_input_reads_the_input_before_it_is_overwritten() -> None:
    """x -> relu(x) in place (the output buffer is the input's), and abs(x) beside it: the
    commit must not let the first written output change what the second reads."""
    x = np.array([[-2.0, -1.0, 0.5, 3.0]], np.float32).reshape(1, 4, 1, 1)
    g = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    xt = g.tensor_like(x, "x")
    r, a = g.relu(xt), g.pointwise(hipdnn.PointwiseMode.ABS, xt)
    r.set_output(True)
    a.set_output(True)
    g.build()
    buf, other = x.copy(), np.zeros_like(x)
    g.execute({xt: buf, r: buf, a: other})
    np.testing.assert_array_equal(buf, np.maximum(x, 0))
    np.testing.assert_array_equal(other, np.abs(x))


def test_staging_copies_only_what_may_be_caller_memory() -> None:
    """An array numpy allocated for the engine is staged as is (no copy); caller memory (a
    host_view over a pointer) and anything overlapping an output view are copied."""
    from hipdnn.interop.buffers import host_view, resolve

    class T:
        dim, stride, data_type, name, uid = (2, 3), (3, 1), hipdnn.DataType.FLOAT, "t", 1

    own = np.arange(6, dtype=np.float32).reshape(2, 3)  # a view of an owning array
    out = np.zeros((2, 3), np.float32)
    assert reference_engine.stage_output(own, out, [out]) is own
    caller = np.ones((2, 3), np.float32)
    view = host_view(resolve(caller), T())
    staged = reference_engine.stage_output(view, out, [out])
    assert staged is not view and not np.shares_memory(staged, caller)
    assert reference_engine.stage_output(own, own, [own]) is not own  # overlaps a commit
    assert reference_engine.stage_output(own.astype(np.float64), out, [out]).dtype == np.float32
    reference_engine.commit_output(out, own)
    np.testing.assert_array_equal(out, own)

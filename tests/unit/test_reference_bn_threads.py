"""The reference engine's batchnorm runs its passes on the thread pool of
hipdnn/engines/reference/_parallel.py, and the results do not depend on it: any thread count and
block size gives the same bits as one thread, a failing part raises its own (typed) error, and a
failure on a pool thread still leaves no output written. Each holds for both implementations
(numba's compiled loops and the numpy passes: the ``bn_path`` fixture).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest

import hipdnn
from hipdnn.core.errors import ExecutionError
from hipdnn.engines.reference import _bn, _bn_jit
from hipdnn.engines.reference import _parallel as P
from hipdnn.engines.reference import kernels as K

F32 = hipdnn.DataType.FLOAT
POOL_THREAD = "hipdnn-reference"


class Runs:
    """What ran a batchnorm's passes: the numpy passes' parts (the names of the threads that
    ran them) or the compiled loops' launches (numba's thread count each)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.launches: list[int] = []

    def clear(self) -> None:
        self.names.clear()
        self.launches.clear()

    def alone(self) -> bool:
        """Everything ran on the calling thread (numpy) or on one numba thread (compiled)."""
        if self.launches:
            return set(self.launches) == {1} and not self.names
        return self.names == {threading.current_thread().name}

    def parallel(self) -> bool:
        """Some part ran on a pool thread, or some launch used more than one numba thread."""
        return any(n.startswith(POOL_THREAD) for n in self.names) or any(t > 1 for t in self.launches)


@pytest.fixture
def pool_threads(monkeypatch: pytest.MonkeyPatch, bn_path: str) -> Runs:
    """Records what ran each pass, for either implementation (``bn_path``). With more than one
    thread, the calling thread waits in its first part until a pool thread has taken one (since
    the last clear), so that the pool surely runs parts however loaded the machine."""
    runs = Runs()
    real_parts, real_launch = P.run_parts, _bn_jit.launch
    caller = threading.current_thread()

    def spy(fn: Any, parts: int, threads: int | None = None) -> list[Any]:
        def part(i: int) -> Any:
            runs.names.add(threading.current_thread().name)
            if threading.current_thread() is caller and (threads or 1) > 1 and parts > 1:
                _wait_for_pool(lambda: any(n.startswith(POOL_THREAD) for n in runs.names))
            return fn(i)
        return real_parts(part, parts, threads)

    def spy_launch(kernel: Any, threads: int, *args: Any) -> None:
        runs.launches.append(threads)
        real_launch(kernel, threads, *args)

    monkeypatch.setattr(P, "run_parts", spy)
    monkeypatch.setattr(_bn_jit, "launch", spy_launch)
    monkeypatch.setattr(P, "PARALLEL_MIN_SIZE", 1 << 12)  # small arrays split too
    monkeypatch.setattr(_bn, "PART", 1 << 12)
    return runs


def _wait_for_pool(ran: Any, limit: float = 10.0) -> None:
    """Sleep until ``ran()``; give up after ``limit`` seconds (the test's assertion then fails
    if the pool never ran, rather than this wait hanging)."""
    end = time.monotonic() + limit
    while not ran() and time.monotonic() < end:
        time.sleep(0.0005)


def _data(layout: str, offset: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    shape = (4, 48, 20, 20)
    x = rng.normal(offset, 2.0 if offset < 100 else 0.01, shape).astype(np.float32)
    dy = rng.normal(size=shape).astype(np.float32)
    if layout == "NHWC":
        x, dy = (np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2) for a in (x, dy))
    c = shape[1]
    return x, dy, rng.uniform(0.5, 1.5, c).astype(np.float32), rng.uniform(-1, 1, c).astype(np.float32)


def _both(x: np.ndarray, dy: np.ndarray, g: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    y, mean, inv, unbiased = K.bn_train_forward(x, g, b, 1e-5)
    dx, dscale, dbias = K.bn_backward(dy, x, g, mean, inv)
    return [y, mean, inv, unbiased, dx, dscale, dbias]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("offset", [0.5, 1000.0], ids=["centred", "offset"])
def test_threaded_passes_give_the_single_thread_bits(monkeypatch: pytest.MonkeyPatch,
                                                     pool_threads: Runs, layout: str,
                                                     offset: float) -> None:
    x, dy, g, b = _data(layout, offset)
    monkeypatch.setenv(P.THREADS_ENV, "1")
    one = _both(x, dy, g, b)
    assert pool_threads.alone()  # one thread: no pool
    for threads, block in ((2, _bn.BLOCK), (3, 1 << 12), (8, 1 << 11), (16, 1 << 14)):
        pool_threads.clear()
        monkeypatch.setenv(P.THREADS_ENV, str(threads))
        monkeypatch.setattr(_bn, "BLOCK", block)
        many = _both(x, dy, g, b)
        assert pool_threads.parallel(), (threads, pool_threads.names, pool_threads.launches)
        for a, r in zip(many, one, strict=True):
            assert a.dtype == r.dtype and np.array_equal(a, r), (threads, block)


def test_threaded_engine_execute_gives_the_single_thread_bits(monkeypatch: pytest.MonkeyPatch,
                                                              pool_threads: Runs) -> None:
    x, dy, scale, bias = _data("NHWC", 2.0)
    c = x.shape[1]
    gr = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    xt, dyt = gr.tensor_like(x, "x"), gr.tensor_like(dy, "dy")
    st, bt = (gr.tensor(dim=[1, c, 1, 1], data_type=F32, name=k) for k in ("scale", "bias"))
    y, mean, inv, _, _ = gr.batchnorm(xt, st, bt, 1e-5)
    assert y is not None and mean is not None and inv is not None
    dx, dscale, dbias = gr.batchnorm_backward(dyt, xt, st, mean, inv)
    outs = [y, mean, inv, dx, dscale, dbias]
    for t in outs:
        t.set_output(True)
    gr.build_operation_graph()
    gr.create_execution_plan_ext("CPU_REFERENCE_ENGINE", {})
    gr.build_plans()

    def run() -> list[np.ndarray]:
        arrays = [np.full(t.get_dim(), -7.25, np.float32) for t in outs]
        arrays[0] = np.full_like(x, -7.25)  # Y and DX in X's (channels-last) memory order
        arrays[3] = np.full_like(x, -7.25)
        gr.execute({xt: x, dyt: dy, st: scale, bt: bias, **dict(zip(outs, arrays, strict=True))})
        return arrays

    monkeypatch.setenv(P.THREADS_ENV, "1")
    one = run()
    pool_threads.clear()
    monkeypatch.setenv(P.THREADS_ENV, "4")
    many = run()
    assert pool_threads.parallel()
    for a, r in zip(many, one, strict=True):
        assert np.array_equal(a, r)
    assert not np.any(many[0] == -7.25) and not np.any(many[3] == -7.25)


def test_run_parts_keeps_order_and_raises_the_lowest_failed_part() -> None:
    seen: set[str] = set()

    def part(i: int) -> int:
        seen.add(threading.current_thread().name)
        time.sleep(0.002 * ((7 * i) % 5))  # finish out of order
        return i * i

    assert P.run_parts(part, 12, 4) == [i * i for i in range(12)]
    assert any(n.startswith(POOL_THREAD) for n in seen)
    errors = {3: KeyError("part 3"), 7: ValueError("part 7")}

    def failing(i: int) -> int:
        time.sleep(0.002 * (i % 3))
        if i in errors:
            raise errors[i]
        return i

    with pytest.raises(KeyError) as info:
        P.run_parts(failing, 12, 4)
    assert info.value is errors[3]
    assert P.run_parts(failing, 3, 1) == [0, 1, 2]  # one thread: inline


class Injected(ValueError):
    """The fault the test injects on a pool thread."""


def _bn_backward_case(layout: str) -> tuple[hipdnn.Graph, dict[Any, np.ndarray], list[Any]]:
    """A built batchnorm-backward graph on the reference engine, its input pack (saved mean 0,
    inverse variance 1) and its output tensors."""
    x, dy, scale, _ = _data(layout, 2.0)
    c = x.shape[1]
    gr = hipdnn.Graph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    xt, dyt = gr.tensor_like(x, "x"), gr.tensor_like(dy, "dy")
    st, mt, it = (gr.tensor(dim=[1, c, 1, 1], data_type=F32, name=k) for k in ("scale", "mean", "inv"))
    outs = gr.batchnorm_backward(dyt, xt, st, mt, it)
    for t in outs:
        t.set_output(True)
    gr.build_operation_graph()
    gr.create_execution_plan_ext("CPU_REFERENCE_ENGINE", {})
    gr.build_plans()
    pack = {xt: x, dyt: dy, st: scale, mt: np.zeros(c, np.float32), it: np.ones(c, np.float32)}
    return gr, pack, list(outs)


def test_a_failing_pool_thread_writes_no_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """The numpy passes: a part failing on a pool thread."""
    monkeypatch.setenv(_bn_jit.ENV, "0")
    monkeypatch.setattr(P, "PARALLEL_MIN_SIZE", 1 << 12)
    monkeypatch.setattr(_bn, "PART", 1 << 12)
    gr, pack, outs = _bn_backward_case("NCHW")
    real = P.run_parts
    failed = threading.Event()

    def fail_on_pool(fn: Any, parts: int, threads: int | None = None) -> list[Any]:
        def part(i: int) -> Any:
            if threading.current_thread().name.startswith(POOL_THREAD):
                failed.set()
                raise Injected("injected on a pool thread")
            _wait_for_pool(failed.is_set)  # leave parts to the pool's threads, however loaded
            return fn(i)
        return real(part, parts, threads)

    monkeypatch.setattr(P, "run_parts", fail_on_pool)
    monkeypatch.setenv(P.THREADS_ENV, "4")
    arrays = [np.full(t.get_dim(), -7.25, np.float32) for t in outs]
    with pytest.raises(ExecutionError, match="Injected: injected on a pool thread"):
        gr.execute({**pack, **dict(zip(outs, arrays, strict=True))})
    assert all(np.all(a == -7.25) for a in arrays)
    monkeypatch.setattr(P, "run_parts", real)
    gr.execute({**pack, **dict(zip(outs, arrays, strict=True))})
    assert not any(np.any(a == -7.25) for a in arrays)


def test_a_failing_compiled_launch_writes_no_output(monkeypatch: pytest.MonkeyPatch,
                                                    require_or_skip: Any) -> None:
    """The compiled loops: the sums' launch failing (the dx pass, which writes, comes after every
    launch that can fail and is a compiled loop that cannot)."""
    monkeypatch.delenv(_bn_jit.ENV, raising=False)
    monkeypatch.setattr(_bn, "JIT_MIN_SIZE", 0)
    if _bn_jit.kernels() is None:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed: pip install numba")
    gr, pack, outs = _bn_backward_case("NHWC")
    real = _bn_jit.launch

    def fail(kernel: Any, threads: int, *args: Any) -> None:
        raise Injected("injected in a launch")

    monkeypatch.setattr(_bn_jit, "launch", fail)
    arrays = [np.full(t.get_dim(), -7.25, np.float32) for t in outs]
    with pytest.raises(ExecutionError, match="Injected: injected in a launch"):
        gr.execute({**pack, **dict(zip(outs, arrays, strict=True))})
    assert all(np.all(a == -7.25) for a in arrays)
    monkeypatch.setattr(_bn_jit, "launch", real)
    gr.execute({**pack, **dict(zip(outs, arrays, strict=True))})
    assert not any(np.any(a == -7.25) for a in arrays)


def test_thread_count_setting_and_no_threads_on_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    monkeypatch.setenv(P.THREADS_ENV, "5")
    assert P.workers() == 5
    monkeypatch.delenv(P.THREADS_ENV)
    assert P.workers() == 3
    code = ("import threading, hipdnn; from hipdnn.engines.reference import _parallel as P, kernels; "
            "assert not P._POOL; assert not [t for t in threading.enumerate() "
            f"if t.name.startswith({POOL_THREAD!r})]")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)

"""The reference batchnorm's compiled loops (hipdnn/engines/reference/_bn_jit.py) are optional:
``HIPDNN_REFERENCE_JIT=0``, a missing numba, or numba failing to compile them all leave the numpy
passes running (the last with one warning that says why); with them, concurrent executes from
several Python threads give each caller its own right answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hipdnn.engines.reference import _bn, _bn_jit
from hipdnn.engines.reference import kernels as K


def _data(seed: int, shape: tuple[int, ...] = (3, 40, 9, 11)) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    c = shape[1]
    return (rng.normal(2.0, 3.0, shape).astype(np.float32), rng.uniform(0.5, 1.5, c).astype(np.float32),
            rng.uniform(-1, 1, c).astype(np.float32))


def _train(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    return list(K.bn_train_forward(x, g, b, 1e-5))


@pytest.fixture
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the process's compiled kernels for this test (restored after it); small tensors
    take them too."""
    monkeypatch.setattr(_bn_jit, "_STATE", [])
    monkeypatch.delenv(_bn_jit.ENV, raising=False)
    monkeypatch.setattr(_bn, "JIT_MIN_SIZE", 0)


def test_switched_off_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bn, "JIT_MIN_SIZE", 0)
    monkeypatch.setenv(_bn_jit.ENV, "0")
    assert _bn_jit.kernels() is None
    x, _, _ = _data(1)
    assert _bn._Plan(_bn.packed(x)).jit is None


@pytest.mark.usefixtures("fresh_state")
def test_without_numba_the_numpy_passes_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    assert _bn_jit.kernels() is None
    x, g, b = _data(2)
    y, mean, _, _ = _train(x, g, b)
    np.testing.assert_allclose(mean, x.mean(axis=(0, 2, 3)), rtol=1e-5)
    assert np.all(np.isfinite(y))


@pytest.mark.usefixtures("fresh_state")
def test_a_failing_compile_warns_once_and_falls_back(monkeypatch: pytest.MonkeyPatch,
                                                     require_or_skip: Any) -> None:
    try:
        import numba
    except ImportError:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed: pip install numba")
    x, g, b = _data(3)
    monkeypatch.setenv(_bn_jit.ENV, "0")
    want = _train(x, g, b)
    monkeypatch.delenv(_bn_jit.ENV)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no code generator for this machine")

    monkeypatch.setattr(numba, "njit", broken)
    with pytest.warns(RuntimeWarning, match="could not compile the reference batchnorm loops "
                                            r"\(RuntimeError: no code generator"):
        got = _train(x, g, b)
    for a, r in zip(got, want, strict=True):
        assert np.array_equal(a, r)  # the numpy passes ran
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _train(x, g, b)  # decided once: no second warning


@pytest.mark.usefixtures("fresh_state")
def test_numba_with_its_jit_disabled_leaves_the_numpy_passes(monkeypatch: pytest.MonkeyPatch,
                                                             require_or_skip: Any) -> None:
    """Under NUMBA_DISABLE_JIT the loops would run as Python, element by element."""
    try:
        import numba
    except ImportError:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed: pip install numba")
    monkeypatch.setattr(numba.config, "DISABLE_JIT", 1)
    assert _bn_jit.kernels() is None


@pytest.mark.usefixtures("fresh_state")
def test_no_writable_cache_directory_compiles_without_a_cache(monkeypatch: pytest.MonkeyPatch,
                                                              require_or_skip: Any) -> None:
    """numba refuses ``cache=True`` when neither the package's folder nor a user cache folder
    is writable ('cannot cache function ...'): the loops are compiled uncached instead."""
    try:
        import numba
    except ImportError:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed: pip install numba")
    real = numba.njit
    asked: list[bool] = []

    def njit(*args: Any, **kwargs: Any) -> Any:
        asked.append(bool(kwargs.get("cache")))
        if kwargs.get("cache"):
            raise RuntimeError("cannot cache function 'moments_cf': no locator available for file")
        return real(*args, **kwargs)

    monkeypatch.setattr(numba, "njit", njit)
    x, g, b = _data(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _bn_jit.kernels() is not None
        _, mean, _, _ = _train(x, g, b)
    assert asked[0] is True and asked[-1] is False
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(axis=(0, 2, 3)), rtol=1e-6)


def test_concurrent_callers_each_get_their_own_result(bn_path: str) -> None:
    """The compiled kernels release the GIL and share no state: four Python threads running
    batchnorm training and backward at once get the bits a lone caller gets."""
    datasets = [_data(10 + i, (4, 32, 40, 40)) for i in range(4)]
    dys = [np.random.default_rng(20 + i).normal(size=d[0].shape).astype(np.float32) for i, d in enumerate(datasets)]

    def work(i: int) -> list[np.ndarray]:
        x, g, b = datasets[i]
        y, mean, inv, unb = _train(x, g, b)
        return [y, mean, inv, unb, *K.bn_backward(dys[i], x, g, mean, inv)]

    alone = [work(i) for i in range(4)]
    results: list[Any] = [None] * 4
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            for _ in range(3):
                results[i] = work(i)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    for got, want in zip(results, alone, strict=True):
        for a, r in zip(got, want, strict=True):
            assert np.array_equal(a, r)


_PROBE = """
import sys
import numpy as np
from hipdnn.engines.reference import kernels as K
c = 8
x = np.random.default_rng(0).normal(size=(2, c, 16, 16)).astype(np.float32)  # below JIT_MIN_SIZE
K.bn_train_forward(x, np.ones(c, np.float32), np.zeros(c, np.float32), 1e-5)
print("numba" in sys.modules, end=" ")
x = np.random.default_rng(0).normal(size=(4, c, 64, 64)).astype(np.float32)  # above it
K.bn_train_forward(x, np.ones(c, np.float32), np.zeros(c, np.float32), 1e-5)
print("numba" in sys.modules)
"""


def test_small_tensors_never_import_numba(require_or_skip: Any) -> None:
    """Below :data:`_bn.JIT_MIN_SIZE` elements the numpy passes run and numba is not imported
    (half a second); a larger tensor loads it."""
    try:
        import numba  # noqa: F401
    except ImportError:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed: pip install numba")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != _bn_jit.ENV}
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, cwd=root,
                         env=env, check=True, timeout=300)
    assert out.stdout.split() == ["False", "True"], out.stdout + out.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_a_forked_child_runs_batchnorm_whatever_the_parents_threading_layer(
        monkeypatch: pytest.MonkeyPatch, require_or_skip: Any) -> None:
    """After the parent ran the compiled loops, a forked child still computes batchnorm: on the
    loops when the parent's threading layer is fork-safe, else (GNU OpenMP, which would abort
    the child) on the numpy passes."""
    monkeypatch.delenv(_bn_jit.ENV, raising=False)
    monkeypatch.setattr(_bn, "JIT_MIN_SIZE", 0)
    if _bn_jit.kernels() is None:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed: pip install numba")
    import numba

    x, g, b = _data(7)
    want = _train(x, g, b)  # launches in the parent
    layer = numba.threading_layer()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report (loops used?, same result?) and leave at once
        try:
            got = _train(x, g, b)
            same = all(np.allclose(a, r, rtol=1e-5, atol=1e-6) for a, r in zip(got, want, strict=True))
            os.write(write, f"{_bn_jit.kernels() is not None} {same}".encode())
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    report = os.read(read, 100).decode().split()
    os.close(read)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert report == [str(layer in _bn_jit.FORK_SAFE_LAYERS), "True"], (layer, report)


_LAYER_PROBE = """
import os, sys
import numpy as np
import numba
from hipdnn.engines.reference import _bn, _bn_jit
x = np.random.default_rng(0).normal(size=(4, 16, 64, 64)).astype(np.float32)
g, b = np.ones(16, np.float32), np.zeros(16, np.float32)
want = _bn.train_forward(x, g, b, 1e-5)[0]
line = [numba.threading_layer(), str(_bn_jit.kernels() is not None)]
if hasattr(os, "fork"):
    pid = os.fork()
    if pid == 0:
        y = _bn.train_forward(x, g, b, 1e-5)[0]
        os._exit(0 if np.allclose(y, want, rtol=1e-5, atol=1e-6) and
                 (_bn_jit.kernels() is not None) == (numba.threading_layer() in _bn_jit.FORK_SAFE_LAYERS) else 3)
    line.append(str(os.waitpid(pid, 0)[1]))
print(" ".join(line))
"""


@pytest.mark.parametrize("chosen", [None, "workqueue"], ids=["numba-default", "workqueue-chosen"])
def test_threading_layer_choice_and_forked_children(chosen: str | None, require_or_skip: Any) -> None:
    """The loops run on the layer numba picks, or the one the process chose; either way a
    forked child computes batchnorm (after GNU OpenMP in the parent: on the numpy passes)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        require_or_skip("HIPDNN_REQUIRE_JIT", "numba is not installed: pip install numba")
    env = {k: v for k, v in os.environ.items() if k not in (_bn_jit.ENV, "NUMBA_THREADING_LAYER")}
    if chosen:
        env["NUMBA_THREADING_LAYER"] = chosen
    out = subprocess.run([sys.executable, "-c", _LAYER_PROBE], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], env=env, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    layer, used, *child = out.stdout.split()
    assert used == "True" and layer in ("tbb", "omp", "workqueue"), out.stdout + out.stderr
    if chosen:
        assert layer == chosen
    assert child in ([], ["0"]), out.stdout + out.stderr


def test_read_only_and_unaligned_inputs(bn_path: str) -> None:
    """A read-only array and a float32 array at an odd byte address (from a bytes buffer) give
    the bits of an ordinary copy, on either implementation."""
    x, g, b = _data(8, (4, 8, 32, 32))
    dy = np.random.default_rng(9).normal(size=x.shape).astype(np.float32)
    want = _train(x, g, b)
    want_bwd = K.bn_backward(dy, x, g, want[1], want[2])
    ro, dyro = x.copy(), dy.copy()
    ro.flags.writeable = dyro.flags.writeable = False
    raw = bytearray(x.nbytes + 1)
    odd = np.frombuffer(raw, np.uint8)[1:].view(np.float32).reshape(x.shape)
    odd[...] = x
    assert not odd.flags.aligned
    for arr in (ro, odd):
        for a, r in zip(_train(arr, g, b), want, strict=True):
            assert np.array_equal(a, r)
    for a, r in zip(K.bn_backward(dyro, ro, g, want[1], want[2]), want_bwd, strict=True):
        assert np.array_equal(a, r)

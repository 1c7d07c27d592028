"""CPU_REFERENCE_ENGINE on the seed-row graphs with random per-axis geometry (every axis a
different padding, stride and dilation; kernel and input sizes drawn too) and random batchnorm
epsilon and momentum, against PyTorch. Seeded: the seed is in the test id and in every failure
message; ``HIPDNN_GEOMETRY_SEED=<n>`` moves the seeds to n, n+1, ... (default 0)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from engine_helpers import run_on_reference

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulated"))
from test_miopen_engine_graphs import LAYOUTS, Case, build, random_geometry

from hipdnn.core.types import DataType
from hipdnn.engines.miopen.patterns import Row

pytest.importorskip("torch")

SEED_BASE = int(os.environ.get("HIPDNN_GEOMETRY_SEED", "0"))
SEEDS = [SEED_BASE + i for i in range(4)]


def _check(case: Case, what: str) -> None:
    outs = run_on_reference(case.graph, case.inputs, list(case.outputs.values()))
    atol, rtol = case.tol()
    for role, got in zip(case.outputs, outs, strict=True):
        np.testing.assert_allclose(got.astype(np.float32), case.expected[role], atol=atol, rtol=rtol,
                                   err_msg=f"{what}: {role}")


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed{s}" for s in SEEDS])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC", "NCDHW", "NDHWC"])
@pytest.mark.parametrize("row", [Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD], ids=lambda r: r.name.lower())
def test_conv_random_per_axis_geometry(row: Row, layout: str, seed: int) -> None:
    geo = random_geometry(seed, len(LAYOUTS[layout]) - 2)
    case = build(row, DataType.FLOAT, layout, seed=seed, **geo)
    _check(case, f"seed {seed} (HIPDNN_GEOMETRY_SEED={seed}): {row.name} {layout} {geo}")


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed{s}" for s in SEEDS])
@pytest.mark.parametrize("layout", ["NCHW", "NDHWC"])
@pytest.mark.parametrize("row", [Row.BN_INFERENCE, Row.BN_TRAINING], ids=lambda r: r.name.lower())
def test_batchnorm_random_epsilon_and_momentum(row: Row, layout: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    eps = float(10 ** rng.uniform(-4, -1))
    kw: dict[str, object] = {"eps": eps}
    if row == Row.BN_TRAINING:
        kw.update(running=True, momentum=float(rng.uniform(0.05, 0.9)))
    case = build(row, DataType.FLOAT, layout, seed=seed, **kw)
    _check(case, f"seed {seed} (HIPDNN_GEOMETRY_SEED={seed}): {row.name} {layout} {kw}")

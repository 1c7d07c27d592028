"""Hypothesis sweep of random convolution configurations vs PyTorch, all three directions.

2-D and 3-D, batch, channels, groups, kernel sizes, strides, asymmetric padding, dilation, and the
memory order / packing of the inputs are all drawn at random; fp32 with DESIGN.md tolerances.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle_helpers import assert_close, in_layout
from test_kernels import torch_conv

from hipdnn.engines.reference import kernels as K

pytest.importorskip("torch")

SWEEP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def conv_configs(draw: Any) -> dict[str, Any]:
    nsp = draw(st.sampled_from([2, 3]))
    g = draw(st.integers(1, 3))
    cg, kg = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    maxk = 3 if nsp == 3 else 4
    ks = [draw(st.integers(1, maxk)) for _ in range(nsp)]
    stride = [draw(st.integers(1, 3)) for _ in range(nsp)]
    dil = [draw(st.integers(1, 2)) for _ in range(nsp)]
    pre = [draw(st.integers(0, 2)) for _ in range(nsp)]
    post = [draw(st.integers(0, 2)) for _ in range(nsp)]
    sp = []
    for i in range(nsp):
        eff = dil[i] * (ks[i] - 1) + 1
        lo = max(1, eff - pre[i] - post[i])  # at least one output position
        sp.append(draw(st.integers(lo, lo + (5 if nsp == 3 else 8))))
    return {
        "n": draw(st.integers(1, 2)), "c": g * cg, "k": g * kg, "g": g, "sp": sp, "ks": ks,
        "stride": stride, "dil": dil, "pre": pre, "post": post,
        "layout": ("NCHW", "NHWC")[draw(st.integers(0, 1))] if nsp == 2 else
        ("NCDHW", "NDHWC")[draw(st.integers(0, 1))],
        "pad": draw(st.sampled_from([0, 2])), "seed": draw(st.integers(0, 2**16)),
    }


def _run(cfg: dict[str, Any]) -> tuple[dict[str, np.ndarray], tuple[Any, ...]]:
    rng = np.random.default_rng(cfg["seed"])
    x = rng.uniform(-1, 1, (cfg["n"], cfg["c"], *cfg["sp"])).astype(np.float32)
    w = rng.uniform(-1, 1, (cfg["k"], cfg["c"] // cfg["g"], *cfg["ks"])).astype(np.float32)
    args = (cfg["pre"], cfg["post"], cfg["stride"], cfg["dil"], cfg["g"])
    y0, _, _ = torch_conv(x, w, None, *args)
    dy = rng.uniform(-1, 1, y0.shape).astype(np.float32)
    y, dx, dw = torch_conv(x, w, dy, *args)
    lay, pad = cfg["layout"], cfg["pad"]
    return {"x": in_layout(x, lay, "fp32", pad), "w": w, "dy": in_layout(dy, lay, "fp32", pad),
            "y": y, "dx": dx, "dw": dw, "x_shape": x.shape}, args


@SWEEP
@given(conv_configs())
def test_sweep_conv_fprop(cfg: dict[str, Any]) -> None:
    d, args = _run(cfg)
    assert_close(K.conv_fprop(d["x"], d["w"], *args), d["y"], "conv_fprop", "fp32", what=str(cfg))


@SWEEP
@given(conv_configs())
def test_sweep_conv_dgrad(cfg: dict[str, Any]) -> None:
    d, args = _run(cfg)
    assert_close(K.conv_dgrad(d["dy"], d["w"], d["x_shape"], *args), d["dx"], "conv_dgrad", "fp32", what=str(cfg))


@SWEEP
@given(conv_configs())
def test_sweep_conv_wgrad(cfg: dict[str, Any]) -> None:
    d, args = _run(cfg)
    assert_close(K.conv_wgrad(d["x"], d["dy"], d["w"].shape, *args), d["dw"], "conv_wgrad", "fp32", what=str(cfg))

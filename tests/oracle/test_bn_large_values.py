"""Batchnorm with very large values on CPU_REFERENCE_ENGINE matches PyTorch CPU (float64).

Backward sums ``sum(dy)`` and ``sum(dy*(x - mean))`` of FP32 data with |x| ~ 1e30 and |dy| ~ 1e10
(or |x| ~ |dy| ~ 1e19, or |x| ~ 1e37) pass 3.4e38 when added in float32, although every result
is an ordinary float32 number (PyTorch CPU accumulates them in float64). They used to come out
inf/nan (dscale, and dx through it) on the numpy passes; the compiled loops already summed in
float64. Each case runs on both implementations (the ``bn_path`` fixture), FP32 and BF16 (whose
range is FP32's), channel-first and channels-last; FP16 with values near its largest (65504).
Forward training at the same magnitudes is checked too (fixed earlier for |x| > 1.8e19).
Reference: PyTorch's batch_norm and its autograd in float64 on the same dtype-rounded inputs;
tolerances: DESIGN.md's BN backward / training rows, relative to each output's largest value.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hipdnn

pytestmark = pytest.mark.usefixtures("bn_path")

torch = pytest.importorskip("torch")

D = hipdnn.DataType
NP = {D.FLOAT: np.float32, D.HALF: np.float16, D.BFLOAT16: ml_dtypes.bfloat16}
#: (dtype, |x| scale, |dy| scale)
MAGNITUDES = [(D.FLOAT, 1e30, 1e10), (D.FLOAT, 1e19, 1e19), (D.FLOAT, 1e37, 1.0),
              (D.BFLOAT16, 1e30, 1e10), (D.HALF, 2e4, 2e4)]
#: DESIGN.md: BN backward, BN training (relative here: the values are far from 1)
BACKWARD_TOL = {D.FLOAT: 2e-3, D.HALF: 4e-3, D.BFLOAT16: 8e-3}
EPS = 1e-5


def _data(dtype: D, shape: tuple[int, ...], xs: float, dys: float) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(7)
    c = shape[1]
    x = (rng.standard_normal(shape) * xs * 0.4 + xs * 0.2).astype(NP[dtype])
    dy = (rng.standard_normal(shape) * dys * 0.4).astype(NP[dtype])
    scale = rng.uniform(0.5, 2, c).astype(np.float32)
    return x, dy, scale


def _graph(dtype: D, shape: tuple[int, ...], layout: str) -> tuple[hipdnn.Graph, dict[str, object]]:
    g = hipdnn.Graph(io_data_type=dtype, intermediate_data_type=D.FLOAT, compute_data_type=D.FLOAT)
    strides = hipdnn.packed_strides(list(shape), layout)
    t = {n: g.tensor(dim=list(shape), stride=strides, name=n) for n in ("x", "dy")}
    for n in ("scale", "mean", "inv"):
        t[n] = g.tensor(dim=[1, shape[1], 1, 1], data_type=D.FLOAT, name=n)
    t["dx"], t["dscale"], t["dbias"] = g.batchnorm_backward(t["dy"], t["x"], t["scale"], t["mean"],
                                                            t["inv"])
    for n in ("dx", "dscale", "dbias"):
        t[n].set_output(True)
    t["dscale"].set_data_type(D.FLOAT)
    t["dbias"].set_data_type(D.FLOAT)
    return g, t


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    got = np.asarray(got, np.float64)
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (4, 8, 16, 16)], ids=["small", "larger"])
@pytest.mark.parametrize("dtype,xs,dys", MAGNITUDES,
                         ids=[f"{d.name.lower()}-x{x:g}-dy{y:g}" for d, x, y in MAGNITUDES])
def test_backward_sums_do_not_overflow(dtype: D, xs: float, dys: float,
                                       shape: tuple[int, ...], layout: str) -> None:
    x, dy, scale = _data(dtype, shape, xs, dys)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=(0, 2, 3))
    inv = 1 / np.sqrt(x64.var(axis=(0, 2, 3)) + EPS)
    mean32, inv32 = mean.astype(np.float32), inv.astype(np.float32)
    g, t = _graph(dtype, shape, layout)
    g.build()
    assert g.get_plan_name().startswith("CPU_REFERENCE_ENGINE")
    dx = np.full(shape, np.nan, NP[dtype])
    dscale, dbias = np.full(shape[1], np.nan, np.float32), np.full(shape[1], np.nan, np.float32)
    g.execute({t["x"]: x, t["dy"]: dy, t["scale"]: scale, t["mean"]: mean32, t["inv"]: inv32,
               t["dx"]: dx, t["dscale"]: dscale, t["dbias"]: dbias})
    # PyTorch, float64, from the float32 statistics the graph was given
    xt, dyt = torch.tensor(x64, requires_grad=True), torch.tensor(dy.astype(np.float64))
    st = torch.tensor(scale.astype(np.float64), requires_grad=True)
    bt = torch.zeros(shape[1], dtype=torch.float64, requires_grad=True)
    m64, i64 = torch.tensor(mean32.astype(np.float64)), torch.tensor(inv32.astype(np.float64))
    b = (1, -1, 1, 1)
    y = (xt - m64.view(b)) * i64.view(b) * st.view(b) + bt.view(b)
    # batch_norm's own backward (the statistics depend on x): the same function of x
    yb = torch.nn.functional.batch_norm(xt, None, None, st, bt, training=True, eps=EPS)
    yb.backward(dyt)
    del y
    want = {"dx": xt.grad.numpy(), "dscale": st.grad.numpy(), "dbias": bt.grad.numpy()}
    got = {"dx": dx, "dscale": dscale, "dbias": dbias}
    tol = BACKWARD_TOL[dtype]
    for name in ("dbias", "dscale", "dx"):
        assert np.isfinite(want[name]).all()
        assert np.isfinite(np.asarray(got[name], np.float64)).all(), f"{name} is not finite"
        assert _rel(got[name], want[name]) <= tol, (name, _rel(got[name], want[name]))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype,xs", [(D.FLOAT, 1e30), (D.FLOAT, 1e37), (D.BFLOAT16, 1e30)],
                         ids=["float-1e30", "float-1e37", "bfloat16-1e30"])
def test_training_forward_at_the_same_magnitudes(dtype: D, xs: float, layout: str) -> None:
    shape = (4, 8, 16, 16)
    x, _, scale = _data(dtype, shape, xs, 1.0)
    bias = np.linspace(-1, 1, shape[1]).astype(np.float32)
    g = hipdnn.Graph(io_data_type=dtype, intermediate_data_type=D.FLOAT, compute_data_type=D.FLOAT)
    xt = g.tensor(dim=list(shape), stride=hipdnn.packed_strides(list(shape), layout), name="x")
    st, bt = (g.tensor(dim=[1, shape[1], 1, 1], data_type=D.FLOAT, name=n) for n in ("s", "b"))
    y, mean, inv = g.batchnorm(xt, st, bt, EPS)[:3]
    for o in (y, mean, inv):
        o.set_output(True)
    mean.set_data_type(D.FLOAT)
    inv.set_data_type(D.FLOAT)
    g.build()
    got = [np.full(shape, np.nan, NP[dtype]), np.full(shape[1], np.nan, np.float32),
           np.full(shape[1], np.nan, np.float32)]
    g.execute({xt: x, st: scale, bt: bias, y: got[0], mean: got[1], inv: got[2]})
    x64 = torch.tensor(x.astype(np.float64))
    want_y = torch.nn.functional.batch_norm(x64, None, None, torch.tensor(scale, dtype=torch.float64),
                                            torch.tensor(bias, dtype=torch.float64),
                                            training=True, eps=EPS).numpy()
    want_mean = x64.mean(dim=(0, 2, 3)).numpy()
    want_inv = 1 / np.sqrt(x64.var(dim=(0, 2, 3), unbiased=False).numpy() + EPS)
    tol = BACKWARD_TOL[dtype] * 2  # DESIGN.md: BN training 4e-3 (fp32), 8e-3 (bf16)
    for name, have, want in (("y", got[0], want_y), ("mean", got[1], want_mean),
                             ("inv", got[2], want_inv)):
        assert np.isfinite(np.asarray(have, np.float64)).all(), name
        assert _rel(have, want) <= tol, (name, _rel(have, want))

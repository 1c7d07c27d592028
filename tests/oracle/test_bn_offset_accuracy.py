"""The reference engine is our oracle, so on offset data (|mean| >> std, where naive sums cancel)
its batchnorm training outputs, and batchnorm inference with such data's statistics, must be at
least as accurate as PyTorch CPU's.

Both are compared with a float64 computation on the same (dtype-rounded) input, through the
public graph API on CPU_REFERENCE_ENGINE: y, the saved mean and inverse std, and the running
variance (unbiased). FP32 data have per-channel mean 1000 (and -3000) with std 0.01; FP16 and BF16
cannot hold std 0.01 at 1000 (their spacing there is 0.5 and 4: every element would round to the
same value), so they get the smallest std of a few spacings (1.0 and 8.0). Our error must be at
most PyTorch's, or within the output type's unit roundoff (the error of rounding the exact value
once); FP32 y must be within 4 unit roundoffs (it was 1.9e-3 relative before shifted sums).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hipdnn

#: Both implementations of the reference batchnorm (numba's compiled loops, the numpy passes).
pytestmark = pytest.mark.usefixtures("bn_path")

torch = pytest.importorskip("torch")

D = hipdnn.DataType
NP = {D.FLOAT: np.float32, D.HALF: np.float16, D.BFLOAT16: ml_dtypes.bfloat16}
TORCH = {D.FLOAT: torch.float32, D.HALF: torch.float16, D.BFLOAT16: torch.bfloat16}
#: unit roundoff of each output type (half its spacing at 1, relative)
UNIT = {D.FLOAT: 2.0**-24, D.HALF: 2.0**-11, D.BFLOAT16: 2.0**-8}
F32_UNIT = 2.0**-24
EPS, MOMENTUM = 1e-5, 1.0  # momentum 1: the running variance is the batch's unbiased variance
#: (dtype, per-channel mean, std)
OFFSET_DATA = [(D.FLOAT, 1000.0, 0.01), (D.FLOAT, -3000.0, 0.01), (D.HALF, 1000.0, 1.0),
               (D.BFLOAT16, 1000.0, 8.0)]
SHAPES = [(8, 16, 16, 16), (32, 4, 32, 32), (4, 8, 3, 3)]


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    got64, want64 = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got64 - want64)) / np.max(np.abs(want64)))


def _truth(x64: np.ndarray) -> dict[str, np.ndarray]:
    axes, bshape = (0, 2, 3), (1, -1, 1, 1)
    mean, var = x64.mean(axis=axes), x64.var(axis=axes)
    inv = 1.0 / np.sqrt(var + EPS)
    count = x64.size // x64.shape[1]
    return {"y": (x64 - mean.reshape(bshape)) * inv.reshape(bshape), "mean": mean, "inv": inv,
            "running_var": var * count / (count - 1)}


def _ours(x: np.ndarray, dtype: D) -> dict[str, np.ndarray]:
    c = x.shape[1]
    g = hipdnn.Graph(io_data_type=dtype, intermediate_data_type=D.FLOAT, compute_data_type=D.FLOAT)
    xt = g.tensor_like(x, "x")
    st, bt, rmt, rvt = (g.tensor(dim=[1, c, 1, 1], data_type=D.FLOAT, name=k)
                        for k in ("scale", "bias", "running_mean", "running_var"))
    y, mean, inv, next_mean, next_var = g.batchnorm(xt, st, bt, EPS, momentum=MOMENTUM,
                                                    in_running_mean=rmt, in_running_var=rvt)
    outs = {"y": y, "mean": mean, "inv": inv, "running_mean": next_mean, "running_var": next_var}
    for t in outs.values():
        t.set_output(True)
    y.set_data_type(dtype)
    g.build_operation_graph()
    g.create_execution_plan_ext("CPU_REFERENCE_ENGINE", {})
    g.build_plans()
    arrays = {k: (np.empty_like(x) if k == "y" else np.empty(c, np.float32)) for k in outs}
    g.execute({xt: x, st: np.ones(c, np.float32), bt: np.zeros(c, np.float32),
               rmt: np.zeros(c, np.float32), rvt: np.zeros(c, np.float32),
               **{t: arrays[k] for k, t in outs.items()}})
    return arrays


def _torch(x: np.ndarray, dtype: D, layout: str) -> dict[str, np.ndarray]:
    c = x.shape[1]
    xt = torch.from_numpy(np.ascontiguousarray(x).astype(np.float32)).to(TORCH[dtype])
    if layout == "NHWC":
        xt = xt.contiguous(memory_format=torch.channels_last)
    rm, rv = torch.zeros(c), torch.zeros(c)
    y, mean, inv = torch.native_batch_norm(xt, torch.ones(c), torch.zeros(c), rm, rv, True,
                                           MOMENTUM, EPS)
    return {"y": y.float().numpy(), "mean": mean.numpy(), "inv": inv.numpy(),
            "running_var": rv.numpy()}


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype,offset,std", OFFSET_DATA,
                         ids=[f"{d.name.lower()}-mean{m:g}-std{s:g}" for d, m, s in OFFSET_DATA])
def test_statistics_on_offset_data_at_least_as_accurate_as_pytorch(
        dtype: D, offset: float, std: float, shape: tuple[int, ...], layout: str) -> None:
    rng = np.random.default_rng(sum(shape))
    logical = (rng.normal(0.0, std, shape) + offset).astype(np.float32).astype(NP[dtype])
    x = logical if layout == "NCHW" else (
        np.ascontiguousarray(logical.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2))
    assert np.all(np.std(x.astype(np.float64), axis=(0, 2, 3)) > 0.5 * std)  # not degenerate
    truth = _truth(x.astype(np.float64))
    ours, theirs = _ours(x, dtype), _torch(x, dtype, layout)
    report = []
    for key, want in truth.items():
        unit = UNIT[dtype] if key == "y" else F32_UNIT  # statistics are FP32 outputs
        mine, torch_err = _rel(ours[key].reshape(want.shape), want), _rel(theirs[key], want)
        report.append(f"{key}: ours {mine:.2e} torch {torch_err:.2e}")
        assert mine <= max(torch_err, unit), "; ".join(report)
    if dtype == D.FLOAT:
        assert _rel(ours["y"], truth["y"]) <= 4 * F32_UNIT, "; ".join(report)
    np.testing.assert_allclose(ours["running_mean"], truth["mean"], rtol=F32_UNIT)


@pytest.mark.parametrize("dtype", list(NP), ids=lambda d: d.name.lower())
def test_ordinary_data_keeps_its_accuracy(dtype: D) -> None:
    """Centred data take the one-pass path and stay within the output type's rounding."""
    rng = np.random.default_rng(3)
    x = rng.normal(0.5, 2.0, (4, 6, 7, 7)).astype(np.float32).astype(NP[dtype])
    truth, ours = _truth(x.astype(np.float64)), _ours(x, dtype)
    for key, want in truth.items():
        unit = UNIT[dtype] if key == "y" else F32_UNIT
        assert _rel(ours[key].reshape(want.shape), want) <= 4 * unit, key


def _inference_ours(x: np.ndarray, dtype: D, params: dict[str, np.ndarray], form: str) -> np.ndarray:
    c = x.shape[1]
    g = hipdnn.Graph(io_data_type=dtype, intermediate_data_type=D.FLOAT, compute_data_type=D.FLOAT)
    xt = g.tensor_like(x, "x")
    pt = {k: g.tensor(dim=[1, c, 1, 1], data_type=D.FLOAT, name=k)
          for k in ("mean", "inv_variance", "variance", "scale", "bias")}
    if form == "inv_variance":
        y = g.batchnorm_inference(xt, pt["mean"], pt["inv_variance"], pt["scale"], pt["bias"])
    else:
        y = g.batchnorm_inference(xt, pt["mean"], scale=pt["scale"], bias=pt["bias"],
                                  variance=pt["variance"], epsilon=EPS)
    y.set_output(True).set_data_type(dtype)
    g.build_operation_graph()
    g.create_execution_plan_ext("CPU_REFERENCE_ENGINE", {})
    g.build_plans()
    out = np.empty_like(x)
    used = ("mean", form, "scale", "bias")
    g.execute({xt: x, y: out, **{pt[k]: params[k] for k in used}})
    return out


@pytest.mark.parametrize("form", ["inv_variance", "variance"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype,offset,std", OFFSET_DATA,
                         ids=[f"{d.name.lower()}-mean{m:g}-std{s:g}" for d, m, s in OFFSET_DATA])
def test_inference_on_offset_data_at_least_as_accurate_as_pytorch(
        dtype: D, offset: float, std: float, layout: str, form: str) -> None:
    """y = (x - mean)*scale/sqrt(var + eps) + bias with the running statistics of offset data
    (x*a and mean*a cancel in the folded affine form PyTorch's CPU kernel uses)."""
    shape = (8, 16, 6, 6)
    rng = np.random.default_rng(11)
    logical = (rng.normal(0.0, std, shape) + offset).astype(np.float32).astype(NP[dtype])
    x = logical if layout == "NCHW" else (
        np.ascontiguousarray(logical.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2))
    x64 = x.astype(np.float64)
    c = shape[1]
    mean = x64.mean(axis=(0, 2, 3)).astype(np.float32)
    var = x64.var(axis=(0, 2, 3)).astype(np.float32)
    params = {"mean": mean, "variance": var,
              "inv_variance": (1 / np.sqrt(var.astype(np.float64) + EPS)).astype(np.float32),
              "scale": rng.uniform(0.5, 2.0, c).astype(np.float32),
              "bias": rng.normal(size=c).astype(np.float32)}
    b = (1, c, 1, 1)
    inv64 = (params["inv_variance"].astype(np.float64) if form == "inv_variance"
             else 1 / np.sqrt(var.astype(np.float64) + EPS))
    truth = ((x64 - mean.reshape(b)) * (inv64 * params["scale"]).reshape(b)
             + params["bias"].reshape(b))
    ours = _inference_ours(x, dtype, params, form)
    xt = torch.from_numpy(np.ascontiguousarray(x).astype(np.float32)).to(TORCH[dtype])
    if form == "inv_variance":  # PyTorch takes a variance: the one whose 1/sqrt is inv_variance
        running_var = torch.from_numpy((1 / params["inv_variance"].astype(np.float64) ** 2
                                        - EPS).astype(np.float32))
    else:
        running_var = torch.from_numpy(var)
    theirs = torch.nn.functional.batch_norm(
        xt, torch.from_numpy(mean), running_var, torch.from_numpy(params["scale"]),
        torch.from_numpy(params["bias"]), False, 0.0, EPS).float().numpy()
    mine, torch_err = _rel(ours, truth), _rel(theirs, truth)
    assert mine <= max(torch_err, UNIT[dtype]), f"ours {mine:.2e} torch {torch_err:.2e}"
    if dtype == D.FLOAT:
        assert mine <= 4 * F32_UNIT, f"ours {mine:.2e}"


#: (per-channel mean, std): FP32 data whose squares pass float32's largest value (~3.4e38 at
#: |x| ~1.8e19) while the variance itself still fits in float32
HUGE_DATA = [(0.0, 1e19), (1e19, 5e18), (-4e19, 1e18), (0.0, 2e18)]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("offset,std", HUGE_DATA, ids=[f"mean{m:g}-std{s:g}" for m, s in HUGE_DATA])
def test_statistics_of_huge_values_do_not_overflow(offset: float, std: float, layout: str) -> None:
    """The numpy passes summed x**2 in float32: beyond |x| ~1.8e19 the sum was inf, the
    variance inf and the inverse variance 0 (y all zero), while the compiled loops (float64
    sums) were right, so the answer depended on the tensor's size. Both implementations now
    match PyTorch computing in float64 to float32 rounding."""
    rng = np.random.default_rng(11)
    logical = (rng.normal(0.0, std, (4, 3, 16, 16)) + offset).astype(np.float32)
    # a channel's sum of squares does not fit in float32 (the one-pass statistic)
    assert float(np.sum(logical[:, 0].astype(np.float64) ** 2)) > float(np.finfo(np.float32).max)
    x = logical if layout == "NCHW" else (
        np.ascontiguousarray(logical.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2))
    ours = _ours(x, D.FLOAT)
    rm, rv = torch.zeros(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    y, mean, inv = torch.native_batch_norm(torch.from_numpy(logical).double(),
                                           torch.ones(3, dtype=torch.float64),
                                           torch.zeros(3, dtype=torch.float64), rm, rv, True,
                                           MOMENTUM, EPS)
    want = {"y": y.numpy(), "mean": mean.numpy(), "inv": inv.numpy(), "running_var": rv.numpy()}
    for key, value in want.items():
        assert np.all(np.isfinite(ours[key])), key
        assert _rel(ours[key].reshape(value.shape), value) <= 4 * F32_UNIT, key

"""``layernorm``, ``rmsnorm``, ``instancenorm`` and their ``*_backward`` written as cudnn-frontend
users write them (``import hipdnn as cudnn``, epsilon as a pass-by-value tensor,
``norm_forward_phase`` TRAINING / INFERENCE, FP16/BF16 data with FP32 compute), against PyTorch
on the CPU: ``F.layer_norm``, RMS norm in float64 torch, ``F.instance_norm``; backward through
autograd. Only CPU_REFERENCE_ENGINE runs them (MIOPEN_ENGINE declines: no seed row).

Tolerances: the reference engine computes in float64 and rounds once to the output's type, and
PyTorch gets the same (already rounded) inputs in float64, so outputs differ by about one
rounding of the output type: DESIGN.md's pointwise column (1e-5 / 1e-3 / 1e-2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from cudnn_style_steps import build

import hipdnn as cudnn
from hipdnn.core.errors import ValidationError
from hipdnn.engines import get_engine

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 1e-2}
EPS = 1e-3


@dataclass(frozen=True)
class Case:
    kind: str                  # "layernorm", "rmsnorm", "instancenorm"
    x: tuple[int, ...]
    scale: tuple[int, ...]
    bias: bool = True
    channels_last: bool = False

    @property
    def axes(self) -> tuple[int, ...]:
        if self.kind == "instancenorm":
            return tuple(range(2, len(self.x)))
        return tuple(i for i, d in enumerate(self.scale) if d != 1)

    @property
    def stats(self) -> tuple[int, ...]:
        return tuple(1 if i in self.axes else d for i, d in enumerate(self.x))

    def __str__(self) -> str:
        extra = ("" if self.bias else "-nobias") + ("-nhwc" if self.channels_last else "")
        return f"{self.kind}{list(self.x)}{extra}"


CASES = [
    Case("layernorm", (4, 16, 64), (1, 1, 64)),           # cudnn-frontend's (batch, seq, embed)
    Case("layernorm", (2, 8, 4, 4), (1, 8, 4, 4)),        # over C, H, W
    Case("layernorm", (2, 8, 4, 4), (1, 8, 4, 4), channels_last=True),
    Case("rmsnorm", (4, 16, 64), (1, 1, 64)),
    Case("rmsnorm", (4, 16, 64), (1, 1, 64), bias=False),
    Case("rmsnorm", (2, 8, 4, 4), (1, 8, 4, 4), channels_last=True),
    Case("instancenorm", (2, 8, 5, 6), (1, 8, 1, 1)),
    Case("instancenorm", (2, 8, 5, 6), (1, 8, 1, 1), channels_last=True),
    Case("instancenorm", (2, 4, 3, 4, 5), (1, 4, 1, 1, 1)),
]


def _inputs(case: Case, dtype: Any) -> tuple[Any, Any, Any]:
    torch.manual_seed(0)
    x = (3 * torch.randn(case.x) - 0.5).to(dtype)
    if case.channels_last:
        x = x.to(memory_format=torch.channels_last)
    scale = (5 * torch.randn(case.scale) - 1).to(dtype)
    bias = (7 * torch.randn(case.scale) - 2).to(dtype) if case.bias else None
    return x, scale, bias


def _reference(case: Case, x: Any, scale: Any, bias: Any) -> tuple[Any, Any, Any]:
    """(y, mean, inv_variance) in float64 from the rounded inputs; mean None for RMSnorm."""
    x64, s64 = x.double(), scale.double()
    b64 = None if bias is None else bias.double()
    axes = list(case.axes)
    if case.kind == "layernorm":
        y = F.layer_norm(x64, [case.x[a] for a in axes], s64.reshape(case.x[axes[0]:]),
                         b64.reshape(case.x[axes[0]:]), eps=EPS)
    elif case.kind == "instancenorm":
        y = F.instance_norm(x64, weight=s64.reshape(-1), bias=b64.reshape(-1), eps=EPS)
    else:
        y = x64 * torch.rsqrt(x64.square().mean(dim=axes, keepdim=True) + EPS) * s64
        if b64 is not None:
            y = y + b64
    if case.kind == "rmsnorm":
        return y, None, torch.rsqrt(x64.square().mean(dim=axes, keepdim=True) + EPS)
    mean = x64.mean(dim=axes, keepdim=True)
    inv = torch.rsqrt(x64.var(dim=axes, unbiased=False, keepdim=True) + EPS)
    return y, mean, inv


def _forward_graph(case: Case, x: Any, scale: Any, bias: Any, phase: Any) -> tuple[Any, ...]:
    graph = cudnn.pygraph(intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    X = graph.tensor(name="X", dim=x.size(), stride=x.stride(), data_type=x.dtype)
    S = graph.tensor(name="scale", dim=scale.size(), stride=scale.stride(), data_type=scale.dtype)
    B = (None if bias is None else
         graph.tensor(name="bias", dim=bias.size(), stride=bias.stride(), data_type=bias.dtype))
    E = graph.tensor(name="epsilon", dim=[1, 1, 1], stride=[1, 1, 1], is_pass_by_value=True,
                     data_type=torch.float32)
    op = getattr(graph, case.kind)
    outs = op(name="N", norm_forward_phase=phase, input=X, scale=S, bias=B, epsilon=E)
    if case.kind == "rmsnorm":
        Y, INV = outs
        MEAN = None
    else:
        Y, MEAN, INV = outs
    Y.set_output(True).set_data_type(x.dtype)
    for t in (MEAN, INV):
        if t is not None:
            t.set_output(True).set_data_type(torch.float32)
    return graph, X, S, B, E, Y, MEAN, INV


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("phase", ["TRAINING", "INFERENCE"])
def test_forward(case: Case, dtype: Any, phase: str) -> None:
    x, scale, bias = _inputs(case, dtype)
    training = phase == "TRAINING"
    graph, X, S, B, E, Y, MEAN, INV = _forward_graph(
        case, x, scale, bias, getattr(cudnn.norm_forward_phase, phase))
    assert (MEAN is None) == (case.kind == "rmsnorm" or not training)
    assert (INV is None) == (not training)
    build(graph)
    if training:
        assert tuple(INV.get_dim()) == case.stats
    y_ref, mean_ref, inv_ref = _reference(case, x, scale, bias)
    y = torch.full_like(x, float("nan"))
    pack = {X: x, S: scale, E: torch.full((1, 1, 1), EPS), Y: y}
    if B is not None:
        pack[B] = bias
    stats = {t: torch.full(case.stats, float("nan")) for t in (MEAN, INV) if t is not None}
    graph.execute({**pack, **stats}, torch.empty(graph.get_workspace_size(), dtype=torch.uint8))
    tol = TOL[dtype]
    torch.testing.assert_close(y.double(), y_ref.to(dtype).double(), atol=tol, rtol=tol)
    if MEAN is not None:
        torch.testing.assert_close(stats[MEAN].double(), mean_ref, atol=1e-6, rtol=1e-6)
    if INV is not None:
        torch.testing.assert_close(stats[INV].double(), inv_ref, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_backward(case: Case, dtype: Any) -> None:
    x, scale, bias = _inputs(case, dtype)
    x64 = x.double().requires_grad_(True)
    s64 = scale.double().requires_grad_(True)
    b64 = None if bias is None else bias.double().requires_grad_(True)
    y_ref, mean_ref, inv_ref = _reference(case, x64, s64, b64)
    dy = torch.randn(case.x).to(dtype)
    if case.channels_last:
        dy = dy.to(memory_format=torch.channels_last)
    y_ref.backward(dy.double())

    graph = cudnn.pygraph(intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    DY = graph.tensor(name="DY", dim=dy.size(), stride=dy.stride(), data_type=dy.dtype)
    X = graph.tensor(name="X", dim=x.size(), stride=x.stride(), data_type=x.dtype)
    S = graph.tensor(name="scale", dim=scale.size(), stride=scale.stride(), data_type=scale.dtype)
    INV = graph.tensor(name="inv_var", dim=case.stats, data_type=cudnn.data_type.FLOAT)
    mean = inv = None
    pack: dict[Any, Any] = {DY: dy, X: x, S: scale, INV: inv_ref.detach().float()}
    if case.kind == "rmsnorm":
        DX, DS, DB = graph.rmsnorm_backward(name="D", grad=DY, input=X, scale=S,
                                            inv_variance=INV, has_dbias=case.bias)
        assert (DB is None) == (not case.bias)
    else:
        MEAN = graph.tensor(name="mean", dim=case.stats, data_type=cudnn.data_type.FLOAT)
        pack[MEAN] = mean_ref.detach().float()
        DX, DS, DB = getattr(graph, f"{case.kind}_backward")(
            name="D", grad=DY, input=X, scale=S, mean=MEAN, inv_variance=INV)
    del mean, inv
    DX.set_output(True).set_data_type(dtype)
    for t in (DS, DB):
        if t is not None:
            t.set_output(True)  # dtype defaults to SCALE's
    build(graph)
    assert tuple(DS.get_dim()) == case.scale
    dx = torch.full_like(x, float("nan"))
    ds = torch.full(case.scale, float("nan"), dtype=dtype)
    pack.update({DX: dx, DS: ds})
    if DB is not None:
        db = torch.full(case.scale, float("nan"), dtype=dtype)
        pack[DB] = db
    graph.execute(pack, torch.empty(graph.get_workspace_size(), dtype=torch.uint8))
    tol = TOL[dtype]
    torch.testing.assert_close(dx.double(), x64.grad.to(dtype).double(), atol=tol, rtol=tol)
    torch.testing.assert_close(ds.double(), s64.grad.to(dtype).double(), atol=tol, rtol=tol)
    if DB is not None:
        assert b64 is not None
        torch.testing.assert_close(db.double(), b64.grad.to(dtype).double(), atol=tol, rtol=tol)


@pytest.mark.parametrize("case", [CASES[0], CASES[4], CASES[7]], ids=str)
def test_json_round_trip_and_miopen_declines(case: Case) -> None:
    x, scale, bias = _inputs(case, torch.float16)
    graph = _forward_graph(case, x, scale, bias, cudnn.norm_forward_phase.TRAINING)[0]
    build(graph)
    reason = get_engine("MIOPEN_ENGINE").check_support(graph, None)
    # instancenorm: MIOpen has no call; layer/RMS norm with FP16 data and the default FLOAT
    # statistics: MIOpen's kernels write the statistics in the data type (give them as HALF)
    want = (f"computes {case.kind}" if case.kind == "instancenorm"
            else "FLOAT but X is HALF")
    assert reason is not None and "node 'N'" in reason and want in reason, reason
    text = graph.serialize()
    again = cudnn.pygraph.deserialize(text)
    assert again.serialize() == text
    node = again.nodes[0]
    assert node.op == case.kind and node.attributes() == {"forward_phase": "TRAINING"}
    build(again)

    def run(g: Any) -> list[Any]:
        by_name = {t.name: t for t in g.all_tensors}
        outs = {n: torch.empty(0) for n in ("N::Y", "N::MEAN", "N::INV_VARIANCE")
                if n in by_name}
        outs["N::Y"] = torch.empty_like(x)
        for n in ("N::MEAN", "N::INV_VARIANCE"):
            if n in outs:
                outs[n] = torch.empty(case.stats)
        pack = {by_name["X"]: x, by_name["scale"]: scale, by_name["epsilon"]: 1e-3,
                **{by_name[n]: v for n, v in outs.items()}}
        if bias is not None:
            pack[by_name["bias"]] = bias
        g.execute(pack, None)
        return list(outs.values())

    for a, b in zip(run(graph), run(again), strict=True):
        assert torch.equal(a, b)


def _graph3() -> tuple[Any, Any, Any, Any]:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[4, 16, 64])
    s = g.tensor(name="s", dim=[1, 1, 64])
    b = g.tensor(name="b", dim=[1, 1, 64])
    return g, x, s, b


TRAIN = cudnn.norm_forward_phase.TRAINING


@pytest.mark.parametrize("op", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("bad", [[1, 1, 32], [4, 1, 64], [1, 64], [1, 1, 1]])
def test_bad_scale_dims_name_the_tensor(op: str, bad: list[int]) -> None:
    g, x, _, b = _graph3()
    s = g.tensor(name="bad_scale", dim=bad)
    getattr(g, op)(TRAIN, x, s, None if op == "rmsnorm" else b, 1e-5, name="n")[0].set_output(True)
    with pytest.raises(ValidationError, match="bad_scale") as info:
        g.validate()
    assert "SCALE" in str(info.value) and "'n'" in str(info.value)


def test_bad_bias_and_stats_dims() -> None:
    g, x, s, _ = _graph3()
    b = g.tensor(name="bad_bias", dim=[1, 16, 64])
    g.layernorm(TRAIN, x, s, b, 1e-5)[0].set_output(True)
    with pytest.raises(ValidationError, match=r"bad_bias.*dims of SCALE"):
        g.validate()
    g, x, s, _ = _graph3()
    dy = g.tensor(name="dy", dim=[4, 16, 64])
    mean = g.tensor(name="bad_mean", dim=[4, 1, 1])
    inv = g.tensor(name="inv", dim=[4, 16, 1])
    g.layernorm_backward(dy, x, s, mean, inv)[0].set_output(True)
    with pytest.raises(ValidationError, match=r"bad_mean.*\[4, 16, 1\]"):
        g.validate()
    g, x, s, _ = _graph3()
    dy = g.tensor(name="bad_dy", dim=[4, 16, 32])
    g.rmsnorm_backward(dy, x, s, g.tensor(name="inv", dim=[4, 16, 1]),
                       has_dbias=False)[0].set_output(True)
    with pytest.raises(ValidationError, match="bad_dy"):
        g.validate()


def test_instancenorm_bad_dims() -> None:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 8, 5, 6])
    s = g.tensor(name="bad_scale", dim=[1, 8, 5, 6])
    b = g.tensor(name="b", dim=[1, 8, 1, 1])
    g.instancenorm(TRAIN, x, s, b, 1e-5)[0].set_output(True)
    with pytest.raises(ValidationError, match=r"bad_scale.*\[1, 8, 1, 1\]"):
        g.validate()
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    x = g.tensor(name="flat_x", dim=[2, 8])
    s = g.tensor(name="s", dim=[1, 8])
    g.instancenorm(TRAIN, x, s, s, 1e-5)[0].set_output(True)
    with pytest.raises(ValidationError, match=r"flat_x.*rank"):
        g.validate()


def test_bad_arguments() -> None:
    g, x, s, b = _graph3()
    with pytest.raises(ValidationError, match=r"norm_forward_phase is NOT_SET.*TRAINING"):
        g.layernorm(cudnn.norm_forward_phase.NOT_SET, x, s, b, 1e-5)
    with pytest.raises(ValidationError, match="epsilon is required"):
        g.layernorm(TRAIN, x, s, b)
    with pytest.raises(ValidationError, match="epsilon"):
        g.rmsnorm(TRAIN, x, s, b, epsilon=-1.0)
    with pytest.raises(ValidationError, match="SCALE"):
        g.layernorm(TRAIN, x, [1, 2], b, 1e-5)
    with pytest.raises(ValidationError, match="has_dbias"):
        g.rmsnorm_backward(x, x, s, s, has_dbias="yes")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="norm_forward_phase"):
        g.instancenorm("SOMETIMES", x, s, b, 1e-5)
    assert g.nodes == []  # nothing half-added


def test_inference_rejects_statistics_outputs_edited_in() -> None:
    g, x, s, b = _graph3()
    g.layernorm(TRAIN, x, s, b, 1e-5, name="ln")[0].set_output(True)
    g.nodes[0].forward_phase = cudnn.norm_forward_phase.INFERENCE
    with pytest.raises(ValidationError, match="INFERENCE has no statistics"):
        g.validate()


def test_output_names_are_cudnn_frontends() -> None:
    """1.x high-level scripts name outputs as cudnn-frontend does: ``"rms_bwd::Dscale"`` for
    rmsnorm_backward, the port names for the others."""
    g, x, s, _ = _graph3()
    inv = g.tensor(name="inv", dim=[4, 16, 1])
    names = [t.name for t in g.rmsnorm_backward(x, x, s, inv, True, name="rms_bwd")]
    assert names == ["rms_bwd::DX", "rms_bwd::Dscale", "rms_bwd::Dbias"]
    names = [t.name for t in g.layernorm_backward(x, x, s, inv, inv, name="ln_bwd")]
    assert names == ["ln_bwd::DX", "ln_bwd::DSCALE", "ln_bwd::DBIAS"]
    names = [t.name for t in g.rmsnorm(TRAIN, x, s, None, 1e-5, name="rms")]
    assert names == ["rms::Y", "rms::INV_VARIANCE"]


def test_statistics_dims_set_by_the_user_must_match() -> None:
    g, x, s, b = _graph3()
    y, mean, _ = g.layernorm(TRAIN, x, s, b, 1e-5, name="ln")
    y.set_output(True)
    mean.set_dim([4, 1, 1])  # batchnorm-like per-sample dims: not cuDNN's (4, 16, 1)
    with pytest.raises(ValidationError, match=r"ln::MEAN.*\[4, 1, 1\].*\[4, 16, 1\]"):
        g.validate()


@pytest.mark.parametrize("kind", ["layernorm", "instancenorm"])
def test_large_offset_keeps_statistics_accurate(kind: str) -> None:
    """Data far from zero (mean 1e4, spread 1): the two-pass float64 statistics lose nothing,
    where a one-pass float32 E[x^2] - E[x]^2 would lose every digit of the variance."""
    case = Case(kind, (2, 8, 16, 16), (1, 8, 16, 16) if kind == "layernorm" else (1, 8, 1, 1))
    torch.manual_seed(1)
    x = 1e4 + torch.randn(case.x)
    scale, bias = torch.ones(case.scale), torch.zeros(case.scale)
    graph, X, S, B, E, Y, MEAN, INV = _forward_graph(case, x, scale, bias, TRAIN)
    build(graph)
    y = torch.empty_like(x)
    mean, inv = torch.empty(case.stats), torch.empty(case.stats)
    graph.execute({X: x, S: scale, B: bias, E: torch.full((1, 1, 1), EPS), Y: y, MEAN: mean,
                   INV: inv}, None)
    y_ref, mean_ref, inv_ref = _reference(case, x, scale, bias)
    torch.testing.assert_close(mean.double(), mean_ref, atol=0, rtol=1e-7)  # FP32 rounding
    torch.testing.assert_close(inv.double(), inv_ref, atol=0, rtol=1e-6)
    torch.testing.assert_close(y.double(), y_ref, atol=1e-5, rtol=1e-5)

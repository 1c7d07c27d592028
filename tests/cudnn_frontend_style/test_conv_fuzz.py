"""A conv fuzzer in the style of cudnn-frontend's (random configs through the pygraph API),
checked against PyTorch: 1-D (NCL/NLC)/2-D/3-D, groups (depthwise included), stride, dilation, padding,
FP32/FP16/BF16, channels-first/channels-last, bias and ReLU epilogues on fprop, fprop/dgrad/wgrad.

Sized for CI (small shapes, a fixed seed, 48 configs, ~10 s on 2 cores). Tolerances are DESIGN.md's conv rows; the
reference is PyTorch in FP64 on the same (rounded) inputs, cast to the output type.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import hipdnn as cudnn

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPES = {"fp32": (torch.float32, cudnn.data_type.FLOAT),
          "fp16": (torch.float16, cudnn.data_type.HALF),
          "bf16": (torch.bfloat16, cudnn.data_type.BFLOAT16)}
TOL = {("fprop", "fp32"): (1e-5, 1e-5), ("fprop", "fp16"): (1e-1, 1e-2),
       ("fprop", "bf16"): (1e-1, 2e-2), ("dgrad", "fp32"): (8.5e-6, 8.5e-6),
       ("dgrad", "fp16"): (2e-2, 2e-2), ("dgrad", "bf16"): (2e-2, 2e-2),
       ("wgrad", "fp32"): (2e-4, 2e-4), ("wgrad", "fp16"): (2e-1, 2e-1),
       ("wgrad", "bf16"): (2e-1, 2e-1)}


def _config(seed: int, rank: int | None = None) -> dict[str, Any]:
    r = random.Random(seed)
    nd = r.choice([2, 2, 3]) if rank is None else rank
    groups = r.choice([1, 1, 2, "dw"])
    cin = r.choice([2, 4, 6]) if groups != "dw" else r.choice([3, 4])
    g = cin if groups == "dw" else groups
    if cin % g:
        g = 1
    cout = g * r.choice([1, 2])
    k = [r.choice([1, 2, 3]) for _ in range(nd)]
    spatial = [r.choice({1: [7, 9, 12], 2: [5, 6, 7], 3: [4, 5]}[nd]) for _ in range(nd)]
    padding = [r.choice([0, 1]) for _ in range(nd)]
    # a dilation whose kernel extent exceeds the padded input falls back to 1
    dilation = [d if d * (kk - 1) + 1 <= s + 2 * p else 1 for d, kk, s, p in
                zip([r.choice([1, 1, 2]) for _ in range(nd)], k, spatial, padding, strict=True)]
    return dict(
        direction=r.choice(["fprop", "fprop", "dgrad", "wgrad"]), nd=nd, groups=g,
        n=r.choice([1, 2]), cin=cin, cout=cout, k=k, spatial=spatial,
        stride=[r.choice([1, 2]) for _ in range(nd)], dilation=dilation, padding=padding,
        dtype=r.choice(list(DTYPES)), channels_last=r.choice([False, True]),
        bias=r.random() < 0.5, relu=r.random() < 0.5)


def _layout(t: Any, cl: bool) -> Any:
    if not cl:
        return t.contiguous()
    if t.dim() == 3:  # NLC: torch has no channels-last memory format for 3-d tensors
        return t.transpose(1, 2).contiguous().transpose(1, 2)
    return t.to(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)


CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _run(graph: Any, pack: dict[Any, Any]) -> None:
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()
    workspace = torch.empty(graph.get_workspace_size(), dtype=torch.uint8)
    graph.execute(pack, workspace)


@pytest.mark.parametrize("seed", range(48))
def test_conv_fuzz(seed: int) -> None:
    _fuzz(_config(seed), seed)


@pytest.mark.parametrize("seed", range(24))
def test_conv_fuzz_1d(seed: int) -> None:
    """1-D convolutions: rank-3 tensors, NCL or NLC, and one-element padding, stride and
    dilation lists as cudnn-frontend takes them."""
    _fuzz(_config(seed, 1), seed)


def _fuzz(c: dict[str, Any], seed: int) -> None:
    tdt, cdt = DTYPES[c["dtype"]]
    torch.manual_seed(seed)
    x = _layout(torch.randn(c["n"], c["cin"], *c["spatial"]).to(tdt), c["channels_last"])
    w = _layout(torch.randn(c["cout"], c["cin"] // c["groups"], *c["k"]).to(tdt),
                c["channels_last"])
    conv = CONV[c["nd"]]
    geo = dict(stride=c["stride"], padding=c["padding"], dilation=c["dilation"],
               groups=c["groups"])
    y64 = conv(x.double(), w.double(), **geo)
    graph = cudnn.pygraph(io_data_type=cdt, intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    kw = dict(padding=c["padding"], stride=c["stride"], dilation=c["dilation"])
    atol, rtol = TOL[(c["direction"], c["dtype"])]
    if c["direction"] == "fprop":
        X, W = graph.tensor_like(x), graph.tensor_like(w)
        Y = graph.conv_fprop(X, W, **kw)
        pack: dict[Any, Any] = {X: x, W: w}
        expected = y64
        if c["bias"]:
            b = torch.randn(1, c["cout"], *([1] * c["nd"])).to(tdt)
            B = graph.tensor_like(b)
            Y = graph.bias(Y, B)
            pack[B] = b
            expected = expected + b.double()
        if c["relu"]:
            Y = graph.relu(Y)
            expected = expected.clamp_min(0)
        out = _layout(torch.empty(expected.shape, dtype=tdt), c["channels_last"])
    elif c["direction"] == "dgrad":
        dy = _layout(torch.randn(y64.shape).to(tdt), c["channels_last"])
        DY, W = graph.tensor_like(dy), graph.tensor_like(w)
        out = _layout(torch.empty(x.shape, dtype=tdt), c["channels_last"])
        Y = graph.conv_dgrad(DY, W, **kw).set_dim(list(out.shape)).set_stride(list(out.stride()))
        pack = {DY: dy, W: w}
        xr = x.double().requires_grad_(True)
        conv(xr, w.double(), **geo).backward(dy.double())
        expected = xr.grad
    else:
        dy = _layout(torch.randn(y64.shape).to(tdt), c["channels_last"])
        X, DY = graph.tensor_like(x), graph.tensor_like(dy)
        out = _layout(torch.empty(w.shape, dtype=tdt), c["channels_last"])
        Y = graph.conv_wgrad(X, DY, **kw).set_dim(list(out.shape)).set_stride(list(out.stride()))
        pack = {X: x, DY: dy}
        wr = w.double().requires_grad_(True)
        conv(x.double(), wr, **geo).backward(dy.double())
        expected = wr.grad
    Y.set_output(True).set_data_type(cdt)
    pack[Y] = out
    _run(graph, pack)
    torch.testing.assert_close(out.double(), expected.to(tdt).double(), atol=atol, rtol=rtol,
                               msg=lambda m: f"config {c}: {m}")

"""``graph.matmul`` written as cudnn-frontend users write it (``import hipdnn as cudnn``, batched
3-D tensors, FP16/BF16 data with FP32 compute, bias + ReLU epilogues, INT8 data cast by an
identity node first), against PyTorch on the CPU. Only CPU_REFERENCE_ENGINE runs it
(MIOPEN_ENGINE declines: no seed row).

Tolerances: the reference is torch.matmul in float64 on the same (already rounded) inputs,
rounded once to the output type; the engine accumulates in float32 (FP32 compute), so FP32
outputs differ by float32 accumulation over K and FP16/BF16 outputs by about one rounding of
the output type: DESIGN.md's conv fprop column (a reduction over K as conv's over C*R*S).
"""

from __future__ import annotations

from typing import Any

import pytest
from cudnn_style_steps import build

import hipdnn as cudnn
from hipdnn.core.errors import ValidationError
from hipdnn.engines import get_engine

torch = pytest.importorskip("torch")

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (1e-1, 1e-2), torch.bfloat16: (1e-1, 2e-2)}

#: (A dims, B dims): plain, batched, batch broadcast on either side, rank 4 broadcast, rank 2.
SHAPES = [
    ((1, 8, 16), (1, 16, 4)),
    ((3, 5, 7), (3, 7, 6)),
    ((1, 5, 7), (4, 7, 6)),
    ((4, 5, 7), (1, 7, 6)),
    ((2, 1, 5, 7), (1, 3, 7, 6)),
    ((5, 64), (64, 6)),
]


def _close(actual: Any, expected64: Any, dtype: Any) -> None:
    atol, rtol = TOL[dtype]
    assert actual.dtype == dtype
    torch.testing.assert_close(actual.double(), expected64.to(dtype).double(), atol=atol,
                               rtol=rtol)


def _data(dims: tuple[int, ...], dtype: Any, seed: int) -> Any:
    g = torch.Generator().manual_seed(seed)
    return (2 * torch.randn(dims, generator=g) - 0.5).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(("a_dims", "b_dims"), SHAPES, ids=str)
def test_matmul(a_dims: tuple[int, ...], b_dims: tuple[int, ...], dtype: Any) -> None:
    a, b = _data(a_dims, dtype, 1), _data(b_dims, dtype, 2)
    graph = cudnn.pygraph(intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    A, B = graph.tensor_like(a), graph.tensor_like(b)
    C = graph.matmul(name="matmul", A=A, B=B, compute_data_type=cudnn.data_type.FLOAT)
    C.set_output(True).set_data_type(dtype)
    build(graph)
    expected = torch.matmul(a.double(), b.double())
    assert tuple(C.get_dim()) == tuple(expected.shape)
    c = torch.empty(expected.shape, dtype=dtype)
    graph.execute({A: a, B: b, C: c}, None)
    _close(c, expected, dtype)


def test_transposed_b_strides() -> None:
    """B given column-major (cudnn-frontend's ``as_strided(..., (N*K, 1, K))``)."""
    a = _data((4, 6, 8), torch.float32, 1)
    b = torch.as_strided(_data((4, 8, 5), torch.float32, 2).contiguous(), (4, 8, 5),
                         (40, 1, 8))
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    A, B = graph.tensor_like(a), graph.tensor_like(b)
    C = graph.matmul(A=A, B=B, compute_data_type=cudnn.data_type.FLOAT).set_output(True)
    build(graph)
    assert list(C.get_stride()) == [30, 5, 1]  # C row-major, as cuDNN infers it
    c = torch.empty(4, 6, 5)
    graph.execute({A: a, B: b, C: c}, None)
    _close(c, torch.matmul(a.double(), b.double()), torch.float32)


def test_double_compute_accumulates_in_float64() -> None:
    """compute_data_type DOUBLE: the FP32 output is the float64 product rounded once."""
    a, b = _data((2, 9, 300), torch.float32, 3), _data((2, 300, 7), torch.float32, 4)
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    A, B = graph.tensor_like(a), graph.tensor_like(b)
    C = graph.matmul(A=A, B=B, compute_data_type=cudnn.data_type.DOUBLE).set_output(True)
    build(graph)
    c = torch.empty(2, 9, 7)
    graph.execute({A: a, B: b, C: c}, None)
    assert torch.equal(c, torch.matmul(a.double(), b.double()).float())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1, 16, 32), (3, 8, 24)], ids=str)
def test_matmul_bias_relu(shape: tuple[int, int, int], dtype: Any) -> None:
    """cudnn-frontend's test_matmul_bias_relu: X (b, s, e) @ W (1, e, 4e) + bias (1, 1, 4e),
    then ReLU; the matmul and add results are virtual FP32 intermediates."""
    bsz, s, e = shape
    x, w, bias = _data((bsz, s, e), dtype, 5), _data((1, e, 4 * e), dtype, 6), \
        _data((1, 1, 4 * e), dtype, 7)
    graph = cudnn.pygraph(intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    X = graph.tensor(name="X", dim=x.size(), stride=x.stride(), data_type=dtype)
    W = graph.tensor(name="W", dim=w.size(), stride=w.stride(), data_type=dtype)
    BIAS = graph.tensor(name="B", dim=bias.size(), stride=bias.stride(), data_type=dtype)
    response = graph.matmul(name="matmul", A=X, B=W)
    Y = graph.relu(name="relu", input=graph.bias(name="bias", input=response, bias=BIAS))
    Y.set_output(True).set_data_type(dtype)
    build(graph)
    y = torch.empty(bsz, s, 4 * e, dtype=dtype)
    graph.execute({X: x, W: w, BIAS: bias, Y: y}, None)
    expected = torch.relu(torch.matmul(x.double(), w.double()) + bias.double())
    _close(y, expected, dtype)


def test_int8_cast_then_matmul_scale() -> None:
    """cudnn-frontend's test_int8_bf16_matmul: INT8 A cast to BF16 by an identity node, then
    matmul with BF16 B in FP32 compute, then a scale epilogue."""
    g = torch.Generator().manual_seed(8)
    a = torch.randint(-2, 2, (4, 8, 16), generator=g, dtype=torch.int8)
    b = _data((4, 16, 12), torch.bfloat16, 9)
    alpha = torch.full((1, 1, 1), 0.5)
    graph = cudnn.pygraph()
    A, B = graph.tensor_like(a), graph.tensor_like(b)
    S = graph.tensor_like(alpha)
    a_cast = graph.identity(input=A, compute_data_type=cudnn.data_type.FLOAT)
    a_cast.set_data_type(cudnn.data_type.BFLOAT16)
    C = graph.matmul(name="matmul", A=a_cast, B=B, compute_data_type=cudnn.data_type.FLOAT)
    C.set_data_type(cudnn.data_type.FLOAT)
    Y = graph.scale(C, S).set_output(True).set_data_type(cudnn.data_type.BFLOAT16)
    build(graph)
    y = torch.empty(4, 8, 12, dtype=torch.bfloat16)
    graph.execute({A: a, B: b, S: alpha, Y: y}, None)
    _close(y, 0.5 * torch.matmul(a.double(), b.double()), torch.bfloat16)


def test_json_round_trip_and_miopen_declines() -> None:
    a, b = _data((3, 5, 7), torch.float16, 1), _data((1, 7, 6), torch.float16, 2)
    bias = _data((1, 1, 6), torch.float16, 3)

    def make() -> Any:
        graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF,
                              intermediate_data_type=cudnn.data_type.FLOAT,
                              compute_data_type=cudnn.data_type.FLOAT)
        A = graph.tensor(name="A", dim=a.size(), stride=a.stride())
        B = graph.tensor(name="B", dim=b.size(), stride=b.stride())
        BIAS = graph.tensor(name="bias", dim=bias.size(), stride=bias.stride())
        C = graph.matmul(name="MM", A=A, B=B)
        graph.relu(graph.bias(C, BIAS), name="out").set_output(True)
        return graph

    graph = make()
    build(graph)
    reason = get_engine("MIOPEN_ENGINE").check_support(graph, None)
    assert reason is not None and "node 'MM'" in reason and "computes matmul" in reason
    text = graph.serialize()
    again = cudnn.pygraph.deserialize(text)
    assert again.serialize() == text
    assert again.nodes[0].op == "matmul" and again.nodes[0].attributes() == {}
    build(again)

    def run(g: Any) -> Any:
        by_name = {t.name: t for t in g.all_tensors}
        y = torch.empty(3, 5, 6, dtype=torch.float16)
        g.execute({by_name["A"]: a, by_name["B"]: b, by_name["bias"]: bias,
                   by_name["out::OUT_0"]: y}, None)
        return y

    first, second = run(graph), run(again)
    assert torch.equal(first, second)
    expected = torch.relu(torch.matmul(a.double(), b.double()) + bias.double())
    _close(first, expected, torch.float16)


def _mm(a_dims: list[int], b_dims: list[int], c_dims: list[int] | None = None,
        a_type: Any = cudnn.data_type.FLOAT) -> Any:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    A = g.tensor(name="mat_a", dim=a_dims, data_type=a_type)
    B = g.tensor(name="mat_b", dim=b_dims)
    C = g.matmul(A=A, B=B, name="mm")
    if c_dims is not None:
        C.set_dim(c_dims)
    C.set_output(True)
    return g


@pytest.mark.parametrize(("a_dims", "b_dims", "port", "tensor", "says"), [
    ([2, 5, 7], [2, 8, 6], "B", "mat_b", r"inner dims differ.*K=7.*valid: B \(\.\.\., 7, N\)"),
    ([3, 5, 7], [2, 7, 6], "B", "mat_b", r"batch dim 0 differs.*equal, or 1"),
    ([2, 5, 7], [7, 6], "B", "mat_b", r"rank mismatch.*same rank"),
    ([7], [7, 6], "A", "mat_a", r"rank >= 2"),
])
def test_bad_shapes_name_the_tensor(a_dims: list[int], b_dims: list[int], port: str,
                                    tensor: str, says: str) -> None:
    with pytest.raises(ValidationError, match=says) as info:
        _mm(a_dims, b_dims).validate()
    assert info.value.node == "mm" and info.value.port == port and info.value.tensor == tensor


def test_bad_output_dims_and_types() -> None:
    with pytest.raises(ValidationError, match=r"\[2, 5, 5\] were set.*produces \[2, 5, 6\]") as i:
        _mm([2, 5, 7], [2, 7, 6], [2, 5, 5]).validate()
    assert i.value.port == "C" and i.value.tensor == "mm::C"
    with pytest.raises(ValidationError, match=r"INT8 is not allowed.*FLOAT") as i:
        _mm([2, 5, 7], [2, 7, 6], a_type=cudnn.data_type.INT8).validate()
    assert i.value.port == "A" and i.value.tensor == "mat_a"


def test_bad_arguments() -> None:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    a, b = g.tensor(name="a", dim=[1, 2, 3]), g.tensor(name="b", dim=[1, 3, 2])
    with pytest.raises(ValidationError, match=r"padding=1\.5 is not supported.*valid: 0\.0"):
        g.matmul(A=a, B=b, padding=1.5)
    with pytest.raises(ValidationError, match="tensor") as info:
        g.matmul(A=a, B=[[1.0]], name="mm")
    assert info.value.port == "B"
    with pytest.raises(TypeError):
        g.matmul(A=a, B=b, m_override=a)  # type: ignore[call-arg]
    assert g.nodes == []  # nothing was added by the refused calls
    c = g.matmul(A=a, B=b, padding=0.0)
    assert tuple(c.get_dim()) == (1, 2, 2)


def test_high_level_graph() -> None:
    """cudnn-frontend 1.x form: framework tensors into matmul, the graph called on new values."""
    a, b = _data((2, 3, 4), torch.float32, 10), _data((1, 4, 5), torch.float32, 11)
    with cudnn.Graph(inputs=["mm::A", "mm::B"], outputs=["relu::OUT_0"],
                     io_data_type=cudnn.data_type.FLOAT,
                     compute_data_type=cudnn.data_type.FLOAT) as graph:
        c = graph.matmul(A=a, B=b, name="mm")
        graph.relu(name="relu", input=c).set_output(True)
    a2 = _data((2, 3, 4), torch.float32, 12)
    _close(graph(a2, b), torch.relu(torch.matmul(a2.double(), b.double())), torch.float32)

"""A cudnn-frontend Python script runs after ``import hipdnn as cudnn`` (on the fake engine).

The script below is written the way cudnn-frontend's own tests are (test_batchnorm.py,
test_conv_bias.py): kwargs API, tensor_like on torch tensors, set_output, the staged pipeline,
a torch workspace and execute with a dict {graph tensor: torch tensor}.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fake_engine import DecliningEngine, FakeEngine, only_fake_engines

import hipdnn as cudnn
from hipdnn.core.errors import KnobError, ValidationError
from hipdnn.core.types import KnobValueType
from hipdnn.engines import IntConstraint, Knob, register, unregister

torch = pytest.importorskip("torch")


@pytest.fixture
def fakes() -> Iterator[tuple[FakeEngine, DecliningEngine]]:
    with only_fake_engines() as engines:
        yield engines


def test_cudnn_frontend_style_bn_inference_relu_script(fakes: object) -> None:
    torch.manual_seed(0)
    n, c, h, w = 4, 16, 8, 8
    x_gpu = torch.randn(n, c, h, w).to(memory_format=torch.channels_last)
    scale_gpu = torch.randn(1, c, 1, 1)
    bias_gpu = torch.randn(1, c, 1, 1)
    mean_gpu = torch.randn(1, c, 1, 1)
    inv_var_gpu = torch.rand(1, c, 1, 1) + 0.5

    handle = cudnn.create_handle()
    graph = cudnn.pygraph(
        io_data_type=cudnn.data_type.FLOAT,
        intermediate_data_type=cudnn.data_type.FLOAT,
        compute_data_type=cudnn.data_type.FLOAT,
        handle=handle,
    )
    X = graph.tensor_like(x_gpu)
    scale = graph.tensor_like(scale_gpu)
    bias = graph.tensor_like(bias_gpu)
    mean = graph.tensor_like(mean_gpu)
    inv_var = graph.tensor_like(inv_var_gpu)

    BN_Y = graph.batchnorm_inference(
        input=X, mean=mean, inv_variance=inv_var, scale=scale, bias=bias, name="bn")
    Y = graph.relu(input=BN_Y, name="relu")
    Y.set_output(True).set_data_type(cudnn.data_type.FLOAT)

    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans(cudnn.build_plan_policy.HEURISTICS_CHOICE)

    y_gpu = torch.empty_like(x_gpu)
    workspace = torch.empty(graph.get_workspace_size(), dtype=torch.uint8)
    graph.execute({X: x_gpu, scale: scale_gpu, bias: bias_gpu, mean: mean_gpu,
                   inv_var: inv_var_gpu, Y: y_gpu}, workspace, handle=handle)

    ref = torch.relu((x_gpu - mean_gpu) * inv_var_gpu * scale_gpu + bias_gpu)
    torch.testing.assert_close(y_gpu, ref, atol=1e-5, rtol=1e-5)
    assert X.get_stride() == list(x_gpu.stride()) and Y.get_name() == "relu::OUT_0"
    assert BN_Y.get_is_virtual() and not Y.get_is_virtual()
    graph.close()
    cudnn.destroy_handle(handle)


def test_cudnn_frontend_style_batchnorm_scalars_and_uids(fakes: object) -> None:
    # cudnn-frontend passes epsilon as a CPU (1,1,1,1) tensor through tensor_like.
    x_gpu = torch.randn(2, 3, 4, 4)
    params = {k: torch.randn(1, 3, 1, 1) for k in ("mean", "scale", "bias")}
    var_gpu = torch.rand(1, 3, 1, 1) + 0.1
    epsilon_cpu = torch.full((1, 1, 1, 1), 1e-3)

    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    X = graph.tensor(name="X", dim=x_gpu.size(), stride=x_gpu.stride(),
                     data_type=x_gpu.dtype, uid=1)
    epsilon = graph.tensor_like(epsilon_cpu)
    assert epsilon.get_is_pass_by_value()
    t = {k: graph.tensor_like(v).set_name(k) for k, v in params.items()}
    var = graph.tensor_like(var_gpu).set_name("var")
    Y = graph.batchnorm_inference(X, t["mean"], scale=t["scale"], bias=t["bias"],
                                  variance=var, epsilon=epsilon)
    Y.set_output(True).set_uid(100)
    graph.build([cudnn.heur_mode.FALLBACK])

    y_gpu = torch.empty_like(x_gpu)
    pack = {1: x_gpu, var.get_uid(): var_gpu, epsilon: epsilon_cpu, 100: y_gpu}
    pack.update({t[k].get_uid(): v for k, v in params.items()})
    graph.execute(pack, None)
    ref = ((x_gpu - params["mean"]) / torch.sqrt(var_gpu + 1e-3) * params["scale"]
           + params["bias"])
    torch.testing.assert_close(y_gpu, ref, atol=1e-5, rtol=1e-5)


def test_cudnn_frontend_style_not_supported_is_catchable(fakes: object) -> None:
    # cudnn-frontend tests wrap plan creation like this and waive the test.
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    X = graph.tensor(name="X", dim=[8, 16, 32, 32], stride=[16384, 1, 512, 16],
                     data_type=cudnn.data_type.HALF)
    W = graph.tensor(name="W", dim=[32, 16, 3, 3], stride=[144, 1, 48, 16],
                     data_type=cudnn.data_type.HALF)
    B = graph.tensor(name="B", dim=[1, 32, 1, 1], stride=[32, 1, 32, 32],
                     data_type=cudnn.data_type.HALF)
    conv_output = graph.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[1, 1],
                                   dilation=[1, 1])
    bias_output = graph.bias(name="bias", input=conv_output, bias=B)
    Y = graph.relu(name="relu", input=bias_output)
    Y.set_output(True)
    graph.validate()
    graph.build_operation_graph()
    with pytest.raises(cudnn.cudnnGraphNotSupportedError) as info:
        graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    assert set(info.value.reasons) == {"FAKE_TEST_ENGINE", "FAKE_DECLINING_ENGINE"}
    assert Y.get_dim() == [8, 32, 32, 32] and Y.get_stride() == [32768, 1, 1024, 32]


def test_alias_table() -> None:
    assert cudnn.pygraph is cudnn.Graph
    assert cudnn.data_type is cudnn.DataType
    assert cudnn.heur_mode is cudnn.HeurMode
    assert cudnn.build_plan_policy is cudnn.BuildPlanPolicy
    assert cudnn.convolution_mode.CROSS_CORRELATION == 1
    assert cudnn.pointwise_mode.RELU_FWD == 34
    assert cudnn.knob_setting is cudnn.KnobSetting and cudnn.knob is cudnn.Knob
    assert cudnn.norm_forward_phase.TRAINING == 2
    h = cudnn.create_handle()
    cudnn.set_stream(h, 0x1234)
    assert cudnn.get_stream(h) == 0x1234
    cudnn.destroy_handle(h)
    assert h.closed


# -- cudnn-frontend plan selection: create_execution_plan, deselect_*, bad modes/policies -------
class _BigWorkspaceEngine(FakeEngine):
    """Accepts what FakeEngine accepts, ranked first, and asks for 2048 workspace bytes."""

    name = "FAKE_BIG_WORKSPACE_ENGINE"
    rank = -200

    def get_knobs(self, graph: Any, handle: Any) -> list[Knob]:
        knobs = super().get_knobs(graph, handle)
        return [k if k.id != "fake.workspace" else
                Knob("fake.workspace", KnobValueType.INT64, 2048, IntConstraint(0, 4096, 256),
                     "workspace bytes the plan asks for") for k in knobs]


@pytest.fixture
def two_engines(fakes: tuple[FakeEngine, DecliningEngine]) -> Iterator[tuple[Any, FakeEngine]]:
    big = register(_BigWorkspaceEngine())
    try:
        yield big, fakes[0]
    finally:
        unregister(big)


def _relu_graph() -> tuple[Any, Any, Any]:
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT, name="g")
    x = graph.tensor(name="x", dim=[1, 2, 3, 3])
    y = graph.relu(x, name="relu").set_output(True)
    return graph, x, y


def test_create_execution_plan_is_create_execution_plan_ext(fakes: Any) -> None:
    fake = fakes[0]
    graph, x, y = _relu_graph()
    graph.build_operation_graph()
    graph.create_execution_plan(fake.engine_id, [cudnn.KnobSetting("fake.tile", 2)])
    graph.build_plans(cudnn.build_plan_policy.ALL)
    eid, knobs = graph.get_engine_and_knobs_at_index(0)
    assert eid == fake.engine_id and knobs["fake.tile"] == 2
    xs = -np.arange(18, dtype=np.float32).reshape(1, 2, 3, 3) + 9
    ys = np.empty_like(xs)
    graph.execute({x: xs, y: ys})
    np.testing.assert_array_equal(ys, np.maximum(xs, 0))


def test_duplicate_knob_setting_is_rejected(fakes: Any) -> None:
    graph, _, _ = _relu_graph()
    with pytest.raises(KnobError, match=r"'fake\.tile' is set more than once") as info:
        graph.create_execution_plan(fakes[0].engine_id, [cudnn.KnobSetting("fake.tile", 2),
                                                         cudnn.KnobSetting("fake.tile", 3)])
    assert info.value.knob == "fake.tile"


def test_deselect_workspace_greater_than_skips_big_plans(two_engines: Any) -> None:
    big, fake = two_engines
    graph, _, _ = _relu_graph()
    graph.create_execution_plans([cudnn.heur_mode.A])
    assert graph.get_ranked_engine_ids()[:2] == [big.engine_id, fake.engine_id]
    graph.deselect_workspace_greater_than(1024)
    graph.build_plans(cudnn.build_plan_policy.HEURISTICS_CHOICE)
    assert graph.get_execution_plan_engine_id() == fake.engine_id
    assert graph.get_workspace_size() == 0
    assert "2048 bytes" in graph._planner.reasons[big.name]

    graph.deselect_workspace_greater_than(None)  # the limit is lifted
    graph.build_plans(cudnn.build_plan_policy.ALL)
    assert graph.get_execution_plan_count() == 2 and graph.get_workspace_size() == 2048
    graph.deselect_workspace_greater_than(np.int64(2047))  # drops built plans too
    assert graph.get_execution_plan_count() == 1 and graph.get_workspace_size() == 0

    graph.deselect_workspace_greater_than(0)
    graph.create_execution_plan(big.engine_id)
    with pytest.raises(cudnn.cudnnGraphNotSupportedError, match="deselect_workspace_greater"):
        graph.build_plans()
    with pytest.raises(ValidationError, match=r"deselect_workspace_greater_than.*-1"):
        graph.deselect_workspace_greater_than(-1)
    with pytest.raises(ValidationError, match=r"deselect_workspace_greater_than.*1\.5"):
        graph.deselect_workspace_greater_than(1.5)


def test_deselect_engines_by_name_or_id(two_engines: Any) -> None:
    big, fake = two_engines
    graph, _, _ = _relu_graph()
    graph.create_execution_plans()
    graph.deselect_engines([big.name])
    graph.build_plans()
    assert graph.get_execution_plan_engine_id() == fake.engine_id
    assert graph._planner.reasons[big.name] == "deselected by deselect_engines()"

    graph.create_execution_plans()
    graph.deselect_engines(big.engine_id)  # a single id (or name) is accepted too
    graph.deselect_engines("NOT_AN_ENGINE")  # unknown names are ignored (cudnn-frontend)
    graph.build_plans(cudnn.build_plan_policy.ALL)
    assert [p.engine.engine_id for p in graph.plans] == [fake.engine_id]

    graph.create_execution_plans()
    graph.deselect_engines(fake.name)
    graph.deselect_engines([big.name])
    with pytest.raises(cudnn.cudnnGraphNotSupportedError):
        graph.check_support()


@pytest.mark.parametrize("modes", ["nope", ["A", "nope"], [7], 1.5])
def test_unknown_heuristic_modes_are_rejected(fakes: Any, modes: Any) -> None:
    graph, _, _ = _relu_graph()
    with pytest.raises(ValidationError, match=r"heuristic mode.*FALLBACK \(0\).*OPENSOURCE"):
        graph.create_execution_plans(modes)
    with pytest.raises(ValidationError, match="heuristic mode"):
        graph.build(modes)


def test_every_heuristic_mode_gives_the_same_ranking(two_engines: Any) -> None:
    graph, _, _ = _relu_graph()
    ranked = []
    for mode in [*cudnn.heur_mode, "a", 2, [cudnn.heur_mode.B, "FALLBACK"]]:
        graph.create_execution_plans(mode)
        ranked.append([e.engine_id for e, _ in graph._planner.candidates])
    assert all(r == ranked[0] for r in ranked) and len(ranked[0]) == 2


@pytest.mark.parametrize("policy", ["nope", 5, None])
def test_unknown_build_policy_is_rejected(fakes: Any, policy: Any) -> None:
    graph, _, _ = _relu_graph()
    with pytest.raises(ValidationError, match=r"build plan policy.*HEURISTICS_CHOICE.*ALL"):
        graph.build(policy=policy)
    graph.create_execution_plans()
    with pytest.raises(ValidationError, match="build plan policy"):
        graph.build_plans(policy)
    graph.build_plans("all")
    assert graph.get_execution_plan_count() == 1

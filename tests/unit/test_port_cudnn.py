"""A cudnn-frontend Python script runs after ``import hipdnn as cudnn`` (on the fake engine).

The script below is written the way cudnn-frontend's own tests are (test_batchnorm.py,
test_conv_bias.py): kwargs API, tensor_like on torch tensors, set_output, the staged pipeline,
a torch workspace and execute with a dict {graph tensor: torch tensor}.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_engine import DecliningEngine, FakeEngine, only_fake_engines

import hipdnn as cudnn

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

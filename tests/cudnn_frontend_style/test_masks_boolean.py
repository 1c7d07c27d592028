"""Masks as cudnn-frontend users write them: BOOLEAN outputs of comparisons (torch.bool buffers),
torch.bool and UINT8 masks as inputs of a dReLU (``scale(dY, mask)``) before batchnorm backward,
and boolean logic, after ``import hipdnn as cudnn``, against PyTorch on the CPU.

BOOLEAN and integer tensors run on CPU_REFERENCE_ENGINE; MIOPEN_ENGINE declines them naming the
node (no seed row has them).
"""

from __future__ import annotations

from typing import Any

import pytest
from cudnn_style_steps import build

import hipdnn as cudnn
from hipdnn.engines import get_engine

torch = pytest.importorskip("torch")

N, C, H, W = 4, 16, 12, 12
# DESIGN.md's BN tolerances, except where a HALF output is compared: one fp16 rounding step is
# 9.8e-4 relative, so results rounded to HALF are compared at 1e-3.
HALF_ROUNDING = 1e-3


def _build(graph: Any) -> None:
    build(graph)
    assert graph.get_plan_name_at_index(0).startswith("CPU_REFERENCE_ENGINE")


def test_bn_relu_with_boolean_mask() -> None:
    torch.manual_seed(0)
    handle = cudnn.create_handle()
    x_gpu = torch.randn(N, C, H, W, dtype=torch.float16).to(memory_format=torch.channels_last)
    scale_gpu = torch.randn(1, C, 1, 1)
    bias_gpu = torch.randn_like(scale_gpu)
    running_mean_gpu = torch.randn_like(scale_gpu)
    running_var_gpu = torch.rand_like(scale_gpu) + 0.5
    comparison_gpu = torch.zeros_like(x_gpu)
    epsilon_cpu = torch.full((1, 1, 1, 1), 1e-3)
    momentum_cpu = torch.full((1, 1, 1, 1), 0.1)
    old_mean, old_var = running_mean_gpu.clone(), running_var_gpu.clone()

    graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle)
    x = graph.tensor_like(x_gpu)
    scale, bias = graph.tensor_like(scale_gpu), graph.tensor_like(bias_gpu)
    in_mean, in_var = graph.tensor_like(running_mean_gpu), graph.tensor_like(running_var_gpu)
    epsilon, momentum = graph.tensor_like(epsilon_cpu), graph.tensor_like(momentum_cpu)
    comparison = graph.tensor_like(x_gpu)
    y_pre, mean, inv_var, out_mean, out_var = graph.batchnorm(
        name="BN", input=x, scale=scale, bias=bias, in_running_mean=in_mean,
        in_running_var=in_var, epsilon=epsilon, momentum=momentum)
    y = graph.relu(name="relu", input=y_pre)
    mask = graph.cmp_gt(name="cmp", input=y, comparison=comparison)
    y.set_output(True)
    for t in (mean, inv_var, out_mean, out_var):
        t.set_output(True).set_data_type(cudnn.data_type.FLOAT)
    mask.set_output(True).set_data_type(cudnn.data_type.BOOLEAN)
    _build(graph)

    saved_mean, saved_inv_var = torch.empty_like(scale_gpu), torch.empty_like(scale_gpu)
    y_gpu = torch.empty_like(x_gpu)
    mask_gpu = torch.ones_like(x_gpu, dtype=torch.bool)  # garbage: every False must be written
    graph.execute({x: x_gpu, scale: scale_gpu, bias: bias_gpu, in_mean: running_mean_gpu,
                   in_var: running_var_gpu, epsilon: epsilon_cpu, momentum: momentum_cpu,
                   out_mean: running_mean_gpu, out_var: running_var_gpu, mean: saved_mean,
                   inv_var: saved_inv_var, y: y_gpu, comparison: comparison_gpu,
                   mask: mask_gpu}, torch.empty(graph.get_workspace_size(), dtype=torch.uint8),
                  handle=handle)

    xf = x_gpu.float()
    ref_mean, ref_var = old_mean.reshape(-1).clone(), old_var.reshape(-1).clone()
    y_ref = torch.relu(torch.nn.functional.batch_norm(
        xf, ref_mean, ref_var, weight=scale_gpu.reshape(-1), bias=bias_gpu.reshape(-1),
        training=True, momentum=0.1, eps=1e-3))
    torch.testing.assert_close(y_gpu.float(), y_ref, atol=4e-3, rtol=4e-3)
    torch.testing.assert_close(saved_mean, xf.mean(dim=(0, 2, 3), keepdim=True),
                               atol=4e-3, rtol=4e-3)
    inv_ref = torch.rsqrt(xf.var(dim=(0, 2, 3), unbiased=False, keepdim=True) + 1e-3)
    torch.testing.assert_close(saved_inv_var, inv_ref, atol=4e-3, rtol=4e-3)
    torch.testing.assert_close(running_mean_gpu.reshape(-1), ref_mean, atol=4e-3, rtol=4e-3)
    torch.testing.assert_close(running_var_gpu.reshape(-1), ref_var, atol=4e-3, rtol=4e-3)
    assert mask_gpu.dtype == torch.bool
    assert torch.equal(mask_gpu, y_gpu > 0)  # the mask of the very values written to y
    assert 0 < int(mask_gpu.sum()) < mask_gpu.numel()


@pytest.mark.parametrize("mask_dtype", [torch.bool, torch.uint8], ids=["bool", "uint8"])
@pytest.mark.parametrize("dump_dx_drelu", [True, False], ids=["dump", "nodump"])
def test_drelu_mask_dbn(mask_dtype: Any, dump_dx_drelu: bool) -> None:
    torch.manual_seed(1)
    handle = cudnn.create_handle()
    x_gpu = torch.randn(N, C, H, W, dtype=torch.float16).to(memory_format=torch.channels_last)
    x_mask_gpu = (torch.randn_like(x_gpu) > 0).to(mask_dtype)
    scale_gpu = torch.randn(1, C, 1, 1)
    mean_gpu = torch.randn_like(scale_gpu)
    inv_var_gpu = torch.rand_like(scale_gpu) + 0.5
    dy_gpu = torch.randn_like(x_gpu)

    graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle)
    x, x_mask = graph.tensor_like(x_gpu), graph.tensor_like(x_mask_gpu)
    assert x_mask.get_data_type() == (cudnn.data_type.BOOLEAN if mask_dtype == torch.bool
                                      else cudnn.data_type.UINT8)
    scale, mean = graph.tensor_like(scale_gpu), graph.tensor_like(mean_gpu)
    inv_var, dy = graph.tensor_like(inv_var_gpu), graph.tensor_like(dy_gpu)
    dx_drelu = graph.scale(name="drelu", input=dy, scale=x_mask)
    dx_drelu.set_data_type(cudnn.data_type.HALF)
    if dump_dx_drelu:
        dx_drelu.set_output(True)
    dx, dscale, dbias = graph.batchnorm_backward(name="DBN", grad=dx_drelu, input=x,
                                                 scale=scale, mean=mean, inv_variance=inv_var)
    dx.set_output(True).set_data_type(cudnn.data_type.HALF)
    dscale.set_output(True).set_data_type(cudnn.data_type.FLOAT)
    dbias.set_output(True).set_data_type(cudnn.data_type.FLOAT)
    _build(graph)

    dx_gpu, dscale_gpu, dbias_gpu = (torch.empty_like(dy_gpu), torch.empty_like(scale_gpu),
                                     torch.empty_like(scale_gpu))
    pack = {x: x_gpu, x_mask: x_mask_gpu, dy: dy_gpu, scale: scale_gpu, mean: mean_gpu,
            inv_var: inv_var_gpu, dx: dx_gpu, dscale: dscale_gpu, dbias: dbias_gpu}
    dx_drelu_gpu = torch.full_like(dy_gpu, float("nan"))
    if dump_dx_drelu:
        pack[dx_drelu] = dx_drelu_gpu
    graph.execute(pack, torch.empty(graph.get_workspace_size(), dtype=torch.uint8),
                  handle=handle)

    grad = (dy_gpu.float() * x_mask_gpu.float()).half().float()  # dReLU, stored as HALF
    if dump_dx_drelu:
        torch.testing.assert_close(dx_drelu_gpu.float(), grad, atol=0, rtol=0)
    dx_ref, dscale_ref, dbias_ref = torch.ops.aten.native_batch_norm_backward(
        grad, x_gpu.float(), scale_gpu.reshape(-1), None, None, mean_gpu.reshape(-1),
        inv_var_gpu.reshape(-1), True, 0.0, [True, True, True])
    torch.testing.assert_close(dx_gpu.float(), dx_ref, atol=HALF_ROUNDING, rtol=HALF_ROUNDING)
    torch.testing.assert_close(dscale_gpu.reshape(-1), dscale_ref, atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(dbias_gpu.reshape(-1), dbias_ref, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("dim,x_dtype", [
    ([8, 32], torch.float16), ([4, 8, 16], torch.float16), ([4, 8, 16], torch.bfloat16),
    ([4, 8, 16], torch.float32), ([2, 16, 7, 7], torch.float16)])
def test_boolean_cmp_then_logical_and(dim: list[int], x_dtype: Any) -> None:
    torch.manual_seed(2)
    handle = cudnn.create_handle()
    x_t = torch.randn(*dim, dtype=x_dtype)
    thresh_t = torch.randn(*dim, dtype=torch.float32)
    b_t = torch.randint(0, 2, dim, dtype=torch.bool)
    g = cudnn.pygraph(handle=handle, intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
    x_c, th_c, b_c = g.tensor_like(x_t), g.tensor_like(thresh_t), g.tensor_like(b_t)
    cmp_out = g.cmp_gt(input=x_c, comparison=th_c, compute_data_type=cudnn.data_type.FLOAT)
    cmp_out.set_data_type(cudnn.data_type.BOOLEAN)
    and_out = g.logical_and(a=cmp_out, b=b_c, compute_data_type=cudnn.data_type.BOOLEAN)
    and_out.set_output(True).set_data_type(cudnn.data_type.BOOLEAN)
    _build(g)
    out_t = torch.zeros(*dim, dtype=torch.bool)
    g.execute({x_c: x_t, th_c: thresh_t, b_c: b_t, and_out: out_t},
              torch.empty(g.get_workspace_size(), dtype=torch.uint8), handle=handle)
    ref = (x_t.float() > thresh_t) & b_t
    assert int((out_t != ref).sum()) == 0
    assert 0 < int(ref.sum()) < ref.numel()


def test_uint8_and_int32_outputs_of_comparisons() -> None:
    """A comparison written to UINT8 or INT32 gives 1/0; a scaled mask keeps its values."""
    torch.manual_seed(3)
    a, b = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)
    for dtype in (torch.uint8, torch.int32):
        g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
        ta, tb = g.tensor_like(a), g.tensor_like(b)
        out = g.cmp_le(ta, tb).set_output(True).set_data_type(dtype)
        g.build([cudnn.heur_mode.A])
        y = torch.full(a.shape, 7, dtype=dtype)
        g.execute({ta: a, tb: b, out: y})
        assert torch.equal(y, (a <= b).to(dtype))


def test_high_level_graph_allocates_a_bool_mask() -> None:
    torch.manual_seed(4)
    x_gpu = torch.randn(N, C, H, W, dtype=torch.float16).to(memory_format=torch.channels_last)
    scale_gpu, bias_gpu = torch.randn(1, C, 1, 1), torch.randn(1, C, 1, 1)
    running_mean_gpu, running_var_gpu = torch.randn(1, C, 1, 1), torch.rand(1, C, 1, 1) + 0.5
    comparison_gpu = torch.zeros_like(x_gpu)
    eps_cpu, momentum_cpu = torch.full((1, 1, 1, 1), 1e-3), torch.full((1, 1, 1, 1), 0.1)
    with cudnn.Graph(
        io_data_type=cudnn.data_type.HALF, intermediate_data_type=cudnn.data_type.FLOAT,
        compute_data_type=cudnn.data_type.FLOAT,
        inputs=["bn_fwd::input", "bn_fwd::scale", "bn_fwd::bias", "bn_fwd::in_running_mean",
                "bn_fwd::in_running_var", "bn_fwd::epsilon", "bn_fwd::momentum",
                "cmp_gt::comparison"],
        outputs=["y", "mean", "inv_var", "run_mean", "run_var", "mask"],
    ) as fwd_graph:
        out, mean, inv_var, run_mean, run_var = fwd_graph.batchnorm(
            name="bn_fwd", input=x_gpu, scale=scale_gpu, bias=bias_gpu,
            in_running_mean=running_mean_gpu, in_running_var=running_var_gpu,
            epsilon=eps_cpu, momentum=momentum_cpu)
        y = fwd_graph.relu(name="relu", input=out)
        mask = fwd_graph.cmp_gt(name="cmp_gt", input=y, comparison=comparison_gpu)
        y.set_output(True).set_name("y")
        mean.set_output(True).set_data_type(cudnn.data_type.FLOAT).set_name("mean")
        inv_var.set_output(True).set_data_type(cudnn.data_type.FLOAT).set_name("inv_var")
        run_mean.set_output(True).set_data_type(cudnn.data_type.FLOAT).set_name("run_mean")
        run_var.set_output(True).set_data_type(cudnn.data_type.FLOAT).set_name("run_var")
        mask.set_output(True).set_data_type(cudnn.data_type.BOOLEAN).set_name("mask")
    y_out, mean_out, _, _, _, mask_out = fwd_graph(
        x_gpu, scale_gpu, bias_gpu, running_mean_gpu, running_var_gpu, eps_cpu, momentum_cpu,
        comparison_gpu)
    assert mask_out.dtype == torch.bool and mask_out.shape == x_gpu.shape
    assert torch.equal(mask_out, y_out > 0)
    torch.testing.assert_close(mean_out, x_gpu.float().mean(dim=(0, 2, 3), keepdim=True),
                               atol=4e-3, rtol=4e-3)


def test_miopen_engine_declines_masks_naming_the_node() -> None:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    x = g.tensor_like(torch.randn(2, 3, 4, 4))
    m = g.tensor_like(torch.zeros(2, 3, 4, 4, dtype=torch.bool))
    g.scale(x, m, name="drelu").set_output(True)
    g.validate()
    reason = get_engine("MIOPEN_ENGINE").check_support(g, None)
    assert reason is not None
    assert "node 'drelu'" in reason and "BOOLEAN" in reason
    assert "CPU_REFERENCE_ENGINE runs it" in reason

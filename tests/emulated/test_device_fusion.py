"""The emulated device's fusion plans: applicability (compile), op args, fused math vs PyTorch."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from emulated._client import Client
from emulated._testing import DevTensor, f32, fetch, put, scratch
from emulated.device import EmulatedDevice

from miopen_ctypes import errors
from miopen_ctypes.types import (
    miopenFusionOpDescriptor_t,
    miopenFusionPlanDescriptor_t,
    miopenOperatorArgs_t,
)

torch = pytest.importorskip("torch")

EPS = 1e-5


@pytest.fixture
def client(emulated_device: EmulatedDevice) -> Iterator[Client]:
    with Client(emulated_device.miopen) as c:
        yield c


class Plan:
    """A fusion plan + operator args that are destroyed at the end of the test."""

    def __init__(self, lib: Any, x_desc: Any) -> None:
        self.lib = lib
        self.plan = miopenFusionPlanDescriptor_t()
        lib.miopenCreateFusionPlan(ctypes.byref(self.plan), 0, x_desc)
        self.args = miopenOperatorArgs_t()
        lib.miopenCreateOperatorArgs(ctypes.byref(self.args))

    def op(self, create: str, *extra: Any) -> Any:
        op = miopenFusionOpDescriptor_t()
        getattr(self.lib, create)(self.plan, ctypes.byref(op), *extra)
        return op

    def close(self) -> None:
        self.lib.miopenDestroyOperatorArgs(self.args)
        self.lib.miopenDestroyFusionPlan(self.plan)


def _conv_bias_act(dev: EmulatedDevice, client: Client, dtype: int = 1, layout: str | None = None,
                   act_mode: int = 3) -> tuple[Plan, DevTensor, DevTensor, DevTensor, DevTensor, Any]:
    rng = np.random.default_rng(11)
    lib = dev.miopen
    x = put(dev, client, rng.standard_normal((2, 3, 6, 6)).astype(np.float32), dtype, layout)
    w = put(dev, client, rng.standard_normal((4, 3, 3, 3)).astype(np.float32), dtype, layout)
    b = put(dev, client, rng.standard_normal((1, 4, 1, 1)).astype(np.float32), dtype)
    conv = client.conv((1, 1), (1, 1), (1, 1))
    y = scratch(dev, client, client.conv_out(conv, x.desc, w.desc), dtype, layout)
    plan = Plan(lib, x.desc)
    conv_op = plan.op("miopenCreateOpConvForward", conv, w.desc)
    bias_op = plan.op("miopenCreateOpBiasForward", b.desc)
    act_op = plan.op("miopenCreateOpActivationForward", act_mode)
    lib.miopenSetOpArgsConvForward(plan.args, conv_op, f32(1), f32(0), w.ptr)
    lib.miopenSetOpArgsBiasForward(plan.args, bias_op, f32(1), f32(0), b.ptr)
    lib.miopenSetOpArgsActivForward(plan.args, act_op, f32(1), f32(0), 0.0, 0.0, 0.0)
    return plan, x, w, b, y, conv


def test_conv_bias_relu_fuses_and_matches_torch(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    plan, x, w, b, y, _ = _conv_bias_act(dev, client)
    h = client.handle()
    lib.miopenCompileFusionPlan(h, plan.plan)
    ws = ctypes.c_size_t(99)
    lib.miopenFusionPlanGetWorkSpaceSize(h, plan.plan, ctypes.byref(ws), 1)
    assert ws.value == 0
    want = torch.relu(torch.nn.functional.conv2d(torch.from_numpy(fetch(dev, x)), torch.from_numpy(fetch(dev, w)),
                                                 torch.from_numpy(fetch(dev, b).ravel()), padding=1)).numpy()
    if dev.version >= (3, 5, 0):
        lib.miopenExecuteFusionPlan_v2(h, plan.plan, x.desc, x.ptr, y.desc, y.ptr, plan.args, None, 0)
        np.testing.assert_allclose(fetch(dev, y), want, rtol=1e-5, atol=1e-5)
        dev.fill(y.ptr, 0.0)
    else:
        with pytest.raises(errors.MIOpenVersionError):
            lib.miopenExecuteFusionPlan_v2(h, plan.plan, x.desc, x.ptr, y.desc, y.ptr, plan.args, None, 0)
    lib.miopenExecuteFusionPlan(h, plan.plan, x.desc, x.ptr, y.desc, y.ptr, plan.args)
    np.testing.assert_allclose(fetch(dev, y), want, rtol=1e-5, atol=1e-5)
    other = client.handle()
    with pytest.raises(errors.MIOpenBadParmError):  # a compiled plan is bound to its handle
        lib.miopenExecuteFusionPlan(other, plan.plan, x.desc, x.ptr, y.desc, y.ptr, plan.args)
    with pytest.raises(errors.MIOpenBadParmError):  # the input descriptor must be the plan's
        lib.miopenExecuteFusionPlan(h, plan.plan, y.desc, y.ptr, y.desc, y.ptr, plan.args)
    plan.close()
    assert not dev.live_objects("fusion_op") and not dev.live_objects("fusion_plan")


@pytest.mark.parametrize(("dtype", "layout", "act"), [(0, None, 3), (1, "NHWC", 3), (1, None, 10), (5, None, 3)],
                         ids=["fp16", "nhwc", "clamp", "bf16"])
def test_unfusable_plans_report_unsupported_op(emulated_device: EmulatedDevice, client: Client, dtype: int,
                                               layout: str | None, act: int) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    plan, x, *_ = _conv_bias_act(dev, client, dtype, layout, act)
    h = client.handle()
    with pytest.raises(errors.MIOpenUnsupportedOpError):
        lib.miopenCompileFusionPlan(h, plan.plan)
    assert dev.fusion_rejections
    with pytest.raises(errors.MIOpenBadParmError):  # never compiled
        lib.miopenExecuteFusionPlan(h, plan.plan, x.desc, x.ptr, x.desc, x.ptr, plan.args)
    dev.fusion_applicable = lambda plan, ops, version: None  # the predicate is configurable
    lib.miopenCompileFusionPlan(h, plan.plan)
    plan.close()


def _bn_inputs(dev: EmulatedDevice, client: Client) -> dict[str, Any]:
    rng = np.random.default_rng(13)
    dims = (4, 3, 5, 6)
    t = {"xa": rng.standard_normal(dims).astype(np.float32), "dya": rng.standard_normal(dims).astype(np.float32),
         "g": rng.uniform(0.5, 1.5, (1, 3, 1, 1)).astype(np.float32),
         "b": rng.standard_normal((1, 3, 1, 1)).astype(np.float32)}
    t.update(x=put(dev, client, t["xa"]), dy=put(dev, client, t["dya"]), scale=put(dev, client, t["g"]),
             bias=put(dev, client, t["b"]), rmean=put(dev, client, np.zeros((1, 3, 1, 1), np.float32)),
             rvar=put(dev, client, np.ones((1, 3, 1, 1), np.float32)),
             smean=scratch(dev, client, (1, 3, 1, 1)), sinv=scratch(dev, client, (1, 3, 1, 1)),
             y=scratch(dev, client, dims), dx=scratch(dev, client, dims),
             dscale=scratch(dev, client, (1, 3, 1, 1)), dbias=scratch(dev, client, (1, 3, 1, 1)))
    return t


def test_bn_training_relu_fused(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    t = _bn_inputs(dev, client)
    plan = Plan(lib, t["x"].desc)
    bn = plan.op("miopenCreateOpBatchNormForward", 1, False)
    act = plan.op("miopenCreateOpActivationForward", 3)
    h = client.handle()
    lib.miopenCompileFusionPlan(h, plan.plan)
    lib.miopenSetOpArgsActivForward(plan.args, act, f32(1), f32(0), 0.0, 0.0, 0.0)
    lib.miopenSetOpArgsBatchNormForward(plan.args, bn, f32(1), f32(0), t["scale"].ptr, t["bias"].ptr,
                                        t["smean"].ptr, t["sinv"].ptr, None, None, 0.1, EPS)
    with pytest.raises(errors.MIOpenBadParmError):  # the fused kernel always touches the running stats
        lib.miopenExecuteFusionPlan(h, plan.plan, t["x"].desc, t["x"].ptr, t["y"].desc, t["y"].ptr, plan.args)
    lib.miopenSetOpArgsBatchNormForward(plan.args, bn, f32(1), f32(0), t["scale"].ptr, t["bias"].ptr,
                                        t["smean"].ptr, t["sinv"].ptr, t["rmean"].ptr, t["rvar"].ptr, 0.0, EPS)
    lib.miopenExecuteFusionPlan(h, plan.plan, t["x"].desc, t["x"].ptr, t["y"].desc, t["y"].ptr, plan.args)
    want = torch.relu(torch.nn.functional.batch_norm(
        torch.from_numpy(t["xa"]), None, None, torch.from_numpy(t["g"].ravel()), torch.from_numpy(t["b"].ravel()),
        training=True, eps=EPS)).numpy()
    np.testing.assert_allclose(fetch(dev, t["y"]), want, rtol=4e-3, atol=4e-3)
    assert (fetch(dev, t["rmean"]) == 0).all() and (fetch(dev, t["rvar"]) == 1).all()  # factor 0: unchanged
    plan.close()
    plan = Plan(lib, t["x"].desc)
    bn = plan.op("miopenCreateOpBatchNormForward", 1, True)
    with pytest.raises(errors.MIOpenBadParmError):  # runningMeanVariance=true forbids NULL running buffers
        lib.miopenSetOpArgsBatchNormForward(plan.args, bn, f32(1), f32(0), t["scale"].ptr, t["bias"].ptr,
                                            t["smean"].ptr, t["sinv"].ptr, None, None, 0.1, EPS)
    plan.close()


def test_bn_backward_relu_backward_fused(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    t = _bn_inputs(dev, client)
    axes = (0, 2, 3)
    mean, inv = t["xa"].mean(axis=axes, keepdims=True), 1 / np.sqrt(t["xa"].var(axis=axes, keepdims=True) + EPS)
    smean, sinv = put(dev, client, mean), put(dev, client, inv.astype(np.float32))
    plan = Plan(lib, t["dy"].desc)
    bn = plan.op("miopenCreateOpBatchNormBackward", 1)
    act = plan.op("miopenCreateOpActivationBackward", 3)
    h = client.handle()
    lib.miopenCompileFusionPlan(h, plan.plan)
    lib.miopenSetOpArgsBatchNormBackward(plan.args, bn, f32(1), f32(0), t["x"].ptr, t["scale"].ptr, t["bias"].ptr,
                                         t["dscale"].ptr, t["dbias"].ptr, smean.ptr, sinv.ptr)
    lib.miopenSetOpArgsActivBackward(plan.args, act, f32(1), f32(0), t["y"].ptr, None, 0.0, 0.0, 0.0)
    lib.miopenExecuteFusionPlan(h, plan.plan, t["dy"].desc, t["dy"].ptr, t["dx"].desc, t["dx"].ptr, plan.args)
    x = torch.from_numpy(t["xa"].astype(np.float64)).requires_grad_(True)
    g = torch.from_numpy(t["g"].ravel().astype(np.float64)).requires_grad_(True)
    be = torch.from_numpy(t["b"].ravel().astype(np.float64)).requires_grad_(True)
    torch.relu(torch.nn.functional.batch_norm(x, None, None, g, be, training=True, eps=EPS)).backward(
        torch.from_numpy(t["dya"].astype(np.float64)))
    np.testing.assert_allclose(fetch(dev, t["dx"]), x.grad.numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(fetch(dev, t["dscale"]).ravel(), g.grad.numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(fetch(dev, t["dbias"]).ravel(), be.grad.numpy(), rtol=2e-3, atol=2e-3)
    plan.close()


def test_op_args_must_match_op_kinds_and_be_complete(emulated_device: EmulatedDevice, client: Client) -> None:
    dev, lib = emulated_device, emulated_device.miopen
    plan, x, w, _b, y, _conv = _conv_bias_act(dev, client)
    h = client.handle()
    lib.miopenCompileFusionPlan(h, plan.plan)
    bias_op = miopenFusionOpDescriptor_t()
    lib.miopenFusionPlanGetOp(plan.plan, 1, ctypes.byref(bias_op))
    with pytest.raises(errors.MIOpenUnknownError):  # a bias op is not a conv op (std::bad_cast)
        lib.miopenSetOpArgsConvForward(plan.args, bias_op, f32(1), f32(0), w.ptr)
    fresh = miopenOperatorArgs_t()
    lib.miopenCreateOperatorArgs(ctypes.byref(fresh))
    with pytest.raises(errors.MIOpenBadParmError):  # args missing for every op
        lib.miopenExecuteFusionPlan(h, plan.plan, x.desc, x.ptr, y.desc, y.ptr, fresh)
    lib.miopenDestroyOperatorArgs(fresh)
    algos, n = (ctypes.c_uint * 4)(), ctypes.c_int()
    lib.miopenFusionPlanConvolutionGetAlgo(plan.plan, 4, ctypes.byref(n), algos)
    assert list(algos[: n.value]) == [1, 3]
    plan.close()

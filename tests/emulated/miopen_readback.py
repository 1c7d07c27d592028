"""What a MIOPEN_ENGINE plan handed MIOpen, read back from MIOpen and compared with the graph.

Used on the emulated device (tests/emulated/test_miopen_engine_readback.py) and on the REAL
libMIOpen over the stub GPU (tests/stubgpu/test_readback.py). After a plan is built and run:

- every tensor descriptor the plan owns is read back (``miopenGetTensorDescriptor``): each
  non-virtual tensor of the graph must be among them with its dims, strides and data type;
- every convolution descriptor (``miopenGetConvolutionNdDescriptor``, group count) must hold the
  graph's padding, stride and dilation per axis, and MIOpen's own output-size arithmetic
  (``miopenGetConvolutionNdForwardOutputDim`` over the graph's x and w dims) must give the
  graph's y dims;
- every activation MIOpen holds (``miopenGetActivationDescriptor``, or a fusion plan's mode and
  ``miopenSetOpArgsActiv*`` arguments) evaluated with MIOpen's documented formula for its mode
  must equal the graph's RELU with its clips;
- the scalars MIOpen receives at execute (``epsilon``, ``expAvgFactor`` by the prototypes'
  parameter names) must be the graph's epsilon and momentum.

The expected side comes from the test's own builder (``Case.args``), never from the engine.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np
from _client import Client

from hipdnn.core.types import DataType
from miopen_ctypes.enums import miopenActivationMode_t as M
from miopen_ctypes.enums import miopenDataType_t

__all__ = ["RecordingLib", "mismatches"]

_DTYPE = {DataType.FLOAT: int(miopenDataType_t.miopenFloat),
          DataType.HALF: int(miopenDataType_t.miopenHalf),
          DataType.BFLOAT16: int(miopenDataType_t.miopenBFloat16)}


class RecordingLib:
    """A bound MIOpen library whose ``miopen*`` calls are recorded as (name, {parameter: value})
    before they run; everything else (capabilities, ...) is the library's own."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._lib, name)
        protos = getattr(self._lib, "_prototypes", {})
        if not name.startswith("miopen") or name not in protos or not callable(attr):
            return attr
        names = protos[name].argnames

        def recorded(*args: Any) -> Any:
            self.calls.append((name, dict(zip(names, args, strict=False))))
            return attr(*args)
        return recorded


def _miopen_activation(mode: int, alpha: float, beta: float) -> Callable[[np.ndarray], np.ndarray] | None:
    """MIOpen's documented forward formula for ``mode`` (miopenActivationMode_t), or None."""
    if mode == M.miopenActivationPASTHRU:
        return lambda x: x
    if mode == M.miopenActivationRELU:
        return lambda x: np.maximum(x, 0.0)
    if mode == M.miopenActivationCLIPPEDRELU:
        return lambda x: np.minimum(np.maximum(x, 0.0), alpha)
    if mode == M.miopenActivationCLAMP:
        return lambda x: np.minimum(np.maximum(x, alpha), beta)
    if mode == M.miopenActivationLEAKYRELU:
        return lambda x: np.where(x > 0, x, alpha * x)
    return None


def _graph_relu(x: np.ndarray, lower: float | None, upper: float | None) -> np.ndarray:
    """RELU_FWD with clips as cuDNN defines it: max(x, lower or 0), then min(., upper)."""
    y = np.maximum(x, 0.0 if lower is None else lower)
    return y if upper is None else np.minimum(y, upper)


def _activations(plan: Any, client: Client, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, float, float]]:
    """(mode, alpha, beta) of every activation MIOpen holds for the plan."""
    from hipdnn.engines.miopen.descriptors import ActivationDesc

    out = [client.get_activation(o.raw)[:3] for o in plan.miopen_objects if isinstance(o, ActivationDesc)]
    if str(plan.path) != "fused":
        return out  # a fusion plan tried and declined leaves its ops in the calls
    modes = [int(a["mode"]) for n, a in calls if n.startswith("miopenCreateOpActivation")]
    args = [(_float(a["activAlpha"]), _float(a["activBeta"])) for n, a in calls
            if n.startswith("miopenSetOpArgsActiv")]
    for mode in modes:  # a fusion plan: the op's mode, the last arguments set for it
        alpha, beta = args[-1] if args else (float("nan"), float("nan"))
        out.append((mode, alpha, beta))
    return out


def mismatches(lib: Any, plan: Any, case: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """What MIOpen holds for ``plan`` (built from ``case.graph``) that differs from the graph;
    ``calls``: the plan's recorded calls (:class:`RecordingLib`), build and execute."""
    from hipdnn.engines.miopen.descriptors import ConvDesc, TensorDesc
    from hipdnn.engines.miopen.onedim import padded_strides

    bad: list[str] = []
    # a 1-D graph reaches MIOpen padded to N,C,L,1 (AMD's provider's rule): its tensors 4-D with
    # W = 1, its convolution given a trailing padding 0, stride 1, dilation 1
    one_d = case.layout in ("NCL", "NLC")
    client = Client(lib)
    try:
        objects = plan.miopen_objects
        held = []
        for o in objects:
            if isinstance(o, TensorDesc):
                n, dtype, dims, strides, _ = client.describe(o.raw)
                held.append((dtype, dims, strides))
        tensors = [*case.inputs, *case.outputs.values()]
        for t in tensors:
            if t.is_virtual or len(t.dim) < 3 or t.dim[0] == 1:
                continue  # per-channel parameters: MIOpen derives their descriptor
            want = ((_DTYPE[DataType(t.data_type)], (*t.dim, 1), padded_strides(t)) if one_d
                    else (_DTYPE[DataType(t.data_type)], tuple(t.dim), tuple(t.stride)))
            if want not in held:
                bad.append(f"tensor {t.name!r}: (dtype, dims, strides) {want} not among the "
                           f"descriptors MIOpen holds {held}")
        a = case.args
        convs = [o for o in objects if isinstance(o, ConvDesc)]
        if "padding" in a:
            if len(convs) != 1:
                bad.append(f"{len(convs)} convolution descriptors; expected 1")
            for conv in convs:
                k, pads, strides, dils, mode, groups, *_ = client.conv_settings(conv.raw)
                got = {"padding": list(pads), "stride": list(strides), "dilation": list(dils),
                       "groups": groups}
                want_geo = {key: a[key] for key in got}
                if one_d:
                    want_geo = {"padding": [*a["padding"], 0], "stride": [*a["stride"], 1],
                                "dilation": [*a["dilation"], 1], "groups": a["groups"]}
                if got != want_geo or k != len(want_geo["padding"]) or mode != 0:
                    bad.append(f"convolution descriptor holds {got} (spatial dims {k}, mode "
                               f"{mode}); the graph asks {want_geo} (cross-correlation)")
                x_dims, w_dims, y_dims = a["dims"]
                if one_d:
                    x_dims, w_dims, y_dims = ((*d, 1) for d in (x_dims, w_dims, y_dims))
                dt = _DTYPE[DataType(case.dtype)]
                out = client.conv_out(conv.raw, client.tensor(dt, x_dims), client.tensor(dt, w_dims))
                if tuple(out) != tuple(y_dims):
                    bad.append(f"MIOpen computes output dims {out} from the descriptor for x "
                               f"{x_dims}, w {w_dims}; the graph's y is {y_dims}")
        if a.get("act"):
            acts = _activations(plan, client, calls)
            if not acts:
                bad.append("the graph has an activation; MIOpen holds none")
            grid = np.linspace(-3.0, 3.0, 241)
            want_y = _graph_relu(grid, a.get("lower"), a.get("upper"))
            for mode, alpha, beta in acts:
                fn = _miopen_activation(mode, alpha, beta)
                if fn is None or not np.allclose(fn(grid), want_y, rtol=0, atol=1e-6):
                    bad.append(f"MIOpen holds activation mode {M(mode).name} alpha {alpha} beta "
                               f"{beta}; the graph's RELU has lower clip {a.get('lower')}, "
                               f"upper clip {a.get('upper')}")
        for key, argname in (("epsilon", "epsilon"), ("momentum", "expAvgFactor")):
            if key not in a:
                continue
            sent = [(n, args[argname]) for n, args in calls if argname in args
                    and "Forward" in n and "BatchNorm" in n]
            if not sent:
                bad.append(f"no batchnorm forward call received {argname}")
            for n, value in sent:
                if not np.isclose(_float(value), float(a[key]), rtol=1e-12, atol=0):
                    bad.append(f"{n} received {argname}={value}; the graph's {key} is {a[key]}")
    finally:
        client.close()
    return bad


def _float(v: Any) -> float:
    """A ctypes double or a Python number, as float."""
    return float(v.value if isinstance(v, ctypes.c_double) else v)

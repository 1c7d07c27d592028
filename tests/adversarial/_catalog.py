"""The adversarial catalog's machinery: named cases, sentinel outputs, and the graphs they use.

A case is a function taking an :class:`Outputs` (where it makes every output buffer it hands to
hipdnn, filled with :data:`SENTINEL`), doing one bad thing, and expected to raise ``exc`` with a
message containing every string of ``culprit`` (the tensor, node, argument or knob named, and
usually the valid values). After the failure every output buffer must still hold the sentinel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import hipdnn

F32 = hipdnn.DataType.FLOAT
SENTINEL = -7.25
SHAPE = (2, 3, 4, 4)


class Outputs:
    """Output buffers of one case, filled with the sentinel; :meth:`check` after the failure."""

    def __init__(self) -> None:
        self.arrays: list[Any] = []

    def np(self, shape: tuple[int, ...] = SHAPE, dtype: Any = np.float32) -> np.ndarray:
        a = np.full(shape, SENTINEL, dtype)
        self.arrays.append(a)
        return a

    def keep(self, array: Any) -> Any:
        """Track an output buffer the case made itself (already sentinel-filled)."""
        self.arrays.append(array)
        return array

    def check(self) -> None:
        for a in self.arrays:
            values = np.asarray(a.detach().cpu() if hasattr(a, "detach") else a)
            expect = np.asarray(SENTINEL).astype(values.dtype)
            assert (values == expect).all(), "an output was written by a failing call"


@dataclass(frozen=True)
class Case:
    """One named bad input."""

    name: str
    category: str
    run: Callable[[Outputs], object]
    exc: type[BaseException]
    culprit: tuple[str, ...]


CASES: list[Case] = []


def add(category: str, name: str, exc: type[BaseException], culprit: str | tuple[str, ...],
        run: Callable[[Outputs], object]) -> None:
    """Register case ``<category>/<name>``."""
    CASES.append(Case(f"{category}/{name}", category, run, exc,
                      (culprit,) if isinstance(culprit, str) else tuple(culprit)))


# -- graphs the cases use ------------------------------------------------------------------------

def graph(**kw: Any) -> hipdnn.Graph:
    kw.setdefault("io_data_type", F32)
    kw.setdefault("intermediate_data_type", F32)
    kw.setdefault("compute_data_type", F32)
    return hipdnn.Graph(**kw)


def relu_graph(handle: hipdnn.Handle | None = None,
               build: bool = True) -> tuple[hipdnn.Graph, Any, Any]:
    """x (2, 3, 4, 4) -> relu -> y; built."""
    g = graph(handle=handle)
    x = g.tensor(dim=list(SHAPE), name="x")
    y = g.relu(x, name="act").set_output(True).set_name("y")
    if build:
        g.build()
    return g, x, y


def relu_pack(out: Outputs, x: Any, y: Any) -> dict[Any, Any]:
    return {x: np.linspace(-1, 1, 96, dtype=np.float32).reshape(SHAPE), y: out.np()}


def conv_graph(**attrs: Any) -> tuple[hipdnn.Graph, Any, Any, Any]:
    """x (2, 3, 6, 6) conv w (4, 3, 3, 3) -> y, node 'conv' (not built)."""
    g = graph()
    x = g.tensor(dim=[2, 3, 6, 6], name="x")
    w = g.tensor(dim=[4, 3, 3, 3], name="w")
    attrs.setdefault("padding", [1, 1])
    y = g.conv_fprop(x, w, name="conv", **attrs).set_output(True).set_name("y")
    return g, x, w, y


def conv_pack(out: Outputs, x: Any, w: Any, y: Any) -> dict[Any, Any]:
    rng = np.random.default_rng(0)
    return {x: rng.standard_normal((2, 3, 6, 6)).astype(np.float32),
            w: rng.standard_normal((4, 3, 3, 3)).astype(np.float32), y: out.np((2, 4, 6, 6))}


def bn_graph(epsilon: Any = 1e-5, momentum: Any = 0.1,
             build: bool = True) -> tuple[hipdnn.Graph, dict[str, Any]]:
    """Batchnorm training with running statistics, node 'bn'; tensors by name."""
    g = graph()
    t = {n: g.tensor(dim=[1, 3, 1, 1], name=n) for n in ("scale", "bias", "rmean", "rvar")}
    t["x"] = g.tensor(dim=list(SHAPE), name="x")
    outs = g.batchnorm(t["x"], t["scale"], t["bias"], epsilon, momentum=momentum,
                       in_running_mean=t["rmean"], in_running_var=t["rvar"], name="bn")
    for key, o in zip(("y", "mean", "inv_var", "next_rmean", "next_rvar"), outs, strict=True):
        assert o is not None
        t[key] = o.set_output(True).set_name(key)
    if build:
        g.build()
    return g, t


def bn_pack(out: Outputs, t: dict[str, Any]) -> dict[Any, Any]:
    rng = np.random.default_rng(1)
    pack: dict[Any, Any] = {t["x"]: rng.standard_normal(SHAPE).astype(np.float32)}
    for n in ("scale", "bias", "rmean", "rvar"):
        pack[t[n]] = np.ones((1, 3, 1, 1), np.float32)
    pack[t["y"]] = out.np()
    for n in ("mean", "inv_var", "next_rmean", "next_rvar"):
        pack[t[n]] = out.np((1, 3, 1, 1))
    return pack

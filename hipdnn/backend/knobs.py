"""Knobs: the tunable settings an engine offers, their constraints, and resolving user settings.

hipDNN's two global knobs are ``global.benchmarking`` and ``global.workspace_size_limit``;
an engine describes each knob it offers as a :class:`Knob` with a constraint, and
:func:`resolve_knob_settings` turns what a user passed (``KnobSetting`` objects or a dict) into
one checked value per knob.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from hipdnn.core.errors import KnobError
from hipdnn.core.types import KnobValueType

__all__ = [
    "BENCHMARKING_KNOB",
    "NO_WORKSPACE_LIMIT",
    "WORKSPACE_SIZE_LIMIT_KNOB",
    "Constraint",
    "FloatConstraint",
    "IntConstraint",
    "Knob",
    "KnobSetting",
    "KnobSettings",
    "KnobValue",
    "StringConstraint",
    "knob_setting_pairs",
    "resolve_knob_settings",
]

#: 0 = heuristic solution choice, 1 = exhaustive search (hipDNN ``BENCHMARKING_KNOB_NAME``).
BENCHMARKING_KNOB = "global.benchmarking"
#: Largest workspace (bytes) a convolution solution may use (``WORKSPACE_SIZE_LIMIT_KNOB_NAME``).
WORKSPACE_SIZE_LIMIT_KNOB = "global.workspace_size_limit"
#: The value of ``global.workspace_size_limit`` that sets no limit (2**63 - 1, the largest INT64):
#: MIOPEN_ENGINE's default, so its Find 2.0 considers every solver whatever its workspace.
NO_WORKSPACE_LIMIT = (1 << 63) - 1

KnobValue = int | float | str


@dataclass(frozen=True)
class IntConstraint:
    """Integer range ``[min, max]`` in steps of ``step`` from ``min``, or an explicit value list."""

    min: int
    max: int
    step: int = 1
    valid_values: tuple[int, ...] | None = None

    def describe(self) -> str:
        """The allowed values in words, e.g. ``"an integer in [0, 1]"``."""
        if self.valid_values is not None:
            return f"one of {list(self.valid_values)}"
        step = f" in steps of {self.step}" if self.step != 1 else ""
        return f"an integer in [{self.min}, {self.max}]{step}"

    def check(self, value: Any, knob: str = "knob") -> int:
        """Return ``value`` as an int, or raise :class:`KnobError` naming ``knob`` and the range."""
        if isinstance(value, bool) or not isinstance(value, int):
            if not isinstance(value, np.integer):
                raise KnobError(
                    f"knob {knob!r} takes {self.describe()}; got {value!r} "
                    f"({type(value).__name__})", knob=knob)
        v = int(value)
        if self.valid_values is not None:
            ok = v in self.valid_values
        else:
            ok = self.min <= v <= self.max and (self.step <= 1 or (v - self.min) % self.step == 0)
        if not ok:
            raise KnobError(f"knob {knob!r} = {v} is out of range; valid: {self.describe()}",
                            knob=knob)
        return v


@dataclass(frozen=True)
class FloatConstraint:
    """Float range ``[min, max]``."""

    min: float
    max: float

    def describe(self) -> str:
        """The allowed values in words."""
        return f"a number in [{self.min}, {self.max}]"

    def check(self, value: Any, knob: str = "knob") -> float:
        """Return ``value`` as a float, or raise :class:`KnobError`."""
        if isinstance(value, (bool, str)) or not isinstance(value, (int, float)):
            raise KnobError(f"knob {knob!r} takes {self.describe()}; got {value!r}", knob=knob)
        v = float(value)
        if not self.min <= v <= self.max:
            raise KnobError(f"knob {knob!r} = {v} is out of range; valid: {self.describe()}",
                            knob=knob)
        return v


@dataclass(frozen=True)
class StringConstraint:
    """One of a fixed set of strings."""

    valid_values: tuple[str, ...]

    def describe(self) -> str:
        """The allowed values in words."""
        return f"one of {list(self.valid_values)}"

    def check(self, value: Any, knob: str = "knob") -> str:
        """Return ``value``, or raise :class:`KnobError` naming the valid strings."""
        if not isinstance(value, str) or value not in self.valid_values:
            raise KnobError(f"knob {knob!r} = {value!r} is invalid; valid: {self.describe()}",
                            knob=knob)
        return value


Constraint = IntConstraint | FloatConstraint | StringConstraint


@dataclass(frozen=True)
class Knob:
    """A tunable setting an engine offers for a given graph (hipDNN ``Knob``)."""

    id: str
    value_type: KnobValueType
    default: KnobValue
    constraint: Constraint | None = None
    description: str = ""

    def check(self, value: Any) -> KnobValue:
        """Validate ``value`` against the type and constraint; return the normalised value."""
        if self.constraint is not None:
            return self.constraint.check(value, self.id)
        expected: tuple[type, ...] = {
            KnobValueType.INT64: (int,), KnobValueType.FLOAT64: (int, float),
            KnobValueType.STRING: (str,),
        }.get(self.value_type, (int, float, str))
        if isinstance(value, bool) or not isinstance(value, expected):
            raise KnobError(f"knob {self.id!r} takes a {self.value_type.name} value; got {value!r}",
                            knob=self.id)
        return cast(KnobValue, value)

    # -- cudnn-frontend's knob fields (knob.type, min_value, max_value, stride) ----------------
    @property
    def type(self) -> str:
        """cudnn-frontend's ``knob.type``: here the knob's string id (knobs are named, not an
        enum)."""
        return self.id

    @property
    def min_value(self) -> Any:
        """Lowest allowed value (IntConstraint/FloatConstraint ``min``), else None."""
        return getattr(self.constraint, "min", None)

    @property
    def max_value(self) -> Any:
        """Highest allowed value (IntConstraint/FloatConstraint ``max``), else None."""
        return getattr(self.constraint, "max", None)

    @property
    def stride(self) -> int | None:
        """Step between allowed integer values (IntConstraint ``step``), else None."""
        return getattr(self.constraint, "step", None)


@dataclass(frozen=True)
class KnobSetting:
    """A value chosen for a knob: ``KnobSetting("global.benchmarking", 1)``."""

    id: str
    value: KnobValue


#: What ``create_execution_plan_ext`` takes as knob settings.
KnobSettings = Sequence[KnobSetting] | Mapping[str, KnobValue] | None


def knob_setting_pairs(settings: object, engine: str) -> list[tuple[str, Any]]:
    """Knob settings as (knob id, value) pairs, in order: ``None``, a dict {knob id: value}, one
    ``KnobSetting`` or an iterable of them (the one reader of the native API and of
    hipdnn.frontend's ``create_execution_plan_ext``); anything else raises KnobError."""
    if settings is None:
        return []
    if isinstance(settings, Mapping):
        return [(str(getattr(k, "name", k)), v) for k, v in settings.items()]
    if isinstance(settings, KnobSetting):
        return [(settings.id, settings.value)]
    if isinstance(settings, (str, bytes)) or not isinstance(settings, Iterable):
        raise KnobError(f"knob settings for engine {engine}: {settings!r:.60} "
                        f"({type(settings).__name__}) is not a knob setting; valid: None, a dict "
                        f"{{knob id: value}}, or a list of KnobSetting(id, value)")
    pairs = []
    for s in settings:
        if not isinstance(s, KnobSetting):
            raise KnobError(f"knob settings must be KnobSetting(id, value) objects or a "
                            f"dict, got {s!r}")
        pairs.append((s.id, s.value))
    return pairs


def resolve_knob_settings(knobs: Sequence[Knob], settings: KnobSettings, engine: str,
                          graph: str) -> dict[str, KnobValue]:
    """Every knob's value: its default, or the checked setting. A setting that is not a
    KnobSetting, names an unknown knob, repeats a knob or is out of range raises KnobError."""
    by_id = {k.id: k for k in knobs}
    pairs = knob_setting_pairs(settings, engine)
    values = {k.id: k.default for k in by_id.values()}
    seen: set[str] = set()
    for kid, value in pairs:
        if kid in seen:
            raise KnobError(f"knob {kid!r} is set more than once for engine {engine}; give "
                            f"each knob one value", knob=kid)
        seen.add(kid)
        knob = by_id.get(kid)
        if knob is None:
            known = ", ".join(sorted(by_id)) or "none"
            raise KnobError(f"unknown knob {kid!r} for engine {engine} on graph {graph!r}; its "
                            f"knobs: {known}", knob=kid)
        values[kid] = knob.check(value)
    return values

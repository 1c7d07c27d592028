"""The MIOpen calls MIOPEN_ENGINE makes per seed row on MIOpen 3.4 and 3.5, as the emulated
device records them. Print the table with::

    PYTHONPATH=. python tests/emulated/test_miopen_engine_callmap.py
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _p in (str(_HERE.parent), str(_HERE)):  # the device package and the sibling test modules
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402
from emulated.device import EmulatedDevice  # noqa: E402
from test_miopen_engine_calls import (  # noqa: E402
    CONFIGS,
    EXEC_CALLS,
    REFUSED,
    expected_path,
    split_calls,
)
from test_miopen_engine_graphs import build  # noqa: E402
from test_miopen_engine_numerics import assert_refused, refusal  # noqa: E402

from hipdnn.engines.miopen import MiopenEngine, Row  # noqa: E402


def _engine(dev: EmulatedDevice) -> MiopenEngine:
    return MiopenEngine(lambda: dev.miopen, lambda: dev.hip)


def call_map() -> list[tuple[str, str, str, str, list[str], list[str]]]:
    """(version, row, config, path, build calls, execute calls) for every row and config."""
    rows: list[tuple[str, str, str, str, list[str], list[str]]] = []
    for version in ("3.4", "3.5"):
        for row in Row:
            for config, (dtype, layout) in CONFIGS.items():
                dev = EmulatedDevice(version)
                engine = _engine(dev)
                case = build(row, dtype, layout)
                if refusal(row, dtype, version, layout):
                    mark = len(dev.calls)
                    assert_refused(dev, engine, case)
                    built = [n for n in dev.call_names()[mark:] if n.startswith("miopen")]
                    rows.append((version, row.name, config, REFUSED, built, []))
                    continue
                plan, built, executed = split_calls(dev, engine, case)
                rows.append((version, row.name, config, plan.path, built, executed))
                plan.close()
    return rows


def test_call_map_is_the_documented_one() -> None:
    pytest.importorskip("torch")
    for version, row, config, path, _, executed in call_map():
        assert path == expected_path(Row[row], version, config)
        assert executed == EXEC_CALLS[(Row[row], version, path)]


def main() -> None:
    """Print the table (build-time calls deduplicated in order, then the execute calls)."""
    for version, row, config, path, built, executed in call_map():
        seen: list[str] = []
        for name in built:
            if name not in seen:
                seen.append(name)
        print(f"MIOpen {version} {row:<20} {config:<9} path={path}")
        print(f"    build:   {', '.join(seen)}")
        print(f"    execute: {', '.join(executed)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fault injection over a plan's whole life: every HIP/MIOpen call made to fail in turn.

For every seed row MIOPEN_ENGINE implements, both MIOpen versions of the emulated device
(tests/emulated) and the chosen configurations, a fault-free life (Handle on a stream, build,
execute with host arrays, bind on device memory, synchronize, close; conv rows also with Find
2.0) is recorded, then replayed once per call and status with that call failing. Each outcome is
checked (tests/emulated/faults.py: a typed error naming the call, outputs untouched, the Graph
and Handle usable afterwards with PyTorch's answer on the same engine, nothing left on the
device) and counted per call family:

    python tools/fault_sweep.py                      # every call, every status (minutes)
    python tools/fault_sweep.py --short              # the CI form: first call of each family
    python tools/fault_sweep.py --rows conv_fprop --versions 3.5 --configs fp32_nchw
    python tools/fault_sweep.py --rows conv_bias_act --versions 3.4 --configs fp32_nchw --lasting --later

``--lasting`` fails two calls in a row (a fault that outlasts MIOPEN_ENGINE's one retry, e.g. of
a fusion compile's miopenStatusUnknownError); ``--later`` gives each life a persistent plan store
of its own and then checks that a later process (empty plan cache, new Handle and graph, no
fault) builds the fault-free plan from it: a passing fault must not be kept as a decision.

Exit status 1 when any fault breaks a check (each is listed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Every life starts from nothing, as in the tests (tests/conftest.py): a decision in the user's
# persistent plan store would shorten a replayed life, and the recorded faults would then land
# on other calls or none ("the life changed"). The plan store's own faults: tests/emulated.
os.environ["HIPDNN_PLAN_STORE"] = "off"
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "tests" / "emulated")]

from faults import MIOPEN_STATUSES, sweep, table  # noqa: E402

from hipdnn.engines.miopen import Row  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", nargs="*", default=[r.name.lower() for r in Row],
                    choices=[r.name.lower() for r in Row])
    ap.add_argument("--versions", nargs="*", default=["3.4", "3.5"], choices=["3.4", "3.5"])
    ap.add_argument("--configs", nargs="*", default=["fp32_nchw", "fp16_nhwc"],
                    choices=["fp32_nchw", "fp16_nhwc", "bf16_nhwc"])
    ap.add_argument("--statuses", type=int, default=len(MIOPEN_STATUSES),
                    help="statuses per call (MIOpen: AllocFailed, InternalError, UnknownError; "
                         "HIP: OutOfMemory, InvalidValue)")
    ap.add_argument("--lasting", action="store_true",
                    help="fail the call and the next call of the same function (outlasts a retry)")
    ap.add_argument("--later", action="store_true",
                    help="a plan store per life; a later process must build the fault-free plan")
    ap.add_argument("--short", action="store_true",
                    help="only the first call of each family in each stage, one status")
    args = ap.parse_args(argv)
    rows = [Row[name.upper()] for name in args.rows]
    start = time.monotonic()
    fails: list[str] = []

    def failed(line: str) -> None:
        fails.append(line)
        print(line, flush=True)

    outcomes = sweep(rows, args.versions, args.configs, short=args.short,
                     statuses=1 if args.short else args.statuses,
                     repeat=2 if args.lasting else 1, later=args.later, progress=failed)
    for version in args.versions:
        mine = [o for o in outcomes if o.version == version]
        print(f"\nMIOpen {version} (emulated device): {len(mine)} faults")
        print(table(mine))
    print(f"\nboth versions: {len(outcomes)} faults in {time.monotonic() - start:.0f} s, rows "
          f"{', '.join(args.rows)}; configs {', '.join(args.configs)} (+ Find 2.0 for conv fp32)")
    print(table(outcomes))
    print(f"\n{len(fails)} fault(s) broke a check" + (": listed above" if fails else ""))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

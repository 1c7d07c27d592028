"""Fault injection over a plan's whole life on the emulated device (issue 29).

A *life* is what a user does with one seed-row graph: create a Handle on a stream, build the
graph (MIOPEN_ENGINE's support check, knobs, plan build with its descriptors, solution queries,
fusion compile; ``find`` lives ask for Find 2.0 with ``global.benchmarking=1``), execute it with
host arrays (staging copies, launches, the stream wait before the copy back), bind and run the
binding, synchronize the Handle, close the graph and the Handle. :func:`baseline` records every
HIP/MIOpen call of a fault-free life (each on a fresh emulated device, so lives are identical);
:func:`run_fault` replays the life with one call made to fail (``EmulatedDevice.fail``) and checks:

- the failure is a typed :class:`~hipdnn.core.errors.HipdnnError` naming the call, or the build fell
  back to another engine with a reason naming the call (a transient support-check failure), or
  MIOpen's own fallback absorbed it (e.g. a failed Find runs the heuristic solution) with right
  results; a failing destroy/free during cleanup is ignored by design (nothing to retry);
- host-array outputs are untouched when an execute failed (NaN-prefilled outputs stay bitwise
  NaN: staged, copied back all or none); device-memory outputs (the bind stage) are MIOpen's to
  write, unspecified after a failed call, as with MIOpen itself (counted in the detail);
- the Graph and Handle work afterwards (built again, executed, bound: PyTorch's answer) on the
  same engine as the fault-free life;
- nothing is left on the device once graph and Handle are closed (live MIOpen objects and
  allocations), except what a failed destroy/free itself left.

Used by tests/emulated/test_fault_sweep.py (the short form: the first call of each family per
row) and tools/fault_sweep.py (every call, several statuses, a table).
"""

from __future__ import annotations

import collections
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from emulated.device import EmulatedDevice
from emulated.registration import registered
from test_miopen_engine_calls import CONFIGS, REFUSED, expected_path
from test_miopen_engine_graphs import Case, build
from test_miopen_engine_numerics import check_outputs

from hipdnn.core.errors import HipdnnError
from hipdnn.core.handle import Handle
from hipdnn.engines.miopen import MiopenEngine, Row
from hipdnn.pipeline.plan_cache import clear_plan_cache
from hipdnn.pipeline.plan_store import set_plan_store

__all__ = ["FAMILIES", "Fault", "Outcome", "baseline", "faults_of", "run_fault", "sweep", "table"]

STAGES = ("build", "execute", "bind", "synchronize", "close")
#: Call families, in table order.
FAMILIES = ("handle", "descriptor", "solution query", "find", "fusion compile", "staging",
            "launch", "stream", "destroy/free", "other")
#: The status each kind of call returns when failed: MIOpen's AllocFailed / InternalError /
#: UnknownError, HIP's hipErrorOutOfMemory / hipErrorInvalidValue.
MIOPEN_STATUSES = (4, 5, 7)
HIP_STATUSES = (2, 1)


def family(name: str, stage: str) -> str:
    """The family of C call ``name`` made during ``stage``."""
    if name.startswith("miopenDestroy") or name == "hipFree":
        return "destroy/free"
    if name in ("hipSetDevice", "miopenCreate", "miopenCreateWithStream",
                "hipGetDevicePropertiesR0600", "hipGetDeviceCount"):
        return "handle"
    if name in ("hipStreamSynchronize", "miopenSetStream", "miopenGetStream"):
        return "stream"
    if name in ("hipMalloc", "hipMemcpy", "hipMemcpyAsync", "hipMemset"):
        return "staging"
    if "Fusion" in name or name.startswith(("miopenCreateOp", "miopenCreateOperatorArgs")):
        return "launch" if name.startswith("miopenExecuteFusionPlan") else "fusion compile"
    if name.startswith("miopenSetOpArgs"):
        return "launch"
    if ("Find" in name or "Problem" in name or "TuningPolicy" in name
            or name in ("miopenRunSolution", "miopenGetSolutionWorkspaceSize",
                        "miopenGetSolutionSize", "miopenGetSolutionTime")):
        return "find"
    if "Solution" in name or "WorkSpaceSize" in name or "WorkspaceSize" in name:
        return "solution query"
    if "Descriptor" in name or name.startswith("miopenInitConvolution"):
        return "descriptor"
    if stage in ("execute", "bind") and name.startswith("miopen"):
        return "launch"
    return "other"


@dataclass(frozen=True)
class Fault:
    """Make the ``nth`` call of ``name`` in the life fail with ``status`` (and the ``repeat - 1``
    calls of ``name`` after it: a fault that lasts through a retry)."""

    name: str
    nth: int
    status: int
    stage: str
    family: str
    repeat: int = 1


@dataclass
class Life:
    """One fault-free life: its calls (name, stage) and the plan it ran."""

    calls: list[tuple[str, str]]
    plan_name: str
    engine: str


@dataclass
class Outcome:
    """What one injected fault did: ``kind`` is typed / fell back / absorbed / cleanup ignored
    / FAIL; ``problems`` the violated checks (empty unless FAIL)."""

    version: str
    row: Row
    config: str
    fault: Fault
    kind: str
    detail: str = ""
    problems: list[str] = field(default_factory=list)


class _Run:
    """One life on a fresh emulated device with its own MIOPEN_ENGINE."""

    def __init__(self, version: str, row: Row, config: str, find: bool) -> None:
        self.device = EmulatedDevice(version)
        self.engine = MiopenEngine(miopen_loader=lambda: self.device.miopen,
                                   hip_loader=lambda: self.device.hip)
        self.row, self.config, self.find = row, config, find
        self.stages: list[tuple[int, str]] = []

    # -- the life ---------------------------------------------------------------------------
    def new_graph(self, h: Handle) -> Case:
        case = build(self.row, *CONFIGS[self.config])
        case.graph.build_operation_graph(h)
        return case

    def build(self, case: Case) -> None:
        g = case.graph
        with warnings.catch_warnings():  # the fallback warning when MIOPEN_ENGINE is passed over
            warnings.simplefilter("ignore")
            if self.find:
                g.create_execution_plans()
                g.create_execution_plan_ext("MIOPEN_ENGINE", {"global.benchmarking": 1})
                g.build_plans()
            else:
                g.build()

    @staticmethod
    def pack(case: Case) -> tuple[dict[Any, np.ndarray], dict[str, np.ndarray]]:
        outs = case.empty_outputs()
        for arr in outs.values():
            arr[...] = np.nan
        return {**case.inputs, **{case.outputs[r]: a for r, a in outs.items()}}, outs

    @staticmethod
    def workspace(case: Case) -> np.ndarray:
        return np.zeros(max(case.graph.get_workspace_size(), 1), np.uint8)

    def steps(self, h: Handle, case: Case,
              watch: list[dict[str, np.ndarray]]) -> list[tuple[str, Callable[[], None]]]:
        def execute() -> None:
            pack, outs = self.pack(case)
            watch.append(outs)
            case.graph.execute(pack, self.workspace(case))
            check_outputs(case, outs)

        def bind() -> None:  # device memory: the binding's prebuilt calls, no staging
            dev = self.device
            pack: dict[Any, int] = {t: dev.upload(_physical(a)) for t, a in case.inputs.items()}
            _, host = self.pack(case)
            outs = {role: dev.upload(_physical(a)) for role, a in host.items()}
            pack.update({case.outputs[role]: ptr for role, ptr in outs.items()})
            size = case.graph.get_workspace_size()
            ws = dev.alloc(size) if size else None
            try:
                case.graph.bind(pack, ws)()
            finally:
                got = {}
                for role, ptr in outs.items():
                    t = case.outputs[role]
                    got[role] = dev.download(ptr, t.dim, host[role].dtype, t.stride)
                watch.append(got)
                for ptr in [*pack.values(), *([ws] if ws else [])]:
                    dev.free(ptr)
            check_outputs(case, got)

        def close() -> None:
            case.graph.close()
            h.close()

        return [("build", lambda: self.build(case)), ("execute", execute), ("bind", bind),
                ("synchronize", h.synchronize), ("close", close)]

    def live(self) -> tuple[set[int], set[int]]:
        """Live MIOpen/HIP objects (streams the test made aside) and allocations."""
        objects = {k for k, v in self.device.handles._live.items() if v.kind != "stream"}
        return objects, set(self.device.live_allocations())

    def __enter__(self) -> _Run:
        self._registration = ExitStack()
        self._registration.enter_context(registered(self.engine))
        return self

    def __exit__(self, *exc: object) -> None:
        self._registration.close()


def _physical(a: np.ndarray) -> np.ndarray:
    """``a``'s elements in its memory order (what a device buffer of its layout holds)."""
    return np.ascontiguousarray(a.transpose(np.argsort(a.strides, kind="stable")[::-1]))


def baseline(version: str, row: Row, config: str, find: bool = False) -> Life:
    """The fault-free life: every call with its stage, and the plan chosen."""
    with _Run(version, row, config, find) as run:
        h = Handle(stream=run.device.create_stream())
        case = run.new_graph(h)
        calls: list[tuple[str, str]] = []
        plan = ("", "")
        for stage, step in run.steps(h, case, []):
            mark = len(run.device.calls)
            if stage == "close":
                plan = (case.graph.plans[0].name, case.graph.plans[0].engine.name)
            step()
            calls += [(c.name, stage) for c in run.device.calls[mark:]]
        assert run.live() == (set(), set()), f"the fault-free life leaks: {run.live()}"
        return Life(calls, *plan)


def faults_of(life: Life, *, short: bool, statuses: int = 1, repeat: int = 1) -> list[Fault]:
    """Every call of the life (``short``: the first call of each family per stage), each
    with ``statuses`` of the statuses its library returns, failing ``repeat`` calls in a row."""
    seen: collections.Counter[str] = collections.Counter()
    firsts: set[tuple[str, str]] = set()
    out = []
    for name, stage in life.calls:
        seen[name] += 1
        fam = family(name, stage)
        if short:
            if (fam, stage) in firsts:
                continue
            firsts.add((fam, stage))
        codes = HIP_STATUSES if name.startswith("hip") else MIOPEN_STATUSES
        out += [Fault(name, seen[name], code, stage, fam, repeat) for code in codes[:statuses]]
    return out


def _names_call(exc: BaseException, name: str) -> bool:
    return getattr(exc, "function", None) == name or name in str(exc)


def run_fault(version: str, row: Row, config: str, fault: Fault, life: Life,
              find: bool = False, later: bool = False) -> Outcome:
    """Replay the life with ``fault`` injected and check what it left (see the module doc).
    ``later``: the life keeps its decisions in a persistent plan store of its own, and a later
    process (an empty plan cache, a new Handle and graph, the same store, no fault) must build
    the fault-free life's plan: a passing fault must not be kept as a decision."""
    out = Outcome(version, row, config, fault, "")
    problems = out.problems
    with ExitStack() as stack, _Run(version, row, config, find) as run:
        if later:
            stack.enter_context(_own_plan_store())
        dev = run.device
        h = Handle(stream=dev.create_stream())
        case = run.new_graph(h)
        watch: list[dict[str, np.ndarray]] = []
        for k in range(fault.repeat):
            dev.fail(fault.name, fault.status, nth=fault.nth + k)
        error: BaseException | None = None
        failed_stage = None
        built = ("", "")
        for stage, step in run.steps(h, case, watch):
            try:
                step()
                if stage == "build":
                    built = (case.graph.plans[0].engine.name,
                             case.graph.engine_reasons().get("MIOPEN_ENGINE") or "")
            except AssertionError as exc:  # outputs differ from PyTorch's after a quiet fault
                problems.append(f"{stage}: wrong results: {str(exc).splitlines()[0]}")
                failed_stage = stage
                break
            except Exception as exc:
                error, failed_stage = exc, stage
                break
        injected = any(n == fault.name and m == "injected" for n, _, m in dev.errors)
        if not injected:
            problems.append("the fault was never reached (the life changed)")
        if error is not None:
            if not isinstance(error, HipdnnError):
                problems.append(f"{failed_stage}: untyped {type(error).__name__}: {error}")
            elif not _names_call(error, fault.name):
                problems.append(f"{failed_stage}: {type(error).__name__} does not name "
                                f"{fault.name}: {error}")
            out.kind, out.detail = "typed error", f"{failed_stage}: {type(error).__name__}"
            written = [role for role, arr in (watch[-1].items() if watch else ())
                       if failed_stage in ("execute", "bind")
                       and not np.isnan(arr.astype(np.float32)).all()]
            if written and failed_stage == "execute":  # host arrays: staged, all or nothing
                problems.append(f"execute: output(s) {written} written although it failed")
            elif written:  # device memory: MIOpen's to write, unspecified after a failed call
                out.detail += f"; device output(s) {written} written by the calls before"
        elif fault.family == "destroy/free":
            out.kind = "cleanup ignored"
        elif built[0] != life.engine:
            if fault.name in built[1]:
                out.kind, out.detail = "fell back", f"to {built[0]}: {built[1][:60]}"
            else:
                problems.append(f"built on {built[0]} with a reason not naming {fault.name}: "
                                f"{built[1]}")
        else:
            out.kind = "absorbed"
        dev.disarm(fault.name)  # a repeated fault past the life's last call of it
        left_by_fault = run.live()  # before recovery (a failed destroy leaves its object)
        # -- recovery: the same Graph and Handle (a new pair after a failure while closing)
        if failed_stage == "close" or case.graph.closed or h.closed:
            case.graph.close()
            h.close()
            h = Handle(stream=dev.create_stream())
            case = run.new_graph(h)
        try:
            run.build(case)
            for _stage, step in run.steps(h, case, [])[1:3]:
                step()
            if case.graph.plans[0].engine.name != life.engine:
                problems.append(f"after recovery the plan runs on {case.graph.plans[0].engine.name}, "
                                f"not {life.engine}")
            elif case.graph.plans[0].name != life.plan_name:
                out.detail += f" (path now {case.graph.plans[0].name.split(':', 2)[-1]})"
        except AssertionError as exc:
            problems.append(f"recovery: wrong results: {str(exc).splitlines()[0]}")
        except Exception as exc:
            problems.append(f"recovery failed: {type(exc).__name__}: {exc}")
        case.graph.close()
        h.close()
        if later:
            problems += _later_process(run, life)
        objects, blocks = run.live()
        if out.kind == "cleanup ignored":
            objects -= left_by_fault[0]
            blocks -= left_by_fault[1]
            if left_by_fault != (set(), set()):
                out.detail = "the object the failed call should free stays"
        if objects or blocks:
            problems.append(f"leaked {len(objects)} object(s), {len(blocks)} allocation(s)")
        if dev.internal_errors:
            problems.append(f"emulated device bug: {dev.internal_errors}")
    if problems:
        out.kind = "FAIL"
    return out


@contextmanager
def _own_plan_store() -> Iterator[None]:
    """A fresh persistent plan store for one life, and an empty plan cache before and after."""
    with tempfile.TemporaryDirectory(prefix="hipdnn-fault-store-") as tmp:
        clear_plan_cache()
        set_plan_store(tmp)
        try:
            yield
        finally:
            set_plan_store(None)
            clear_plan_cache()


def _later_process(run: _Run, life: Life) -> list[str]:
    """A later process's build (empty plan cache, new Handle and graph, the store the faulted
    life wrote, no fault): it must choose the fault-free life's plan and give PyTorch's answer."""
    clear_plan_cache()
    h = Handle(stream=run.device.create_stream())
    case = run.new_graph(h)
    try:
        run.build(case)
        run.steps(h, case, [])[1][1]()  # execute: checked against PyTorch
        plan = case.graph.plans[0]
        if (plan.engine.name, plan.name) != (life.engine, life.plan_name):
            return [f"a later process builds {plan.name} on {plan.engine.name}, not the fault-free "
                    f"{life.plan_name}: the fault was kept as a decision"]
    except AssertionError as exc:
        return [f"later process: wrong results: {str(exc).splitlines()[0]}"]
    except Exception as exc:
        return [f"later process failed: {type(exc).__name__}: {exc}"]
    finally:
        case.graph.close()
        h.close()
    return []


def cases(rows: Iterable[Row], versions: Iterable[str],
          configs: Iterable[str]) -> list[tuple[str, Row, str, bool]]:
    """(version, row, config, find) of every life to sweep: refused combinations have no plan
    to inject into; conv rows get a Find 2.0 life too."""
    out = []
    for version in versions:
        for row in rows:
            for config in configs:
                if expected_path(row, version, config) == REFUSED:
                    continue
                out.append((version, row, config, False))
                if row in (Row.CONV_FPROP, Row.CONV_DGRAD, Row.CONV_WGRAD) and config == "fp32_nchw":
                    out.append((version, row, config, True))
    return out


def sweep(rows: Iterable[Row], versions: Iterable[str], configs: Iterable[str], *,
          short: bool, statuses: int = 1, repeat: int = 1, later: bool = False,
          progress: Callable[[str], None] | None = None) -> list[Outcome]:
    """Every fault of every life (see :func:`faults_of`; ``later``: :func:`run_fault`)."""
    outcomes = []
    for version, row, config, find in cases(rows, versions, configs):
        life = baseline(version, row, config, find)
        label = f"{row.name.lower()}{'+find' if find else ''}"
        for fault in faults_of(life, short=short, statuses=statuses, repeat=repeat):
            o = run_fault(version, row, config, fault, life, find, later)
            o.config = f"{config}{'+find' if find else ''}"
            outcomes.append(o)
            if progress is not None and o.kind == "FAIL":
                progress(f"FAIL {version} {label} {config} {fault}: {o.problems}")
    return outcomes


KINDS = ("typed error", "fell back", "absorbed", "cleanup ignored", "FAIL")


def table(outcomes: list[Outcome]) -> str:
    """Faults per call family and what they did (a Markdown table)."""
    counts: dict[str, collections.Counter[str]] = {f: collections.Counter() for f in FAMILIES}
    for o in outcomes:
        counts[o.fault.family][o.kind] += 1
    lines = ["| call family | faults | " + " | ".join(KINDS) + " |",
             "|---|---:|" + "---:|" * len(KINDS)]
    total: collections.Counter[str] = collections.Counter()
    for fam in FAMILIES:
        c = counts[fam]
        if not c:
            continue
        total.update(c)
        lines.append(f"| {fam} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in KINDS) + " |")
    lines.append(f"| **all** | {sum(total.values())} | " + " | ".join(str(total[k]) for k in KINDS) + " |")
    return "\n".join(lines)

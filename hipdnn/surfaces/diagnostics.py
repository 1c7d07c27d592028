"""``python -m hipdnn info``: what this machine offers hipdnn, and why an engine cannot run.

:func:`collect` gathers a plain dict (``--json`` prints it as is); :func:`format_report` turns it
into text. Nothing here raises on a machine without ROCm: every probe records what it tried and
the fix hint instead.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

import hipdnn
from hipdnn.backend.registry import load_errors, registry
from hipdnn.core.types import DataType
from hipdnn.graph.graph import Graph
from hipdnn.ir.view import GraphView
from hipdnn.pipeline.plan_store import plan_store
from miopen_ctypes import loader
from miopen_ctypes.errors import LibraryNotFoundError
from miopen_ctypes.hip import load_hip

__all__ = ["ENV_VARS", "FIND_MODES", "collect", "format_report", "miopen_caches"]

#: Environment variables hipdnn, its MIOpen discovery or MIOpen itself read.
ENV_VARS = (
    "HIPDNN_LOG_INFO", "HIPDNN_LOG_FILE", "HIPDNN_PROGRESS", "HIPDNN_MIOPEN_LIBRARY",
    "HIPDNN_HIP_LIBRARY", "ROCM_PATH", "HIP_PATH", "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION", "MIOPEN_USER_DB_PATH",
    "MIOPEN_CUSTOM_CACHE_DIR", "MIOPEN_FIND_MODE", "MIOPEN_LOG_LEVEL", "MIOPEN_ENABLE_LOGGING",
    "MIOPEN_DISABLE_CACHE", "MIOPEN_FIND_ENFORCE", "MIOPEN_DEBUG_FIND_ONLY_SOLVER",
    "HIPDNN_PLAN_STORE", "HIPDNN_REFERENCE_THREADS", "HIPDNN_REFERENCE_JIT",
    "NUMBA_THREADING_LAYER", "OMP_WAIT_POLICY",
)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _miopen() -> dict[str, Any]:
    try:
        lib = loader.load()
    except LibraryNotFoundError as exc:
        return {"found": False, "tried": [f"{place}: {why}" for place, why in exc.attempts],
                "hint": str(exc).splitlines()[-1]}
    except Exception as exc:  # a library that loads but cannot be bound
        return {"found": False, "tried": [f"{type(exc).__name__}: {exc}"],
                "hint": "point HIPDNN_MIOPEN_LIBRARY at a working libMIOpen.so.1"}
    caps = lib.capabilities
    return {"found": True, "path": lib.path, "version": caps.version_string,
            "capabilities": {"bn_activation (3.5)": caps.bn_activation,
                             "execute_fusion_plan_v2 (3.5)": caps.execute_fusion_plan_v2,
                             "tuning_policy": caps.tuning_policy},
            "missing_symbols": sorted(caps.missing)}


def _hip() -> dict[str, Any]:
    try:
        hip = load_hip()
    except LibraryNotFoundError as exc:
        return {"found": False, "tried": [f"{place}: {why}" for place, why in exc.attempts],
                "hint": str(exc).splitlines()[-1]}
    except Exception as exc:
        return {"found": False, "tried": [f"{type(exc).__name__}: {exc}"],
                "hint": "point HIPDNN_HIP_LIBRARY at a working libamdhip64.so"}
    out: dict[str, Any] = {"found": True, "path": hip.path,
                           "runtime_version": ".".join(map(str, hip.version)), "devices": []}
    try:
        count = ctypes.c_int(0)
        hip.hipGetDeviceCount(ctypes.byref(count))
        for d in range(count.value):
            props = hip.device_properties(d)
            out["devices"].append({"index": d, "name": props.name.decode("utf-8", "replace"),
                                   "gcnArchName": hip.gcn_arch_name(d)})
    except Exception as exc:
        fix = ("check that AMD's GPU driver for Windows is installed and current"
               if sys.platform == "win32" else "check that the amdgpu driver is loaded (/dev/kfd) "
               "and that you are in the 'video' and 'render' groups")
        out["device_error"] = f"{exc}. Fix: {fix}"
    return out


def _engines() -> list[dict[str, Any]]:
    f32 = DataType.FLOAT
    g = Graph(name="info_probe", io_data_type=f32, compute_data_type=f32)
    x = g.tensor_like(np.zeros((1, 4, 8, 8), np.float32))
    w = g.tensor_like(np.zeros((4, 4, 3, 3), np.float32))
    g.conv_fprop(x, w, padding=[1, 1]).set_output(True)
    rows = []
    for engine in registry().values():
        try:
            reason = engine.check_support(GraphView.of(g.validate()), g.handle)
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
        try:
            details = engine.runtime_details()
        except Exception as exc:  # a plugin's own: reported, never raised
            details = {"runtime_details": f"{type(exc).__name__}: {exc}"}
        rows.append({"name": engine.name, "id": engine.engine_id, "rank": engine.rank,
                     "can_run": reason is None, "reason": reason, "details": details})
    for mod, err in load_errors.items():
        rows.append({"name": mod, "id": None, "rank": None, "can_run": False,
                     "reason": f"could not be imported: {err}"})
    return rows


#: MIOPEN_FIND_MODE's values (MIOpen 3.x; the default is DYNAMIC_HYBRID).
FIND_MODES = {"1": "NORMAL", "2": "FAST", "3": "HYBRID", "5": "DYNAMIC_HYBRID"}


def _home() -> Path:
    try:
        return Path.home()
    except (RuntimeError, KeyError):  # e.g. Windows with neither USERPROFILE nor HOMEPATH set
        return Path("~")


def _expanded(path: Path) -> Path:
    """``path`` with ``~`` expanded; as given when no home folder can be found."""
    try:
        return path.expanduser()
    except RuntimeError:
        return path


def _folder(path: Path, pattern: str = "**/*") -> dict[str, Any]:
    """Where a cache folder is, whether it exists and can be written, its files and bytes."""
    out: dict[str, Any] = {"path": str(path), "exists": path.is_dir()}
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent  # a missing folder is created by its first writer, if it can
    out["writable"] = os.access(probe, os.W_OK)
    files = size = 0
    if out["exists"]:
        try:
            for f in path.glob(pattern):
                if f.is_file():
                    files += 1
                    size += f.stat().st_size
        except OSError:
            pass
    out["files"], out["bytes"] = files, size
    return out


def miopen_caches(lib_path: str | None = None) -> dict[str, Any]:
    """MIOpen's databases and kernel cache for the loaded library (``lib_path``), the find mode
    its environment switches select, and hipdnn's plan store."""


    home = _home()
    user = _expanded(Path(os.environ.get("MIOPEN_USER_DB_PATH") or home / ".config" / "miopen"))
    kcache = _expanded(Path(os.environ.get("MIOPEN_CUSTOM_CACHE_DIR") or home / ".cache" / "miopen"))
    out: dict[str, Any] = {
        "user db (perf db *.updb.txt, MIOPEN_USER_DB_PATH)": _folder(user, "*.updb.txt"),
        "user find db (*.ufdb.txt, MIOPEN_USER_DB_PATH)": _folder(user, "*.ufdb.txt"),
        "kernel cache (MIOPEN_CUSTOM_CACHE_DIR)": _folder(kcache),
    }
    if os.environ.get("MIOPEN_DISABLE_CACHE", "").strip().lower() in ("1", "on", "yes", "true"):
        out["kernel cache (MIOPEN_CUSTOM_CACHE_DIR)"]["disabled by MIOPEN_DISABLE_CACHE"] = True
    if lib_path:
        system = Path(lib_path).resolve().parent.parent / "share" / "miopen" / "db"
        out["system db (installed, read-only)"] = _folder(system)
    mode = os.environ.get("MIOPEN_FIND_MODE", "").strip()
    name = FIND_MODES.get(mode, mode.upper() if mode else "")
    out["find mode (MIOPEN_FIND_MODE)"] = (
        f"{name or 'DYNAMIC_HYBRID'}{'' if mode else ' (the default)'}: immediate mode "
        "(global.benchmarking=0) uses the find db and heuristics; global.benchmarking=1 runs "
        "Find 2.0 with tuning in hipdnn (find mode NORMAL on the convolution)")
    if os.environ.get("MIOPEN_FIND_ENFORCE"):
        out["find enforce (MIOPEN_FIND_ENFORCE)"] = os.environ["MIOPEN_FIND_ENFORCE"]
    store = plan_store()
    if store is None:
        out["hipdnn plan store (HIPDNN_PLAN_STORE)"] = {"path": None, "off": True}
    else:
        part = _folder(store.directory, "*.json")
        out["hipdnn plan store (HIPDNN_PLAN_STORE)"] = part
    return out


def _caches_for() -> dict[str, Any]:
    try:
        path = loader.load().path
    except Exception:  # no library: its databases' default places all the same
        path = None
    return miopen_caches(path)


def collect() -> dict[str, Any]:
    """Everything ``python -m hipdnn info`` reports, as plain JSON-able data."""

    return {
        "hipdnn": hipdnn.__version__,
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "numpy": _version("numpy"), "torch": _version("torch"),
        "amd_gpu_driver (/dev/kfd)": os.path.exists("/dev/kfd"),
        "miopen": _miopen(), "hip": _hip(), "engines": _engines(),
        "miopen_caches": _caches_for(),
        "environment": {k: os.environ[k] for k in ENV_VARS if k in os.environ},
    }


def format_report(info: dict[str, Any]) -> str:
    """The text form of :func:`collect`'s dict."""
    out = [f"hipdnn {info['hipdnn']}", f"python {info['python']}", f"platform {info['platform']}",
           f"numpy {info['numpy'] or 'not installed'}; torch {info['torch'] or 'not installed'}",
           f"AMD GPU driver (/dev/kfd): {'present' if info['amd_gpu_driver (/dev/kfd)'] else 'absent'}"]
    for key, title in (("miopen", "MIOpen"), ("hip", "HIP runtime")):
        part = info[key]
        if part["found"]:
            ver = part.get("version") or part.get("runtime_version")
            out.append(f"{title}: {ver} at {part['path']}")
            for cap, ok in part.get("capabilities", {}).items():
                out.append(f"  {cap}: {'yes' if ok else 'no'}")
            for dev in part.get("devices", ()):
                out.append(f"  device {dev['index']}: {dev['name']} ({dev['gcnArchName']})")
            if key == "hip" and not part.get("devices") and "device_error" not in part:
                out.append("  no devices")
            if "device_error" in part:
                out.append(f"  devices: {part['device_error']}")
        else:
            out.append(f"{title}: not found; tried:")
            out += [f"  - {t}" for t in part["tried"]]
            out.append(f"  {part['hint']}")
    out.append("engines (preferred first, probed with a FP32 conv_fprop graph):")
    for e in info["engines"]:
        state = "can run" if e["can_run"] else f"cannot run: {e['reason']}"
        out.append(f"  {e['name']} (rank {e['rank']}): {state}")
        out += [f"    {k}: {v}" for k, v in e.get("details", {}).items()]
    out.append("MIOpen caches and hipdnn's plan store:")
    for k, v in info["miopen_caches"].items():
        if not isinstance(v, dict):
            out.append(f"  {k}: {v}")
        elif v.get("off"):
            out.append(f"  {k}: off")
        else:
            state = (f"{v['files']} files, {v['bytes']} bytes" if v["exists"] else "not created yet")
            extra = "; disabled by MIOPEN_DISABLE_CACHE" if v.get("disabled by MIOPEN_DISABLE_CACHE") else ""
            out.append(f"  {k}: {v['path']} ({state}, "
                       f"{'writable' if v['writable'] else 'NOT writable'}{extra})")
    env = info["environment"]
    out.append("environment: " + (", ".join(f"{k}={v}" for k, v in env.items()) or "none of "
                                  + ", ".join(ENV_VARS[:5]) + ", ... set"))
    if not info["miopen"]["found"] or not info["hip"]["found"]:
        out.append("No ROCm here: hipdnn runs every graph on CPU_REFERENCE_ENGINE (numpy).")
    return "\n".join(out)

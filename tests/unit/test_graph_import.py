"""``import hipdnn`` loads no C library, no engine package, and no slow or optional module
(torch, IPython, ml_dtypes: about a second to import, loaded when a bfloat16/FP8 type is first needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import sys
import hipdnn
g = hipdnn.Graph(io_data_type="float")
g.relu(g.tensor(dim=[1, 2, 2, 2])).set_output(True)
g.validate()
g.to_json()
maps = open("/proc/self/maps").read() if sys.platform.startswith("linux") else ""
bad = [m for m in ("miopen_ctypes", "hipdnn.engines.miopen", "hipdnn.engines.reference", "torch",
                  "IPython", "ml_dtypes", "numba")
       if m in sys.modules]
libs = [lib for lib in ("MIOpen", "amdhip64", "libhsa") if lib in maps]
print(bad, libs)
"""


def test_import_and_graph_building_load_no_library() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                         check=True, timeout=120)
    assert out.stdout.strip() == "[] []", out.stdout + out.stderr


_BF16 = """
import sys
import hipdnn
from hipdnn.interop.dtypes import dtype_to_numpy, numpy_to_dtype
print("ml_dtypes" in sys.modules, numpy_to_dtype(dtype_to_numpy(hipdnn.data_type.BFLOAT16)).name,
      "ml_dtypes" in sys.modules)
"""


def test_ml_dtypes_arrives_when_a_bfloat16_is_first_needed() -> None:
    out = subprocess.run([sys.executable, "-c", _BF16], capture_output=True, text=True, cwd=ROOT,
                         check=True, timeout=120)
    assert out.stdout.split() == ["False", "BFLOAT16", "True"], out.stdout + out.stderr

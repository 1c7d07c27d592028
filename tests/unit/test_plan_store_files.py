"""The plan store's files (hipdnn/pipeline/plan_store.py) without an engine: atomic writes under
concurrent processes, reads of partial or foreign files, listing and clearing, knob lists as JSON.
(With MIOPEN_ENGINE: tests/emulated/test_plan_store.py and tests/stubgpu.)"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from hipdnn.backend.knobs import FloatConstraint, IntConstraint, Knob, StringConstraint
from hipdnn.core.types import KnobValueType
from hipdnn.pipeline import plan_store as ps

ROOT = Path(__file__).resolve().parents[2]

_WRITER = """
import sys
sys.path.insert(0, {root!r})
from hipdnn.pipeline.plan_store import PlanStore
store, me = PlanStore({where!r}), int(sys.argv[1])
WINDOWS = sys.platform == "win32"
for i in range(150):
    for k in range(4):  # every process writes the same four keys, each its own large value
        ok = store.put(f"key-{{k}}", {{"writer": me, "i": i, "pad": "x" * (20000 + 997 * me)}})
        got = store.get(f"key-{{(k + 1) % 4}}")
        # POSIX: a rename is atomic, so every write lands and once written the entry is always
        # whole. Windows: a file held open by a reader cannot be replaced or opened for a
        # moment, so a write or a read may miss (a rebuild, one warning), but never tears.
        assert ok or WINDOWS, "a write failed"
        assert got is not None or i == 0 or WINDOWS, "an entry read as missing or corrupt mid-write"
        assert got is None or len(got["pad"]) == 20000 + 997 * got["writer"], "a torn read"
print("done")
"""


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path: Path) -> None:
    where = tmp_path / "plans"
    code = textwrap.dedent(_WRITER).format(root=str(ROOT), where=str(where))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(n)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "done" in out, err[-2000:]
    store = ps.PlanStore(where)
    entries = list(store.entries())
    assert len(entries) == 4 and all(e.ok for e in entries)  # no temporary file left either
    for k in range(4):
        got = store.get(f"key-{k}")
        assert got is not None and len(got["pad"]) == 20000 + 997 * got["writer"]
    assert not list(where.glob(".tmp-*"))


def test_partial_foreign_and_missing_files(tmp_path: Path) -> None:
    store = ps.PlanStore(tmp_path)
    assert store.get("absent") is None
    assert store.put("k", {"a": 1}, kind="plan", engine="E", token="T")
    path = store.path_of("k")
    doc = json.loads(path.read_text())
    assert doc["key"] == "k" and doc["value"] == {"a": 1} and doc["format"] == ps.FORMAT
    # another key's entry in this file (a name collision): a miss, not its value
    path.write_text(json.dumps({**doc, "key": "other"}))
    assert store.get("k") is None
    for broken in (b"", b"{", b"[1, 2]", json.dumps({**doc, "format": 0}).encode(), b"\xff\xfe"):
        path.write_bytes(broken)
        assert store.get("k") is None
    assert [e.ok for e in store.entries()] == [False]
    assert store.put("k", {"a": 2}) and store.get("k") == {"a": 2}
    assert store.clear() == 1 and store.get("k") is None


def test_keys_hold_every_input() -> None:
    key = ps.PlanStore.key("plan", "MIOPEN_ENGINE", "MIOpen 3.5.1 on gfx942", "{graph}", [["k", 1]])
    doc = json.loads(key)
    import hipdnn

    assert doc == [ps.FORMAT, hipdnn.__version__, "plan", "MIOPEN_ENGINE", "MIOpen 3.5.1 on gfx942",
                   "{graph}", [["k", 1]]]
    assert ps.PlanStore.key("plan", "E", "T", "g", [["k", 2]]) != ps.PlanStore.key("plan", "E", "T", "g", [["k", 1]])


def test_knob_lists_round_trip() -> None:
    knobs = [Knob("a", KnobValueType.INT64, (1 << 63) - 1, IntConstraint(0, (1 << 63) - 1), "no limit"),
             Knob("b", KnobValueType.INT64, 2, IntConstraint(0, 8, 2, (0, 2, 8))),
             Knob("c", KnobValueType.FLOAT64, 0.5, FloatConstraint(0.0, 1.0)),
             Knob("d", KnobValueType.STRING, "x", StringConstraint(("x", "y"))),
             Knob("e", KnobValueType.STRING, "free")]
    assert ps.knobs_from_json(json.loads(json.dumps(ps.knobs_to_json(knobs)))) == knobs


def test_where_the_store_is(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HIPDNN_PLAN_STORE", "")
    try:
        if sys.platform != "win32":
            assert ps.plan_store().directory == tmp_path / "xdg" / "hipdnn-ctypes" / "plans"  # type: ignore[union-attr]
        for off in ("off", "0", "false", "NO"):
            monkeypatch.setenv("HIPDNN_PLAN_STORE", off)
            assert ps.plan_store() is None
        assert ps.set_plan_store(tmp_path / "api").directory == tmp_path / "api"  # type: ignore[union-attr]
        assert ps.set_plan_store(False) is None
    finally:
        ps.set_plan_store(None)

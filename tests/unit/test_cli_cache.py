"""``python -m hipdnn cache`` lists and clears the plan store; ``info`` shows MIOpen's caches
(user db, find db, kernel cache: path, files, bytes, writable), the find mode its environment
selects, and the plan store."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipdnn.__main__ import main
from hipdnn.pipeline.plan_store import PlanStore
from hipdnn.surfaces import diagnostics


def test_cache_lists_and_clears(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = PlanStore(tmp_path / "plans")
    store.put("k1", {"x": 1}, kind="plan", engine="MIOPEN_ENGINE", token="MIOpen 3.5.1 on gfx942")
    store.put("k2", {"support": None, "knobs": []}, kind="answers", engine="MIOPEN_ENGINE",
              token="MIOpen 3.5.1 on gfx942")
    store.path_of("k3").write_text("{truncated")
    assert main(["cache", "--dir", str(store.directory)]) == 0
    out = capsys.readouterr().out
    assert f"plan store {store.directory}: 3 entries" in out
    assert out.count("MIOpen 3.5.1 on gfx942") == 2 and "answers" in out and "plan " in out
    assert out.count("corrupt") == 1
    assert main(["cache", "clear", "--dir", str(store.directory)]) == 0
    assert "removed 3 entries" in capsys.readouterr().out
    assert not list(store.directory.glob("*.json"))


def test_cache_when_the_store_is_off(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HIPDNN_PLAN_STORE", "off")
    assert main(["cache"]) == 0
    assert "the plan store is off" in capsys.readouterr().out


def test_info_shows_the_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user, kernels = tmp_path / "userdb", tmp_path / "kcache"
    user.mkdir()
    (user / "gfx942130.HIP.3_5_1_.ufdb.txt").write_text("x" * 100)
    (user / "gfx942130.HIP.3_5_1_.updb.txt").write_text("y" * 30)
    monkeypatch.setenv("MIOPEN_USER_DB_PATH", str(user))
    monkeypatch.setenv("MIOPEN_CUSTOM_CACHE_DIR", str(kernels))
    monkeypatch.setenv("MIOPEN_FIND_MODE", "2")
    monkeypatch.setenv("HIPDNN_PLAN_STORE", str(tmp_path / "plans"))
    caches = diagnostics.miopen_caches(None)
    find_db = caches["user find db (*.ufdb.txt, MIOPEN_USER_DB_PATH)"]
    assert (find_db["files"], find_db["bytes"], find_db["writable"]) == (1, 100, True)
    assert caches["user db (perf db *.updb.txt, MIOPEN_USER_DB_PATH)"]["bytes"] == 30
    kc = caches["kernel cache (MIOPEN_CUSTOM_CACHE_DIR)"]
    assert kc["exists"] is False and kc["writable"] is True  # created by MIOpen's first compile
    assert caches["find mode (MIOPEN_FIND_MODE)"].startswith("FAST")
    assert caches["hipdnn plan store (HIPDNN_PLAN_STORE)"]["path"] == str(tmp_path / "plans")
    text = diagnostics.format_report(diagnostics.collect())
    assert f"kernel cache (MIOPEN_CUSTOM_CACHE_DIR): {kernels} (not created yet, writable)" in text
    assert "user find db (*.ufdb.txt, MIOPEN_USER_DB_PATH)" in text and "1 files, 100 bytes" in text
    monkeypatch.setenv("HIPDNN_PLAN_STORE", "off")
    assert "hipdnn plan store (HIPDNN_PLAN_STORE): off" in diagnostics.format_report(diagnostics.collect())

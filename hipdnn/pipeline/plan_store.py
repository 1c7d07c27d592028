"""The persistent plan store: what engines decided, kept across processes.

Building a plan on MIOpen costs three things: the engine's questions (is the graph supported,
which knobs, MIOpen's solution list), MIOpen's Find 2.0 search when benchmarking is on, and the
kernel compile. MIOpen keeps compiled kernels in its own cache; this store keeps the first two
answers, so a new process building the same graph takes the stored decision and asks MIOpen
neither for its solution list nor for a search (MIOpen still compiles the chosen kernel or loads
it from its cache).

Where: a directory, by default ``<user cache>/hipdnn-ctypes/plans`` (``$XDG_CACHE_HOME`` or
``~/.cache`` on Linux, ``%LOCALAPPDATA%`` on Windows). ``HIPDNN_PLAN_STORE=<dir>`` or
:func:`set_plan_store` (``hipdnn.set_plan_store(path)``) chooses another; ``HIPDNN_PLAN_STORE=off``
(also ``0``/``false``/``no``) or ``set_plan_store(False)`` turns it off.

What: two kinds of entries, each one JSON file, written by :class:`PlanStore`:

* ``answers``: per (graph, engine): the support answer and the knob list;
* ``plan``: per (graph, engine, knob settings): the engine's decision (``Engine.plan_decision``:
  MIOpen's path, solution id, workspace, Find 2.0's results and timing, the serialized solution).

Keys, and why two graphs cannot collide: an entry's key is the JSON list of every input the
decision depends on -- the store format, the hipdnn version, the kind of entry, the engine's name
and its ``store_token`` (for MIOpen: the library version and the device architecture), the
graph's full structure as :func:`hipdnn.ir.serialize.graph_to_dict` writes it (names left out), and
the knob settings. The file name is the SHA-256 of that key, but the file holds the key itself and
a read compares it in full: two keys sharing a file name (a hash collision) only overwrite each
other's file, which the other then reads as a miss and rebuilds. An entry is never used for a key
it was not written for.

Failures never break a build: a corrupt or truncated entry is one warning and a rebuild (the
entry is then rewritten); an entry of another store format or hipdnn version has another key and
is not read (``python -m hipdnn cache clear`` removes them); an engine that cannot apply a stored
decision (e.g. a solution the library no longer has) builds afresh and the entry is rewritten; an
unwritable or full directory is one warning per directory and process, plans still build. Writes
go to a temporary file in the directory then ``os.replace`` it: several processes writing the
same entry leave one complete file, never a mix. On a network file system without atomic rename
(some NFS setups) use a local directory instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hipdnn
from hipdnn.backend.knobs import FloatConstraint, IntConstraint, Knob, StringConstraint
from hipdnn.core.logs import logger
from hipdnn.core.types import KnobValueType

__all__ = ["FORMAT", "PlanStore", "StoreEntry", "default_store_dir", "knobs_from_json",
           "knobs_to_json", "plan_store", "set_plan_store"]

#: Version of the entry format; part of every key.
FORMAT = 1
_OFF = {"0", "off", "false", "no", "none"}
_SUFFIX = ".json"


def _replace(tmp: str, path: Path) -> None:
    """``os.replace``; on Windows a reader holding ``path`` open makes it fail for a moment
    (a sharing violation), so it is retried briefly before the error counts."""
    for attempt in range(40):
        try:
            os.replace(tmp, path)
            return
        except PermissionError:
            if sys.platform != "win32" or attempt == 39:
                raise
            time.sleep(0.002 * (attempt + 1))


def default_store_dir() -> Path | None:
    """``<user cache>/hipdnn-ctypes/plans``; None when the user has no home folder to find
    (e.g. Windows with neither LOCALAPPDATA nor USERPROFILE): then there is no default store."""
    try:
        if sys.platform == "win32":
            base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        else:
            base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    except (RuntimeError, KeyError):
        return None
    return Path(base) / "hipdnn-ctypes" / "plans"


@dataclass(frozen=True)
class StoreEntry:
    """One entry on disk, as ``python -m hipdnn cache`` lists it."""

    path: Path
    kind: str
    engine: str
    token: str
    size: int
    ok: bool


class PlanStore:
    """A plan store directory (see the module docstring). Thread-safe; never raises on I/O."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory).expanduser()
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        #: Reads that found a valid entry / reads that found none (or a stale or corrupt one).
        self.hits = 0
        self.misses = 0
        self.writes = 0

    def __repr__(self) -> str:
        return f"PlanStore({str(self.directory)!r})"

    # -------------------------------------------------------------------------------- keys
    @staticmethod
    def key(kind: str, engine: str, token: str, graph: str, knobs: Any = None) -> str:
        """The full key (canonical JSON) of an entry."""
        return json.dumps([FORMAT, hipdnn.__version__, kind, engine, token, graph, knobs],
                          sort_keys=True, separators=(",", ":"))

    def path_of(self, key: str) -> Path:
        """The file an entry of ``key`` lives in."""
        return self.directory / (hashlib.sha256(key.encode()).hexdigest() + _SUFFIX)

    # ------------------------------------------------------------------------------- reads
    def get(self, key: str) -> Any | None:
        """The value stored under ``key``, or None (absent, another key, corrupt: warned)."""
        path = self.path_of(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            self.misses += 1
            return None
        except OSError as exc:
            self._warn(f"read:{path}", f"plan store entry {path} cannot be read ({exc}); "
                       "building afresh")
            self.misses += 1
            return None
        try:
            doc = json.loads(raw)
            if not isinstance(doc, dict) or doc.get("format") != FORMAT or "value" not in doc:
                raise ValueError(f"not a plan store entry of format {FORMAT}")
            stored = doc["key"]
        except (ValueError, KeyError, UnicodeDecodeError) as exc:
            self._warn(f"corrupt:{path}", f"plan store entry {path} is corrupt or truncated "
                       f"({exc}); building afresh and rewriting it")
            self.misses += 1
            return None
        if stored != key:  # another key hashed to this file name: not ours
            self.misses += 1
            return None
        self.hits += 1
        return doc["value"]

    # ------------------------------------------------------------------------------ writes
    def put(self, key: str, value: Any, *, kind: str = "", engine: str = "", token: str = "") -> bool:
        """Write ``value`` under ``key`` atomically; False (and one warning per directory) when
        the directory cannot be written."""
        body = json.dumps({"format": FORMAT, "kind": kind, "engine": engine, "token": token,
                           "key": key, "value": value}, sort_keys=True).encode()
        path = self.path_of(key)
        tmp = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=self.directory)
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            _replace(tmp, path)
            tmp = None
        except OSError as exc:
            self._warn(f"write:{self.directory}", f"plan store {self.directory} cannot be "
                       f"written ({exc}); plans still build, but are not kept for the next "
                       "process (set HIPDNN_PLAN_STORE to a writable directory, or off)")
            return False
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        self.writes += 1
        return True

    def forget(self, key: str) -> None:
        """Remove the entry of ``key`` (an engine could not use it)."""
        try:
            self.path_of(key).unlink()
        except OSError:
            pass

    # ------------------------------------------------------------------------ listing, clear
    def entries(self) -> Iterator[StoreEntry]:
        """Every entry file in the directory (``ok`` False: unreadable, corrupt or of another
        format)."""
        try:
            paths = sorted(self.directory.glob("*" + _SUFFIX))
        except OSError:
            return
        for path in paths:
            if path.name.startswith(".tmp-"):
                continue
            try:
                raw = path.read_bytes()
                doc = json.loads(raw)
                ok = isinstance(doc, dict) and doc.get("format") == FORMAT
                yield StoreEntry(path, str(doc.get("kind", "?")), str(doc.get("engine", "?")),
                                 str(doc.get("token", "?")), len(raw), ok)
            except (OSError, ValueError, UnicodeDecodeError, AttributeError):
                yield StoreEntry(path, "?", "?", "?", _size(path), False)

    def clear(self) -> int:
        """Remove every entry (and leftover temporary files); returns how many were removed."""
        removed = 0
        try:
            paths = list(self.directory.glob("*" + _SUFFIX)) + list(self.directory.glob(".tmp-*"))
        except OSError:
            return 0
        for path in paths:
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
        return removed

    def _warn(self, what: str, message: str) -> None:
        with self._lock:
            if what in self._warned:
                return
            self._warned.add(what)
        logger.warning("%s", message)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


_configured: list[Any] = []  # [PlanStore | False] once set_plan_store was called
_stores: dict[str, PlanStore] = {}
_stores_lock = threading.Lock()


def set_plan_store(where: str | os.PathLike[str] | bool | None) -> PlanStore | None:
    """Choose the plan store for this process: a directory, ``False`` (off), or ``None`` (back
    to ``HIPDNN_PLAN_STORE`` / the default directory). Returns the store now in use."""
    _configured.clear()
    if where is False:
        _configured.append(False)
    elif where is True:
        raise TypeError("set_plan_store(True): give a directory, False (off) or None (default)")
    elif where is not None:
        _configured.append(_store_at(Path(where)))
    return plan_store()


def plan_store() -> PlanStore | None:
    """The store builds use now (None: off). Reads ``HIPDNN_PLAN_STORE`` at each call unless
    :func:`set_plan_store` chose one."""
    if _configured:
        chosen = _configured[0]
        return chosen if chosen is not False else None
    env = os.environ.get("HIPDNN_PLAN_STORE", "").strip()
    if env.lower() in _OFF:
        return None
    where = Path(env) if env else default_store_dir()
    return None if where is None else _store_at(where)


def _store_at(path: Path) -> PlanStore:
    try:
        path = path.expanduser()
    except RuntimeError:  # no home folder: the path as given
        pass
    key = str(path)
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = PlanStore(path)
        return store


# ------------------------------------------------------------------------ knob lists as JSON
def knobs_to_json(knobs: list[Knob]) -> list[dict[str, Any]]:
    """An engine's knob list as JSON values (:func:`knobs_from_json` reads it back)."""
    out = []
    for k in knobs:
        c = k.constraint
        if isinstance(c, IntConstraint):
            cj: Any = ["int", c.min, c.max, c.step,
                       None if c.valid_values is None else list(c.valid_values)]
        elif isinstance(c, FloatConstraint):
            cj = ["float", c.min, c.max]
        elif isinstance(c, StringConstraint):
            cj = ["str", list(c.valid_values)]
        else:
            cj = None
        out.append({"id": k.id, "type": int(k.value_type), "default": k.default,
                    "constraint": cj, "description": k.description})
    return out


def knobs_from_json(doc: Any) -> list[Knob]:
    """The knob list :func:`knobs_to_json` wrote; ValueError when ``doc`` is not one."""
    try:
        out = []
        for k in doc:
            c = k["constraint"]
            constraint: Any = None
            if c is not None and c[0] == "int":
                constraint = IntConstraint(int(c[1]), int(c[2]), int(c[3]),
                                           None if c[4] is None else tuple(int(v) for v in c[4]))
            elif c is not None and c[0] == "float":
                constraint = FloatConstraint(float(c[1]), float(c[2]))
            elif c is not None and c[0] == "str":
                constraint = StringConstraint(tuple(str(v) for v in c[1]))
            elif c is not None:
                raise ValueError(f"unknown constraint {c!r}")
            out.append(Knob(str(k["id"]), KnobValueType(int(k["type"])), k["default"], constraint,
                            str(k["description"])))
        return out
    except (TypeError, KeyError, IndexError) as exc:
        raise ValueError(f"not a knob list: {exc}") from exc

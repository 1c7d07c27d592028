"""apt pieces of tools/miopen_sysroot.py: the machine's Debian archive source and a private apt.

Test infrastructure only (never part of the package); nothing here touches the system's apt state.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PrivateApt", "archive_source", "run"]


# ---------------------------------------------------------------- apt source from the machine
def _deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    key = ""
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if cur:
                stanzas.append(cur)
            cur, key = {}, ""
            continue
        if raw[0] in " \t" and key:
            cur[key] += "\n" + raw.strip()
            continue
        if ":" in raw:
            key, _, val = raw.partition(":")
            key = key.strip().lower()
            cur[key] = val.strip()
    if cur:
        stanzas.append(cur)
    return stanzas


def _one_line_entries(text: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("deb ") and not line.startswith("deb\t"):
            continue
        opts: dict[str, str] = {}
        m = re.match(r"deb\s+\[([^\]]*)\]\s+(.*)", line)
        rest = line[3:].strip()
        if m:
            for kv in m.group(1).split():
                k, _, v = kv.partition("=")
                opts[k.lower()] = v
            rest = m.group(2)
        fields = rest.split()
        if len(fields) >= 2:
            out.append({"types": "deb", "uris": fields[0], "suites": fields[1],
                        "signed-by": opts.get("signed-by", "")})
    return out


def archive_source(etc: Path = Path("/etc/apt")) -> tuple[str, str]:
    """(URI, keyring) of the Debian archive configured on this machine.

    Picks the first ``deb`` entry whose URI path ends in ``/debian`` (not ``debian-security``,
    not a third-party repository) from ``sources.list.d/*.sources`` then ``sources.list`` (and
    ``sources.list.d/*.list``). Raises RuntimeError naming the files read when none is found.
    """
    entries: list[dict[str, str]] = []
    read: list[str] = []
    parts = etc / "sources.list.d"
    for path in sorted(parts.glob("*.sources")) if parts.is_dir() else []:
        read.append(str(path))
        entries += _deb822_stanzas(path.read_text(errors="replace"))
    for path in [etc / "sources.list", *(sorted(parts.glob("*.list")) if parts.is_dir() else [])]:
        if path.is_file():
            read.append(str(path))
            entries += _one_line_entries(path.read_text(errors="replace"))
    for entry in entries:
        if "deb" not in entry.get("types", "").split() or entry.get("enabled", "yes") == "no":
            continue
        for uri in entry.get("uris", "").split():
            if uri.rstrip("/").endswith("/debian"):
                key = entry.get("signed-by", "").strip()
                if not key or "\n" in key or not Path(key).is_file():
                    key = "/usr/share/keyrings/debian-archive-keyring.gpg"
                return uri.rstrip("/"), key
    raise RuntimeError(f"no Debian archive URI (path ending in /debian) in {read or [str(etc)]}")


# ---------------------------------------------------------------- private apt
class PrivateApt:
    """apt-get/apt-cache with their own state, lists and cache under ``base`` (system untouched)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.lists = base / "lists"
        self.archives = base / "archives"

    def _opts(self) -> list[str]:
        b = self.base
        return [
            "-o", f"Dir::Etc::SourceList={b / 'etc' / 'sources.list'}",
            "-o", f"Dir::Etc::SourceParts={b / 'etc' / 'sources.list.d'}",
            "-o", f"Dir::Etc::Preferences={b / 'etc' / 'preferences'}",
            "-o", f"Dir::Etc::PreferencesParts={b / 'etc' / 'preferences.d'}",
            "-o", f"Dir::State={b / 'state'}",
            "-o", f"Dir::State::Lists={self.lists}",
            "-o", f"Dir::State::status={b / 'state' / 'status'}",
            "-o", f"Dir::Cache={b / 'cache'}",
            "-o", "APT::Sandbox::User=root",
            "-o", "APT::Get::AllowUnauthenticated=false",
            "-o", "Acquire::Languages=none",
            "-o", "APT::Architectures=amd64",
            "-q",
        ]

    def configure(self, uri: str, keyring: str) -> bool:
        """Write the private sources (sid + experimental); True if they changed."""
        for sub in ("etc/sources.list.d", "etc/preferences.d", "state", "cache", "lists/partial"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        (self.base / "etc" / "sources.list").touch()
        (self.base / "etc" / "preferences").touch()
        (self.base / "state" / "status").touch()
        src = (f"Types: deb\nURIs: {uri}\nSuites: sid experimental\nComponents: main\n"
               f"Signed-By: {keyring}\n")
        path = self.base / "etc" / "sources.list.d" / "hipdnn-miopen.sources"
        if path.is_file() and path.read_text() == src:
            return False
        path.write_text(src)
        return True

    def update(self) -> None:
        """``apt-get update`` into the private lists."""
        run(["apt-get", *self._opts(), "update"])

    def have_lists(self) -> bool:
        """True when Packages indices for sid and experimental are present."""
        names = [p.name for p in self.lists.glob("*Packages*")]
        return any("_sid_" in n for n in names) and any("_experimental_" in n for n in names)

    def download(self, targets: Sequence[str], dest: Path) -> None:
        """``apt-get download`` the given ``pkg=ver`` / ``pkg/suite`` targets into ``dest``."""
        dest.mkdir(parents=True, exist_ok=True)
        run(["apt-get", *self._opts(), "download", *targets], cwd=dest)

    def has_version_in(self, package: str, suite: str) -> bool:
        """Whether ``package`` has a version in ``suite`` (per the private lists)."""
        out = run(["apt-cache", *self._opts(), "showpkg", package], capture=True)
        return any(f"_{suite}_" in line for line in out.splitlines() if "(" in line)


def run(cmd: Sequence[str], cwd: Path | None = None, capture: bool = False) -> str:
    """Run ``cmd`` (output to stderr, or captured and returned); RuntimeError when it fails."""
    proc = subprocess.run(list(cmd), cwd=cwd, text=True,
                          stdout=subprocess.PIPE if capture else sys.stderr,
                          stderr=subprocess.PIPE if capture else None)
    if proc.returncode != 0:
        detail = (proc.stderr or "").strip()[-2000:] if capture else ""
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{detail}")
    return proc.stdout or ""

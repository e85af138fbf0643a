"""R9: a healthy state database on a read-only mount is read (pins and sweeps apply), nothing new is saved."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dcp_plugin.store import DecisionRow, SessionBatch, Store

pytestmark = pytest.mark.slow  # a process in a mount namespace of its own


def _can_mount_read_only() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount --bind / /mnt 2>/dev/null || true; true"], capture_output=True)
    return probe.returncode == 0


needs_mounts = pytest.mark.skipif(not _can_mount_read_only(), reason="needs unshare (user and mount namespaces) to mount a folder read-only")


def read_only(folder: Path, code: str) -> list[str]:
    """Run ``code`` in a process that sees ``folder`` mounted read-only; its printed lines."""
    script = f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && exec {sys.executable} -c \"$0\""
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@needs_mounts
def test_pins_and_sweeps_saved_earlier_apply_from_a_database_on_a_read_only_mount(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    store = Store(folder / "dcp.sqlite3")
    assert store.save([SessionBatch("s", [DecisionRow("c1", "read", "deduplication", 40)], manual={"c2": "sweep"}, pins={"c3": True}, requests=2)])
    store.close()
    lines = read_only(
        folder,
        f"""
        from dcp_plugin.store import SessionBatch, Store
        warnings = []
        store = Store({str(folder / "dcp.sqlite3")!r}, warnings.append)
        found = store.load_session("s")
        print(sorted(found.manual), sorted(found.pinned), found.complete)
        print(store.save([SessionBatch("s", requests=1)]))
        print(sorted(store.load_session("s").manual))
        print(len(warnings), "cannot be written" in warnings[0])
        """,
    )
    assert lines == ["['c2'] ['c3'] True", "False", "['c2']", "1 True"]

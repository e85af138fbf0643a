"""N15: a dangling-symlink dcp.jsonc and keys written twice get a clear warning naming the file and key."""

from __future__ import annotations

from pathlib import Path

from tests.support.config_host import Host, config_path, project, swap, write

__all__ = ["project"]  # the fixture


def test_a_dangling_symlink_config_is_named_with_its_missing_target(project: Path) -> None:
    host = Host(project)
    swap(config_path(project), "dangling symlink")
    host.pruned("a.py")
    [message] = [n for n in host.notes if str(config_path(project)) in n]
    assert "symbolic link to" in message and "missing.jsonc" in message and "does not exist" in message


def test_a_key_written_twice_is_named_in_a_warning(project: Path) -> None:
    host = Host(project)
    write(config_path(project), '{"protectedFilePatterns": ["secrets/**"], "protectedFilePatterns": []}')
    host.pruned("a.py")
    [message] = [n for n in host.notes if str(config_path(project)) in n]
    assert "warning" in message and "`protectedFilePatterns` appears more than once" in message

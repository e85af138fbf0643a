"""A protected file stays protected under any alias a symbolic link gives it (and under /proc/self/cwd)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dcp_plugin.pipeline.protection import PathProtector

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links and /proc as POSIX systems have them")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "real" / "proj"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.txt").write_text("k")
    (root / ".env").write_text("TOKEN=1")
    return root


def protects(pattern: str, path: str, directory: Path | str) -> bool:
    return PathProtector([pattern], str(directory)).is_protected([path])


@pytest.mark.parametrize("given", ["alias/key.txt", "{proj}/alias/key.txt"])
def test_a_file_reached_through_a_linked_directory_inside_the_project_is_protected(project: Path, given: str) -> None:
    (project / "alias").symlink_to(project / "secrets")
    assert protects("/secrets/**", given.format(proj=project), project)


def test_a_linked_file_inside_the_project_is_protected(project: Path) -> None:
    (project / "notes.txt").symlink_to(project / ".env")
    assert protects("/.env", "notes.txt", project)


@pytest.mark.parametrize("given", ["{real}/secrets/key.txt", "{link}/secrets/key.txt", "secrets/key.txt"])
def test_a_project_opened_through_a_linked_path_protects_its_files_by_either_path(
    project: Path, tmp_path: Path, given: str
) -> None:
    link = tmp_path / "link"
    link.symlink_to(project)
    assert protects("/secrets/**", given.format(real=project, link=link), link)
    assert protects("/secrets/**", given.format(real=project, link=link), project)


def test_a_file_named_through_proc_self_cwd_is_protected(project: Path) -> None:
    assert protects("/secrets/**", "/proc/self/cwd/secrets/key.txt", project)


def test_a_file_not_yet_written_in_a_linked_directory_is_protected(project: Path) -> None:
    (project / "alias").symlink_to(project / "secrets")
    assert protects("/secrets/**", "alias/new.txt", project)


def test_a_link_out_of_the_project_is_matched_by_where_it_points_and_by_its_name(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / "vendor").symlink_to(outside)
    assert protects("/vendor/**", "vendor/x.py", project)  # the text form still counts
    assert protects(f"{outside}/**", "vendor/x.py", project)
    assert not protects("/secrets/**", "vendor/x.py", project)

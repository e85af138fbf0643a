"""`.ci/install-opencode`: the pinned OpenCode goes into a per-user cache outside the clone, reused."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT

SCRIPT = ROOT / ".ci" / "install-opencode"
VERSION = "9.9.9"

# Stands in for npm: `npm install --prefix DIR ... opencode-ai@V` lays out the two packages the
# real one installs (the node launcher and a platform package with the binary) and logs the call.
FAKE_NPM = """#!/usr/bin/env bash
set -eu
echo "$*" >>"$NPM_LOG"
prefix=""
while [ $# -gt 0 ]; do
    case "$1" in --prefix) prefix="$2"; shift 2 ;; *) shift ;; esac
done
pkg="$prefix/node_modules/opencode-fake-platform"
mkdir -p "$pkg/bin" "$prefix/node_modules/opencode-ai"
printf '{"name": "opencode-fake-platform", "version": "%s"}\\n' "$OPENCODE_VERSION" >"$pkg/package.json"
# Like the real binary, any start (--version too) creates opencode/ in each XDG dir.
printf '#!/bin/sh\\nmkdir -p "${XDG_CONFIG_HOME:-$HOME/.config}/opencode" "${XDG_DATA_HOME:-$HOME/.local/share}/opencode" "${XDG_CACHE_HOME:-$HOME/.cache}/opencode" "${XDG_STATE_HOME:-$HOME/.local/state}/opencode"\\necho %s\\n' "$OPENCODE_VERSION" >"$pkg/bin/opencode"
chmod +x "$pkg/bin/opencode"
"""


@pytest.fixture
def fake_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose `npm` is the fake above, with HOME and the cache in tmp_path."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    npm = bindir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(0o755)
    tools = ("bash", "sh", "uname", "tr", "cat", "dirname", "grep", "mkdir", "mktemp", "mv", "rm", "chmod", "printf", "flock", "sleep")
    for tool in tools:
        found = shutil.which(tool)
        if found and not (bindir / tool).exists():
            (bindir / tool).symlink_to(found)
    home = tmp_path / "user"
    home.mkdir()
    return {
        "PATH": str(bindir),
        "HOME": str(home),
        "OPENCODE_VERSION": VERSION,
        "NPM_LOG": str(tmp_path / "npm.log"),
    }


def run_script(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT)], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)


def npm_calls(env: dict[str, str]) -> int:
    log = Path(env["NPM_LOG"])
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_installs_into_the_user_cache_outside_the_clone(fake_env: dict[str, str], tmp_path: Path) -> None:
    done = run_script(fake_env, tmp_path)
    assert done.returncode == 0, done.stderr
    binary = Path(done.stdout.strip())
    expected_root = Path(fake_env["HOME"]) / ".cache" / "dcp-plugin" / f"opencode-{VERSION}"
    assert binary.is_relative_to(expected_root)
    assert not (ROOT / ".cache" / f"opencode-{VERSION}").exists()
    assert subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.strip() == VERSION


def test_xdg_cache_home_moves_the_cache(fake_env: dict[str, str], tmp_path: Path) -> None:
    cache = tmp_path / "xdg-cache"
    done = run_script({**fake_env, "XDG_CACHE_HOME": str(cache)}, tmp_path)
    assert Path(done.stdout.strip()).is_relative_to(cache / "dcp-plugin" / f"opencode-{VERSION}")


def test_a_relative_xdg_cache_home_is_ignored(fake_env: dict[str, str], tmp_path: Path) -> None:
    done = run_script({**fake_env, "XDG_CACHE_HOME": "relative/cache"}, tmp_path)
    assert Path(done.stdout.strip()).is_relative_to(Path(fake_env["HOME"]) / ".cache" / "dcp-plugin")


def test_dcp_cache_dir_overrides_the_cache_root(fake_env: dict[str, str], tmp_path: Path) -> None:
    done = run_script({**fake_env, "DCP_CACHE_DIR": str(tmp_path / "mine")}, tmp_path)
    assert Path(done.stdout.strip()).is_relative_to(tmp_path / "mine" / f"opencode-{VERSION}")


def test_a_second_clone_reuses_the_download(fake_env: dict[str, str], tmp_path: Path) -> None:
    first = run_script(fake_env, tmp_path)
    other_clone = tmp_path / "other-clone"
    other_clone.mkdir()
    second = run_script(fake_env, other_clone)
    assert second.stdout == first.stdout
    assert npm_calls(fake_env) == 1


def test_another_version_gets_its_own_directory(fake_env: dict[str, str], tmp_path: Path) -> None:
    first = run_script(fake_env, tmp_path)
    second = run_script({**fake_env, "OPENCODE_VERSION": "9.9.10"}, tmp_path)
    assert Path(first.stdout.strip()).exists() and Path(second.stdout.strip()).exists()
    assert "opencode-9.9.10" in second.stdout and f"opencode-{VERSION}/" in first.stdout


def test_no_npm_skips_with_a_reason_and_empty_stdout(fake_env: dict[str, str], tmp_path: Path) -> None:
    os.unlink(Path(fake_env["PATH"]) / "npm")
    done = run_script(fake_env, tmp_path)
    assert done.returncode == 0
    assert done.stdout == ""
    assert "npm not found" in done.stderr


def test_a_failed_download_leaves_no_partial_install(fake_env: dict[str, str], tmp_path: Path) -> None:
    (Path(fake_env["PATH"]) / "npm").write_text("#!/usr/bin/env bash\nmkdir -p \"$3/node_modules/junk\"\nexit 1\n")
    done = run_script(fake_env, tmp_path)
    assert done.returncode == 0 and done.stdout == ""
    cache = Path(fake_env["HOME"]) / ".cache" / "dcp-plugin"
    assert [p.name for p in cache.iterdir() if p.suffix != ".lock"] == []


@pytest.mark.skipif(shutil.which("flock") is None, reason="flock is not installed here")
def test_runs_started_together_download_once_and_print_the_same_binary(fake_env: dict[str, str], tmp_path: Path) -> None:
    npm = Path(fake_env["PATH"]) / "npm"
    npm.write_text(FAKE_NPM.replace("set -eu\n", "set -eu\nsleep 1\n"))  # long enough for both to be waiting
    runs = [
        subprocess.Popen(["bash", str(SCRIPT)], cwd=tmp_path, env=fake_env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    printed = {run.communicate(timeout=60)[0] for run in runs}
    assert npm_calls(fake_env) == 1
    assert len(printed) == 1 and Path(printed.pop().strip()).is_file()


def opencode_dirs(root: Path) -> list[Path]:
    """The `opencode/` folders an OpenCode start leaves under ``root``."""
    return sorted(p for p in root.rglob("opencode") if p.is_dir() and "dcp-plugin" not in p.parts)


def test_the_fake_binary_creates_opencode_folders_as_the_real_one_does(fake_env: dict[str, str], tmp_path: Path) -> None:
    # The premise of the next tests: started with the user's HOME, it leaves opencode/ folders there.
    binary = Path(run_script(fake_env, tmp_path).stdout.strip())
    subprocess.run([str(binary), "--version"], env=fake_env, capture_output=True, check=True)
    assert len(opencode_dirs(Path(fake_env["HOME"]))) == 4


def test_installing_leaves_the_users_xdg_dirs_as_they_were(fake_env: dict[str, str], tmp_path: Path) -> None:
    done = run_script(fake_env, tmp_path)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
    assert opencode_dirs(Path(fake_env["HOME"])) == []


def test_checking_an_existing_install_leaves_the_users_xdg_dirs_as_they_were(fake_env: dict[str, str], tmp_path: Path) -> None:
    first = Path(run_script(fake_env, tmp_path).stdout.strip())
    # Without the marker the script asks the installed binary its version.
    (Path(fake_env["HOME"]) / ".cache" / "dcp-plugin" / f"opencode-{VERSION}" / ".binary-path").unlink()
    xdg = tmp_path / "xdg"
    env = {**fake_env, **{var: str(xdg / var.lower()) for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")}}
    second = run_script(env, tmp_path)
    assert Path(second.stdout.strip()) == first
    assert opencode_dirs(Path(fake_env["HOME"])) == [] and opencode_dirs(xdg) == []

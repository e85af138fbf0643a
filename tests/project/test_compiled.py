"""The compiled core: when its modules are used, and that compiled and plain Python decide the same."""

from __future__ import annotations

import enum
import importlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from benchmarks import decision_hashes
from dcp_plugin import compiled

ROOT = Path(__file__).resolve().parents[2]


def _package(tmp_path: Path) -> Path:
    """A package folder with one module of each compiled folder, and one left out."""
    root = tmp_path / "dcp_plugin"
    for folder in compiled.FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "__init__.py").write_text("")
        (root / folder / "mod.py").write_text(f"NAME = {folder!r}\n")
    (root / "model" / "continuity.py").write_text("LEFT = True\n")
    for source in compiled.native_sources(root):
        source.write_text("/* C */\n")
    return root


def _build(root: Path) -> None:
    """What a build leaves: an extension beside each compiled source, and the stamp."""
    for path in compiled.sources(root):
        path.with_suffix(EXTENSION_SUFFIXES[0]).write_bytes(b"")
    compiled.write_stamp(root, root)


def test_the_left_out_modules_are_not_compiled(tmp_path: Path) -> None:
    root = _package(tmp_path)
    names = [compiled.module_name(path, root) for path in compiled.sources(root)]
    assert "dcp_plugin.model.mod" in names and "dcp_plugin.pipeline.strategies" in names
    assert "dcp_plugin.model.continuity" not in names


def test_without_a_compiled_build_nothing_is_redirected(tmp_path: Path) -> None:
    assert compiled._reason_for_python(_package(tmp_path)) is None


def test_a_build_of_the_sources_on_disk_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    root = _package(tmp_path)
    _build(root)
    assert compiled._reason_for_python(root) is None


def test_an_edited_source_sends_the_whole_group_back_to_plain_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    root = _package(tmp_path)
    _build(root)
    (root / "budget" / "mod.py").write_text("NAME = 'edited'\n")
    assert "changed since the build" in (compiled._reason_for_python(root) or "")


def test_an_edited_c_source_sends_the_whole_group_back_to_plain_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    root = _package(tmp_path)
    _build(root)
    for source in compiled.native_sources(root):
        source.write_text("/* edited */\n")
    assert "changed since the build" in (compiled._reason_for_python(root) or "")


def test_compiled_modules_without_their_stamp_are_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    root = _package(tmp_path)
    _build(root)
    (root / compiled.STAMP).unlink()
    assert compiled._reason_for_python(root) is not None


def test_the_environment_variable_forces_plain_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path)
    _build(root)
    monkeypatch.setenv(compiled.PURE_ENV, "1")
    assert compiled.PURE_ENV in (compiled._reason_for_python(root) or "")


def test_the_plain_python_finder_gives_the_source_file(tmp_path: Path) -> None:
    root = _package(tmp_path)
    paths = {compiled.module_name(path, root): path for path in compiled.sources(root)}
    finder = compiled._PlainPython(paths)
    spec = finder.find_spec("dcp_plugin.pipeline.mod")
    assert spec is not None and spec.origin == str(root / "pipeline" / "mod.py")
    package = finder.find_spec("dcp_plugin.pipeline")
    assert package is not None and package.submodule_search_locations == [str(root / "pipeline")]
    assert finder.find_spec("dcp_plugin.host.runtime") is None


def _run(*args: str, plain: bool, timeout: int = 1200) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, compiled.PURE_ENV: "1"} if plain else {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_a_plain_python_process_loads_no_compiled_module() -> None:
    done = _run("-c", "import dcp_plugin.pipeline.session as s, dcp_plugin.compiled as c; print(c.IN_USE, s.__file__)", plain=True)
    assert done.returncode == 0, done.stderr
    in_use, path = done.stdout.split()
    assert in_use == "False" and path.endswith("session.py")


needs_compiled = pytest.mark.skipif(not compiled.IN_USE, reason=f"this process runs {compiled.describe()}")


@pytest.mark.slow
@needs_compiled
def test_the_tests_that_need_plain_python_pass_in_plain_python() -> None:
    # One -q (the suite's own options): its summary line says how many passed.
    done = _run("-m", "pytest", "-m", "plain_python", "-n", "0", "-p", "no:cacheprovider", "tests", plain=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1]


@pytest.mark.slow
@needs_compiled
def test_compiled_and_plain_python_decide_the_same() -> None:
    # The plain process runs while this one, compiled, works out its own digests.
    env = {**os.environ, compiled.PURE_ENV: "1"}
    command = [sys.executable, "-m", "benchmarks.decision_hashes"]
    with subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as plain:
        mine = decision_hashes.digests([])
        out, err = plain.communicate(timeout=1200)
    assert plain.returncode == 0, err[-2000:]
    assert mine and mine == json.loads(out)


def _defined_classes() -> list[type]:
    """The classes the modules of the group define, as this process loaded them."""
    found: list[type] = []
    for path in compiled.sources():
        module = importlib.import_module(compiled.module_name(path))
        found += [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]
    return found


def _made_like_python(kind: type) -> bool:
    """Whether the class is made as Python makes one: its instance first, then ``__init__`` apart."""
    try:
        kind.__new__(kind)
    except TypeError:
        return False
    return True


def test_every_class_of_the_group_makes_an_instance_without_its_init() -> None:
    # Unpickling (a checkpoint) makes each object so; a compiled class runs its __init__ inside
    # __new__ unless it allows interpreted subclasses (mypyc_attr in the class's decorators).
    # Exceptions, enums, tuples, typed dicts and protocols are pickled otherwise or never.
    plain_kinds = (BaseException, enum.Enum, tuple, dict)
    kinds = [k for k in _defined_classes() if not issubclass(k, plain_kinds) and not getattr(k, "_is_protocol", False)]
    assert len(kinds) > 30
    assert [kind.__qualname__ for kind in kinds if not _made_like_python(kind)] == []


def test_the_build_environment_holds_every_dependency() -> None:
    # mypyc type-checks the package with its dependencies' types: one missing there fails the compile.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    build = set(project["build-system"]["requires"])
    assert [dep for dep in project["project"]["dependencies"] if dep not in build] == []


def test_a_plain_build_says_why_it_compiled_nothing(tmp_path: Path) -> None:
    root = _package(tmp_path)
    compiled.write_stamp(root, root, plain="compiling failed (no compiler)")
    assert compiled.built_plain(root) == "compiling failed (no compiler)"


def test_a_plain_build_leaves_earlier_compiled_modules_unused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    root = _package(tmp_path)
    _build(root)
    compiled.write_stamp(root, root, plain=f"{compiled.PURE_ENV} was set")
    assert compiled._reason_for_python(root) is not None


def test_this_installation_compiled_where_a_compiler_is_at_hand() -> None:
    why = compiled.built_plain()
    if why is None or not why.startswith(compiled.COMPILE_FAILED):
        pytest.skip(f"this installation: {compiled.describe()}")
    assert not (shutil.which("cc") or shutil.which("gcc")), f"a C compiler is here, yet the build compiled nothing: {why}"

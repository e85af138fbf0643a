"""`dcp opencode install|uninstall`: the shim written into OpenCode's plugin dirs, and only ours removed."""

from __future__ import annotations

import functools
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dcp_plugin
from dcp_plugin.adapters.bridge import SHIM_DIR, SHIM_PATH
from dcp_plugin.adapters.bridge import install as inst
from dcp_plugin.cli.main import main
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # each install runs the interpreter it pins (and some tests node)


# Installing checks that the pinned interpreter can import the bridge by starting it (a few

# tenths of a second); the answer for one interpreter is the same in every test, so each
# interpreter is started once here (this one by the first install, the odd ones by their tests).
_check_python_once = functools.cache(inst.check_python)


@pytest.fixture(autouse=True)
def interpreter_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inst, "check_python", _check_python_once)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def plugin_file(project: Path) -> Path:
    return project / ".opencode" / "plugins" / "dcp.js"


def test_install_writes_the_shim_entry_into_the_project(project: Path):
    assert main(["opencode", "install", "--project", str(project)]) == 0
    expected = SHIM_PATH.read_text().replace(
        'const INSTALLED_PYTHON = "python3";', f"const INSTALLED_PYTHON = {json.dumps(sys.executable)};"
    ).replace(
        'const SHIM_URL = new URL("./shim/", import.meta.url).href;', f"const SHIM_URL = {json.dumps(SHIM_DIR.as_uri() + '/')};"
    )
    assert plugin_file(project).read_text() == inst.MARKER + "\n" + expected


def test_install_defaults_to_the_current_directory(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(project)
    main(["opencode", "install"])
    assert plugin_file(project).is_file()


def test_install_pins_the_installing_interpreter(project: Path):
    main(["opencode", "install", "--project", str(project)])
    assert f"const INSTALLED_PYTHON = {json.dumps(sys.executable)};" in plugin_file(project).read_text()


def test_install_pins_the_python_given(project: Path, tmp_path: Path):
    # Another path that runs this interpreter. Not a symlink to it: in a virtualenv, a link outside
    # the virtualenv's folder (no pyvenv.cfg beside it) runs the base Python, without dcp_plugin.
    python = tmp_path / "venv" / "bin" / "python3"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    python.chmod(0o755)
    assert main(["opencode", "install", "--project", str(project), "--python", str(python)]) == 0
    assert f"const INSTALLED_PYTHON = {json.dumps(str(python))};" in plugin_file(project).read_text()


def test_a_path_with_quotes_stays_a_valid_js_string():
    text = inst.render_shim('/odd "dir"\\python')
    assert 'const INSTALLED_PYTHON = "/odd \\"dir\\"\\\\python";' in text


def test_the_installed_file_starts_with_our_marker(project: Path):
    main(["opencode", "install", "--project", str(project)])
    assert plugin_file(project).read_text().splitlines()[0] == inst.MARKER


def test_install_global_writes_into_the_xdg_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    main(["opencode", "install", "--global"])
    assert (tmp_path / "cfg" / "opencode" / "plugins" / "dcp.js").is_file()


def test_install_global_falls_back_to_home_config():
    assert inst.global_plugins_dir({"HOME": "/home/u"}) == Path("/home/u/.config/opencode/plugins")


def test_installing_twice_is_a_no_op(project: Path, capsys: pytest.CaptureFixture[str]):
    main(["opencode", "install", "--project", str(project)])
    assert main(["opencode", "install", "--project", str(project)]) == 0
    assert "already installed and up to date" in capsys.readouterr().out


def test_install_updates_our_older_file(project: Path):
    main(["opencode", "install", "--project", str(project), "--python", "/old/python", "--force"])
    assert inst.install(plugin_file(project).parent, "/new/python").action == "updated"


def test_install_refuses_to_replace_a_file_we_did_not_write(project: Path, capsys: pytest.CaptureFixture[str]):
    plugin_file(project).parent.mkdir(parents=True)
    plugin_file(project).write_text("export default async () => ({})\n")
    assert main(["opencode", "install", "--project", str(project)]) == 1
    assert "--force" in capsys.readouterr().err
    assert plugin_file(project).read_text() == "export default async () => ({})\n"


def test_install_force_replaces_a_foreign_file(project: Path):
    plugin_file(project).parent.mkdir(parents=True)
    plugin_file(project).write_text("export default async () => ({})\n")
    assert main(["opencode", "install", "--project", str(project), "--force"]) == 0
    assert inst.is_ours(plugin_file(project))


def test_install_into_a_missing_project_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["opencode", "install", "--project", str(tmp_path / "nope")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_install_says_how_to_check(project: Path, capsys: pytest.CaptureFixture[str]):
    main(["opencode", "install", "--project", str(project)])
    out = capsys.readouterr().out
    assert "/dcp context" in out
    assert "`dcp opencode context`" in out and "`opencode session list`" in out


def test_install_with_an_interpreter_that_does_not_exist_fails_and_writes_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
):
    assert main(["opencode", "install", "--project", str(project), "--python", "/nonexistent"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dcp: could not run /nonexistent")
    assert "was not installed" in err and "--python" in err
    assert not plugin_file(project).exists()


def test_install_with_an_interpreter_without_dcp_plugin_fails(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    bare = tmp_path / "bare-python"
    bare.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'dcp_plugin'\" >&2\nexit 1\n")
    bare.chmod(0o755)
    assert main(["opencode", "install", "--project", str(project), "--python", str(bare)]) == 1
    assert f"{bare} cannot import dcp_plugin (ModuleNotFoundError" in capsys.readouterr().err
    assert not plugin_file(project).exists()


def test_force_installs_for_an_interpreter_that_cannot_run_the_bridge_yet(project: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["opencode", "install", "--project", str(project), "--python", str(project / "no-python"), "--force"]) == 0
    assert "pruning stays off" in capsys.readouterr().err
    assert plugin_file(project).is_file()


def test_install_from_a_subdirectory_goes_to_the_git_root(project: Path, monkeypatch: pytest.MonkeyPatch):
    (project / ".git").mkdir()
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    assert main(["opencode", "install"]) == 0
    assert plugin_file(project).is_file()
    assert not plugin_file(project / "src").exists()


def test_installing_the_project_copy_warns_about_the_global_one(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    main(["opencode", "install", "--global"])
    capsys.readouterr()
    assert main(["opencode", "install", "--project", str(project)]) == 0
    err = capsys.readouterr().err
    assert "loads the dcp plugin twice" in err
    assert str(tmp_path / "cfg" / "opencode" / "plugins" / "dcp.js") in err


def test_installing_the_global_copy_warns_about_this_projects(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    main(["opencode", "install", "--project", str(project)])
    monkeypatch.chdir(project)
    capsys.readouterr()
    assert main(["opencode", "install", "--global"]) == 0
    assert str(plugin_file(project)) in capsys.readouterr().err


def test_a_single_copy_gets_no_warning(project: Path, capsys: pytest.CaptureFixture[str]):
    main(["opencode", "install", "--project", str(project)])
    assert main(["opencode", "install", "--project", str(project)]) == 0
    assert "twice" not in capsys.readouterr().err


def test_uninstall_removes_our_file(project: Path):
    main(["opencode", "install", "--project", str(project)])
    assert main(["opencode", "uninstall", "--project", str(project)]) == 0
    assert not plugin_file(project).exists()


def test_uninstall_leaves_a_foreign_file_alone(project: Path):
    plugin_file(project).parent.mkdir(parents=True)
    plugin_file(project).write_text("// someone else's\n")
    assert main(["opencode", "uninstall", "--project", str(project)]) == 1
    assert plugin_file(project).read_text() == "// someone else's\n"


def test_uninstall_without_a_file_succeeds(project: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["opencode", "uninstall", "--project", str(project)]) == 0
    assert "Nothing to remove" in capsys.readouterr().out


def test_uninstall_keeps_other_plugins(project: Path):
    main(["opencode", "install", "--project", str(project)])
    other = plugin_file(project).parent / "other.js"
    other.write_text("// another plugin\n")
    main(["opencode", "uninstall", "--project", str(project)])
    assert other.exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: cannot load the installed module")
def test_the_installed_file_loads_as_a_plugin_module_exporting_only_its_plugin(project: Path):
    main(["opencode", "install", "--project", str(project)])
    # Loaded the way Bun treats a .js plugin: as an ES module.
    script = "import(process.argv[1]).then(m => console.log(JSON.stringify(Object.keys(m).map(k => [k, typeof m[k]]))))"
    module = project / "copy.mjs"
    module.write_text(plugin_file(project).read_text())
    done = subprocess.run(["node", "-e", script, str(module)], capture_output=True, text=True, timeout=60, check=False)
    assert json.loads(done.stdout) == [["default", "function"]], done.stderr


def test_every_file_of_the_bridge_package_is_shipped_as_package_data():
    """The shim, its modules and PROTOCOL.md live beside the Python modules; a wheel carries only what package-data lists."""
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["dcp_plugin"]
    package = Path(dcp_plugin.__file__).resolve().parent
    shipped = {path for pattern in patterns for path in package.glob(pattern)}
    data = {p for p in SHIM_PATH.parent.rglob("*") if p.is_file() and p.suffix not in {".py", ".pyc"}}
    assert data - shipped == set()
    assert {SHIM_PATH.parent / "PROTOCOL.md", SHIM_DIR / "plugin.mjs", package / "bridge" / "shim" / "plugin.mjs"} <= shipped


def run_node(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["node", "--input-type=module", "-e", script, *args], capture_output=True, text=True, timeout=60, check=False)


# Loads the installed file from its plugins dir, as OpenCode does, and calls the plugin with a client
# that records its log and toasts; prints the hooks' names, the bridge command and what was reported.
LOAD_AND_CALL = """
const calls = { logs: [], toasts: [] };
const client = { app: { log: async (a) => calls.logs.push(a.body) }, tui: { showToast: async (a) => calls.toasts.push(a.body) } };
const { default: plugin } = await import(process.argv[1]);
const hooks = await plugin({ client, directory: process.argv[2] }, { backoffMs: 10 });
await hooks["experimental.chat.messages.transform"]({}, { messages: [] });
const command = hooks.__dcpBridge?.settings.command ?? null;
hooks.__dcpBridge?.stop();
console.log(JSON.stringify({ hooks: Object.keys(hooks).sort(), command, ...calls }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: cannot load the installed module")
def test_the_installed_file_runs_the_packages_modules_with_the_pinned_interpreter(project: Path):
    main(["opencode", "install", "--project", str(project)])
    done = run_node(LOAD_AND_CALL, plugin_file(project).as_uri(), str(project))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "experimental.chat.messages.transform" in out["hooks"] and "command.execute.before" in out["hooks"]
    assert out["command"] == [sys.executable, "-m", "dcp_plugin.adapters.bridge"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: cannot load the installed module")
def test_an_installed_file_whose_modules_are_gone_leaves_opencode_working_and_says_why(project: Path, tmp_path: Path):
    """The package was uninstalled or moved after `dcp opencode install`: the plugin loads, prunes nothing, reports."""
    plugin_file(project).parent.mkdir(parents=True)
    plugin_file(project).write_text(inst.render_shim(sys.executable, shim_dir=tmp_path / "gone" / "shim"))
    done = run_node(LOAD_AND_CALL, plugin_file(project).as_uri(), str(project))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["hooks"] == ["experimental.chat.messages.transform"]
    [logged] = out["logs"]
    assert logged["level"] == "error"
    assert "pruning is off" in logged["message"] and (tmp_path / "gone" / "shim").as_uri() in logged["message"]
    assert "dcp opencode install" in logged["message"]
    assert [t["message"] for t in out["toasts"]] == [logged["message"]]


def test_uninstall_removes_the_plugins_folder_it_emptied_and_names_what_opencode_left(
    project: Path, capsys: pytest.CaptureFixture[str]
):
    main(["opencode", "install", "--project", str(project)])
    config_dir = plugin_file(project).parent.parent
    (config_dir / "package.json").write_text('{"dependencies": {"@opencode-ai/plugin": "*"}}')
    (config_dir / "node_modules").mkdir()
    capsys.readouterr()
    assert main(["opencode", "uninstall", "--project", str(project)]) == 0
    assert not plugin_file(project).parent.exists()
    out = capsys.readouterr().out
    assert f"OpenCode's own files stay in {config_dir} (package.json, node_modules)" in out


def test_install_says_the_first_start_of_opencode_is_slow_and_why(project: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["opencode", "install", "--project", str(project)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "blank screen for 30-60 s" in out and "@opencode-ai/plugin" in out

"""Runs the real OpenCode binary offline in an isolated temp project against a fake provider."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO_ROOT / ".ci" / "install-opencode"
# The install script caches the binary under the user's cache dir (shared by every clone). Tests
# point HOME and XDG_CACHE_HOME at temp dirs, so run it with the environment pytest started with.
_CALLER_ENV = dict(os.environ)
PINNED_VERSION = "1.18.33"
PROVIDER_ID = "fake"
MODEL_ID = "fake-model"
HELLO_TEXT = "Hello from hello.txt\nline two: SECRET-CONTENT-1234\n"

# Env vars that keep OpenCode from reaching the network or the real user's state.
DISABLE_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
}
# Only these are inherited from the caller; everything else (API keys, the real HOME) stays out.
INHERITED_ENV = ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "DCP_PYTHON", "PYTHONPATH", "VIRTUAL_ENV")

# OpenCode installs @opencode-ai/plugin into each config dir before loading any plugin and waits
# for it (up to 75 s offline). It only compares dependency names, so these files make it skip.
_SEED_PACKAGE = {"dependencies": {"@opencode-ai/plugin": "*"}}
_SEED_LOCK = {"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}


class OpencodeUnavailable(RuntimeError):
    """The pinned binary could not be installed; the message says why (tests skip with it)."""


def find_opencode() -> Path:
    """The pinned binary: $OPENCODE_BIN if set, else whatever `.ci/install-opencode` installs.

    The script keeps the download in ``${XDG_CACHE_HOME:-~/.cache}/dcp-plugin/opencode-<version>``
    (``DCP_CACHE_DIR`` or ``OPENCODE_INSTALL_DIR`` move it), outside the clone.
    """
    explicit = os.environ.get("OPENCODE_BIN")
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise OpencodeUnavailable(f"OPENCODE_BIN={explicit} is not an executable file")
        return path
    try:
        proc = subprocess.run(
            ["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=300, check=False, env=_CALLER_ENV
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OpencodeUnavailable(f"running {INSTALL_SCRIPT.name} failed: {exc}") from exc
    out = proc.stdout.strip()
    if proc.returncode != 0 or not out:
        reason = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "no binary path printed"
        raise OpencodeUnavailable(f"opencode-ai@{PINNED_VERSION} unavailable: {reason}")
    return Path(out.splitlines()[-1])


@dataclass
class RunResult:
    """What one `opencode run` produced."""

    returncode: int
    stdout: str
    stderr: str
    events: list[dict[str, Any]]

    @property
    def session_id(self) -> str | None:
        for event in self.events:
            sid = event.get("sessionID") or (event.get("part") or {}).get("sessionID")
            if sid:
                return str(sid)
        return None

    def texts(self) -> list[str]:
        """The text parts OpenCode printed as JSON events."""
        return [
            e["part"]["text"]
            for e in self.events
            if e.get("type") == "text" and isinstance(e.get("part"), dict) and "text" in e["part"]
        ]


def parse_events(stdout: str) -> list[dict[str, Any]]:
    """JSON-line events of `--format json`; other lines are ignored."""
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return events


def seed_plugin_dir(directory: Path) -> None:
    """Make OpenCode believe @opencode-ai/plugin is installed in `directory` (skips a long stall)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "node_modules").mkdir(exist_ok=True)
    (directory / "package.json").write_text(json.dumps(_SEED_PACKAGE))
    (directory / "package-lock.json").write_text(json.dumps(_SEED_LOCK))


@dataclass
class OpencodeProject:
    """An isolated project and home for one OpenCode run; `root` is a fresh temp dir."""

    binary: Path
    root: Path
    provider_url: str
    extra_config: dict[str, Any] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def config_home(self) -> Path:
        return self.home / ".config"

    @property
    def data_home(self) -> Path:
        return self.home / ".local" / "share"

    @property
    def plugins_dir(self) -> Path:
        return self.project / ".opencode" / "plugins"

    def env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in INHERITED_ENV if k in os.environ}
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.config_home),
            XDG_DATA_HOME=str(self.data_home),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            **DISABLE_ENV,
        )
        env.update(self.extra_env)
        return env

    def config(self) -> dict[str, Any]:
        model = f"{PROVIDER_ID}/{MODEL_ID}"
        config: dict[str, Any] = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": model,
            "small_model": model,
            "permission": {"edit": "allow", "bash": "allow"},
            "provider": {
                PROVIDER_ID: {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Fake provider",
                    "options": {"baseURL": self.provider_url, "apiKey": "x"},
                    "models": {
                        MODEL_ID: {
                            "name": "Fake model",
                            "tool_call": True,
                            "limit": {"context": 128000, "output": 4096},
                        }
                    },
                }
            },
        }
        config.update(self.extra_config)
        return config

    def create(self) -> OpencodeProject:
        self.project.mkdir(parents=True, exist_ok=True)
        for d in (self.config_home, self.data_home, self.home / ".cache", self.home / ".local" / "state"):
            d.mkdir(parents=True, exist_ok=True)
        (self.project / "hello.txt").write_text(HELLO_TEXT)
        (self.project / "opencode.json").write_text(json.dumps(self.config(), indent=2))
        seed_plugin_dir(self.config_home / "opencode")
        seed_plugin_dir(self.project / ".opencode")
        return self

    def add_plugin(self, filename: str, source: str) -> Path:
        """Drop a JS plugin into `<project>/.opencode/plugins/` (OpenCode loads every file there)."""
        self.plugins_dir.mkdir(parents=True, exist_ok=True)
        path = self.plugins_dir / filename
        path.write_text(source)
        return path

    def add_command(self, name: str, template: str, description: str = "") -> Path:
        """Register a custom slash command as `<project>/.opencode/command/<name>.md`."""
        directory = self.project / ".opencode" / "command"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{name}.md"
        path.write_text(f"---\ndescription: {description or name}\n---\n{template}\n")
        return path

    def _run(
        self, args: list[str], timeout: float, stdin: str | None = None, stderr_path: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Runs OpenCode; its stderr goes to ``stderr_path`` when given (readable while it runs)."""
        with contextlib.ExitStack() as stack:
            sink = stack.enter_context(stderr_path.open("w", encoding="utf-8")) if stderr_path else subprocess.PIPE
            proc = subprocess.run(
                [str(self.binary), *args],
                cwd=self.project,
                env=self.env(),
                input=stdin if stdin is not None else "",
                stdout=subprocess.PIPE,
                stderr=sink,
                text=True,
                timeout=timeout,
                check=False,
            )
        if stderr_path is not None:
            proc.stderr = stderr_path.read_text(encoding="utf-8", errors="replace")
        return proc

    def run(
        self,
        words: list[str],
        *,
        pure: bool = False,
        command: str | None = None,
        session: str | None = None,
        timeout: float = 90,
        stderr_path: Path | None = None,
    ) -> RunResult:
        """`opencode run --format json [--pure] [--command C] [--session S] words...` in the project.

        Words go as separate arguments: one quoted argument would reach the model wrapped in quotes.
        With ``stderr_path``, stderr is written there as it comes (a test can wait on a line).
        """
        args = ["run", "--format", "json"]
        if pure:
            args.append("--pure")
        if command:
            args += ["--command", command]
        if session:
            args += ["--session", session]
        proc = self._run([*args, *words], timeout, stderr_path=stderr_path)
        return RunResult(proc.returncode, proc.stdout, proc.stderr, parse_events(proc.stdout))

    def export(self, session_id: str, timeout: float = 60, *, pure: bool = True) -> dict[str, Any]:
        """`opencode export <sessionID> [--pure]`: the stored session as `{info, messages}`.

        Its stdout goes to a file: into a pipe, OpenCode 1.18.33 exits before writing more than
        64 KiB of it (a session with a few large tool outputs came back cut off). ``pure``: without
        plugins, as `dcp opencode context` reads a session (OpenCode loads them for an export too,
        and the dcp plugin would start a bridge that reading does not need).
        """
        out = self.root / f"export-{session_id}.json"
        with out.open("w", encoding="utf-8") as sink:
            proc = subprocess.run(
                [str(self.binary), "export", session_id, *(["--pure"] if pure else [])],
                cwd=self.project,
                env=self.env(),
                input="",
                stdout=sink,
                stderr=subprocess.PIPE,
                text=True,
                timeout=timeout,
                check=False,
            )
        if proc.returncode != 0:
            raise RuntimeError(f"opencode export {session_id} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        text = out.read_text(encoding="utf-8")
        # Some versions print a status line before the JSON document.
        return json.loads(text[text.index("{") :])


def install_plugin(project: Path) -> subprocess.CompletedProcess[str]:
    """`dcp opencode install` into the project, pinned to the interpreter running the tests (this checkout)."""
    return subprocess.run(
        [sys.executable, "-m", "dcp_plugin.cli.main", "opencode", "install"]
        + ["--project", str(project), "--python", sys.executable],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        check=False,
    )


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The `role: "tool"` messages of one provider request, in order."""
    return [m for m in request.get("messages", []) if m.get("role") == "tool"]


def tool_result_text(message: dict[str, Any]) -> str:
    """A tool message's content as text (it may be a string or a list of content parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return json.dumps(content)


def tool_call_arguments(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """call id -> parsed arguments of every assistant tool call in one provider request."""
    calls: dict[str, dict[str, Any]] = {}
    for m in request.get("messages", []):
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            try:
                calls[call["id"]] = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                calls[call["id"]] = {"_raw": fn.get("arguments")}
    return calls


def results_by_call(request: dict[str, Any]) -> dict[str, str]:
    """tool_call_id -> result text of every tool result in one provider request."""
    return {m.get("tool_call_id", ""): tool_result_text(m) for m in tool_results(request)}


def export_tool_parts(exported: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool parts of an `opencode export` document, oldest first."""
    return [p for m in exported.get("messages", []) for p in m.get("parts", []) if p.get("type") == "tool"]


def export_ignored_texts(exported: dict[str, Any]) -> list[str]:
    """Texts of user parts marked `ignored` (replies a plugin stored without a model turn)."""
    return [
        p.get("text", "")
        for m in exported.get("messages", [])
        if m.get("info", {}).get("role") == "user"
        for p in m.get("parts", [])
        if p.get("type") == "text" and p.get("ignored")
    ]

"""Headless Chromium driven over the DevTools protocol: load a page, collect its console errors, evaluate in it."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Every wait is bounded: a browser that hangs fails the test instead of the suite.
START_SECONDS = 30.0
LOAD_SECONDS = 30.0
NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_binary() -> str | None:
    """The Chromium on PATH (Debian's `chromium` package), None when there is none."""
    return next((found for name in NAMES if (found := shutil.which(name))), None)


def missing_reason() -> str | None:
    """Why the browser tests cannot run here, None when they can."""
    if chromium_binary() is None:
        return "headless Chromium not found (Debian: apt-get install chromium; .ci/run installs it)"
    try:
        import websockets.sync.client  # noqa: F401
    except ImportError:
        return "the websockets package is not installed (pip install -e '.[test]' installs it)"
    return None


@dataclass
class Page:
    """One loaded page: what its console reported as errors, and a way to evaluate JavaScript in it."""

    socket: Any
    errors: list[str] = field(default_factory=list)
    next_id: int = 0

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + LOAD_SECONDS
        while time.monotonic() < deadline:
            message = json.loads(self.socket.recv(timeout=LOAD_SECONDS))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._event(message)
        raise TimeoutError(method)

    def wait_for(self, event: str) -> None:
        deadline = time.monotonic() + LOAD_SECONDS
        while time.monotonic() < deadline:
            message = json.loads(self.socket.recv(timeout=LOAD_SECONDS))
            self._event(message)
            if message.get("method") == event:
                return
        raise TimeoutError(event)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(str(details.get("exception", {}).get("description") or details.get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(arg.get("value", arg.get("description"))) for arg in params.get("args", [])))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(str(params["entry"].get("text")))

    def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` in the page (returned by value: JSON-like data)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        import base64

        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))


@contextmanager
def loaded(path: Path, width: int = 1100, height: int = 1400) -> Iterator[Page]:
    """``path`` loaded in a fresh headless Chromium, with the console watched from before the load."""
    from websockets.sync.client import connect

    binary = chromium_binary()
    assert binary is not None, missing_reason()
    # Chromium's helper processes can still be writing the profile when the browser itself has
    # exited: a file left behind in a temporary folder must not fail the test that used it.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0",
             f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + START_SECONDS
            while not (port_file.exists() and port_file.read_text().strip()) and time.monotonic() < deadline:
                time.sleep(0.1)
            port = port_file.read_text().split()[0]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=START_SECONDS) as reply:
                targets = json.load(reply)
            url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
            with connect(url, max_size=None, open_timeout=START_SECONDS) as socket:
                page = Page(socket)
                for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
                    page.send(domain)
                page.send("Page.navigate", url=path.resolve().as_uri())
                page.wait_for("Page.loadEventFired")
                yield page
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

"""A minimal Python client of the bridge process over pipes (tests, benchmarks, debugging)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from typing import IO, Any, cast


class BridgeClient:
    """Starts `python -m dcp_plugin.adapters.bridge` and exchanges request/reply lines with it, in order."""

    def __init__(
        self,
        command: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | None = subprocess.PIPE,
    ) -> None:
        self.proc = subprocess.Popen(
            list(command or [sys.executable, "-m", "dcp_plugin.adapters.bridge"]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=cwd,
        )
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.raw_lines: list[bytes] = []

    @property
    def stdin(self) -> IO[bytes]:
        return cast(IO[bytes], self.proc.stdin)

    def send_line(self, line: bytes) -> None:
        self.stdin.write(line if line.endswith(b"\n") else line + b"\n")
        self.stdin.flush()

    def read_reply(self) -> dict[str, Any]:
        """The next reply line; event lines on the way are kept in ``events``."""
        stdout = cast(IO[bytes], self.proc.stdout)
        while True:
            line = stdout.readline()
            if not line:
                raise EOFError(f"the bridge closed its stdout (exit code {self.proc.poll()})")
            self.raw_lines.append(line)
            message = json.loads(line)
            if "event" in message:
                self.events.append(message)
                continue
            return cast(dict[str, Any], message)

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        self._next_id += 1
        self.send_line(json.dumps({"id": self._next_id, "op": op, **fields}).encode())
        return self.read_reply()

    def close(self, timeout: float = 10) -> int:
        """Close stdin (as OpenCode does on exit) and wait for the process; its exit code."""
        try:
            self.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def stderr_text(self) -> str:
        """Everything the process wrote to stderr (only after it exited)."""
        err = self.proc.stderr
        return err.read().decode("utf-8", "replace") if err is not None else ""

    def __enter__(self) -> BridgeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.close()

"""The sessions a benchmark runs on, and the fixed new message each warm request appends."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dcp_plugin.model.messages import session_id_of
from dcp_plugin.replay.sessionfile import load_session
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session

GENERATED_SEED = 1
_TARGET_LINES = 80


@dataclass
class BenchSession:
    """A history of ``base`` messages followed by the messages the warm requests append one by one."""

    name: str
    source: str
    messages: list[dict[str, Any]]
    base: int
    directory: str

    @property
    def extra(self) -> int:
        """How many warm requests the session has room for."""
        return len(self.messages) - self.base

    @property
    def tool_calls(self) -> int:
        """Tool parts in the base history."""
        return sum(1 for m in self.messages[: self.base] for p in m["parts"] if p.get("type") == "tool")


def next_step(index: int, session_id: str, directory: str) -> dict[str, Any]:
    """One agent step that re-reads the same file: the same new work whatever the history.

    Each one is a new message with one completed `read` whose output is a few KB, so every
    warm request syncs one message, signs one call and decides one duplicate (the previous read).
    """
    mid = f"msg_bench_{index:06d}"
    path = f"{directory}/src/bench_target.py"
    body = "\n".join(f"{n}: value = compute(index, {n})  # line {n} of the benchmark target" for n in range(1, _TARGET_LINES + 1))
    output = f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n\n(End of file)\n</content>"

    def part(n: int, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "id": f"prt_bench_{index:06d}_{n}", "sessionID": session_id, "messageID": mid}

    return {
        "info": {"id": mid, "sessionID": session_id, "role": "assistant", "time": {"created": index}},
        "parts": [
            part(0, {"type": "step-start"}),
            part(1, {
                "type": "tool",
                "tool": "read",
                "callID": f"call_bench_{index:06d}",
                "state": {
                    "status": "completed",
                    "input": {"filePath": path},
                    "output": output,
                    "title": path,
                    "metadata": {},
                    "time": {"start": index, "end": index + 1},
                },
            }),
            part(2, {"type": "step-finish", "reason": "tool-calls", "cost": 0}),
        ],
    }


def with_steps(name: str, source: str, history: list[dict[str, Any]], extra: int, directory: str) -> BenchSession:
    """``history`` followed by ``extra`` fixed agent steps."""
    session_id = session_id_of(None, history)
    steps = [next_step(i, session_id, directory) for i in range(1, extra + 1)]
    return BenchSession(name, source, history + steps, len(history), directory)


def generated(size: int, extra: int, seed: int = GENERATED_SEED, busy: bool = False) -> BenchSession:
    """A generated session of ``size`` messages, then ``extra`` fixed steps.

    ``busy``: the heavier shape (about 1.2 tool calls per message, long outputs).
    """
    data = generate_session(size, seed=seed, busy=busy)
    name, source = (f"busy {size:,}", "busy") if busy else (f"generated {size:,}", "generated")
    return with_steps(name, source, data["messages"], extra, DEFAULT_DIRECTORY)


def read_recorded(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(info, messages) of a recorded session; SessionFileError or ValueError says what is wrong with the file."""
    info, messages = load_session(path)
    if not messages:
        raise ValueError(f"{path}: the session has no messages")
    return info, messages


def recorded(path: Path, extra: int) -> BenchSession:
    """A recorded session, then ``extra`` fixed steps."""
    info, messages = read_recorded(path)
    directory = info.get("directory")
    return with_steps(path.name, "file", messages, extra, directory if isinstance(directory, str) and directory else DEFAULT_DIRECTORY)

"""A host that offers the model the plugin's tools, driven step by step the way OpenCode drives it."""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from typing import Any

from dcp_plugin.host.runtime import Runtime, StaticConfig, ToolResult
from dcp_plugin.pipeline.ids import short_id
from dcp_plugin.pipeline.modeltools.texts import LIST_HEAD
from tests.support.helpers import (
    PROJECT,
    SESSION,
    assistant,
    call,
    hook_transform,
    make_config,
    tool_part,
    tool_parts,
    user,
)

BIG = "line of a file that is long enough to be worth pruning\n" * 40  # ~1,100 tokens as JSON
_calls = itertools.count(1)


@dataclass
class ToolHost:
    """The stored history, and a runtime that was asked for the tool definitions (as OpenCode's shim does)."""

    runtime: Runtime
    messages: list[dict[str, Any]] = field(default_factory=list)
    sent: list[list[dict[str, Any]]] = field(default_factory=list)

    @classmethod
    def start(cls, offered: bool = True, **config: Any) -> ToolHost:
        runtime = Runtime(PROJECT, StaticConfig(make_config(**config)))
        if offered:
            runtime.tool_definitions()
        return cls(runtime)

    def add(self, *messages: dict[str, Any]) -> ToolHost:
        self.messages.extend(messages)
        return self

    def read(self, path: str, output: str = BIG) -> str:
        """The model reads a file (one step); the id of the call."""
        message = call("read", {"filePath": f"{PROJECT}/{path}"}, output=output)
        self.messages.append(message)
        return ident(message)

    def request(self, model: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """One model request: a fresh copy of the history, pruned in place, as the provider gets it."""
        out = copy.deepcopy(self.messages)
        hook_transform(self.runtime, {"model": model} if model else {}, {"messages": out})
        self.sent.append(out)
        return out

    def use(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """The model calls a tool in a new step: the host runs it, then stores the call with its result."""
        self.request()
        call_id = f"call_t{next(_calls):05d}"
        result = self.runtime.execute_tool(SESSION, name, arguments, copy.deepcopy(self.messages), call_id=call_id)
        assert result is not None
        part = (
            tool_part(name, arguments, status="error", error=result.output, call_id=call_id)
            if result.error
            else tool_part(name, arguments, output=result.output, call_id=call_id)
        )
        self.messages.append(assistant(part))
        return result

    def outputs(self, sent: list[dict[str, Any]] | None = None) -> list[Any]:
        """The tool outputs of the latest request (or of ``sent``), in order."""
        return [p["state"].get("output") for p in tool_parts(sent if sent is not None else self.sent[-1])]


def reads(host: ToolHost, count: int, start: int = 0, output: str = BIG) -> list[str]:
    """``count`` reads of different files, one request after each (as the agent loop makes them); their ids."""
    ids = []
    for n in range(start, start + count):
        ids.append(host.read(f"f{n}.py", output + str(n)))
        host.request()
    return ids


def ident(message: dict[str, Any]) -> str:
    """The id the plugin gives the only tool call of a message (no collision in these small sessions)."""
    [part] = tool_parts([message])
    return short_id(part["callID"])


def lists(messages: list[dict[str, Any]]) -> list[str]:
    """Every prunable list appended to a tool output in ``messages``, as its text from the head on."""
    found = []
    for part in tool_parts(messages):
        output = part["state"].get("output")
        if isinstance(output, str) and LIST_HEAD in output:
            found.append(output[output.index(LIST_HEAD) :])
    return found


def written(host: ToolHost) -> list[int]:
    """After each request, how many lists were written so far (a list taken out again still counts)."""
    seen: set[tuple[str, str]] = set()
    counts = []
    for sent in host.sent:
        for part in tool_parts(sent):
            output = part["state"].get("output")
            if isinstance(output, str) and LIST_HEAD in output:
                seen.add((part["callID"], output[output.index(LIST_HEAD) :]))
        counts.append(len(seen))
    return counts


def every_list(host: ToolHost) -> list[str]:
    """Every list written in the requests so far, oldest first."""
    found: dict[tuple[str, str], None] = {}
    for sent in host.sent:
        for part in tool_parts(sent):
            output = part["state"].get("output")
            if isinstance(output, str) and LIST_HEAD in output:
                found[(part["callID"], output[output.index(LIST_HEAD) :])] = None
    return [text for _, text in found]


__all__ = ["BIG", "PROJECT", "SESSION", "ToolHost", "every_list", "ident", "lists", "reads", "user", "written"]

"""The LangChain middleware in a real ``create_agent`` loop: real tools, a scripted chat model, what the model receives."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="LangChain is not installed: pip install 'dcp-plugin[langchain]'")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import ToolException, tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from pydantic import Field  # noqa: E402

from dcp_plugin.adapters.formats import Pruner  # noqa: E402
from dcp_plugin.adapters.formats.langchain_middleware import DcpMiddleware  # noqa: E402
from dcp_plugin.host.runtime import Runtime  # noqa: E402
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, FAILED_INPUT_PLACEHOLDER, SUPERSEDED_PLACEHOLDER
from tests.support.helpers import make_config, named  # noqa: E402

LONG_COMMAND = "pytest " + " ".join(f"-k case_{n}" for n in range(30))
NEW_CONTENT = "def b():\n    return 2\n" * 20


class ScriptedModel(GenericFakeChatModel):
    """A fake chat model that answers from a script and records every message list it was sent."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.received.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


def calls(*specs: tuple[str, str, dict[str, Any]]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for i, n, a in specs])


def make_tools(root: Path) -> list[Any]:
    # OpenCode's tool and argument names, which dcp's strategies know.
    @tool("read")
    def read_file(filePath: str) -> str:  # noqa: N803
        """Read a file."""
        return (root / filePath).read_text()

    @tool("write")
    def write_file(filePath: str, content: str) -> str:  # noqa: N803
        """Write a file."""
        (root / filePath).write_text(content)
        return f"wrote {filePath}"

    @tool("bash")
    def run_tests(command: str) -> str:
        """Run a command."""
        raise ToolException("tests crashed: no module named pytest")

    run_tests.handle_tool_error = True
    return [read_file, write_file, run_tests]


def script() -> ScriptedModel:
    return ScriptedModel(messages=iter([
        calls(("c1", "read", {"filePath": "a.py"})),
        calls(("c2", "read", {"filePath": "a.py"})),  # the same read again
        calls(("c3", "bash", {"command": LONG_COMMAND})),  # fails
        calls(("c4", "write", {"filePath": "b.py", "content": NEW_CONTENT})),
        calls(("c5", "read", {"filePath": "b.py"})),  # the write read back
        AIMessage(content="Done."),
        AIMessage(content="You're welcome."),
    ]))


def agent_for(tmp_path: Path, model: ScriptedModel) -> tuple[Any, Pruner]:
    (tmp_path / "a.py").write_text("def a():\n    return 1\n" * 40)
    config = make_config(**{"strategies": {"supersedeWrites": {"enabled": True}, "purgeErrors": {"turns": 1}}})
    pruner = Pruner(Runtime(str(tmp_path), config))
    agent = create_agent(model, make_tools(tmp_path), middleware=[DcpMiddleware(pruner)], checkpointer=InMemorySaver())
    return agent, pruner


def tool_message(messages: list[BaseMessage], call_id: str) -> ToolMessage:
    return next(m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id)


def call_args(messages: list[BaseMessage], call_id: str) -> dict[str, Any]:
    return next(c["args"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls if c["id"] == call_id)


def test_the_model_receives_pruned_requests_while_the_graph_state_keeps_everything(tmp_path: Path) -> None:
    model = script()
    agent, pruner = agent_for(tmp_path, model)
    thread = {"configurable": {"thread_id": "thread-1"}}
    agent.invoke({"messages": [HumanMessage("Fix a.py and b.py")]}, thread)
    agent.invoke({"messages": [HumanMessage("Thanks")]}, thread)

    assert len(model.received) == 7
    # Third request: the first read of a.py was repeated, so its output is a placeholder.
    third = model.received[2]
    assert tool_message(third, "c1").content == named(DUPLICATE_PLACEHOLDER, "c1")
    assert tool_message(third, "c2").content == (tmp_path / "a.py").read_text()
    # The failed call is answered with its error and kept while it is recent.
    assert tool_message(model.received[3], "c3").status == "error"
    assert call_args(model.received[5], "c3") == {"command": LONG_COMMAND}
    # The write was read back in full: its content input is replaced, its path kept.
    sixth = model.received[5]
    assert call_args(sixth, "c4") == {"filePath": "b.py", "content": named(SUPERSEDED_PLACEHOLDER, "c4")}
    # A turn later, the failed call's input is purged; its error stays.
    last = model.received[6]
    assert call_args(last, "c3") == {"command": named(FAILED_INPUT_PLACEHOLDER, "c3")}
    assert "tests crashed" in str(tool_message(last, "c3").content)

    state = agent.get_state(thread).values["messages"]
    assert tool_message(state, "c1").content == (tmp_path / "a.py").read_text()
    assert call_args(state, "c4") == {"filePath": "b.py", "content": NEW_CONTENT}
    assert call_args(state, "c3") == {"command": LONG_COMMAND}
    assert (tmp_path / "b.py").read_text() == NEW_CONTENT
    assert pruner.runtime.view("thread-1") is not None


def test_the_async_agent_is_pruned_the_same_way(tmp_path: Path) -> None:
    model = script()
    agent, pruner = agent_for(tmp_path, model)
    thread = {"configurable": {"thread_id": "async-thread"}}
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("Fix a.py")]}, thread))
    assert tool_message(model.received[2], "c1").content == named(DUPLICATE_PLACEHOLDER, "c1")
    assert pruner.runtime.view("async-thread") is not None


def test_a_failing_pruner_sends_the_request_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = script()
    agent, pruner = agent_for(tmp_path, model)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(pruner.runtime, "prepare", broken)
    agent.invoke({"messages": [HumanMessage("Fix a.py")]}, {"configurable": {"thread_id": "t"}})
    assert tool_message(model.received[2], "c1").content == (tmp_path / "a.py").read_text()

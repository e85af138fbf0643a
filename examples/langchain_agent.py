"""A LangChain agent (`create_agent`) with dcp pruning every model request (`pip install 'dcp-plugin[langchain]'`).

    python examples/langchain_agent.py [FILE]                                  # offline, a scripted model
    DCP_EXAMPLE_MODEL=openai:gpt-4.1 python examples/langchain_agent.py [FILE]  # a real one (pip install langchain-openai)

The agent has one tool, `read`, and is asked to read FILE (this script by default) twice and
then answer; the second read makes the first one obsolete, so the model is sent a placeholder in
its place from then on, while the checkpointed history keeps both. Without DCP_EXAMPLE_MODEL a
scripted chat model stands in for a real one, so the example runs without a key or a network.
At the end it prints `/dcp context` for the thread.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from dcp_plugin.adapters.formats import Pruner
from dcp_plugin.adapters.formats.langchain_middleware import DcpMiddleware

THREAD_ID = "example-thread"


# OpenCode's tool and argument names, which dcp's strategies know (see README, "Tools").
@tool("read")
def read_file(filePath: str) -> str:  # noqa: N803 - the argument name dcp recognizes
    """Read a text file and return its content."""
    return Path(filePath).read_text(encoding="utf-8")


class ScriptedModel(GenericFakeChatModel):
    """Stands in for a real chat model: answers from a script and ignores the tool definitions."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def chat_model(target: str) -> BaseChatModel:
    """The model named by DCP_EXAMPLE_MODEL (`provider:model`), else one that reads ``target`` twice, then answers."""
    name = os.environ.get("DCP_EXAMPLE_MODEL")
    if name:
        from langchain.chat_models import init_chat_model

        return init_chat_model(name)
    lines = len(Path(target).read_text(encoding="utf-8").splitlines())

    def read(call_id: str) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"name": "read", "args": {"filePath": target}, "id": call_id, "type": "tool_call"}])

    return ScriptedModel(messages=iter([read("call_1"), read("call_2"), AIMessage(content=f"{target} has {lines} lines.")]))


def main() -> None:
    target = sys.argv[1] if len(sys.argv) > 1 else __file__
    pruner = Pruner()  # one per process; it reads your dcp.jsonc files
    agent = create_agent(chat_model(target), [read_file], middleware=[DcpMiddleware(pruner)], checkpointer=InMemorySaver())
    question = f"Read {target}, read it once more, then tell me how many lines it has."
    state = agent.invoke({"messages": [HumanMessage(question)]}, {"configurable": {"thread_id": THREAD_ID}})
    print(state["messages"][-1].content)
    print(pruner.command("context", session_id=THREAD_ID))


if __name__ == "__main__":
    main()

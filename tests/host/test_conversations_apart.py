"""Two conversations never share decisions, and a history edited in place is pruned as if read from scratch."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.adapters.formats import Pruner
from dcp_plugin.host.runtime import Runtime
from tests.support import format_scenarios as sc
from tests.support.helpers import make_config

CONFIG = make_config(strategies={"supersedeWrites": {"enabled": True}, "purgeErrors": {"turns": 1}})
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

RENDER = {"openai_chat": sc.openai_chat, "openai_responses": sc.openai_responses, "anthropic": sc.anthropic}
formats = pytest.mark.parametrize("name", sorted(RENDER))


def prune(pruner: Pruner, name: str, items: list[Any], session: str = "s") -> list[Any]:
    if name == "anthropic":
        return pruner.anthropic(items, session_id=session, system=sc.SYSTEM)
    result: list[Any] = getattr(pruner, name)(items, session_id=session)
    return result


def from_scratch(name: str, items: list[Any]) -> list[Any]:
    return prune(Pruner(Runtime("/proj", CONFIG)), name, copy.deepcopy(items))


def chat_reads(paths: list[str]) -> list[dict[str, Any]]:
    """A Chat Completions history reading ``paths`` in turn, with call ids call_0, call_1, ..."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    for n, path in enumerate(paths):
        call = {"id": f"call_{n}", "type": "function", "function": {"name": "read", "arguments": json.dumps({"filePath": path})}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": f"contents of {path}\n" + "x" * 800})
    return [*messages, {"role": "assistant", "content": "done"}, {"role": "user", "content": "more"}]


def test_a_read_edited_in_place_into_another_file_no_longer_makes_the_first_read_a_duplicate() -> None:
    pruner = Pruner(Runtime("/proj", CONFIG))
    history = chat_reads(["/proj/a.py", "/proj/a.py"])
    assert prune(pruner, "openai_chat", history)[3]["content"].startswith("[dcp:")
    history[4]["tool_calls"][0]["function"]["arguments"] = json.dumps({"filePath": "/proj/b.py"})
    history[5]["content"] = "contents of /proj/b.py\n" + "x" * 800
    result = prune(pruner, "openai_chat", history)
    assert result[3]["content"].startswith("contents of /proj/a.py")
    assert result == from_scratch("openai_chat", history)


def test_a_history_replaced_by_items_with_the_same_call_ids_is_pruned_from_scratch() -> None:
    pruner = Pruner(Runtime("/proj", CONFIG))
    prune(pruner, "openai_chat", chat_reads(["/proj/a.py", "/proj/a.py"]))
    other = chat_reads(["/proj/a.py", "/proj/c.py"])
    assert prune(pruner, "openai_chat", other) == from_scratch("openai_chat", other)


def test_a_host_that_replaces_items_gets_a_from_scratch_run_without_the_copy() -> None:
    pruner = Pruner(Runtime("/proj", CONFIG), edits_in_place=False)
    history = chat_reads(["/proj/a.py", "/proj/a.py"])
    prune(pruner, "openai_chat", history)
    history[4:6] = chat_reads(["/proj/a.py", "/proj/b.py"])[4:6]  # new items, the same call ids
    assert prune(pruner, "openai_chat", history) == from_scratch("openai_chat", history)


@pytest.mark.slow  # generated histories through whole runtimes
@formats
@SETTINGS
@given(first=sc.conversations(), second=sc.conversations())
def test_a_history_edited_in_place_equals_a_from_scratch_run(name: str, first: sc.Conversation, second: sc.Conversation) -> None:
    pruner = Pruner(Runtime("/proj", CONFIG))
    held = RENDER[name](first)
    prune(pruner, name, held)
    edited = RENDER[name](second)  # numbered like the first: the same call ids, other content
    for index, item in enumerate(edited[: len(held)]):
        held[index].clear()
        held[index].update(item)  # the same dict objects, changed in place
    held.extend(edited[len(held):])
    del held[len(edited):]
    assert prune(pruner, name, held) == from_scratch(name, held)


@pytest.mark.slow  # generated histories through whole runtimes
@formats
@SETTINGS
@given(first=sc.conversations(), second=sc.conversations(), order=st.randoms(use_true_random=False))
def test_interleaved_conversations_under_one_session_id_never_share_decisions(
    name: str, first: sc.Conversation, second: sc.Conversation, order: Any
) -> None:
    pruner = Pruner(Runtime("/proj", CONFIG))
    queues = [[RENDER[name](r) for r in sc.requests(c)] for c in (first, second)]
    while any(queues):
        queue = order.choice([q for q in queues if q])
        request = queue.pop(0)
        assert prune(pruner, name, request) == from_scratch(name, request)


# -- LangChain without a thread id ------------------------------------------------------------


def langchain_request(messages: list[Any]) -> Any:
    """What DcpMiddleware reads of a ModelRequest made outside a checkpointed graph: messages, no thread id."""
    return SimpleNamespace(messages=messages, runtime=None, model=None, override=lambda **kw: SimpleNamespace(**kw))


def langchain_reads(first_text: str, paths: list[str], ident: str | None = None) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    messages: list[Any] = [HumanMessage(first_text, id=ident)]
    for n, path in enumerate(paths):
        messages.append(AIMessage("", tool_calls=[{"name": "read", "args": {"filePath": path}, "id": f"c{n}", "type": "tool_call"}]))
        messages.append(ToolMessage(f"contents of {path}\n" + "x" * 800, tool_call_id=f"c{n}"))
    return [*messages, AIMessage("done"), HumanMessage("more")]


@pytest.mark.parametrize("ident", [None, "first"], ids=["no ids", "ids"])
def test_langchain_conversations_without_a_thread_id_get_sessions_of_their_own(ident: str | None) -> None:
    pytest.importorskip("langchain.agents", reason="LangChain is not installed: pip install 'dcp-plugin[langchain]'")
    from dcp_plugin.adapters.formats.langchain_middleware import DcpMiddleware, thread_id

    first = langchain_reads("fix a.py", ["/proj/a.py", "/proj/a.py"], ident and f"{ident}-1")
    second = langchain_reads("fix b.py", ["/proj/a.py", "/proj/b.py"], ident and f"{ident}-2")
    assert thread_id(langchain_request(first)) != thread_id(langchain_request(second))
    middleware = DcpMiddleware(Pruner(Runtime("/proj", CONFIG)))
    for _ in range(3):
        assert str(middleware.pruned(langchain_request(first)).messages[2].content).startswith("[dcp:")
        assert str(middleware.pruned(langchain_request(second)).messages[2].content).startswith("contents of /proj/a.py")


def test_langchain_conversations_that_start_alike_still_never_share_decisions() -> None:
    pytest.importorskip("langchain.agents", reason="LangChain is not installed: pip install 'dcp-plugin[langchain]'")
    from dcp_plugin.adapters.formats.langchain_middleware import DcpMiddleware

    first = langchain_reads("fix it", ["/proj/a.py", "/proj/a.py"])
    second = langchain_reads("fix it", ["/proj/a.py", "/proj/b.py"])
    middleware = DcpMiddleware(Pruner(Runtime("/proj", CONFIG)))
    for _ in range(3):
        assert str(middleware.pruned(langchain_request(first)).messages[2].content).startswith("[dcp:")
        assert str(middleware.pruned(langchain_request(second)).messages[2].content).startswith("contents of /proj/a.py")

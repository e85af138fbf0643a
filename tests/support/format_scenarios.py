"""One abstract agent conversation rendered in every message format: OpenCode's, OpenAI Chat, Responses, Anthropic.

Tests generate conversations with hypothesis (:func:`conversations`) and compare what the
plugin does to each rendering; the OpenCode rendering is the reference the pipeline was
built on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
SYSTEM = "You are a coding agent. Use the tools."


@dataclass
class Call:
    id: str
    tool: str
    input: dict[str, Any]
    error: bool = False
    output: str = ""
    image: bool = False


@dataclass
class Step:
    reasoning: str | None = None  # None, "plain" or "signed"
    text: str | None = None
    calls: list[Call] = field(default_factory=list)


@dataclass
class Turn:
    text: str
    image: bool = False
    steps: list[Step] = field(default_factory=list)


Conversation = list[Turn]

_PATHS = ["/proj/a.py", "/proj/b.py", "/proj/src/c.py"]
_COMMANDS = ["pytest -q", "ls", "git status"]


# Hypothesis pays for every draw (about 35 µs), and generating was about half of the tests' time:
# a call's tool, input, error flag, output size and image flag are two draws from lists built once
# (repeated entries stand for the weights: read two times in five, an error one time in four, an
# image on one successful read in six); a write's length is a third.
_INPUTS = (
    [("read", {"filePath": path}) for path in _PATHS] * 4
    + [("bash", {"command": command, "description": "run"}) for command in _COMMANDS] * 2
    + [("grep", {"pattern": pattern, "path": "/proj"}) for pattern in ("TODO", "def ")] * 3
    + [("write", {"filePath": path}) for path in _PATHS] * 2
)
_TOOL_INPUTS = st.sampled_from([(tool, inp, error) for error in (False, False, False, True) for tool, inp in _INPUTS])
_OUTPUTS = st.sampled_from([(size, image) for image in [False] * 5 + [True] for size in (5, 60, 300, 900)])


@st.composite
def _call(draw: Any, number: int) -> Call:
    tool, tool_input, error = draw(_TOOL_INPUTS)
    tool_input = dict(tool_input)
    if tool == "write":
        tool_input["content"] = "print(1)\n" * draw(st.integers(1, 40))
    size, image = draw(_OUTPUTS)
    output = (f"failed: {tool} {number} " if error else f"{tool} result {number}\n") + "y" * size
    return Call(f"call_{number}", tool, tool_input, error, output, image and tool == "read" and not error)


@st.composite
def conversations(draw: Any, max_turns: int = 5) -> Conversation:
    """Conversations of user turns, each with agent steps of (parallel) tool calls and a final answer."""
    turns: Conversation = []
    number = 0
    for t in range(draw(st.integers(1, max_turns))):
        turn = Turn(f"task {t}: " + draw(st.sampled_from(["fix it", "read the code", "run the tests"])), draw(st.integers(0, 6)) == 0)
        for _ in range(draw(st.integers(0, 3))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                number += 1
                calls.append(draw(_call(number)))
            reasoning = draw(st.sampled_from([None, None, "plain", "signed"]))
            text = draw(st.sampled_from([None, None, "Let me look."]))
            turn.steps.append(Step(reasoning, text, calls))
        turn.steps.append(Step(draw(st.sampled_from([None, "signed"])), f"Done with task {t}."))
        turns.append(turn)
    return turns


# -- renderings -------------------------------------------------------------------------------


def opencode(conversation: Conversation, session: str = "ses_ref", errors: bool = True) -> list[dict[str, Any]]:
    """The reference: OpenCode's {info, parts}. ``errors=False``: failed calls look completed (formats without an error flag)."""
    messages: list[dict[str, Any]] = []
    for t, turn in enumerate(conversation):
        messages.append({"info": {"id": f"u{t}", "sessionID": session, "role": "user"},
                         "parts": [{"type": "text", "text": turn.text}]})
        for s, step in enumerate(turn.steps):
            parts: list[dict[str, Any]] = []
            if step.text:
                parts.append({"type": "text", "text": step.text})
            for call in step.calls:
                state: dict[str, Any] = {"status": "completed", "input": call.input, "output": call.output}
                if call.error and errors:
                    state = {"status": "error", "input": call.input, "error": call.output}
                parts.append({"type": "tool", "tool": call.tool, "callID": call.id, "state": state})
            messages.append({"info": {"id": f"a{t}.{s}", "sessionID": session, "role": "assistant"}, "parts": parts})
    return messages


def openai_chat(conversation: Conversation) -> list[dict[str, Any]]:
    """Chat Completions messages."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in conversation:
        if turn.image:
            messages.append({"role": "user", "content": [
                {"type": "text", "text": turn.text},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ]})
        else:
            messages.append({"role": "user", "content": turn.text})
        for step in turn.steps:
            message: dict[str, Any] = {"role": "assistant", "content": step.text}
            if step.calls:
                message["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.tool, "arguments": json.dumps(c.input)}}
                    for c in step.calls
                ]
            messages.append(message)
            messages.extend({"role": "tool", "tool_call_id": c.id, "content": c.output} for c in step.calls)
    return messages


def openai_responses(conversation: Conversation) -> list[dict[str, Any]]:
    """Responses input items."""
    items: list[dict[str, Any]] = [{"role": "developer", "content": SYSTEM}]
    n = 0
    for turn in conversation:
        content: list[dict[str, Any]] = [{"type": "input_text", "text": turn.text}]
        if turn.image:
            content.append({"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"})
        items.append({"type": "message", "role": "user", "content": content})
        for step in turn.steps:
            n += 1
            if step.reasoning:
                reasoning: dict[str, Any] = {"type": "reasoning", "id": f"rs_{n}", "summary": [{"type": "summary_text", "text": "thinking"}]}
                if step.reasoning == "signed":
                    reasoning["encrypted_content"] = f"gAAAA{n}=="
                items.append(reasoning)
            if step.text:
                items.append({"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                              "content": [{"type": "output_text", "text": step.text, "annotations": []}]})
            items.extend({"type": "function_call", "call_id": c.id, "name": c.tool, "arguments": json.dumps(c.input)}
                         for c in step.calls)
            for c in step.calls:
                output: Any = c.output
                if c.image:
                    output = [{"type": "input_text", "text": c.output},
                              {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]
                items.append({"type": "function_call_output", "call_id": c.id, "output": output})
    return items


def anthropic(conversation: Conversation) -> list[dict[str, Any]]:
    """Messages API messages (the system prompt goes in the request's ``system``)."""
    messages: list[dict[str, Any]] = []
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    pending: list[dict[str, Any]] = []
    for turn in conversation:
        user: list[dict[str, Any]] = [{"type": "text", "text": turn.text}]
        if turn.image:
            user.append(dict(image))
        messages.append({"role": "user", "content": user})
        for n, step in enumerate(turn.steps):
            blocks: list[dict[str, Any]] = []
            if step.reasoning == "signed":
                blocks.append({"type": "thinking", "thinking": "Let me think.", "signature": f"EqQBCkYIB{n}"})
            elif step.reasoning == "plain":
                blocks.append({"type": "redacted_thinking", "data": f"EmwKAhgBEgy{n}"})
            if step.text:
                blocks.append({"type": "text", "text": step.text})
            blocks.extend({"type": "tool_use", "id": c.id, "name": c.tool, "input": c.input} for c in step.calls)
            if not blocks:
                blocks.append({"type": "text", "text": "..."})
            messages.append({"role": "assistant", "content": blocks})
            if step.calls:
                pending = []
                for c in step.calls:
                    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": c.id, "content": c.output}
                    if c.image:
                        result["content"] = [{"type": "text", "text": c.output}, dict(image)]
                    if c.error:
                        result["is_error"] = True
                    pending.append(result)
                messages.append({"role": "user", "content": pending})
    return messages


def requests(conversation: Conversation) -> list[Conversation]:
    """The conversation as each of its requests saw it: everything before each agent step."""
    out: list[Conversation] = []
    for t, turn in enumerate(conversation):
        for s in range(len(turn.steps)):
            out.append([*conversation[:t], Turn(turn.text, turn.image, turn.steps[:s])])
    return out


def langchain(conversation: Conversation) -> list[Any]:
    """LangChain messages (needs langchain_core)."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    messages: list[Any] = [SystemMessage(SYSTEM)]
    for t, turn in enumerate(conversation):
        content: Any = turn.text
        if turn.image:
            content = [{"type": "text", "text": turn.text},
                       {"type": "image", "base64": PNG, "mime_type": "image/png"}]
        messages.append(HumanMessage(content, id=f"h{t}"))
        for s, step in enumerate(turn.steps):
            calls = [{"name": c.tool, "args": c.input, "id": c.id, "type": "tool_call"} for c in step.calls]
            messages.append(AIMessage(step.text or "", tool_calls=calls, id=f"ai{t}.{s}"))
            for c in step.calls:
                output: Any = c.output
                if c.image:
                    output = [{"type": "text", "text": c.output}, {"type": "image", "base64": PNG, "mime_type": "image/png"}]
                messages.append(ToolMessage(output, tool_call_id=c.id, status="error" if c.error else "success"))
    return messages

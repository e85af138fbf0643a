"""An agent loop over OpenAI Chat Completions with dcp pruning every request (standard library only).

    OPENAI_API_KEY=sk-... python examples/openai_chat.py [FILE]

The model gets one tool, `read`, and is asked to read FILE (this script by default) twice and
then answer; the second read makes the first one obsolete, so dcp sends a placeholder in its
place from then on. At the end the script prints `/dcp context` for the conversation.
OPENAI_BASE_URL points it at any OpenAI-compatible server; DCP_EXAMPLE_MODEL picks the model.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

from dcp_plugin.adapters.formats import Pruner

BASE_URL = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
MODEL = os.environ.get("DCP_EXAMPLE_MODEL", "gpt-4.1")
MAX_STEPS = 10
# OpenCode's tool and argument names, which dcp's strategies know (see README, "Tools").
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a text file and return its content.",
            "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}}, "required": ["filePath"]},
        },
    }
]


def post(path: str, body: dict[str, Any]) -> Any:
    """One JSON request to the API."""
    request = urllib.request.Request(
        BASE_URL + path,
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}"},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.load(response)


def run_tool(name: str, arguments: dict[str, Any]) -> str:
    """The tool's result as text (an error is a result too: the model reads it)."""
    if name != "read":
        return f"error: no tool named {name}"
    try:
        return Path(str(arguments.get("filePath", ""))).read_text(encoding="utf-8")
    except OSError as exc:
        return f"error: {exc}"


def main() -> None:
    target = sys.argv[1] if len(sys.argv) > 1 else __file__
    pruner = Pruner()  # one per process; it reads your dcp.jsonc files
    conversation_id = "example-openai-chat"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful assistant. Use the read tool to look at files."},
        {"role": "user", "content": f"Read {target}, read it once more, then tell me how many lines it has."},
    ]
    for _ in range(MAX_STEPS):
        # Your list keeps the whole history; what is sent is the pruned copy.
        outgoing = pruner.openai_chat(messages, session_id=conversation_id, model=MODEL)
        response = post("/chat/completions", {"model": MODEL, "tools": TOOLS, "messages": outgoing})
        message = response["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            print(message.get("content") or "")
            break
        for call in message["tool_calls"]:
            arguments = json.loads(call["function"].get("arguments") or "{}")
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": run_tool(call["function"]["name"], arguments)})
    print(pruner.command("context", session_id=conversation_id))


if __name__ == "__main__":
    main()

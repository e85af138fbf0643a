"""An agent loop over the Anthropic Messages API with dcp pruning every request (standard library only).

    ANTHROPIC_API_KEY=sk-ant-... python examples/anthropic_messages.py [FILE]

The model gets one tool, `read`, and is asked to read FILE (this script by default) twice and
then answer; the second read makes the first one obsolete, so dcp sends a placeholder in its
place from then on. At the end the script prints `/dcp context` for the conversation.
ANTHROPIC_BASE_URL points it at another server; DCP_EXAMPLE_MODEL picks the model.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

from dcp_plugin.adapters.formats import Pruner

BASE_URL = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
MODEL = os.environ.get("DCP_EXAMPLE_MODEL", "claude-sonnet-4-5")
MAX_STEPS = 10
SYSTEM = "You are a careful assistant. Use the read tool to look at files."
# OpenCode's tool and argument names, which dcp's strategies know (see README, "Tools").
TOOLS = [
    {
        "name": "read",
        "description": "Read a text file and return its content.",
        "input_schema": {"type": "object", "properties": {"filePath": {"type": "string"}}, "required": ["filePath"]},
    }
]


def post(path: str, body: dict[str, Any]) -> Any:
    """One JSON request to the API."""
    request = urllib.request.Request(
        BASE_URL + path,
        data=json.dumps(body).encode("utf-8"),
        headers={
            "Content-Type": "application/json",
            "x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
            "anthropic-version": "2023-06-01",
        },
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.load(response)


def run_tool(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """The tool's result as text, and whether it is an error (the model reads both)."""
    if name != "read":
        return f"no tool named {name}", True
    try:
        return Path(str(arguments.get("filePath", ""))).read_text(encoding="utf-8"), False
    except OSError as exc:
        return str(exc), True


def main() -> None:
    target = sys.argv[1] if len(sys.argv) > 1 else __file__
    pruner = Pruner()  # one per process; it reads your dcp.jsonc files
    conversation_id = "example-anthropic"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"Read {target}, read it once more, then tell me how many lines it has."}
    ]
    for _ in range(MAX_STEPS):
        # Your list keeps the whole history; what is sent is the pruned copy.
        outgoing = pruner.anthropic(messages, session_id=conversation_id, system=SYSTEM, model=MODEL)
        response = post(
            "/v1/messages", {"model": MODEL, "system": SYSTEM, "tools": TOOLS, "max_tokens": 4096, "messages": outgoing}
        )
        messages.append({"role": "assistant", "content": response["content"]})
        calls = [block for block in response["content"] if block.get("type") == "tool_use"]
        if not calls:
            print("".join(block.get("text", "") for block in response["content"] if block.get("type") == "text"))
            break
        results = []
        for call in calls:
            text, failed = run_tool(call["name"], call.get("input") or {})
            results.append({"type": "tool_result", "tool_use_id": call["id"], "content": text, "is_error": failed})
        messages.append({"role": "user", "content": results})
    print(pruner.command("context", session_id=conversation_id))


if __name__ == "__main__":
    main()

"""N7: apply_patch calls that arrive through the format adapters are scanned for protected paths."""

from __future__ import annotations

import json
from typing import Any

from dcp_plugin.adapters.formats import Pruner
from dcp_plugin.host.runtime import Runtime
from tests.support.helpers import make_config

PATCH = "*** Begin Patch\n*** Update File: secrets/key.pem\n@@\n-old key\n+new key\n*** End Patch\n"
OTHER = PATCH.replace("secrets/key.pem", "src/a.py")
DONE = "Success. Updated the following files:\nM secrets/key.pem\n" + "line of output\n" * 40


def pruner() -> Pruner:
    return Pruner(Runtime("/proj", make_config(protectedFilePatterns=["secrets/**"])))


def responses_freeform(call_id: str, patch: str) -> list[dict[str, Any]]:
    return [
        {"type": "custom_tool_call", "call_id": call_id, "name": "apply_patch", "input": patch},
        {"type": "custom_tool_call_output", "call_id": call_id, "output": DONE},
    ]


def chat_function(call_id: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "apply_patch", "arguments": json.dumps(arguments)}}
        ]},
        {"role": "tool", "tool_call_id": call_id, "content": DONE},
    ]


def test_a_codex_freeform_patch_of_a_protected_file_is_never_deduplicated() -> None:
    items = [{"role": "user", "content": "rotate the key"}, *responses_freeform("c1", PATCH), *responses_freeform("c2", PATCH)]
    out = pruner().openai_responses(items, session_id="s")
    assert out[2]["output"] == DONE


def test_a_codex_freeform_patch_of_another_file_is_deduplicated() -> None:
    items = [{"role": "user", "content": "edit"}, *responses_freeform("c1", OTHER), *responses_freeform("c2", OTHER)]
    out = pruner().openai_responses(items, session_id="s")
    assert out[2]["output"].startswith("[dcp:")


def test_a_chat_apply_patch_with_an_input_argument_of_a_protected_file_is_never_deduplicated() -> None:
    messages = [{"role": "user", "content": "go"}, *chat_function("c1", {"input": PATCH}), *chat_function("c2", {"input": PATCH})]
    out = pruner().openai_chat(messages, session_id="s")
    assert out[2]["content"] == DONE


def test_a_chat_apply_patch_with_a_patch_argument_of_a_protected_file_is_never_deduplicated() -> None:
    messages = [{"role": "user", "content": "go"}, *chat_function("c1", {"patch": PATCH}), *chat_function("c2", {"patch": PATCH})]
    out = pruner().openai_chat(messages, session_id="s")
    assert out[2]["content"] == DONE

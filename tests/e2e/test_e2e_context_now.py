"""The context figure against the provider's own count, through the real OpenCode binary and the bridge.

A session reads one large file (then a small one) with a 32K window configured in `opencode.json`, against a provider
that reports prompt tokens (the whole request as JSON, tool definitions included, chars/3.5). The
toast the plugin shows for the request carrying the large output, any nudge to the model, and the
`/dcp context` reply afterwards must each land within 10 % of what the provider counted for the
request they describe.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fake_provider import Text, ToolCall, whole_prompt_tokens
from tests.e2e.opencode_harness import MODEL_ID, PROVIDER_ID, export_ignored_texts, install_plugin, tool_results

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WINDOW = 32_000
TOLERANCE = 0.10
# The toast as the shim echoes it on stderr (DCP_BRIDGE_DEBUG): the context figure of the request it describes.
TOAST = re.compile(r"dcp: Context [^(]*\(([\d,]+) of 32,000 tokens\)")


def big_source() -> str:
    """About 56 KB of code-like lines, the kind of file a read brings into the context."""
    return "".join(
        f"def handler_{n}(request, retries={n % 7}):\n    return dispatch(request, 'route/{n}', retries)\n\n"
        for n in range(800)
    )


def toast_shown(stderr: Path) -> bool:
    """Whether the run writing its stderr to ``stderr`` has shown a context toast yet."""
    return stderr.exists() and TOAST.search(stderr.read_text(encoding="utf-8", errors="replace")) is not None


@pytest.fixture(scope="module")
def session(module_scenario_factory) -> dict[str, Any]:
    sc = module_scenario_factory("context-now", [])
    project = sc.opencode.project
    (project / "big.py").write_text(big_source())
    sc.provider.script = [
        ToolCall("read", {"filePath": str(project / "big.py")}),
        ToolCall("read", {"filePath": str(project / "hello.txt")}),
        Text("Read them."),
    ]
    # The plugin shows the toast for a request after the request went out (its bookkeeping runs
    # once the patches are sent), so on a busy machine the run could go on, and even end, before
    # the toast is shown. The reply to the request with the large output waits until it is.
    first_stderr = sc.opencode.root / "first-run.stderr"
    sc.provider.gates[1] = lambda: toast_shown(first_stderr)
    sc.provider.prompt_tokens = whole_prompt_tokens
    # On a busy machine a request can outlast the 5 s default; one that times out goes out unpruned,
    # and the figures compared below are those of pruned requests.
    sc.opencode.extra_env["DCP_BRIDGE_TIMEOUT_MS"] = "60000"
    # The shim echoes what it shows and logs on stderr: the toast's text, whatever OpenCode's log keeps.
    sc.opencode.extra_env["DCP_BRIDGE_DEBUG"] = "1"
    config_path = project / "opencode.json"
    config = json.loads(config_path.read_text())
    config["provider"][PROVIDER_ID]["models"][MODEL_ID]["limit"]["context"] = WINDOW
    config_path.write_text(json.dumps(config, indent=2))
    installed = install_plugin(project)
    assert installed.returncode == 0, installed.stderr
    first = sc.opencode.run(["read", "big.py"], stderr_path=first_stderr)
    assert first.returncode == 0, first.stderr
    sid = first.session_id
    command = sc.opencode.run(["context"], command="dcp", session=sid)
    follow = sc.opencode.run(["ok"], session=sid)
    assert follow.returncode == 0, follow.stderr
    return {
        "requests": sc.provider.agent_requests(),
        "replies": export_ignored_texts(sc.opencode.export(sid)),
        "toasts": first.stderr,
        "command": command,
    }


def within(figure: int, counted: int) -> bool:
    return abs(figure - counted) <= TOLERANCE * counted


def test_the_session_made_four_agent_requests(session) -> None:
    # two reads, the answer, then the follow-up prompt
    assert len(session["requests"]) == 4


def test_the_toast_for_the_request_with_the_large_output_is_within_10_percent_of_the_providers_count(session) -> None:
    counted = whole_prompt_tokens(session["requests"][1])
    toasts = [int(n.replace(",", "")) for n in TOAST.findall(session["toasts"])]
    assert toasts, f"no context toast shown; the provider counted {counted:,}"
    assert within(toasts[0], counted), (toasts[0], counted)


def test_a_nudge_to_the_model_states_a_figure_within_10_percent_of_the_providers_count(session) -> None:
    nudges = [
        (int(m.group(1).replace(",", "")), request)
        for request in session["requests"]
        for result in tool_results(request)
        for m in [re.search(r"The context holds ~([\d,]+) tokens of", str(result.get("content")))]
        if m
    ]
    for figure, request in nudges:
        assert within(figure, whole_prompt_tokens(request)), (figure, whole_prompt_tokens(request))


def test_dcp_context_is_within_10_percent_of_what_the_next_request_carried(session) -> None:
    (reply,) = [r for r in session["replies"] if r.startswith("DCP context")]
    figure = int(re.search(r"Context now: ~([\d,]+) tokens", reply).group(1).replace(",", ""))
    counted = whole_prompt_tokens(session["requests"][3])
    assert within(figure, counted), (figure, counted, reply)


def test_dcp_context_uses_the_window_opencode_json_gives_the_model(session) -> None:
    (reply,) = [r for r in session["replies"] if r.startswith("DCP context")]
    assert f"of {WINDOW:,} tokens" in reply


def test_opencode_run_command_dcp_prints_the_reply_on_stderr(session) -> None:
    # OpenCode itself still ends the run with its "Unexpected server error" event and status 1.
    assert "DCP context of session" in session["command"].stderr
    assert "Context now: ~" in session["command"].stderr

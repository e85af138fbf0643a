"""An autonomous session in the real OpenCode binary prunes with maskOldOutputs at work in one long cycle: it never sits idle.

One user message, then the scripted model works through eight modules without a pause: it reads
each of them five times, in a shuffled order every round, and edits one after rounds 2 to 4 (43
tool calls, a second or less apart, so a prompt cache would stay warm throughout). Without the
plugin every request carries every read and the last one is past 1.2 times `maskOldOutputs`'
trigger. With the plugin (its defaults, but every output of the one cycle maskable: `keepTurns` 0, and
the trigger and kept tokens of a large window) the provider must see the older reads replaced by
placeholders well before the session ends, in one batch, once written on every later request byte
for byte, and the last request must be back under the trigger.

The model's window is 200,000 tokens, as Claude's: OpenCode compacts a session whose prompt
passes its window minus the output limit, and the run without the plugin must not.
"""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.config.model import DcpConfig
from tests.e2e.fake_provider import Step, Text, ToolCall, whole_prompt_tokens
from tests.e2e.opencode_harness import (
    MODEL_ID,
    PROVIDER_ID,
    RunResult,
    install_plugin,
    results_by_call,
    tool_call_arguments,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WINDOW = 200_000
MODULES = [f"mod_{c}.py" for c in "abcdefgh"]
ROUNDS = 5
PROMPT = ["work", "through", "the", "modules"]
# Under the defaults the file views of the current cycle of work stay whole, and this run is one
# cycle (one prompt, no test run): here every older output may go, as with `keepTurns: 0`.
MASK = {"trigger": 100_000, "keepTokens": 5_000, "keepTurns": 0}
DEFAULTS = DcpConfig.model_validate({"strategies": {"maskOldOutputs": MASK}}).strategies.mask_old_outputs
TRIGGER = DEFAULTS.trigger
assert isinstance(TRIGGER, int), "the default trigger is a number of tokens"


def source(module: str) -> str:
    """About 10 KB of code-like lines: a read of it is about 3,000 tokens."""
    stem = module.removesuffix(".py")
    return "".join(
        f"def {stem}_handler_{n}(request, retries={n % 7}):\n"
        f"    return dispatch(request, '{stem}/route/{n}', retries)\n\n"
        for n in range(100)
    )


def script(project: Path) -> list[Step]:
    """Every module read once per round, in a new order each round; after rounds 2, 3 and 4 an edit."""
    rng = random.Random(21)
    steps: list[Step] = []
    for round_ in range(ROUNDS):
        order = rng.sample(MODULES, len(MODULES))
        steps += [ToolCall("read", {"filePath": str(project / module)}) for module in order]
        if round_ in (1, 2, 3):
            stem = order[-1].removesuffix(".py")
            line = f"    return dispatch(request, '{stem}/route/{round_}', retries)"
            edited = line.replace("retries)", "retries, timeout=30)")
            edit = {"filePath": str(project / order[-1]), "oldString": line, "newString": edited}
            steps.append(ToolCall("edit", edit))
    return [*steps, Text("Worked through every module.")]


def prepare(sc: Any) -> None:
    project = sc.opencode.project
    for module in MODULES:
        (project / module).write_text(source(module))
    sc.provider.script = script(project)
    sc.provider.prompt_tokens = whole_prompt_tokens
    config_path = project / "opencode.json"
    config = json.loads(config_path.read_text())
    config["provider"][PROVIDER_ID]["models"][MODEL_ID]["limit"]["context"] = WINDOW
    config_path.write_text(json.dumps(config, indent=2))
    # On a busy machine a request can outlast the bridge's 5 s default, and goes out unpruned.
    sc.opencode.extra_env["DCP_BRIDGE_TIMEOUT_MS"] = "60000"


def run(sc: Any, pure: bool) -> RunResult:
    return sc.opencode.run(PROMPT, pure=pure, timeout=240)


@pytest.fixture(scope="module")
def session(module_scenario_factory) -> dict[str, Any]:
    """The same session with the plugin (its defaults) and without, driven at the same time."""
    pruned, bare = module_scenario_factory("autonomous-dcp", []), module_scenario_factory("autonomous-bare", [])
    prepare(pruned)
    prepare(bare)
    (pruned.opencode.project / ".opencode").mkdir(exist_ok=True)
    (pruned.opencode.project / ".opencode" / "dcp.jsonc").write_text(json.dumps({"strategies": {"maskOldOutputs": MASK}}))
    installed = install_plugin(pruned.opencode.project)
    assert installed.returncode == 0, installed.stderr
    with ThreadPoolExecutor(max_workers=1) as pool:
        without = pool.submit(run, bare, True)
        with_plugin = run(pruned, False)
        return {
            "pruned": with_plugin,
            "bare": without.result(),
            "requests": pruned.provider.agent_requests(),
            "bare_requests": bare.provider.agent_requests(),
        }


def replaced_reads(request: dict[str, Any]) -> dict[str, str]:
    """call id -> text of every read result in the request that no longer holds the file (a placeholder)."""
    calls = tool_call_arguments(request)
    return {
        call_id: text
        for call_id, text in results_by_call(request).items()
        if "filePath" in calls.get(call_id, {}) and "<content>" not in text and text.startswith("[dcp:")
    }


def read_results(request: dict[str, Any]) -> int:
    calls = tool_call_arguments(request)
    return sum(1 for call_id in results_by_call(request) if "filePath" in calls.get(call_id, {}))


def first_pruned(requests: list[dict[str, Any]]) -> int:
    return next(i for i, request in enumerate(requests) if replaced_reads(request))


def test_both_runs_make_every_scripted_request(session) -> None:
    assert session["pruned"].returncode == 0, session["pruned"].stderr[-2000:]
    assert session["bare"].returncode == 0, session["bare"].stderr[-2000:]
    # one request per tool call, then the final answer
    assert len(session["requests"]) == len(session["bare_requests"]) == ROUNDS * len(MODULES) + 3 + 1


def test_without_the_plugin_every_read_stays_and_the_context_grows_well_past_the_trigger(session) -> None:
    bare = session["bare_requests"]
    assert all(not replaced_reads(request) for request in bare)
    assert whole_prompt_tokens(bare[-1]) > 1.2 * TRIGGER


def test_the_provider_sees_the_older_reads_replaced_well_before_the_session_ends(session) -> None:
    requests = session["requests"]
    first = first_pruned(requests)
    # Not only at the end: at least the last five requests carry them.
    assert first <= len(requests) - 5, [len(replaced_reads(r)) for r in requests]
    assert len(replaced_reads(requests[first])) > read_results(requests[first]) / 2


def test_a_written_placeholder_is_on_every_later_request_byte_for_byte(session) -> None:
    requests = session["requests"]
    written: dict[str, str] = {}
    for request in requests[first_pruned(requests) :]:
        now = replaced_reads(request)
        assert {call_id: now.get(call_id) for call_id in written} == written
        written.update(now)


def test_the_last_request_is_back_under_the_trigger_the_unpruned_one_is_past(session) -> None:
    last = whole_prompt_tokens(session["requests"][-1])
    bare_last = whole_prompt_tokens(session["bare_requests"][-1])
    # The plugin's own system text and tools ride along; the placeholders more than make up for them.
    assert last < TRIGGER < bare_last, f"{last:,} tokens, {last / bare_last:.0%} of the {bare_last:,} without the plugin"

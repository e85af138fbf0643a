"""The roster hands a call only to the strategies that look at calls of its kind, and advances off points only those that act there."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.decisions import CallRecord
from dcp_plugin.pipeline.protection import absolute_path, extract_paths
from dcp_plugin.pipeline.session import build_strategies
from dcp_plugin.pipeline.strategies import acts_with_time
from dcp_plugin.pipeline.strategies.base import FinishedCall, acts_off_points, observes
from dcp_plugin.pipeline.strategies.mask_old_outputs import MaskOldOutputs
from dcp_plugin.pipeline.strategies.roster import Roster
from tests.support.helpers import make_config

DIRECTORY = "/p"
EVERY_STRATEGY = {name: {"enabled": True} for name in ("supersedeWrites", "supersededTodos", "staleDiagnostics")}
DIAGNOSTICS = '\n\nLSP errors detected in this file, please fix:\n<diagnostics file="/p/a.py">\nERROR [1:1] x\n</diagnostics>'

_tools = st.sampled_from(["read", "read", "write", "write", "edit", "bash", "todowrite", "todoread", "task", "grep"])
_inputs = st.fixed_dictionaries(
    {"filePath": st.sampled_from(["/p/a.py", "b.py"])},
    optional={"content": st.sampled_from(["x\n", "x\ny\n"]), "offset": st.integers(0, 3), "command": st.just("cat a.py")},
)
_outputs = st.sampled_from(["ok", "x" * 400, "y" * 400 + DIAGNOSTICS, ""])
_calls = st.lists(st.tuples(_tools, st.sampled_from(["completed", "error"]), _inputs, _outputs, st.integers(-2, 0), st.booleans()), max_size=40)


def _finished(seq: int, tool: str, status: str, tool_input: dict[str, Any], output: str, protected: bool) -> FinishedCall:
    record = CallRecord(f"c{seq}", tool, seq, seq, 0, None, None, 0, status)
    state = {"status": status, "input": tool_input, "output": output}
    paths = extract_paths(tool, tool_input)
    path = absolute_path(paths[0], DIRECTORY) if paths else None
    return FinishedCall(record, state, paths, path, protected, DIRECTORY, pinned=False, input=tool_input, output=output)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(_calls)
def test_a_strategy_that_does_not_look_at_a_call_would_have_made_nothing_of_it(calls: list[Any]) -> None:
    config = make_config(strategies=EVERY_STRATEGY)
    everything, looked_at = build_strategies(config), build_strategies(config)
    for seq, (tool, status, tool_input, output, back, protected) in enumerate(calls):
        call = _finished(max(0, 3 * seq + back), tool, status, tool_input, output, protected)
        for (name, every), (_, some) in zip(everything, looked_at, strict=True):
            made = list(every.observe(call))
            if observes(some, tool, status):
                assert [(r.call_id, e) for r, e in some.observe(call)] == [(r.call_id, e) for r, e in made], name
            else:
                assert made == [], name


def test_each_call_goes_to_the_strategies_that_look_at_its_kind_in_registry_order() -> None:
    strategies = build_strategies(make_config(strategies=EVERY_STRATEGY))
    roster = Roster(strategies)
    for tool in ("read", "write", "bash", "todowrite", "task"):
        for status in ("completed", "error"):
            names = [name for name, _ in roster.observers(tool, status)]
            assert names == [name for name, strategy in strategies if observes(strategy, tool, status)]


def test_off_points_only_the_strategies_that_act_there_are_advanced() -> None:
    strategies = build_strategies(make_config())
    roster = Roster(strategies)
    assert [name for name, _ in roster.timed] == [name for name, s in strategies if acts_with_time(s)]
    assert all(not isinstance(s, MaskOldOutputs) for _, s in roster.anytime)
    assert all(acts_off_points(s) for _, s in roster.anytime)

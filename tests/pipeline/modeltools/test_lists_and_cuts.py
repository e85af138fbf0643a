"""Where the model's tools meet the other strategies: a prune of an output that carries a list or a cut."""

from __future__ import annotations

from dcp_plugin.pipeline.decisions import CutOutput, realize
from dcp_plugin.pipeline.placeholders import DISCARDED_PLACEHOLDERS, DUPLICATE_PLACEHOLDER, tag
from dcp_plugin.pipeline.strategies.stale_diagnostics import placeholder as diagnostics_placeholder
from tests.support.helpers import PROJECT, SESSION, call, diagnostics, named, tool_parts, user
from tests.support.tools_helpers import BIG, ToolHost, ident, lists

EVERY_3 = {"tools": {"nudgeFrequency": 3}}


def timed(message: dict, minute: int) -> dict:
    message["info"]["time"] = {"created": minute * 60_000}
    return message


def output_of(sent: list[dict], call_id: str) -> object:
    return next(p["state"].get("output") for p in tool_parts(sent) if p["callID"] == call_id)


def test_a_prune_waiting_for_the_cache_leaves_the_list_on_its_output_until_it_is_written() -> None:
    no_masking = {"maskOldOutputs": {"enabled": False}}  # the duplicate alone waits, not masks of the big read
    host = ToolHost.start(cache={"scheduler": True}, strategies=no_masking, **EVERY_3).add(timed(user(), 0))
    for n in range(3):
        host.read(f"f{n}.py", BIG + str(n))
        timed(host.messages[-1], n + 1)
        host.request()
    carrier = host.messages[-1]
    carrier_id = tool_parts([carrier])[0]["callID"]
    [listed] = lists(host.sent[-1])
    original = tool_parts([carrier])[0]["state"]["output"]
    # Much content after the carrier makes rewriting it costly: its duplicate waits in a warm cache.
    host.read("big.py", "x" * 200_000)
    timed(host.messages[-1], 4)
    host.request()
    host.read("f2.py", BIG + "2")
    timed(host.messages[-1], 5)
    host.request()
    view = host.runtime.view(SESSION)
    assert view is not None and [d.call_id for d in view.waiting] == [carrier_id]
    meanwhile = str(output_of(host.sent[-1], carrier_id))
    assert meanwhile.startswith(original) and meanwhile.endswith(listed)  # never the bare output meanwhile
    host.add(timed(user("after a break"), 90))  # the cache expired: the prune is written, the list goes with it
    assert output_of(host.request(), carrier_id) == named(DUPLICATE_PLACEHOLDER, carrier)
    view = host.runtime.view(SESSION)
    assert view is not None and view.waiting == ()


def test_the_model_may_discard_an_output_whose_diagnostics_were_cut() -> None:
    a = f"{PROJECT}/src/a.py"
    log = "build step output line\n" * 60 + diagnostics(a, "ERROR [1:1] broken")
    host = ToolHost.start().add(user("build"))
    build = call("bash", {"command": "make"}, output=log)
    host.add(build, call("edit", {"filePath": a, "oldString": "x", "newString": "y"}, output="Edit applied."))
    cut = host.request()
    assert named(diagnostics_placeholder("src/a.py"), build) in str(output_of(cut, tool_parts([build])[0]["callID"]))
    result = host.use("discard", {"ids": [ident(build)], "reason": "done"})
    assert not result.error, result.output
    sent = host.request()
    assert output_of(sent, tool_parts([build])[0]["callID"]) == named(DISCARDED_PLACEHOLDERS["done"], build)


def test_a_cut_names_its_call_after_the_blank_line_it_keeps_and_only_once() -> None:
    text = "\n\n" + diagnostics_placeholder("src/a.py")
    named_once = tag(text, "k3x9")
    assert named_once.startswith("\n\n[dcp: outdated diagnostics for src/a.py removed") and "(id k3x9)]" in named_once
    assert tag(named_once, "k3x9") == named_once


def test_a_cut_whose_named_text_is_not_shorter_than_its_range_is_left_out() -> None:
    output = "head " + "a" * 10 + " middle " + "b" * 400
    short_range, long_range = (5, 15, "[dcp: cut one]"), (23, 423, "[dcp: cut two]")
    state = {"status": "completed", "output": output}
    field, value, cuts = realize(CutOutput((short_range, long_range)), state) or (None, None, None)
    assert field == "output" and cuts == (long_range,)
    realized = realize(CutOutput((short_range,)), {**state, "output": "head " + "a" * 10})
    assert realized is None

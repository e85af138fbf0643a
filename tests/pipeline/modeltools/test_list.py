"""The list of prunable outputs: where it goes, when it is written again, what it names, and that it never changes."""

from __future__ import annotations

import copy
import re

from dcp_plugin.adapters.formats.kinds import Kind, placeholder_kind
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.modeltools.state import LIST_LIMIT
from dcp_plugin.pipeline.modeltools.texts import LIST_HEAD
from tests.support.helpers import PROJECT, call, hook_transform, make_config, tool_parts, user
from tests.support.tools_helpers import BIG, ToolHost, every_list, ident, lists, reads, written

EVERY_3 = {"tools": {"nudgeFrequency": 3}}


def timed(message: dict, minute: int) -> dict:
    message["info"]["time"] = {"created": minute * 60_000}
    return message


def test_no_list_is_written_for_a_host_that_does_not_offer_the_tools() -> None:
    host = ToolHost.start(offered=False, **EVERY_3).add(user())
    reads(host, 8)
    assert all(lists(sent) == [] for sent in host.sent)


def test_the_first_list_comes_after_nudge_frequency_tool_results() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    reads(host, 3)
    assert [len(lists(sent)) for sent in host.sent] == [0, 0, 1]


def test_the_list_goes_on_the_newest_result_and_gives_that_output_its_id() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    ids = reads(host, 3)
    newest = tool_parts(host.sent[-1])[-1]["state"]["output"]
    assert newest.startswith(BIG + "2") and LIST_HEAD in newest
    [text] = lists(host.sent[-1])
    rows = text.splitlines()[1:]
    assert [row.split()[0] for row in rows] == ids
    assert rows[-1].endswith("(this output)") and not rows[0].endswith("(this output)")


def test_the_rest_line_counts_only_outputs_the_model_may_prune_and_the_largest_is_listed() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    small = "a short output of a file, still long enough to be listed at all\n" * 8
    for n in range(LIST_LIMIT + 1):
        host.read(f"s{n}.py", small + str(n))
        host.request()
    big = host.read("big.py", BIG * 20)
    host.request()
    [text] = lists(host.sent[-1])
    rows = text.splitlines()[1:]
    assert rows[0].split()[0] == big and rows[0].endswith("(this output)")
    rest = [row for row in rows if row.startswith("(and ")]
    assert rest == [] or re.fullmatch(r"\(and (1 more output: ~[\d,]+ tokens|\d+ outputs of at most ~[\d,]+ tokens each: ~[\d,]+ tokens)\)", rest[0])


def test_a_list_row_names_the_id_the_call_and_its_size() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    ids = reads(host, 3)
    rows = lists(host.sent[-1])[0].splitlines()[1:]
    assert re.fullmatch(rf"{ids[0]}  read f0\.py  ~\d{{3}} tokens", rows[0]), rows[0]


def test_the_list_is_the_plugins_own_words_never_the_users() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    reads(host, 3)
    [text] = lists(host.sent[-1])
    assert placeholder_kind(text.strip()) is Kind.INSTRUCTIONS
    assert "listed by the context-pruning plugin, not by the user" in text


def test_a_written_list_is_byte_identical_on_every_later_request_and_after_a_restart() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    reads(host, 3)
    written = tool_parts(host.sent[-1])[2]["state"]["output"]
    host.add(user("go on"))
    reads(host, 2, start=3)
    restarted = copy.deepcopy(host.messages)
    runtime = Runtime(PROJECT, StaticConfig(make_config(**EVERY_3)))
    runtime.tool_definitions()
    hook_transform(runtime, {}, {"messages": restarted})
    assert [tool_parts(sent)[2]["state"]["output"] for sent in (*host.sent[2:], restarted)] == [written] * 4


def test_nothing_changes_between_two_requests_when_nothing_new_arrived() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    reads(host, 4)
    assert host.request() == host.sent[-2]


def test_no_new_list_until_nudge_frequency_more_results() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    reads(host, 8)
    assert written(host) == [0, 0, 1, 1, 1, 2, 2, 2]


def test_a_list_comes_sooner_when_much_more_became_prunable() -> None:
    host = ToolHost.start(tools={"nudgeFrequency": 50, "minTokens": 100}).add(user())
    for n in range(50):
        host.read(f"s{n}.py", "short output, " * 30)
        host.request()
    before = written(host)[-1]
    host.read("huge.py", BIG * 20)
    host.read("next.py")
    host.request()
    assert (before, written(host)[-1]) == (1, 2)


def test_the_list_never_names_protected_or_pruned_outputs() -> None:
    host = ToolHost.start(protectedFilePatterns=["secret/**"], **EVERY_3).add(user())
    dup = host.read("a.py", BIG)
    host.add(call("task", {"prompt": "explore"}, output=BIG))
    secret = host.read("secret/k.txt")
    host.read("a.py", BIG)
    host.read("b.py")
    host.read("c.py")
    host.request()
    task = ident(host.messages[2])
    newest = lists(host.sent[-1])[-1]  # an older list, written before the duplicate came, stays as it was
    assert newest and not {dup, task, secret} & set(newest.split())


def test_a_nudge_is_added_when_the_context_reaches_the_warn_threshold() -> None:
    small = {"providerID": "p", "id": "m", "limit": {"context": 40_000}}  # warn at 24,000 tokens
    # Masking off: from warn on it would keep the context from ever reaching the next threshold.
    host = ToolHost.start(tools={"nudgeFrequency": 100}, strategies={"maskOldOutputs": {"enabled": False}}).add(user())
    for n in range(60):
        host.read(f"f{n}.py", BIG)
        host.request(model=small)
    nudges = [text.splitlines()[-1] for text in every_list(host)]
    # 40K: warn at 24,000, auto at 28,000, hard at 32,333.
    assert [re.search(r"past the (\w+) threshold", line).group(1) for line in nudges] == ["warn", "auto", "hard"]
    assert nudges[0].endswith("past the warn threshold: discard or extract what you no longer need.")


def test_a_newer_list_takes_the_older_one_out_once_that_pays_for_the_cache() -> None:
    host = ToolHost.start(cache={"scheduler": True}, **EVERY_3).add(timed(user(), 0))
    for n in range(6):
        host.read(f"f{n}.py", BIG + str(n))
        timed(host.messages[-1], n + 1)
        host.request()
    assert written(host)[-1] == 2 and len(lists(host.sent[-1])) == 2  # the older list is in the warm prefix
    host.add(timed(user("after a break"), 60))  # the cache has expired: taking it out is free
    assert len(lists(host.request())) == 1


def test_without_the_scheduler_a_newer_list_takes_the_older_one_out_at_once() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    reads(host, 6)
    assert written(host)[-1] == 2 and len(lists(host.sent[-1])) == 1


def test_a_prune_of_the_output_that_carries_a_list_takes_the_list_with_it() -> None:
    host = ToolHost.start(**EVERY_3).add(user())
    ids = reads(host, 3)
    host.use("discard", {"ids": [ids[2]], "reason": "noise"})
    host.request()
    assert not lists(host.sent[-1])

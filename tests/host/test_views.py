"""What the runtime hands the commands is a frozen picture: rows that neither change later nor can be changed."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from dcp_plugin.host.results import SessionView
from dcp_plugin.host.runtime import Runtime
from tests.support.helpers import PROJECT, SESSION, call, hook_transform, make_config, user

BIG = "x" * 2000


def duplicate_reads() -> list[dict[str, Any]]:
    return [user(), call("read", {"filePath": "/p/a.py"}, output=BIG), user(), call("read", {"filePath": "/p/a.py"}, output=BIG)]


def viewed(runtime: Runtime, messages: list[dict[str, Any]]) -> SessionView:
    hook_transform(runtime, {}, {"messages": copy.deepcopy(messages)})
    view = runtime.view(SESSION)
    assert view is not None
    return view


def test_the_rows_of_a_view_cannot_be_changed() -> None:
    view = viewed(Runtime(PROJECT, make_config()), duplicate_reads())
    (decision,) = view.in_force
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.strategy = "sweep"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.records[0].status = "error"  # type: ignore[misc]


def test_a_view_keeps_what_it_showed_after_the_session_starts_over() -> None:
    runtime = Runtime(PROJECT, make_config())
    messages = duplicate_reads()
    before = viewed(runtime, messages)
    shown = (before.in_force, before.records)
    runtime.pin(SESSION, [r.ident for r in before.records if r.ident])  # pins start the decisions over
    after = viewed(runtime, messages)
    assert after.in_force == () and (before.in_force, before.records) == shown


def test_a_call_row_says_which_strategy_prunes_it_and_whether_that_is_written() -> None:
    view = viewed(Runtime(PROJECT, make_config()), duplicate_reads())
    (decision,) = view.in_force
    (row,) = [r for r in view.records if r.call_id == decision.call_id]
    assert (row.pruned_by, row.written) == (decision.strategy, True)

"""supersededTodos: older todo lists go once a newer todowrite completed; the newest list stays."""

from __future__ import annotations

import json

from dcp_plugin.pipeline.strategies.superseded_todos import placeholder
from tests.support.helpers import call, make_config, named, tool_parts, user


def todos(*items: str) -> list[dict]:
    return [{"content": item, "status": "pending", "priority": "medium", "id": str(i)} for i, item in enumerate(items)]


def todowrite(*items: str, **kw) -> dict:
    listed = todos(*items)
    return call("todowrite", {"todos": listed}, output=json.dumps(listed, indent=2), **kw)


def todoread(*items: str) -> dict:
    return call("todoread", {}, output=json.dumps(todos(*items), indent=2))


def outputs(prune, *messages, config=None) -> list:
    return [p["state"].get("output") for p in tool_parts(prune([user(), *messages], config or make_config()))]


def test_an_older_list_goes_once_a_newer_one_is_written(prune):
    first, second = (
        todowrite("read the parser", "fix the bug"),
        todowrite("read the parser", "fix the bug", "add a test"),
    )
    assert outputs(prune, first, second) == [named(placeholder(), first), second["parts"][0]["state"]["output"]]


def test_the_newest_list_and_a_read_of_it_stay(prune):
    newest = todowrite("fix the bug", "add a test")
    after = todoread("fix the bug", "add a test")
    assert outputs(prune, todowrite("fix the bug"), newest, after)[1:] == [
        newest["parts"][0]["state"]["output"],
        after["parts"][0]["state"]["output"],
    ]


def test_a_read_of_an_older_list_goes_too(prune):
    older = todoread("fix the bug", "look around")
    assert outputs(prune, older, todowrite("fix the bug", "add a test"))[0] == named(placeholder(), older)


def test_a_failed_todowrite_replaces_nothing(prune):
    first = todowrite("fix the bug", "add a test")
    assert outputs(prune, first, todowrite("x", status="error"))[0] == first["parts"][0]["state"]["output"]


def test_turned_off_it_keeps_every_list(prune):
    first = todowrite("fix the bug", "add a test")
    config = make_config(strategies={"supersededTodos": {"enabled": False}})
    assert outputs(prune, first, todowrite("fix the bug"), config=config)[0] == first["parts"][0]["state"]["output"]

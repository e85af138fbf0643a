"""The runtime's and the adapters' public methods type the message lists they take: never items of ``Any``."""

from __future__ import annotations

import inspect
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

import pytest

from dcp_plugin.adapters.formats.adapter import Adapter
from dcp_plugin.adapters.formats.pruner import Pruner
from dcp_plugin.adapters.pluggy_host import DcpPlugin
from dcp_plugin.host.runtime import Runtime

# The parameters that carry a host's message list (a provider's items, for the format adapters).
_LIST_PARAMETERS = frozenset({"messages", "items"})


def _list_parameters(owner: type) -> list[tuple[str, str, object]]:
    """(method, parameter, annotation) of every message-list parameter of ``owner``'s public methods."""
    found: list[tuple[str, str, object]] = []
    for name, method in inspect.getmembers(owner, inspect.isfunction):
        if name.startswith("_"):
            continue
        hints = get_type_hints(method)
        found += [
            (name, parameter, hints[parameter])
            for parameter in inspect.signature(method).parameters
            if parameter in _LIST_PARAMETERS
        ]
    return found


def _item_types(annotation: object) -> list[object]:
    """The item types a (possibly optional) list annotation allows; ``Any`` for a bare or untyped one."""
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    items: list[object] = []
    for option in options:
        if option is not type(None):
            items += list(get_args(option)) or [Any]
    return items


@pytest.mark.parametrize("owner", [Runtime, DcpPlugin, Pruner, Adapter], ids=lambda owner: owner.__name__)
def test_no_public_method_takes_a_message_list_of_any(owner: type) -> None:
    parameters = _list_parameters(owner)
    assert parameters, f"{owner.__name__} has no public method that takes a message list"
    untyped = [(method, parameter) for method, parameter, hint in parameters if Any in _item_types(hint)]
    assert untyped == []


@pytest.mark.parametrize(
    ("entry", "parameter"), [("openai_chat", "messages"), ("openai_responses", "items"), ("anthropic", "messages")]
)
def test_a_format_entry_point_hands_back_the_callers_item_type(entry: str, parameter: str) -> None:
    hints = get_type_hints(getattr(Pruner, entry))
    (item,) = get_args(hints[parameter])
    assert isinstance(item, TypeVar)
    assert get_args(hints["return"]) == (item,)

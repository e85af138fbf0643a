"""N14: restore has a loop guard: an output is restored at most once per user turn."""

from __future__ import annotations

from tests.support.helpers import user
from tests.support.pluggy_tools_host import BIG, ToolsHost


def restore(host: ToolsHost) -> dict[str, object]:
    return host.use("restore", {"ids": [host.ids[0]]})  # the older read, pruned as a duplicate


def test_a_second_restore_of_one_output_in_the_same_turn_is_refused() -> None:
    host = ToolsHost()
    first = restore(host)
    second = restore(host)
    assert first["error"] is False and BIG in str(first["output"])
    assert second["error"] is True and "already restored" in str(second["output"]) and BIG not in str(second["output"])


def test_thirty_restores_of_one_output_in_a_turn_bring_its_content_back_once() -> None:
    host = ToolsHost()
    results = [restore(host) for _ in range(30)]
    assert sum(BIG in str(r["output"]) for r in results) == 1


def test_the_output_can_be_restored_again_in_a_later_user_turn() -> None:
    host = ToolsHost()
    restore(host)
    host.messages.append(user("go on"))
    assert restore(host)["error"] is False

"""The bridge server acts on the continuity verdict its mirror reads off each delta."""

from __future__ import annotations

from typing import Any

from tests.support.bridge_helpers import Harness, transform_request
from tests.support.helpers import assistant, tool_part, user


def _session() -> list[dict[str, Any]]:
    read = {"filePath": "/home/dev/project/a.py"}
    return [user(session="ses_a"), *(assistant(tool_part("read", read), session="ses_a") for _ in range(2))]


def _restarts(h: Harness) -> int:
    view = h.runtime.view("ses_a")
    assert view is not None
    return view.restarts


def test_a_command_that_resends_a_rewritten_history_starts_the_session_over() -> None:
    h = Harness(commands=lambda *args: "ok")
    h.transform("ses_a", _session())
    request = transform_request(2, "ses_a", _session())  # new ids: an undo, a compaction
    request.update(op="command", command="dcp", arguments="context")
    h.send(request)
    assert _restarts(h) == 1


def test_a_rewriting_resend_with_a_wrong_count_still_starts_the_session_over() -> None:
    h = Harness()
    h.transform("ses_a", _session())
    request = transform_request(2, "ses_a", _session())
    request["total"] = 7
    assert (h.send(request)["error"], _restarts(h)) == ("resync", 1)

"""N16: a request id of thousands of digits gets a clear protocol error, not an internal error with a traceback."""

from __future__ import annotations

import logging

import pytest

from tests.support.bridge_helpers import Harness


def test_a_5000_digit_request_id_is_a_protocol_error_naming_the_number(caplog: pytest.LogCaptureFixture) -> None:
    h = Harness()
    with caplog.at_level(logging.DEBUG, logger="dcp_plugin"):
        reply = h.send_raw('{"id": ' + "9" * 5000 + ', "op": "ping"}')
    assert reply == {"id": None, "ok": False, "error": "request holds a number too long to read (over 4,300 digits)"}
    assert not any(record.exc_info for record in caplog.records)


def test_the_bridge_keeps_answering_after_a_huge_number() -> None:
    h = Harness()
    h.send_raw('{"id": 1, "op": "ping", "x": ' + "1" * 10_000 + "}")
    assert h.send({"id": 2, "op": "ping"})["ok"] is True

"""R12: a number longer than Python converts (over 4,300 digits) gets a message naming where it is, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcp_plugin.adapters.bridge.server import parse_token
from dcp_plugin.cli.main import main
from tests.support.bridge_helpers import Harness, transform_request
from tests.support.helpers import call, user

LONG = "9" * 5000


def session_file(tmp_path: Path) -> Path:
    messages = [user(), call("read", {"filePath": "/p/a.py"})]
    messages[0]["info"]["time"] = {"created": 12345}
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"info": {}, "messages": messages}, indent=1).replace("12345", LONG))
    return path


@pytest.mark.parametrize("command", ["replay", "context"])
def test_a_session_file_with_a_5000_digit_number_is_refused_naming_where(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = session_file(tmp_path)
    assert main([command, str(path)]) == 1
    err = capsys.readouterr().err
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if LONG in text)
    assert f"{path}:{line}:" in err and "a number of 5,000 digits" in err
    assert "Traceback" not in err


def test_a_json_lines_session_with_a_5000_digit_number_is_refused_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text('{"type": "session_meta"}\n{"type": "x", "n": ' + LONG + "}\n")
    assert main(["replay", str(path)]) == 1
    assert f"{path}:2:" in capsys.readouterr().err


@pytest.mark.parametrize("token", [f"1:{LONG}", f"{LONG}:1", "\u00b2:1", "1:\u0663"], ids=["long count", "long epoch", "superscript", "arabic-indic"])
def test_a_patch_token_no_counter_could_be_is_ignored(token: str) -> None:
    assert parse_token(token) is None


def test_the_bridge_answers_a_transform_with_a_5000_digit_patch_token() -> None:
    harness = Harness()
    messages = [user(session="ses_a")]
    assert harness.transform("ses_a", messages)["ok"] is True
    messages.append(user(session="ses_a"))
    request = transform_request(harness.rid(), "ses_a", messages, base=1)
    reply = harness.send({**request, "patchToken": f"1:{LONG}"})
    assert reply["ok"] is True and reply.get("incremental") is not True  # a token it cannot read: the whole set

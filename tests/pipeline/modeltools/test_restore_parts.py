"""restore of an output too long for one tool result: numbered parts, each under the host's cap, that add up to it."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.pipeline.modeltools.parts import PART_BYTES, PART_LINES, split
from tests.support.helpers import user
from tests.support.paths import ROOT

# OpenCode 1.18 keeps at most this much of a tool's result and ends a longer one with a notice.
from tests.support.tools_helpers import ToolHost

HOST_CAP_BYTES = 51_200
HOST_CAP_LINES = 2_000
# A 56 KB read (as OpenCode numbers a file's lines): more than the host lets through in one result.
LARGE = "".join(f"{n:5d}: a line of a large source file that the model read earlier {n}\n" for n in range(1, 801))


def discarded_large() -> tuple[ToolHost, str]:
    host = ToolHost.start().add(user())
    large = host.read("big.py", LARGE)
    host.read("other.py")
    host.use("discard", {"ids": [large], "reason": "done"})
    return host, large


def content_of(output: str) -> str:
    """What a part carries after its header line."""
    return output.split("\n", 1)[1].split("\n\nNot restored:", 1)[0]


def test_the_large_output_is_longer_than_the_hosts_cap() -> None:
    assert len(LARGE.encode()) > HOST_CAP_BYTES


def test_a_large_restore_comes_in_parts_each_under_the_hosts_cap() -> None:
    host, large = discarded_large()
    first = host.use("restore", {"ids": [large]})
    total = int(re.search(r"part 1 of (\d+)", first.output).group(1))  # type: ignore[union-attr]
    outputs = [first.output] + [host.use("restore", {"ids": [large], "part": k}).output for k in range(2, total + 1)]
    assert total >= 2
    for output in outputs:
        assert len(output.encode()) < HOST_CAP_BYTES and output.count("\n") < HOST_CAP_LINES


def test_the_parts_add_up_to_the_whole_output() -> None:
    host, large = discarded_large()
    first = host.use("restore", {"ids": [large]})
    total = int(re.search(r"part 1 of (\d+)", first.output).group(1))  # type: ignore[union-attr]
    rest = [host.use("restore", {"ids": [large], "part": k}).output for k in range(2, total + 1)]
    assert LARGE in "".join(content_of(output) for output in [first.output, *rest])


def test_each_part_names_the_call_that_gets_the_next() -> None:
    host, large = discarded_large()
    first = host.use("restore", {"ids": [large]})
    assert f'restore(ids=["{large}"], part=2)' in first.output.splitlines()[0]


def test_the_last_part_says_it_is_the_last() -> None:
    host, large = discarded_large()
    total = int(re.search(r"part 1 of (\d+)", host.use("restore", {"ids": [large]}).output).group(1))  # type: ignore[union-attr]
    last = host.use("restore", {"ids": [large], "part": total})
    assert f"part {total} of {total}; this is the last part" in last.output


def test_a_part_past_the_last_is_refused_with_how_many_there_are() -> None:
    host, large = discarded_large()
    result = host.use("restore", {"ids": [large], "part": 99})
    assert result.error and "part 99 does not exist: this restore has" in result.output


def test_a_part_that_is_not_a_whole_number_from_1_is_refused() -> None:
    host, large = discarded_large()
    for bad in (0, -1, "two", 1.5, True):
        result = host.use("restore", {"ids": [large], "part": bad})
        assert result.error and "part must be a whole number from 1" in result.output


def test_a_short_restore_is_one_result_without_parts() -> None:
    host = ToolHost.start().add(user())
    a = host.read("a.py")
    host.read("b.py")
    host.use("discard", {"ids": [a], "reason": "done"})
    result = host.use("restore", {"ids": [a]})
    assert "part" not in result.output.splitlines()[0]


def test_each_part_can_be_had_once_per_user_turn() -> None:
    host, large = discarded_large()
    host.use("restore", {"ids": [large]})
    second = host.use("restore", {"ids": [large], "part": 2})
    again = host.use("restore", {"ids": [large], "part": 2})
    assert not second.error
    assert again.error and "part 2 already restored in this user turn" in again.output


@given(st.text(max_size=3_000), st.integers(min_value=4, max_value=500), st.integers(min_value=1, max_value=40))
def test_split_parts_join_to_the_text_and_keep_within_both_limits(text: str, max_bytes: int, max_lines: int) -> None:
    pieces = split(text, max_bytes, max_lines)
    assert "".join(pieces) == text
    for piece in pieces:
        assert len(piece.encode("utf-8", errors="surrogatepass")) <= max_bytes
        assert len(piece.splitlines()) <= max_lines


def test_split_cuts_a_single_line_longer_than_a_part() -> None:
    line = "x" * (PART_BYTES * 2 + 10)
    assert [len(p) for p in split(line)] == [PART_BYTES, PART_BYTES, 10]



def test_readme_gives_the_part_limits_the_code_uses() -> None:
    readme = (ROOT / "README.md").read_text()
    assert f"longer than {PART_BYTES:,} bytes or {PART_LINES:,} lines" in readme

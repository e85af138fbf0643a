"""supersededReads: an older read's output goes once a newer read shows its lines or a newer write replaced the file."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, PLACEHOLDER_PREFIX
from dcp_plugin.pipeline.strategies.reads import CUT_SHORT_MARKERS, DEFAULT_READ_LIMIT, shown_lines
from dcp_plugin.pipeline.strategies.superseded_reads import placeholder
from tests.support.helpers import PROJECT, call, make_config, named, tool_parts, user

A = f"{PROJECT}/src/a.py"
TEXT = "".join(f"{i}: line {i} of the file\n" for i in range(1, 80))
GONE = placeholder("read src/a.py")
# Deduplication would take identical reads first; these tests look at this strategy alone.
ALONE = {"deduplication": {"enabled": False}}


def read(path: str = A, **ranges: int) -> dict:
    return call("read", {"filePath": path, **ranges}, output=TEXT)


def gone(message: dict) -> str:
    """The placeholder this strategy leaves in place of the read in ``message``."""
    return named(GONE, message)


def outputs(prune, *messages, **config) -> list:
    return [
        p["state"].get("output")
        for p in tool_parts(prune([user(), *messages], make_config(strategies={**ALONE, **config})))
    ]


def test_a_newer_full_read_supersedes_an_older_full_read(prune):
    older = read()
    assert outputs(prune, older, read()) == [gone(older), TEXT]


def test_a_newer_full_read_supersedes_an_older_partial_read(prune):
    older = read(offset=50, limit=5)
    assert outputs(prune, older, read()) == [gone(older), TEXT]


def test_a_newer_partial_read_keeps_an_older_full_read(prune):
    assert outputs(prune, read(), read(offset=50, limit=5)) == [TEXT, TEXT]


def test_a_newer_range_that_covers_the_older_range_supersedes_it(prune):
    older = read(offset=10, limit=5)
    assert outputs(prune, older, read(offset=5, limit=20)) == [gone(older), TEXT]


def test_a_newer_range_that_misses_part_of_the_older_one_keeps_it(prune):
    assert outputs(prune, read(offset=10, limit=20), read(offset=15, limit=20)) == [TEXT, TEXT]


def test_a_newer_read_the_host_capped_supersedes_nothing(prune):
    capped = call(
        "read",
        {"filePath": A},
        output=TEXT[:200] + "\n\n(Output capped at 50 KB. Showing lines 1-9. Use offset=10 to continue.)",
    )
    assert outputs(prune, read(), capped)[0] == TEXT


@given(st.text(), st.sampled_from(CUT_SHORT_MARKERS), st.text())
def test_a_read_cut_short_anywhere_in_its_output_shows_nothing_for_sure(before: str, marker: str, after: str) -> None:
    assert shown_lines({"filePath": A}, before + marker + after) is None


@given(st.text())
def test_a_read_not_cut_short_shows_the_range_it_asked_for(output: str) -> None:
    assume(not output.startswith(PLACEHOLDER_PREFIX) and not any(marker in output for marker in CUT_SHORT_MARKERS))
    assert shown_lines({"filePath": A}, output) == (1, DEFAULT_READ_LIMIT)


def test_a_newer_write_of_the_file_supersedes_every_older_read(prune):
    write = call("write", {"filePath": "src/a.py", "content": "new"}, output="Wrote file successfully.")
    full, partial = read(), read(offset=3, limit=2)
    assert outputs(prune, full, partial, write)[:2] == [gone(full), gone(partial)]


def test_an_edit_is_not_a_full_write(prune):
    edit = call("edit", {"filePath": A, "oldString": "a", "newString": "b"}, output="Edit applied successfully.")
    assert outputs(prune, read(), edit)[0] == TEXT


def test_a_failed_newer_read_supersedes_nothing(prune):
    failed = call("read", {"filePath": A}, status="error")
    assert outputs(prune, read(), failed)[0] == TEXT


def test_reads_of_another_file_are_left_alone(prune):
    assert outputs(prune, read(), read(f"{PROJECT}/src/b.py")) == [TEXT, TEXT]


def test_relative_and_absolute_paths_of_one_file_match(prune):
    relative = read("./src/a.py")
    assert outputs(prune, relative, read())[0] == named(placeholder("read src/a.py"), relative)


def test_a_read_of_a_protected_path_stays(prune):
    protected = make_config(strategies=ALONE, protectedFilePatterns=["src/a.py"])
    assert [p["state"]["output"] for p in tool_parts(prune([user(), read(), read()], protected))] == [TEXT, TEXT]


def test_deduplication_claims_identical_reads_first(prune):
    msgs = [user(), read(), read()]
    assert [p["state"]["output"] for p in tool_parts(prune(msgs))] == [named(DUPLICATE_PLACEHOLDER, msgs[1]), TEXT]


def test_the_read_whose_lines_were_shown_first_claims_an_older_read(prune):
    # The covering read came first: this strategy's placeholder, though an identical read follows.
    msgs = [user(), read(offset=10, limit=5), read(), read(offset=10, limit=5)]
    assert [p["state"]["output"] for p in tool_parts(prune(msgs))] == [gone(msgs[1]), TEXT, TEXT]


def test_turned_off_it_supersedes_nothing(prune):
    assert outputs(prune, read(offset=50, limit=5), read(), supersededReads={"enabled": False}) == [TEXT, TEXT]

"""Edit anchors: the text an edit replaces, whether the request before it held it, and whether pruning hid it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.cli.main import main
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.replay.anchors import AnchorIndex, anchor_of, edit_anchors, patch_hunks, replaced_texts
from dcp_plugin.replay.engine import replay
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from tests.support.helpers import assistant, call, tool_part, user

LINE = "    total = compute_total(order.items, discount)"
ANCHOR = LINE.strip()
FILE = "\n".join(f"{n}\t{text}" for n, text in enumerate(["import os", LINE, "return total"], 1))


def read(output: str = FILE) -> dict[str, Any]:
    return call("read", {"filePath": "/p/a.py"}, output=output)


def edit(old: str = LINE) -> dict[str, Any]:
    return call("edit", {"filePath": "/p/a.py", "oldString": old, "newString": "x"})


def test_the_anchor_is_the_longest_line_trimmed():
    assert anchor_of(f"short\n{LINE}\n  a_shorter_line_of_code_here()") == ANCHOR


def test_text_without_a_line_of_25_characters_has_no_anchor():
    assert anchor_of("x = 1\n" + " " * 40 + "y = 2") is None


def test_a_patch_hunk_is_its_context_and_removed_lines_not_the_added_ones():
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n@@ def compute_everything_here(self):\n"
        " keep_this_context_line_as_it_is = 1\n-remove_this_line_of_the_old_code = 2\n"
        "+the_new_line_that_is_much_longer_than_every_other_line = 3\n*** End Patch"
    )
    assert patch_hunks(patch) == [
        "def compute_everything_here(self):\nkeep_this_context_line_as_it_is = 1\nremove_this_line_of_the_old_code = 2"
    ]


def test_an_added_file_has_no_hunk():
    assert patch_hunks("*** Begin Patch\n*** Add File: b.py\n+a_new_file_line_that_is_long_enough\n*** End Patch") == []


def test_each_multiedit_entry_and_each_patch_hunk_is_one_replaced_text():
    multi = {"filePath": "a", "edits": [{"oldString": "one"}, {"old_string": "two"}]}
    patch = "*** Begin Patch\n*** Update File: a\n@@\n-first\n@@\n-second\n*** End Patch"
    assert replaced_texts(multi) == ["one", "two"]
    assert replaced_texts({"patchText": patch}) == ["first", "second"]
    assert replaced_texts(patch) == ["first", "second"]


def test_a_tool_that_replaces_nothing_has_no_anchor():
    assert edit_anchors(tool_part("write", {"filePath": "a", "content": LINE})) == []


def check(messages: list[dict[str, Any]], patches: dict[Any, Any] | None = None, begin: int = 0):
    index = AnchorIndex(messages)
    patches = patches or {}
    return index.check(begin, len(messages) - 1, patches, dict.fromkeys(patches, "maskOldOutputs"))


def test_an_anchor_read_with_line_numbers_is_sourced_and_kept_without_pruning():
    result = check([user(), read(), edit()])
    assert (result.anchors, result.sourced, result.lost) == (1, 1, 0)


def test_an_anchor_nobody_showed_is_not_sourced():
    result = check([user(), read("nothing here"), edit()])
    assert (result.anchors, result.sourced, result.lost) == (1, 0, 0)


def test_an_anchor_whose_only_source_is_a_placeholder_is_lost_to_that_strategy():
    result = check([user(), read(), edit()], {(1, 0, "output"): ("[dcp: cleared]", 50)})
    assert (result.sourced, result.lost, result.lost_by) == (1, 1, {"maskOldOutputs": 1})
    assert result.lost_anchors[0].anchor == ANCHOR


def test_an_anchor_still_shown_elsewhere_is_not_lost():
    result = check([user(), read(), read(), edit()], {(1, 0, "output"): ("[dcp: cleared]", 50)})
    assert result.lost == 0


def test_an_anchor_a_cut_kept_is_not_lost():
    result = check([user(), read(), edit()], {(1, 0, "output"): (f"2\t{LINE}\n[cut]", 5)})
    assert result.lost == 0


def test_only_the_messages_the_request_sent_count():
    result = check([user(), read(), user("after a compaction"), edit()], begin=2)
    assert result.sourced == 0


def test_an_edit_inside_the_replaced_line_anchors_on_the_fragment():
    result = check([user(), read(), edit("compute_total(order.items, discount)")])
    assert result.sourced == 1


@settings(max_examples=30, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=6), st.sets(st.integers(0, 5)))
def test_lost_never_exceeds_sourced_nor_sourced_the_anchors(reads: list[bool], cleared: set[int]):
    messages = [user()] + [read() if shown else read("other text") for shown in reads] + [edit()]
    patches = {(1 + i, 0, "output"): ("[dcp: cleared]", 9) for i in cleared if i < len(reads)}
    result = check(messages, patches)
    assert result.lost <= result.sourced <= result.anchors == 1
    assert result.lost == (result.sourced == 1 and all(not shown or i in cleared for i, shown in enumerate(reads)))


def test_replay_counts_anchors_masking_hides_and_names_the_strategy():
    messages = generate_session(400, seed=3)["messages"]
    aggressive = DcpConfig.model_validate(
        {"cache": {"scheduler": False}, "strategies": {"maskOldOutputs": {"trigger": 1000, "keepTokens": 0, "keepTurns": 0}}}
    )
    report = replay(messages, DEFAULT_DIRECTORY, aggressive)
    assert report.anchors.lost > 0
    assert "maskOldOutputs" in report.anchors.lost_by
    assert sum(report.anchors.lost_by.values()) == report.anchors.lost


def test_replay_without_any_strategy_loses_no_anchor():
    messages = generate_session(400, seed=3)["messages"]
    off = {name: {"enabled": False} for name in DcpConfig().model_dump(by_alias=True)["strategies"]}
    report = replay(messages, DEFAULT_DIRECTORY, DcpConfig.model_validate({"strategies": off}))
    assert report.anchors.sourced > 0
    assert report.anchors.lost == 0


def test_dcp_replay_says_how_many_anchors_pruning_hid(capsys):
    assert main(["replay"]) == 0
    assert "Edit anchors:" in capsys.readouterr().out


def test_dcp_replay_of_several_files_gives_one_row_each_and_the_total(capsys, tmp_path):
    paths = []
    for seed in (1, 2):
        path = tmp_path / f"s{seed}.json"
        path.write_text(json.dumps(generate_session(120, seed=seed)))
        paths.append(str(path))
    assert main(["replay", *paths, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["file"] for s in data["sessions"]] == ["s1.json", "s2.json"]
    assert data["total"]["requests"] == sum(s["requests"] for s in data["sessions"])
    assert data["total"]["anchors"]["sourced"] == sum(s["anchors"]["sourced"] for s in data["sessions"])
    assert main(["replay", *paths]) == 0
    assert "total" in capsys.readouterr().out


def test_dcp_replay_compares_only_one_file(capsys, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(generate_session(50)))
    assert main(["replay", str(path), str(path), "--by-strategy"]) == 1
    assert "take one FILE" in capsys.readouterr().err


def test_each_lost_anchor_names_the_edit_and_its_source(tmp_path):
    messages = [user(), read(), assistant(tool_part("edit", {"filePath": "/p/a.py", "oldString": LINE}))]
    result = check(messages, {(1, 0, "output"): ("[dcp: cleared]", 50)})
    assert result.to_dict(details=True)["lost_anchors"] == [
        {"edit_message": 2, "source_message": 1, "source_part": 0, "hidden_by": "maskOldOutputs", "anchor": ANCHOR}
    ]

"""Texts that count things agree in number with the count: `1 output ... it`, `2 outputs ... them`."""

from __future__ import annotations

from dcp_plugin.pipeline.modeltools import texts


def test_a_discard_of_one_output_says_it_not_they() -> None:
    one = texts.pruned("discarded", ["read a.py"], 100)
    two = texts.pruned("discarded", ["read a.py", "read b.py"], 200)
    assert "It leaves the context" in one and "brings it back" in one and "They" not in one
    assert "They leave the context" in two and "brings them back" in two


def test_a_restore_of_one_output_says_the_placeholder_stays() -> None:
    assert "Restored 1 output; the placeholder stays where it is." in texts.restored(1, "x", 1, 1, [], ["3kq7"])
    two = texts.restored(2, "x", 1, 1, [], ["3kq7", "8mzp"])
    assert "Restored 2 outputs; the placeholders stay where they are." in two


def test_a_restore_in_parts_counts_its_parts() -> None:
    assert texts.parts(1) == "1 part" and texts.parts(3) == "3 parts"


def test_the_rest_of_the_prunable_list_reads_right_for_one_output() -> None:
    text = texts.prunable_list([("3kq7", "read a.py", 900)], (1, 120, 120), None)
    assert text.splitlines()[-1] == "(and 1 more output: ~120 tokens)"

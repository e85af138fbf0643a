"""N4: any config file costs bounded time: a pattern longer than any path is refused, never compiled."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.hostile_config import run
from tests.support.config_host import Host, config_path, project, write

__all__ = ["project"]  # the fixture

def test_a_pattern_longer_than_any_path_is_dropped_with_its_length_and_the_others_apply(project: Path) -> None:
    host = Host(project)
    write(config_path(project), json.dumps({"protectedFilePatterns": ["a" * 5_000 + "/**", "secrets/**"]}))
    assert not host.pruned("secrets/key.pem")
    [message] = [n for n in host.notes if "5,003 characters long" in n]
    assert "at most 4,096" in message and "protectedFilePatterns" in message


def test_the_benchmark_reads_a_900000_character_pattern_without_compiling_it() -> None:
    [row] = run(requests=1, only=["one 900,000-char pattern"])
    assert (row["messages"], row["patterns_used"], row["reads_after_first"]) == (1, 0, 0)

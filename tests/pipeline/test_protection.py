"""Protected file paths: patterns that cannot stall the host, every apply_patch header OpenCode reads, Windows paths."""

from __future__ import annotations

import sys

import pytest

from dcp_plugin.config.globs import normalize, pattern_problem
from dcp_plugin.config.validate import validate_layer
from dcp_plugin.pipeline import protection
from dcp_plugin.pipeline.protection import PathProtector, absolute_path, extract_paths, path_forms
from tests.support.helpers import PROJECT, call, make_config, run_bounded, user

SECRET = "secrets/key.txt"


def protects(patterns: list[str], path: str, directory: str = PROJECT, ignore_case: bool = False) -> bool:
    return PathProtector(patterns, directory, ignore_case=ignore_case).is_protected([path])


# -- patterns that would backtrack for minutes ------------------------------------------------
def test_a_run_of_stars_against_a_near_miss_finishes() -> None:
    # 12 stars: pathspec's regex backtracked about 4x per star (8 stars took 7.4 s per request).
    out = run_bounded(
        f"""
        from dcp_plugin.pipeline.protection import PathProtector
        protector = PathProtector(["{'*' * 12}.lock"], "/p")
        print(protector.is_protected(["/p/" + "a" * 60 + ".lox"]), protector.is_protected(["/p/x/yarn.lock"]))
        """
    )
    assert out == "False True"


@pytest.mark.parametrize(
    ("pattern", "collapsed"),
    [("**********.lock", "*.lock"), ("a***b", "a*b"), ("src/***/x", "src/**/x"), ("!***.env", "!*.env"), ("a\\**b", "a\\**b"), ("a[**]b", "a[**]b")],
)
def test_runs_of_stars_collapse_to_what_gitignore_means(pattern: str, collapsed: str) -> None:
    assert normalize(pattern) == collapsed


def test_a_collapsed_pattern_matches_what_the_original_means() -> None:
    assert protects(["**********.lock"], f"{PROJECT}/deep/dir/yarn.lock")
    assert not protects(["**********.lock"], f"{PROJECT}/yarn.lick")


@pytest.mark.parametrize("pattern", ["*a*a*b", "**/a/**/a/**/b", "a/**/b/**/c/**/d", "*x*y*z*"])
def test_a_pattern_with_too_many_wildcards_is_a_config_error_naming_file_and_key(pattern: str) -> None:
    clean, (problem,) = validate_layer({"protectedFilePatterns": ["src/**", pattern]}, "/p/.opencode/dcp.jsonc")
    assert clean == {"protectedFilePatterns": ["src/**"]}
    assert problem.render().startswith("dcp: /p/.opencode/dcp.jsonc: protectedFilePatterns: error: entry 2")
    assert "too many wildcards" in problem.text


@pytest.mark.parametrize("pattern", ["**/secrets/**/*.key", "*_secret_*.json", "src/**/test_*.py", "/*a*a*b", ".env*", "**/node_modules/**"])
def test_patterns_within_the_wildcard_budget_are_accepted(pattern: str) -> None:
    assert pattern_problem(pattern) is None


def test_a_pattern_validation_rejects_is_never_matched_by_the_host() -> None:
    # The host can get patterns that bypassed validation (a config built in code): it skips them too.
    protector = PathProtector(["*a*a*a*a*a*a*a*b", "docs/**"], "/p")
    assert not protector.is_protected(["/p/" + "a" * 40])
    assert protector.is_protected(["/p/docs/x.md"])


def test_a_path_longer_than_the_matching_limit_is_held_protected_without_matching() -> None:
    assert protects(["*.key"], "/p/" + "a/" * 600)
    assert protects(["*.key"], "/p/" + "b" * 300 + "/x.py")
    assert not protects([], "/p/" + "a" * 5000)


def test_each_distinct_path_runs_the_patterns_once(monkeypatch: pytest.MonkeyPatch) -> None:
    protector = PathProtector(["unique-pattern-for-counting/**"], "/p")
    matcher = protector._matcher
    assert matcher is not None
    calls: list[str] = []
    real = matcher._spec.match_file
    monkeypatch.setattr(matcher._spec, "match_file", lambda form: calls.append(form) or real(form))
    for _ in range(50):
        protector.is_protected(["/p/a.py", "/p/b.py"])
    assert sorted(calls) == ["/p/a.py", "/p/b.py", "a.py", "b.py"]


def test_the_verdict_cache_is_bounded() -> None:
    protector = PathProtector(["bounded-cache-check/**"], "/p")
    assert protector._matcher is not None
    for i in range(protection.VERDICT_CACHE_SIZE * 2):
        protector.is_protected([f"/p/f{i}.py"])
    assert protector._matcher.matches.cache_info().currsize <= protection.VERDICT_CACHE_SIZE


def test_validate_reports_exactly_what_the_host_uses(prune) -> None:
    patterns = ["**********.lock", "*a*a*b", "src/**"]
    clean, problems = validate_layer({"protectedFilePatterns": list(patterns)}, "f")
    assert clean["protectedFilePatterns"] == ["**********.lock", "src/**"] and len(problems) == 1
    msgs = [user(), call("read", {"filePath": f"{PROJECT}/x/yarn.lock"}, output="L" * 400), call("read", {"filePath": f"{PROJECT}/x/yarn.lock"}, output="L" * 400)]
    out = prune(msgs, make_config(protectedFilePatterns=patterns))
    assert [m["parts"][0]["state"]["output"] for m in out[1:]] == ["L" * 400, "L" * 400]


# -- apply_patch headers as OpenCode reads them ------------------------------------------------
@pytest.mark.parametrize(
    "header",
    [
        "*** Update File: secrets/key.txt",
        "*** Update File:secrets/key.txt",
        "*** Update File:\tsecrets/key.txt",
        "*** Update File:  secrets/key.txt",
        "*** Update File: secrets/key.txt  \r",
        "*** Update File:\u00a0secrets/key.txt\u3000",
        "*** Add File: secrets/key.txt",
        "*** Add File:secrets/key.txt",
        "*** Add File:\tsecrets/key.txt",
        "*** Delete File: secrets/key.txt",
        "*** Delete File:secrets/key.txt",
        "*** Delete File:\t secrets/key.txt",
        "*** Move to: secrets/key.txt",
        "*** Move to:secrets/key.txt",
        "*** Move to:\tsecrets/key.txt",
    ],
)
def test_every_header_spelling_opencode_accepts_is_protected(header: str) -> None:
    patch = f"*** Begin Patch\n*** Update File: docs/a.md\n{header}\n@@\n+x\n*** End Patch"
    paths = extract_paths("apply_patch", {"patchText": patch})
    assert SECRET in paths
    assert PathProtector(["secrets/**"], PROJECT).is_protected(paths)


@pytest.mark.parametrize(
    "line",
    ["***Update File: secrets/key.txt", " *** Update File: secrets/key.txt", "*** update file: secrets/key.txt", "*** Update File:   ", "+*** Update File: x"],
)
def test_lines_opencode_does_not_read_as_headers_name_no_path(line: str) -> None:
    assert extract_paths("apply_patch", {"patchText": f"*** Begin Patch\n{line}\n*** End Patch"}) == ()


def test_a_protected_file_in_a_tab_separated_header_is_not_purged(prune) -> None:
    patch = "*** Begin Patch\n*** Delete File:\t.env\n*** End Patch"
    msgs = [user(), call("apply_patch", {"patchText": patch}, status="error")] + [user() for _ in range(5)]
    out = prune(msgs, make_config(protectedFilePatterns=[".env"]))
    assert out[1]["parts"][0]["state"]["input"]["patchText"] == patch


# -- Windows paths -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["C:\\proj\\secrets\\key.txt", "C:/proj/secrets/key.txt", "c:\\proj\\secrets\\key.txt", "secrets\\key.txt", "C:\\proj\\src\\..\\secrets\\key.txt"])
def test_windows_paths_in_a_windows_project_are_protected(path: str) -> None:
    assert protects(["secrets/**"], path, directory="C:\\proj")


def test_a_windows_path_outside_the_project_is_matched_as_given_only() -> None:
    assert path_forms("D:\\other\\secrets\\key.txt", "C:\\proj") == ("D:/other/secrets/key.txt",)
    assert not protects(["/secrets/**"], "D:\\other\\secrets\\key.txt", directory="C:\\proj")


def test_a_drive_path_is_absolute() -> None:
    assert absolute_path("c:\\x\\y.py", "/home/u/proj") == "C:/x/y.py"
    assert absolute_path("y.py", "C:\\proj") == "C:/proj/y.py"


def test_case_is_ignored_only_where_the_platform_ignores_it() -> None:
    assert protects(["secrets/**"], "C:\\Proj\\SECRETS\\Key.txt", directory="C:\\proj", ignore_case=True)
    assert not protects(["secrets/**"], f"{PROJECT}/SECRETS/key.txt", ignore_case=False)


def test_the_default_case_rule_follows_the_platform() -> None:
    assert protection.CASE_INSENSITIVE == (sys.platform in ("win32", "cygwin", "darwin"))

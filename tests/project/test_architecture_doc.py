"""docs/ARCHITECTURE.md names modules and functions that exist, and README links to it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from tests.support.paths import ROOT

DOC = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGE = ROOT / "dcp_plugin"

# Paths in backticks: `pipeline/session.py`, `shim/plugin.mjs`, `bridge/PROTOCOL.md`.
_PATH = re.compile(r"`((?:[a-z_]+/)+[A-Za-z_]+\.(?:py|mjs|md))`")
# Dotted references to a module's name: `model.refs.request_model`, `commands.dispatch.answer`.
_DOTTED = re.compile(r"`([a-z_]+(?:\.[a-z_]+)+\.[A-Za-z_]+)`")


def _resolve(relative: str) -> Path | None:
    for base in (PACKAGE, PACKAGE / "adapters", PACKAGE / "adapters" / "bridge", ROOT):
        if (base / relative).exists():
            return base / relative
    return None


def test_every_file_the_architecture_doc_names_exists() -> None:
    named = sorted(set(_PATH.findall(DOC.read_text(encoding="utf-8"))))
    assert named, "the document names no files"
    missing = [path for path in named if _resolve(path) is None]
    assert not missing, f"docs/ARCHITECTURE.md names files that do not exist: {missing}"


def test_every_dotted_name_the_architecture_doc_cites_is_defined() -> None:
    text = DOC.read_text(encoding="utf-8")
    # Only names in the package's own rooms (OpenCode's hook names are dotted too).
    cited = sorted({d for d in _DOTTED.findall(text) if (PACKAGE / d.split(".")[0]).is_dir()})
    assert cited, "the document cites no names"
    missing = []
    for dotted in cited:
        module, _, name = dotted.rpartition(".")
        try:
            found = hasattr(importlib.import_module(f"dcp_plugin.{module}"), name)
        except ImportError:
            found = False
        if not found:
            missing.append(dotted)
    assert not missing, f"docs/ARCHITECTURE.md cites names that are not defined: {missing}"


def test_the_readme_first_screen_links_the_architecture_doc() -> None:
    first_screen = (ROOT / "README.md").read_text(encoding="utf-8")[:4000]
    assert "docs/ARCHITECTURE.md" in first_screen


# A document named in a comment or docstring (`PROTOCOL.md`, `docs/ARCHITECTURE.md`).
_DOCUMENT = re.compile(r"\b((?:[a-z]+/)*[A-Z][A-Z_]+\.md)\b")


def _comments_and_docstrings(path: Path) -> str:
    """The comments and docstrings of a Python or TOML file (not its string data, which may name anything)."""
    import ast
    import tokenize

    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        return "\n".join(line.split("#", 1)[1] for line in text.splitlines() if "#" in line)
    with path.open("rb") as handle:
        comments = [tok.string for tok in tokenize.tokenize(handle.readline) if tok.type == tokenize.COMMENT]
    tree = ast.parse(text)
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]
    docstrings = [ast.get_docstring(n) or "" for n in nodes]
    return "\n".join(comments + docstrings)


def test_every_document_a_comment_or_docstring_names_is_in_the_repository() -> None:
    documents = {path.name for path in ROOT.rglob("*.md") if ".git" not in path.parts}
    sources = [ROOT / "pyproject.toml", *sorted((ROOT / "dcp_plugin").rglob("*.py")), *sorted((ROOT / "tests").glob("*.py"))]
    missing = sorted(
        f"{source.relative_to(ROOT)}: {name}"
        for source in sources
        for name in set(_DOCUMENT.findall(_comments_and_docstrings(source)))
        if name.rsplit("/", 1)[-1] not in documents
    )
    assert not missing, f"comments name documents that are not in the repository: {missing}"

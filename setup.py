"""Builds the package: its hot path compiled with mypyc where that works, plain Python otherwise.

Everything else is in pyproject.toml. What is compiled, and when the compiled modules are used,
is decided in dcp_plugin/compiled.py. ``DCP_PURE_PYTHON=1`` builds plain Python; a failed
compilation does too, saying why, so an install never fails for want of a compiler.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def _compiled_rules() -> ModuleType:
    # Loaded from its file: importing the package would need its dependencies at build time.
    spec = importlib.util.spec_from_file_location("_dcp_compiled_rules", HERE / "dcp_plugin" / "compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RULES = _compiled_rules()


def _say(text: str) -> None:
    print(f"dcp-plugin build: {text}", file=sys.stderr)


# Commands that only read the package's metadata: they compile nothing.
_METADATA_ONLY = frozenset({"egg_info", "dist_info", "sdist", "check"})


@functools.cache
def _extensions() -> tuple[list[Any], str | None]:
    """The compiled modules' extensions, or none and why not (once per process: setuptools asks more than once)."""
    if os.environ.get(RULES.PURE_ENV, "").strip() not in ("", "0"):
        return [], f"{RULES.PURE_ENV} was set"
    try:
        from mypyc.build import mypycify
    except ImportError:
        return [], "mypyc is not available"
    paths = [path.relative_to(HERE).as_posix() for path in RULES.sources(HERE / "dcp_plugin")]
    native = [Extension(name, [f"dcp_plugin/{source}"]) for name, source in RULES.NATIVE.items()]
    try:
        return [*mypycify(paths, opt_level="3"), *native], None
    except SystemExit:  # mypyc printed its errors, which pip shows only when verbose
        return [], f"{RULES.COMPILE_FAILED} (mypyc stopped: `pip install -v` shows why)"
    except Exception as exc:  # noqa: BLE001 - any failure leaves the plain Python build
        return [], f"{RULES.COMPILE_FAILED} ({exc!r})"


class _BuildExt(build_ext):
    """Compiles the hot path and stamps what it was built from; on any failure, plain Python, stamped so."""

    def finalize_options(self) -> None:
        # setuptools finalizes build_ext for the metadata too (its file list): compile only for a build.
        self._why_plain: str | None = None
        if not set(self.distribution.commands) <= _METADATA_ONLY:
            self.distribution.ext_modules, self._why_plain = _extensions()
        super().finalize_options()

    def run(self) -> None:
        if self._why_plain is None and self.extensions:
            try:
                super().run()
            except Exception as exc:  # noqa: BLE001 - no compiler, a compile error: the sources still work
                for output in self.get_outputs():
                    Path(output).unlink(missing_ok=True)
                self.extensions = []
                self._why_plain = f"{RULES.COMPILE_FAILED} ({exc!r})"
        if self._why_plain is not None:
            _say(f"{self._why_plain}: plain Python")
        target = HERE / "dcp_plugin" if self.inplace else Path(self.build_lib) / "dcp_plugin"
        target.mkdir(parents=True, exist_ok=True)
        RULES.write_stamp(target, HERE / "dcp_plugin", plain=self._why_plain)


# A stand-in, replaced when build_ext runs: it tells setuptools the wheel is platform-specific and
# that build_ext must run, without compiling anything when only the metadata is asked for.
setup(ext_modules=[Extension("dcp_plugin._compiled_core", sources=[])], cmdclass={"build_ext": _BuildExt})

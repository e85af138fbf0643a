"""The live config: re-read a layer only when its file changes, report each problem once."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from dcp_plugin.config.discovery import LayerSpec, layer_specs
from dcp_plugin.config.lastgood import keep_last_good
from dcp_plugin.config.loader import Effective, LayerResult, combine, load_layer
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.config.problems import summary
from dcp_plugin.config.remembered import Remembered
from dcp_plugin.config.schemaref import stable_schema_uri
from dcp_plugin.config.template import render, write_atomically
from dcp_plugin.config.upgrade import upgrade_earlier_template

Notify = Callable[[str | None, str], None]
# (path, mtime_ns, size, inode, mode): mode too, so fixing a file's permissions is noticed
Signature = tuple[str, int, int, int, int] | tuple[str, str] | None
_UNSEEN: Signature = ("", "never checked")


class _Layer:
    """One layer's last seen file signature and what it contributed."""

    def __init__(self, spec: LayerSpec, remembered: Remembered | None = None) -> None:
        self.spec = spec
        self.signature: Signature = _UNSEEN
        self.result: LayerResult | None = None
        self.good: LayerResult | None = None  # the last version that could be used (see lastgood)
        self.remembered = remembered  # the last good versions on disk, for a process that has none

    def stat(self) -> tuple[Signature, Path | None, os.stat_result | None]:
        """One stat when the layer's directory is absent (most are), else one per candidate name tried."""
        if len(self.spec.candidates) > 1:
            try:
                os.stat(self.spec.primary.parent)
            except (FileNotFoundError, NotADirectoryError):
                return None, None, None
            except OSError:
                pass  # the candidates' own stats say what is wrong
        for path in self.spec.candidates:
            try:
                st = os.stat(path)
            except (FileNotFoundError, NotADirectoryError):
                if os.path.islink(path):  # a dangling symlink is a file the user means, not an absent one
                    return (str(path), "dangling symlink"), path, None
                continue
            except OSError as exc:
                return (str(path), f"stat failed: {exc.strerror}"), path, None
            return (str(path), st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode), path, st
        return None, None, None

    def refresh(self) -> bool:
        """Reload when the file changed; True if it did."""
        signature, path, st = self.stat()
        if signature == self.signature:
            return False
        self.signature = signature
        if path is None:
            self.result = self.good = None  # deleted: an edit, not a break
            if self.remembered is not None:
                self.remembered.forget(self.spec.primary)
            return True
        # st is None: the path is there but cannot be stat'ed; load_layer reports why
        new = load_layer(path) if st is None else load_layer(path, st)
        if self.good is None and self.remembered is not None:
            # a process started while the file is broken still has the version the last one used
            self.good = self.remembered.load(self.spec.primary)
        self.result = keep_last_good(self.good, new)
        if self.result.data is not None:
            self.good = self.result
            if self.remembered is not None:
                self.remembered.save(self.spec.primary, self.result.data)
        return True


class ConfigSource:
    """Effective DcpConfig for a project, cheap to ask for before every request; never raises."""

    def __init__(
        self,
        directory: Path,
        notify: Notify | None = None,
        *,
        create_global: bool = True,
        env: Mapping[str, str] | None = None,
        remember: bool = True,
    ) -> None:
        self._notify = notify
        self._create_global = create_global
        self._config = DcpConfig()
        self._effective: Effective | None = None
        self._reported: set[str] = set()
        self._started = False
        self._lock = threading.Lock()
        try:
            environ = dict(os.environ if env is None else env)
            remembered = Remembered(environ) if remember else None
            self._layers = [_Layer(spec, remembered) for spec in layer_specs(Path(directory), environ)]
        except Exception as exc:  # noqa: BLE001 - a broken environment must not break the host
            self._layers = []
            self._report_unexpected(exc)

    def get(self) -> DcpConfig:
        """The current config: one stat per layer; files are re-read only when they changed."""
        try:
            with self._lock:
                if not self._started:
                    self._started = True
                    if self._create_global:
                        self.ensure_global_file()
                changed = [layer for layer in self._layers if layer.refresh()]
                if changed or self._effective is None:
                    self._rebuild(changed)
        except Exception as exc:  # noqa: BLE001 - a config bug must not break the host's request
            self._report_unexpected(exc)
        return self._config

    def origins(self) -> dict[str, str]:
        """Dotted key path -> the file its current value came from, or `default`."""
        self.get()
        return dict(self._effective.origins) if self._effective else {}

    def values(self) -> dict[str, object]:
        """The current config as camelCase JSON-ready data."""
        self.get()
        return dict(self._effective.values) if self._effective else {}

    def files(self) -> list[Path]:
        """The config files currently in use, lowest layer first."""
        self.get()
        return [layer.result.path for layer in self._layers if layer.result is not None]

    def _rebuild(self, changed: list[_Layer]) -> None:
        effective = combine([layer.result for layer in self._layers if layer.result is not None])
        self._config = effective.config
        self._effective = effective
        # Every problem of this read in one message: the changed files' own, then the new ones of the merge.
        found = [problem for layer in changed for problem in (layer.result.problems if layer.result else [])]
        for problem in effective.problems:
            text = problem.render(effective.values, effective.origins)
            if text not in self._reported:
                self._reported.add(text)
                found.append(problem)
        message = summary(found, effective.values, effective.origins)
        if message is not None:
            self._emit(message)

    def ensure_global_file(self) -> None:
        """Create the global dcp.jsonc when none exists (a real host's first run); rewrite an earlier unmodified one."""
        if not self._layers or self._layers[0].spec.label != "global":
            return
        layer = self._layers[0]
        # Refreshed on every start, so the `$schema` of files dcp wrote survives a reinstall.
        uri = stable_schema_uri(layer.spec.primary.parent)
        found = layer.stat()[1]
        if found is not None:
            self._upgrade(found, uri)
            return
        target = layer.spec.primary
        try:
            write_atomically(target, render(uri), exclusive=True)
        except OSError as exc:
            self._emit(
                f"dcp: could not create the default config file {target} ({exc.strerror or exc}); "
                "using the built-in defaults"
            )

    def _upgrade(self, path: Path, uri: str | None) -> None:
        """An earlier version's unmodified file becomes the current template (config/upgrade.py)."""
        try:
            backup = upgrade_earlier_template(path, uri)
        except OSError:
            return  # a read-only file: its earlier defaults are ignored all the same
        if backup is not None:
            self._emit(
                f"dcp: {path} held an earlier version's defaults, unchanged; it now lists every setting "
                f"commented out, so the current defaults apply (the old file is kept as {backup})"
            )

    def _report_unexpected(self, exc: BaseException) -> None:
        self._emit_once(
            f"dcp: unexpected error while reading the config ({type(exc).__name__}: {exc}); "
            "keeping the last good settings"
        )

    def _emit_once(self, text: str) -> None:
        if text not in self._reported:
            self._reported.add(text)
            self._emit(text)

    def _emit(self, text: str) -> None:
        if self._notify is not None:
            try:
                self._notify(None, text)
                return
            except Exception:  # noqa: BLE001 - a failing notifier must not hide the message nor break us
                pass
        try:
            print(text, file=sys.stderr)
        except Exception:  # noqa: BLE001 - a closed stderr leaves nowhere to say it
            pass

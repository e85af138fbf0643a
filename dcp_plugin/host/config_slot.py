"""Where the runtime's effective config comes from: a pinned config, or the project's config files read lazily."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from dcp_plugin.config.misplaced import misplaced_warnings
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.notifier import Notifier


class ConfigProvider(Protocol):
    """Anything that answers the effective config (a live config source, a pinned config)."""

    def get(self) -> DcpConfig: ...


class StaticConfig:
    """A config source that always answers the same config (tests, embedding hosts, a CLI's --config)."""

    def __init__(self, config: DcpConfig | None = None) -> None:
        self.config = config or DcpConfig()

    def get(self) -> DcpConfig:
        """The config."""
        return self.config


class ConfigSlot:
    """The runtime's config provider: pinned (a config or provider given), else the files of its directory."""

    def __init__(self, config: DcpConfig | ConfigProvider | None, notifier: Notifier, *, create_global: bool = False) -> None:
        self._notifier = notifier
        self._create_global = create_global  # the host's startup makes the global config file when missing
        self._provider: ConfigProvider | None = StaticConfig(config) if isinstance(config, DcpConfig) else config

    def get(self, directory: str) -> DcpConfig:
        """The effective config, re-read cheaply when a file changed."""
        config: DcpConfig = self.source(directory).get()
        return config

    def source(self, directory: str) -> Any:  # a ConfigSource, or any ConfigProvider (e.g. StaticConfig)
        """The provider, made from the config files of ``directory`` on first use when none is pinned."""
        if self._provider is None:
            from dcp_plugin.config.source import ConfigSource

            self._provider = ConfigSource(Path(directory), self._notifier, create_global=False)
        return self._provider

    def pin(self, config: DcpConfig | None) -> None:
        """Pin a config (a CLI's --config), or go back to the config files with None."""
        self._provider = StaticConfig(config) if config is not None else None

    def started(self, directory: str) -> None:
        """The host started in ``directory``: make the global config file if asked to, and warn of misplaced ones."""
        if not self._create_global:
            return
        self.source(directory).ensure_global_file()
        for line in misplaced_warnings(directory):
            self._notifier.warn(line)

    def moved(self) -> None:
        """The project moved: its config files are elsewhere, unless a config was pinned."""
        if not isinstance(self._provider, StaticConfig):
            self._provider = None

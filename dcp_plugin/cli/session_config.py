"""The config a CLI command replays or reports a session with: a `--config` file, else the dcp.jsonc files."""

from __future__ import annotations

import sys
from pathlib import Path

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.replay.file_error import SessionFileError


def load_config_option(path: Path) -> DcpConfig:
    """The config of a `--config FILE` option; problems go to stderr, an unusable file raises."""
    from dcp_plugin.config.loader import load_config_file

    config, problems = load_config_file(path)
    for text in problems:
        print(text, file=sys.stderr)
    if config is None:
        raise SessionFileError(f"{path}: config file could not be used (see above)")
    return config


def files_config(directory: str) -> DcpConfig:
    """The config the dcp.jsonc files give for ``directory``; problems go to stderr.

    Unlike a real host's, this never creates the global file: a CLI only reads settings.
    """
    from dcp_plugin.config.source import ConfigSource

    source = ConfigSource(Path(directory), lambda _session, text: print(text, file=sys.stderr), create_global=False)
    return source.get()


def session_config(option: Path | None, directory: str) -> DcpConfig:
    """The config a CLI replays a session with: the `--config` file alone, else the config files."""
    return load_config_option(option) if option is not None else files_config(directory)

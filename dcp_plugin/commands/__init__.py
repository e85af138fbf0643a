"""The `/dcp` slash commands: help, context, stats and sweep, answered as plain text."""

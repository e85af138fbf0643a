"""Recorded and generated sessions: reading them, generating them, and replaying them through the plugin."""

"""The pruning pipeline: the host's messages, the call ledger, the strategies and the placeholders."""

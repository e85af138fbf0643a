"""Value types below everything else, with no I/O: the canonical message shape, model references, token estimates."""

"""`python -m dcp_plugin.adapters.bridge`: run the bridge server on stdin/stdout (the JS shim starts it)."""

from __future__ import annotations

import sys

from dcp_plugin.adapters.bridge.server import main

if __name__ == "__main__":
    sys.exit(main())

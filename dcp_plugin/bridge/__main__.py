"""``python -m dcp_plugin.bridge``, as earlier shims start it: the bridge server of ``dcp_plugin.adapters.bridge``."""

from __future__ import annotations

import sys

from dcp_plugin.adapters.bridge.server import main

if __name__ == "__main__":
    sys.exit(main())

"""The host side: the hook contract, the plugin object, and the runtime every façade calls."""

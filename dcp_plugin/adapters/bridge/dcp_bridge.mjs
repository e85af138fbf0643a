// dcp_bridge.mjs: the OpenCode plugin that forwards OpenCode's hooks to the Python dcp bridge.
//
// The entry module, dependency-free. OpenCode loads it (installed as `dcp.js` by `dcp opencode
// install`, or from a "plugin" entry in opencode.json) and calls the default export
// `async (ctx, options) => hooks`. Every export of this module must be a plugin function
// (OpenCode rejects any other export), so the plugin's code lives in the ES modules of shim/
// (plugin.mjs wires them; settings.mjs lists the options) and is loaded from here. Tests reach
// the internals through the non-enumerable `hooks.__dcpBridge`.
//
// The wire protocol (requests, replies, patches, events, what is resent when, failure policy)
// is specified once, in PROTOCOL.md beside this file; the Python side cites the same file.

// `dcp opencode install` rewrites these two lines: the interpreter that installed the package,
// and the absolute URL of the package's shim/ folder (the installed `dcp.js` lives elsewhere).
const INSTALLED_PYTHON = "python3";
const SHIM_URL = new URL("./shim/", import.meta.url).href;

export default async function DcpBridgePlugin(ctx, options) {
  let plugin;
  try {
    plugin = await import(`${SHIM_URL}plugin.mjs`);
  } catch (err) {
    return unavailable(ctx?.client, `its modules could not be loaded from ${SHIM_URL} (${err?.message ?? err})`);
  }
  return plugin.startPlugin(ctx, options, INSTALLED_PYTHON);
}

// The package's modules are gone (dcp-plugin uninstalled or moved since `dcp opencode install`):
// OpenCode keeps working, unpruned; its log says why at once, a toast at the first request.
function unavailable(client, reason) {
  const message =
    `dcp: context pruning is off: ${reason}. Requests go to the model unpruned. Install dcp-plugin again ` +
    `and run \`dcp opencode install\` (add --global if it was installed globally), or delete ${import.meta.url}.`;
  const quietly = (call) => {
    try {
      call()?.catch?.(() => {});
    } catch {
      // reporting must never break the host
    }
  };
  quietly(() => client?.app?.log?.({ body: { service: "dcp", level: "error", message } }));
  let shown = false;
  return {
    "experimental.chat.messages.transform": async () => {
      if (shown) return;
      shown = true;
      quietly(() => client?.tui?.showToast?.({ body: { message, variant: "error" } }));
    },
  };
}

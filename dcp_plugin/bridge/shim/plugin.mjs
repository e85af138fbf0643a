// The shim's entry as a `dcp.js` installed by an earlier version finds it: the modules now live in
// dcp_plugin/adapters/bridge/shim/, so an upgrade keeps pruning on until the shim is reinstalled.
export * from "../../adapters/bridge/shim/plugin.mjs";

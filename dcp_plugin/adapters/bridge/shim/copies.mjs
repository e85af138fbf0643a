// copies.mjs: one active copy of the plugin per OpenCode instance (project directory), however
// many times OpenCode loads it (installed in the project and globally, or listed twice), through
// a registry every copy in the process shares.

// Kept on globalThis: copies loaded from different files are different module instances.
const REGISTRY_KEY = Symbol.for("dcp_plugin.bridge.registry");

const DUPLICATE_TEXT =
  "dcp: the dcp plugin is loaded twice in this project (installed both in the project and globally, " +
  "or listed twice); this copy stays idle and the other one prunes. Remove one: " +
  "`dcp opencode uninstall --global` or `dcp opencode uninstall` in the project.";

// The process-wide registry every copy of this plugin shares (see REGISTRY_KEY).
export function sharedRegistry() {
  let registry = globalThis[REGISTRY_KEY];
  if (registry === null || typeof registry !== "object") {
    registry = {};
    Object.defineProperty(globalThis, REGISTRY_KEY, { value: registry, configurable: true, writable: true });
  }
  if (!(registry.owners instanceof Map)) registry.owners = new Map(); // instance directory -> active copy
  if (!(registry.handled instanceof WeakSet)) registry.handled = new WeakSet(); // hook outputs an active copy took
  if (typeof registry.unavailableShown !== "boolean") registry.unavailableShown = false;
  return registry;
}

// One loaded copy: registered as the active one of its instance unless another copy was first.
export class PluginCopy {
  // `instanceKey`: one OpenCode process serves several projects, each with its own plugin
  // instances; a copy is a duplicate only of another copy loaded for the same directory.
  // `onTakeOver`: called when this copy becomes the active one after loading.
  constructor(registry, instanceKey, log, toast, onTakeOver) {
    this.registry = registry;
    this.instanceKey = instanceKey;
    this.log = log;
    this.toast = toast;
    this.onTakeOver = onTakeOver;
    this.duplicateAnnounced = false;
    this.stopped = false; // disposed: this copy never serves a hook again
    if (!registry.owners.has(instanceKey)) registry.owners.set(instanceKey, this);
  }

  isActive() {
    return this.registry.owners.get(this.instanceKey) === this;
  }

  // Whether this copy serves the hook call whose output object is `output`. OpenCode calls each
  // plugin's hook in load order with the same output object, so the active copy marks it and a
  // later copy that finds it marked stays idle (and says so once, at a request). A copy that
  // finds it unmarked although another copy is registered takes over: that one belongs to an
  // instance OpenCode disposed.
  claim(output, request) {
    if (this.stopped) return false;
    const markable = output !== null && typeof output === "object";
    if (!this.isActive()) {
      if (!markable) return false;
      if (this.registry.handled.has(output)) {
        if (request && !this.duplicateAnnounced) {
          this.duplicateAnnounced = true;
          this.log("warn", DUPLICATE_TEXT);
          this.toast(DUPLICATE_TEXT, "warning");
        }
        return false;
      }
      this.registry.owners.set(this.instanceKey, this);
      this.log("info", "dcp: no other active copy of the plugin answered; this copy takes over");
      this.onTakeOver();
    }
    if (markable) this.registry.handled.add(output);
    return true;
  }

  // Disposed: serves nothing more, and lets a later copy of its instance take over.
  release() {
    this.stopped = true;
    if (this.isActive()) this.registry.owners.delete(this.instanceKey);
  }
}

// plugin.mjs: one loaded copy of the plugin: wires the settings, the bridge process, the session
// sync, the model's tools and /dcp into the hooks OpenCode calls. Every hook fails open: on any
// error the request goes out unpruned and OpenCode keeps working.

import { DcpCommand, COMMAND_NAME, registerCommand } from "./commands.mjs";
import { PluginCopy, sharedRegistry } from "./copies.mjs";
import { modelOf, sessionOf } from "./messages.mjs";
import { StartFailureNotice, crashNotice } from "./notices.mjs";
import { makeLogger, makeToast } from "./opencode.mjs";
import { BridgeProcess } from "./process.mjs";
import { SessionChannel } from "./channel.mjs";
import { resolveSettings } from "./settings.mjs";
import { SessionSync } from "./sync.mjs";
import { ModelTools } from "./tools.mjs";

// The hooks' non-enumerable key through which tests reach the internals.
const BRIDGE_HANDLE = "__dcpBridge";
// Waits for a child that had its stdin closed before it is sent SIGTERM (it flushes on exit).
const EXIT_GRACE_MS = 5000;

// The model a chat.params call names (it carries the configured context limit), else undefined.
function modelOfParams(input) {
  const model = input?.model;
  if (!input?.sessionID || !model) return undefined;
  return {
    providerID: model.providerID ?? input.provider?.info?.id ?? null,
    modelID: model.id ?? model.modelID ?? null,
    ...(model.limit ? { limit: { context: model.limit.context, output: model.limit.output } } : {}),
  };
}

// The plugin function's body: `ctx` and `options` as OpenCode passes them; `installedPython` is
// the interpreter `dcp opencode install` recorded (the default when no setting names one).
export async function startPlugin(ctx, options, installedPython) {
  const settings = resolveSettings(options, process.env, installedPython);
  const client = ctx?.client;
  const log = makeLogger(client, settings.debug);
  const toast = makeToast(client);
  const sync = new SessionSync();
  const models = new Map(); // sessionID -> model seen in chat.params (has the context limit)
  const registry = sharedRegistry();
  const notice = new StartFailureNotice(registry, log, toast);

  const onEvent = (event) => {
    if (event.event === "notify" && typeof event.text === "string") {
      toast(event.text, "info");
      log("info", event.text);
    } else if (event.event === "log") {
      log(String(event.level || "info"), String(event.message ?? ""));
    }
  };

  const context = { directory: ctx?.directory, worktree: ctx?.worktree, projectID: ctx?.project?.id };
  const onCrash = crashNotice(registry, log, toast);
  const bridge = new BridgeProcess(settings, context, log, onEvent, (failure) => notice.failed(failure), onCrash);
  const copy = new PluginCopy(registry, String(ctx?.directory ?? ""), log, toast, () => bridge.ensureStarted());
  if (copy.isActive()) bridge.ensureStarted();

  const claim = (output, request) => {
    if (!copy.claim(output, request)) return false;
    if (request) notice.request();
    return true;
  };

  const stop = (graceMs = 0) => {
    copy.release();
    bridge.stop(graceMs);
  };

  const channel = new SessionChannel(bridge, sync, client, log, settings.commandTimeoutMs);
  const command = new DcpCommand(client, sync, channel, models, log, claim);
  const tools = new ModelTools(bridge, sync, channel, models, log);
  if (copy.isActive() && bridge.alive) {
    let timer;
    const waited = new Promise((resolve) => {
      timer = setTimeout(resolve, settings.toolsWaitMs);
      timer.unref?.();
    });
    await Promise.race([tools.load(settings.startupTimeoutMs), waited]);
    clearTimeout(timer);
  }

  const hooks = {
    tool: tools.tools,

    // Adds what the tools are for (the same text on every request, so the cached prompt stays valid).
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const systemText = tools.systemText;
        if (!systemText || !claim(output, false)) return;
        if (Array.isArray(output?.system) && !output.system.includes(systemText)) output.system.push(systemText);
      } catch (err) {
        log("warn", `could not add to the system prompt: ${err?.message ?? err}`);
      }
    },

    config: async (config) => {
      try {
        if (!config || typeof config !== "object" || !claim(config, false)) return;
        registerCommand(config);
      } catch (err) {
        log("warn", `could not register /${COMMAND_NAME}: ${err?.message ?? err}`);
      }
    },

    "chat.params": async (input, output) => {
      try {
        if (!claim(output, true)) return;
        const model = modelOfParams(input);
        if (model) models.set(input.sessionID, model);
      } catch {
        // model info is only a hint for the bridge
      }
    },

    "experimental.chat.messages.transform": async (input, output) => {
      try {
        if (!claim(output, true)) return;
        const messages = output?.messages;
        if (!Array.isArray(messages) || messages.length === 0) return;
        const sessionID = input?.sessionID || sessionOf(messages);
        if (!sessionID) return;
        await sync.serialize(sessionID, async () => {
          try {
            await channel.prune(sessionID, messages, models.get(sessionID) || modelOf(messages), settings.timeoutMs);
          } catch (err) {
            log("warn", `request for ${sessionID} sent unpruned: ${err?.message ?? err}`);
          }
        });
      } catch (err) {
        log("error", `transform failed, request sent unpruned: ${err?.message ?? err}`);
      }
    },

    "command.execute.before": (input, output) => command.answer(input, output),

    // OpenCode disposes an instance's plugins when it reloads or closes the instance: let the
    // child finish (it exits when its stdin closes) and let a later copy take over.
    dispose: async () => {
      try {
        stop(EXIT_GRACE_MS);
      } catch {
        // nothing to clean up then
      }
    },
  };

  Object.defineProperty(hooks, BRIDGE_HANDLE, {
    enumerable: false,
    value: { bridge, sync, settings, registry, isActive: () => copy.isActive(), stop: () => stop() },
  });
  return hooks;
}

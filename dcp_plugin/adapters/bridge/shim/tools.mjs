// tools.mjs: the plugin's tools for the model and the system text saying what they are for, both
// defined by the bridge (its config says which tools are on); each call runs through the bridge.

export class ModelTools {
  // `models`: sessionID -> the model seen in chat.params, sent along with each call.
  constructor(bridge, sync, channel, models, log) {
    this.bridge = bridge;
    this.sync = sync;
    this.channel = channel;
    this.models = models;
    this.log = log;
    // OpenCode reads `hooks.tool` when it first lists its tools, so this object is filled in place.
    this.tools = {};
    this.systemText = null;
  }

  // Asks the bridge for the tools and the system text (nothing is registered if it cannot answer).
  async load(timeoutMs) {
    try {
      const reply = await this.bridge.request({ op: "tools" }, timeoutMs);
      for (const definition of Array.isArray(reply.tools) ? reply.tools : []) {
        if (definition && typeof definition.name === "string") this.tools[definition.name] = this.toolOf(definition);
      }
      this.systemText = typeof reply.system === "string" && reply.system ? reply.system : null;
    } catch (err) {
      this.log("warn", `no pruning tools for the model: ${err?.message ?? err}`);
    }
  }

  // Runs a call of one of the plugin's tools through the child, like a command.
  run(sessionID, name, args, callID) {
    return this.channel.sendForSession("tool", sessionID, { name, arguments: args ?? {}, callID: callID ?? null }, async (fallback) =>
      this.models.get(sessionID) || fallback,
    );
  }

  // OpenCode's shape of a plugin tool: `args` are JSON Schema properties (OpenCode makes them all
  // required); `execute` answers the model. A refused call throws, so OpenCode records it as a
  // failed call (the model reads the same text).
  toolOf(definition) {
    return {
      description: String(definition.description ?? ""),
      args: definition.parameters?.properties ?? {},
      execute: async (args, toolContext) => {
        const sessionID = toolContext?.sessionID;
        let reply;
        try {
          if (!sessionID) throw new Error("the call came without a session id");
          reply = await this.sync.serialize(sessionID, () => this.run(sessionID, definition.name, args, toolContext?.callID));
        } catch (err) {
          this.log("warn", `${definition.name} failed: ${err?.message ?? err}`);
          throw new Error(`dcp: the pruning bridge is unavailable (${err?.message ?? err}); nothing was changed.`);
        }
        if (reply.error) throw new Error(String(reply.output ?? "refused"));
        return { output: String(reply.output ?? ""), title: String(reply.title ?? definition.name), metadata: {} };
      },
    };
  }
}

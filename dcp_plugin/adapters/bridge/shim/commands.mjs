// commands.mjs: the /dcp command: registered in OpenCode's config, answered by the bridge, and
// its reply stored in the session without a model turn.

import { withConfiguredLimit } from "./opencode.mjs";

export const COMMAND_NAME = "dcp";
// Thrown from command.execute.before: OpenCode 1.18 has no "handled" flag, so throwing is the
// only way to keep a handled command from being sent to the model (see tests/e2e/FINDINGS.md).
// This process is `opencode run --command ...`, whose output is a terminal's or a pipe's, not a screen's.
const RUN_COMMAND_LINE = process.argv[2] === "run" && process.argv.includes("--command");
const HANDLED_MESSAGE = "dcp: /dcp was answered by the dcp plugin (not an error; this stops OpenCode from sending it to the model)";

// Registers /dcp in OpenCode's `config` unless the user defined their own command with that name.
export function registerCommand(config) {
  config.command = config.command || {};
  if (!config.command[COMMAND_NAME]) {
    config.command[COMMAND_NAME] = {
      template: "/dcp $ARGUMENTS",
      description: "Dynamic context pruning: context, stats, sweep, pin, unpin (answered by the dcp plugin)",
    };
  }
}

export class DcpCommand {
  // `claim(output, request)`: whether this copy of the plugin serves the hook call (copies.mjs).
  // `models`: sessionID -> the model seen in chat.params (it has the context limit).
  constructor(client, sync, channel, models, log, claim) {
    this.client = client;
    this.sync = sync;
    this.channel = channel;
    this.models = models;
    this.log = log;
    this.claim = claim;
  }

  // Answers a /dcp command through the child, with the session's model and its configured limit.
  run(sessionID, args) {
    return this.channel.sendForSession(
      "command",
      sessionID,
      { command: COMMAND_NAME, arguments: args },
      (fallback) => withConfiguredLimit(this.client, this.models.get(sessionID) || fallback),
      true,
    );
  }

  // The command.execute.before hook: stores the bridge's answer (or why there is none) as a
  // message, then throws so that OpenCode does not send the command to the model. Other
  // commands, and /dcp calls the bridge hands back (handled: false), go on as usual.
  async answer(input, output) {
    let sessionID;
    let text;
    let handled = true;
    try {
      if (input?.command !== COMMAND_NAME || !this.claim(output, true)) return;
      sessionID = input.sessionID;
      const reply = await this.sync.serialize(sessionID, () => this.run(sessionID, String(input.arguments ?? "")));
      handled = reply.handled !== false;
      text = String(reply.text ?? "");
    } catch (err) {
      text = `dcp: the pruning bridge is unavailable (${err?.message ?? err}). Pruning is off until it restarts.`;
    }
    if (!handled) return;
    try {
      // noReply stores the reply without running the model; ignored keeps it out of the context.
      await this.client.session.prompt({
        path: { id: sessionID },
        body: { noReply: true, parts: [{ type: "text", text, ignored: true }] },
      });
    } catch (err) {
      this.log("warn", `could not show the /dcp reply: ${err?.message ?? err}`);
    }
    // `opencode run --command dcp ...` shows nothing of a handled command but OpenCode's own
    // "Unexpected server error": print the reply on stderr there (never in the terminal UI).
    if (RUN_COMMAND_LINE) process.stderr.write(`${text}\n`);
    throw new Error(HANDLED_MESSAGE);
  }
}

// Test plugin: registers /probe and answers it the way OpenCode 1.18 allows a plugin to: store the
// reply as an ignored user part without a model turn (noReply), then throw so the command
// itself never reaches the model.
export const HandledCommand = async ({ client }) => ({
  config: async (config) => {
    config.command = config.command || {};
    config.command.probe = { template: "PROBE TEMPLATE $ARGUMENTS", description: "test command" };
  },
  "command.execute.before": async (input) => {
    if (input.command !== "probe") return;
    await client.session.prompt({
      path: { id: input.sessionID },
      body: { noReply: true, parts: [{ type: "text", text: `probe answered: ${input.arguments}`, ignored: true }] },
    });
    throw new Error("probe handled by the test plugin");
  },
});

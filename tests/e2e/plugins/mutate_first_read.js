// Test plugin: replaces the output of the first completed tool call whose output contains the
// marker, in place, inside experimental.chat.messages.transform.
const MARKER = "SECRET-CONTENT-1234";
export const MutateFirstRead = async () => ({
  "experimental.chat.messages.transform": async (_input, output) => {
    for (const message of output.messages) {
      for (const part of message.parts) {
        const state = part.type === "tool" ? part.state : undefined;
        if (state?.status === "completed" && typeof state.output === "string" && state.output.includes(MARKER)) {
          state.output = "[MUTATED BY TEST PLUGIN]";
          return;
        }
      }
    }
  },
});

"""Deterministic generator of realistic coding-agent sessions in OpenCode's export format."""

from __future__ import annotations

import json
import random
from typing import Any

DEFAULT_DIRECTORY = "/home/dev/project"
# Hidden truth for estimate benchmarks: the simulated provider counts this many characters per token
# and a fixed prompt overhead (system prompt + tool definitions) not present in the messages.
SIM_CHARS_PER_TOKEN = 3.3
SIM_PROMPT_OVERHEAD_TOKENS = 11_000
# Time, in seconds: a model step, a tool run, the user's think time between turns, and how often a
# turn follows a break long enough for every provider's prompt cache to expire.
STEP_SECONDS = (2.0, 25.0)
TOOL_SECONDS = (0.1, 6.0)
THINK_SECONDS = (15.0, 240.0)
BREAK_SECONDS = (420.0, 3600.0)
BREAK_CHANCE = 0.2
SIM_CACHE_TTL_SECONDS = 300

_WORDS = (
    "value index result config parser token session buffer handler request response cache "
    "record message part state error output input path module client server budget limit"
).split()
_DIAGNOSTICS = (
    '"{}" is not defined',
    'Import "{}" could not be resolved',
    'Argument of type "{}" cannot be assigned to parameter of type "int"',
    "Expected expression",
    'Cannot access attribute "{}" for class "None"',
)
_DESCRIPTIONS = ("Run checks", "Run the checks again", "Verify the fix", "Re-run the tests", "Check it passes now")
_USER_ASKS = (
    "Fix the failing test in {f}.",
    "Add input validation to {f} and cover it with a test.",
    "Why does {f} time out on large inputs?",
    "Refactor {f} so the parsing lives in its own function.",
    "Read {f} and explain what it does.",
    "Rename the helper in {f} and update the callers.",
    "Continue.",
)


def _diagnostics_block(file: str, header: str, errors: list[str]) -> str:
    lines = "\n".join(errors)
    return f'\n\nLSP errors detected in {header}:\n<diagnostics file="{file}">\n{lines}\n</diagnostics>'


class _Sim:
    def __init__(self, seed: int, directory: str, busy: bool = False, lsp: bool = False) -> None:
        self.busy = busy
        self.lsp = lsp
        # The language server has a stream of its own too: with `lsp` a seed's session does the same
        # calls, only their results carry what OpenCode adds.
        self.lsp_rng = random.Random(seed * 104729 + 3)
        self.errors: dict[str, list[str]] = {}  # per absolute path, the errors the server reports now
        self.rng = random.Random(seed)
        # Time has a stream of its own, so modelling it never changes what a seed's session says.
        self.time_rng = random.Random(seed * 7919 + 1)
        self.directory = directory
        self.session_id = f"ses_sim{seed:06d}"
        self.messages: list[dict[str, Any]] = []
        self.clock = 1_790_000_000_000
        self.counter = 0
        self.prompt_chars = 0
        n_files = 24
        self.files = [f"src/{self.rng.choice(_WORDS)}_{i}.py" for i in range(n_files)]
        self.files += ["README.md", "pyproject.toml", "tests/test_core.py", ".env"]
        self.contents: dict[str, str] = {}
        self.user_id = ""
        self.last_request_ms: int | None = None
        self.last_prompt = 0

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter:08d}"

    def tick(self, seconds: tuple[float, float] = TOOL_SECONDS) -> int:
        """Advance the clock by a random duration in ``seconds``; the new time in ms."""
        self.clock += int(1000 * self.time_rng.uniform(*seconds))
        return self.clock

    def think(self) -> int:
        """The user's pause before a new turn: think time, sometimes a long break."""
        if not self.messages:
            return self.clock
        long_break = self.time_rng.random() < BREAK_CHANCE
        return self.tick(BREAK_SECONDS if long_break else THINK_SECONDS)

    def content(self, path: str) -> str:
        if path not in self.contents:
            rng = self.rng
            lines = [
                "    " * rng.randint(0, 2) + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 9)))
                for _ in range(rng.randint(80, 400) if self.busy else rng.randint(10, 120))
            ]
            self.contents[path] = "\n".join(lines)
        return self.contents[path]

    def abs(self, path: str) -> str:
        return f"{self.directory}/{path}"

    # -- messages ----------------------------------------------------------------------------
    def user(self, text: str) -> None:
        mid = self.next_id("msg")
        self.user_id = mid
        self.messages.append(
            {
                "info": {
                    "id": mid,
                    "sessionID": self.session_id,
                    "role": "user",
                    "time": {"created": self.think()},
                    "agent": "build",
                    "model": {"providerID": "sim", "modelID": "sim-coder"},
                },
                "parts": [self.part(mid, {"type": "text", "text": text})],
            }
        )
        self.prompt_chars += len(text)

    def part(self, mid: str, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "id": self.next_id("prt"), "sessionID": self.session_id, "messageID": mid}

    def assistant(self, tools: list[tuple[str, dict[str, Any], str, str | None]], text: str | None) -> None:
        mid = self.next_id("msg")
        start = self.tick((0.2, 1.5))
        parts = [self.part(mid, {"type": "step-start"})]
        step_chars = 0
        if text:
            parts.append(self.part(mid, {"type": "text", "text": text}))
            step_chars += len(text)
        for tool, tool_input, output, error in tools:
            t0 = self.tick((0.5, 4.0))
            state: dict[str, Any]
            if error is None:
                state = {
                    "status": "completed",
                    "input": tool_input,
                    "output": output,
                    "title": tool_input.get("filePath", tool),
                    "metadata": {},
                    "time": {"start": t0, "end": self.tick()},
                }
                step_chars += len(output)
            else:
                state = {"status": "error", "input": tool_input, "error": error, "time": {"start": t0, "end": self.tick()}}
                step_chars += len(error)
            step_chars += sum(len(str(v)) for v in tool_input.values())
            parts.append(
                self.part(mid, {"type": "tool", "tool": tool, "callID": self.next_id("call"), "state": state})
            )
        # What the model wrote in this step, its text and its calls' inputs, is what it reports as
        # output (as a provider does); the draw stays so that a seed gives the same session as before.
        self.rng.randint(20, 400)
        written = sum(len(str(p.get("text") or "")) for p in parts if p.get("type") == "text")
        written += sum(len(str(v)) for p in parts if p.get("type") == "tool" for v in p["state"]["input"].values())
        output_tokens = int(written / SIM_CHARS_PER_TOKEN)
        input_tokens = SIM_PROMPT_OVERHEAD_TOKENS + int(self.prompt_chars / SIM_CHARS_PER_TOKEN)
        # Like a provider with a 5-minute prompt cache: a warm request reads the previous prompt
        # from the cache and writes the rest; after a longer pause everything is written again.
        warm = self.last_request_ms is not None and start - self.last_request_ms <= SIM_CACHE_TTL_SECONDS * 1000
        read = min(self.last_prompt, input_tokens) if warm else 0
        self.last_request_ms, self.last_prompt = start, input_tokens
        tokens = {
            "total": input_tokens + output_tokens,
            "input": 0,
            "output": output_tokens,
            "reasoning": 0,
            "cache": {"read": read, "write": input_tokens - read},
        }
        finish = "tool-calls" if tools else "stop"
        parts.append(self.part(mid, {"type": "step-finish", "reason": finish, "tokens": tokens, "cost": 0}))
        self.prompt_chars += step_chars
        self.messages.append(
            {
                "info": {
                    "id": mid,
                    "sessionID": self.session_id,
                    "parentID": self.user_id,
                    "role": "assistant",
                    "mode": "build",
                    "agent": "build",
                    "path": {"cwd": self.directory, "root": self.directory},
                    "cost": 0,
                    "tokens": tokens,
                    "modelID": "sim-coder",
                    "providerID": "sim",
                    "time": {"created": start, "completed": self.tick(STEP_SECONDS)},
                    "finish": finish,
                },
                "parts": parts,
            }
        )

    # -- what OpenCode adds with a language server (`lsp`) -------------------------------------
    def diagnose(self, path: str, other_files: bool) -> str:
        """The diagnostics OpenCode 1.18 appends after writing ``path`` (errors only, 20 at most per file).

        The written file has errors about a third of the time; a write also reports up to five
        other files that still have errors, an edit only its own file.
        """
        rng = self.lsp_rng
        target = self.abs(path.removeprefix("./"))
        if rng.random() < 0.35:
            errors = []
            for _ in range(rng.randint(1, 4)):
                line, column = rng.randint(1, 120), rng.randint(1, 40)
                errors.append(f"ERROR [{line}:{column}] " + rng.choice(_DIAGNOSTICS).format(rng.choice(_WORDS)))
            self.errors[target] = errors
        else:
            self.errors.pop(target, None)
        text = ""
        if other_files:
            others = [f for f in self.errors if f != target][:5]
            text += "".join(_diagnostics_block(f, "other files", self.errors[f]) for f in others)
        if target in self.errors:
            text += _diagnostics_block(target, "this file, please fix", self.errors[target])
        return text

    def description(self, usual: str) -> str:
        """How the model words a bash call's description this time (with `lsp`; otherwise always the same)."""
        return self.lsp_rng.choice(_DESCRIPTIONS) if self.lsp else usual

    def todo_output(self, todos: list[dict[str, Any]]) -> str:
        """What todowrite returns: OpenCode sends the whole list back as JSON."""
        return json.dumps(todos, indent=2) if self.lsp else f"{len(todos)} todos"

    # -- tool calls --------------------------------------------------------------------------
    def read_output(self, path: str) -> str:
        body = "\n".join(f"{i}: {line}" for i, line in enumerate(self.content(path).split("\n"), 1))
        return f"<path>{self.abs(path)}</path>\n<type>file</type>\n<content>\n{body}\n\n(End of file)\n</content>"

    def random_call(self, focus: str) -> tuple[str, dict[str, Any], str, str | None]:
        rng = self.rng
        roll = rng.random()
        path = focus if rng.random() < 0.6 else rng.choice(self.files)
        if roll < 0.34:
            return "read", {"filePath": self.abs(path)}, self.read_output(path), None
        if roll < 0.40:
            return "read", {"filePath": self.abs(path), "offset": rng.randint(1, 50), "limit": 40}, self.read_output(path)[:1500], None
        if roll < 0.46:
            missing = f"src/{rng.choice(_WORDS)}_old.py"
            return "read", {"filePath": self.abs(missing)}, "", f"File not found: {self.abs(missing)}"
        if roll < 0.58:
            old = rng.choice(self.content(path).split("\n"))
            new = old + " " + rng.choice(_WORDS)
            if rng.random() < 0.12:
                return "edit", {"filePath": self.abs(path), "oldString": old + "x", "newString": new}, "", "oldString not found in content"
            self.contents[path] = self.content(path).replace(old, new, 1)
            edited = "Edit applied successfully." + (self.diagnose(path, False) if self.lsp else "")
            edit = {"filePath": self.abs(path), "oldString": old, "newString": new, "replaceAll": None}
            return "edit", edit, edited, None
        if roll < 0.66:
            self.contents[path] = self.content(path) + "\n" + " ".join(rng.choice(_WORDS) for _ in range(8))
            target = path if rng.random() < 0.5 else "./" + path
            wrote = "Wrote file successfully." + (self.diagnose(target, True) if self.lsp else "")
            return "write", {"filePath": target, "content": self.contents[path]}, wrote, None
        if roll < 0.70:
            script = "\n".join(f"echo {rng.choice(_WORDS)} >> {path}" for _ in range(rng.randint(5, 40)))
            if rng.random() < 0.5:
                return "bash", {"command": f"bash <<'EOF'\n{script}\nEOF", "description": "Apply a scripted change"}, "", "Command failed with exit code 2: syntax error near unexpected token"
            patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n" + "\n".join(f"+{line}" for line in self.content(path).split("\n")[:30]) + "\n*** End Patch"
            return "apply_patch", {"patchText": patch}, "", "Patch did not apply: context mismatch"
        if roll < 0.82:
            command = rng.choice(["pytest -q", "pytest -q tests/test_core.py", "ruff check .", "git status", "python -m build"])
            if rng.random() < 0.3:
                log = "\n".join(f"E   {rng.choice(_WORDS)} {rng.choice(_WORDS)} failed" for _ in range(rng.randint(5, 60)))
                failed = {"command": command, "description": self.description("Run checks"), "timeout": None}
                return "bash", failed, "", f"Command failed with exit code 1\n{log}"
            out = "\n".join(f"{rng.choice(_WORDS)} ok" for _ in range(rng.randint(3, 80)))
            return "bash", {"command": command, "description": self.description("Run checks")}, out, None
        if roll < 0.90:
            pattern = rng.choice(_WORDS)
            hits = "\n".join(f"{self.abs(rng.choice(self.files))}:{rng.randint(1, 200)}: {pattern}" for _ in range(rng.randint(1, 30)))
            return "grep", {"pattern": pattern, "path": self.directory, "include": None}, hits, None
        if roll < 0.95:
            todos = [{"content": f"{rng.choice(_WORDS)} {rng.choice(_WORDS)}", "status": "pending", "id": str(i)} for i in range(rng.randint(1, 5))]
            return "todowrite", {"todos": todos}, self.todo_output(todos), None
        if roll < 0.98:
            return "glob", {"pattern": "src/**/*.py", "path": None}, "\n".join(self.abs(f) for f in self.files[:12]), None
        return "task", {"description": "Investigate", "prompt": f"Look into {path}", "subagent_type": "general"}, "The sub-agent found nothing unusual.", None


def generate_session(
    messages: int = 400, seed: int = 1, directory: str = DEFAULT_DIRECTORY, busy: bool = False, lsp: bool = False
) -> dict[str, Any]:
    """A session of about ``messages`` messages that looks like real coding work, same for the same seed.

    ``busy``: a heavier agent, with several tool calls per step (about 1.2 per message) and
    files of 80-400 lines, so outputs are long.
    ``lsp``: the same calls, with results as OpenCode writes them in a project with a language
    server: diagnostics blocks in write and edit results, todo lists sent back as JSON, and
    bash descriptions worded differently from one run to the next.
    """
    sim = _Sim(seed, directory, busy, lsp)
    rng = sim.rng
    while len(sim.messages) < messages:
        focus = rng.choice(sim.files[:-1])
        sim.user(rng.choice(_USER_ASKS).format(f=focus))
        steps = rng.randint(1, 9)
        for _ in range(steps):
            if len(sim.messages) >= messages - 1:
                break
            count = rng.choice((1, 1, 2, 2, 3)) if busy else (1 if rng.random() < 0.85 else 2)
            calls = [sim.random_call(focus) for _ in range(count)]
            text = "Let me look." if rng.random() < 0.3 else None
            sim.assistant(calls, text)
        if len(sim.messages) < messages:
            sim.assistant([], "Done: " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 40))))
    msgs = sim.messages[:messages]
    info = {
        "id": sim.session_id,
        "title": f"Simulated session {seed}",
        "directory": directory,
        "time": {"created": msgs[0]["info"]["time"]["created"] if msgs else 0, "updated": sim.clock},
    }
    return {"info": info, "messages": msgs}


def main(argv: list[str] | None = None) -> int:
    """`python -m dcp_plugin.replay.simulate`: write a generated session as JSON."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m dcp_plugin.replay.simulate", description=generate_session.__doc__)
    parser.add_argument("--messages", type=int, default=400, help="number of messages (default 400)")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    parser.add_argument("--directory", default=DEFAULT_DIRECTORY, help="project directory recorded in the session")
    parser.add_argument("-o", "--output", help="file to write (default: stdout)")
    args = parser.parse_args(argv)
    if args.messages < 1:
        parser.error("--messages must be at least 1")
    text = json.dumps(generate_session(args.messages, args.seed, args.directory), indent=1)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

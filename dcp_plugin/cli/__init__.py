"""The `dcp` command and its subcommands: wiring over the library, no logic of their own."""

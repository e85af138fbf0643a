"""What the tests share: message builders, hosts, reference decisions, servers, and the project's paths."""

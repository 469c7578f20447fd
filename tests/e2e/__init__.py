"""End-to-end tests: real cronledger processes (subprocesses, real servers), started and stopped."""

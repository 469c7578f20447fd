"""Integration tests: the code against a real PostgreSQL and real local servers, in-process."""

"""One controller per resource; handlers parse, call one core function, return a Struct."""

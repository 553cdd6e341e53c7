"""The rules engine: inputs in, messages out. Pure and synchronous: no I/O, no clock."""

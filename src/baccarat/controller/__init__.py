"""The daemon of one table: the engine, the journal, the publisher and their wiring."""

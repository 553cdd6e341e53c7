"""The journal: every input on disk, fdatasync'd, before anything derived from it leaves."""

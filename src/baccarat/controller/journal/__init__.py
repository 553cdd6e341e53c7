"""The journal: every input on disk, fdatasync'd, before anything derived from it leaves.

``records`` is the file format, ``reader`` reads and verifies files without changing
them, ``writer`` appends, rotates per shoe and recovers after a crash.
"""

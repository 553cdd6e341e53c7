"""The root of every error the package raises on purpose."""

from __future__ import annotations


class BaccaratError(Exception):
    """An error of this package; each module's errors derive from it."""

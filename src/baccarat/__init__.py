"""Baccarat table controller."""

__version__ = "0.1.0"

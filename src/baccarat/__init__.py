"""Baccarat table controller."""

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "baccarat-controller"
"""The name the package is built, installed and reported under."""

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"

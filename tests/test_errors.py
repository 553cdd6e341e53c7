"""One error tree: every exception class the package defines derives from BaccaratError.

The test imports every module of ``src/baccarat`` and looks at each class defined there
(not imported), so that an error added anywhere, public or private, is caught the day it
is written. A program that embeds the controller catches ``BaccaratError`` and knows it
has every error the package raises on purpose.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import baccarat
from baccarat.errors import BaccaratError
from baccarat.mqtt import (
    BrokerRefusedError,
    ConnectRefusedError,
    LinkError,
    MqttError,
    PublishRefusedError,
)


def _modules() -> list[str]:
    names = ["baccarat"]
    for info in pkgutil.walk_packages(baccarat.__path__, prefix="baccarat."):
        if not info.name.endswith(".__main__"):  # runs the command line when imported
            names.append(info.name)
    return sorted(names)


def _exceptions_defined_in(name: str) -> list[type[BaseException]]:
    module = importlib.import_module(name)
    return [
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == name
    ]


def test_the_walk_sees_the_whole_package() -> None:
    names = _modules()
    for name in ("baccarat.mqtt", "baccarat.controller.journal.writer", "baccarat.cli.odds"):
        assert name in names
    assert len(names) > 100


def test_every_exception_defined_in_the_package_derives_from_baccarat_error() -> None:
    found: list[str] = []
    outside: list[str] = []
    for name in _modules():
        for cls in _exceptions_defined_in(name):
            found.append(f"{name}.{cls.__qualname__}")
            if not issubclass(cls, BaccaratError):
                bases = ", ".join(base.__name__ for base in cls.__mro__[1:-1])
                outside.append(f"{name}.{cls.__qualname__} ({bases})")
    assert len(found) > 40, found  # the walk found the package's errors, not nothing
    assert not outside, "exceptions outside BaccaratError:\n" + "\n".join(outside)


def test_every_mqtt_error_is_under_mqtt_error() -> None:
    for cls in (LinkError, ConnectRefusedError, BrokerRefusedError, PublishRefusedError):
        assert issubclass(cls, MqttError)
    # a refusal is an answer on a live connection, not a lost one: a reconnect loop that
    # catches LinkError does not take a refused publish for a dead link
    assert not issubclass(BrokerRefusedError, LinkError)


@pytest.mark.parametrize("name", ["Refused", "RefusedError"])
def test_one_name_is_one_class_across_the_package(name: str) -> None:
    """A name the issue found on several things is now defined in at most one module."""
    holders = [
        module
        for module in _modules()
        if getattr(importlib.import_module(module), name, None) is not None
        and getattr(importlib.import_module(module), name).__module__ == module
    ]
    assert len(holders) <= 1, holders

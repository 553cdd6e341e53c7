"""Drivers: codecs that turn a device's bytes into events, read through one DeviceSource.

Drivers know the card model (:mod:`baccarat.cards`) and nothing of the rules engine.
"""

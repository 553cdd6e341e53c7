"""Drivers: transports (serial, USB) and codecs that turn a device's bytes into events.

Drivers know the card model (:mod:`baccarat.cards`) and nothing of the rules engine.
"""

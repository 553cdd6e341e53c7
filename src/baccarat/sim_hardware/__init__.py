"""Simulators that play the device's side of every wire: shoes, shufflers, dealers."""

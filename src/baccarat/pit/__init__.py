"""The pit console (``baccarat pit``): every table's state and open alarms in one page.

The operator settles alarms, sends commands and sets the tables' limits from the
browser, over MQTT, with their own broker account.
"""

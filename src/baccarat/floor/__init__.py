"""The casino floor: the recorder that keeps every table's messages, and their history."""

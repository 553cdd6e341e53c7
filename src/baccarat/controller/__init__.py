"""The rules layer: a pure engine, and the daemon's journal and publisher around it."""

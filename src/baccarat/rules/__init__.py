"""The game itself: the tableau, rule profiles, bets and exact odds. Pure: no I/O."""

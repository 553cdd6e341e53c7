"""Result boards: what players and the pit look at, drawn from the published messages.

``accept`` checks every body against its topic; ``state`` folds the messages into what a
board shows; ``terminal`` draws it with rich; ``roads_view`` draws the roads as text grids;
``feed`` reads the broker for the terminal board; ``web_server`` serves the web board's
page. ``baccarat board`` is :mod:`baccarat.cli.board`.
"""

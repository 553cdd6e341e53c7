"""Result boards: what players and the pit look at, drawn from the published messages.

``state`` folds the messages into what a board shows; ``terminal`` draws it with rich;
``roads_view`` draws the roads as text grids; ``board_cli`` is ``baccarat board``.
"""

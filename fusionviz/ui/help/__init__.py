"""Help inside the window: the keyboard shortcut sheet, a short guide to each pane
(F1), About with the versions, and the way to the README (the Help menu)."""

"""The main window's frame: its size on the screen and where its docks go."""

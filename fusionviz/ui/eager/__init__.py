"""The Compiled vs eager pane."""

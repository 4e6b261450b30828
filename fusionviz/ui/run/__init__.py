"""Runs from the window: the child process controller and its progress widget, the experiment actions and the A/B dialog."""

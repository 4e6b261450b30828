"""The Advisor pane (#20) and its measurement run."""

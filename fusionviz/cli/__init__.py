"""The command line: argument parsing and dispatch (main), capture, experiment and summary commands."""

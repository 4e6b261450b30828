"""Running the capture child: its command line and environment, progress messages, settling how it ended, killing its process tree."""

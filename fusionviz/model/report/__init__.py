"""What the UI and the CLI report, as plain data and text: the summary, ledger rows, chart series, number formats and tables."""

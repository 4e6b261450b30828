"""Charts (pyqtgraph): the charts pane, pages drawn only when seen (page), the round-sweep chart (sweep)."""

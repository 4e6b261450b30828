"""The status bar's "rank N" chooser: one rank's trace of a multi-rank capture switches
the explorer to another rank."""

from __future__ import annotations

import os

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox

from fusionviz.model.experiment.ranks import rank_siblings


class RankChooser(QComboBox):
    """The ranks beside the open trace; shown only for a rank's trace."""

    sig_open = Signal(str)  # the trace of the rank chosen (another than the open one)

    def __init__(self) -> None:
        super().__init__()
        self._path = ""
        self.setToolTip("This trace is one rank of a multi-process capture: "
                        "pick another rank to explore")
        self.hide()
        self.currentIndexChanged.connect(self._on_chosen)

    def show_ranks(self, path: str | None) -> None:
        """List the ranks of the capture ``path`` (the open trace) is one rank of."""
        self._path = path or ""
        siblings = rank_siblings(path) if path else []
        here = [i for i, (_label, rank) in enumerate(siblings)
                if os.path.abspath(rank) == os.path.abspath(path)]
        self.blockSignals(True)
        self.clear()
        for label, rank in siblings:
            self.addItem(label, str(rank))
        if here:
            self.setCurrentIndex(here[0])
        self.blockSignals(False)
        self.setVisible(bool(here))

    def _on_chosen(self, index: int) -> None:
        path = self.itemData(index)
        if path and os.path.abspath(path) != os.path.abspath(self._path):
            self.sig_open.emit(path)

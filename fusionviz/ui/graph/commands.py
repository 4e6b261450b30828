"""The graph view's module commands: collapse, expand, fold, reveal, focus.

A mixin of ``GraphView`` (it uses the view's ``folding``, ``state``, ``paint_data`` and
scene rebuild); every command keeps the selection and the current step, and keeps
what it acted on where it was on the screen.
"""

from __future__ import annotations


class ModuleCommands:
    """Commands bound to the Modules menu and the graph view's keys."""

    def collapse_to_depth(self, depth: int) -> None:
        """Every module ``depth`` levels down shown as one box (0: all expanded)."""
        self._refold(lambda: self.folding.collapse_to_depth(depth), fit=True)

    def expand_all_modules(self) -> None:
        self._refold(self.folding.expand_all, fit=True)

    def fold_repeated_blocks(self) -> None:
        self._refold(self.folding.fold_repeated, fit=True)

    def repeated_blocks_text(self) -> str:
        """What Fold Repeated Blocks folds in the graph shown, for its menu entry:
        ``blocks.0 … blocks.11 as one ×12 box``; "" without a graph."""
        if self.state.graph is None:
            return ""
        runs = self.folding.runs
        if not runs:
            return "none in this graph"
        run = min(runs, key=lambda r: (r.parent.count("."), -len(r.paths)))  # outermost
        tail = f"{run.parent.rsplit('.', 1)[-1]}." if run.parent else ""
        last = tail + run.paths[-1].rsplit(".", 1)[-1]
        text = f"{_elided(run.paths[0])} … {_elided(last)} as one ×{len(run.paths)} box"
        more = len(runs) - 1
        return text + (f", and {more} more run{'s' if more > 1 else ''}" if more else "")

    def expand_box(self, key: str = "") -> bool:
        """Open box ``key``; by default the one under the mouse, else the one holding
        the selected node."""
        if not key:
            if self._hover >= 0 and self._hover in self.paint_data.boxes:
                key = self.paint_data.names[self._hover]
            elif self.state.selected_nodes:
                key = self.shown_as(self.state.selected_nodes[-1])
        box = self.folding.box(key)
        if box is None:
            return False
        return self._refold(lambda: self.folding.expand(key), focus=box.nodes[0])

    def collapse_selected_module(self) -> bool:
        """Collapse the module around the selected node (again: the next one out)."""
        sel = self.state.selected_nodes
        if not sel or self.paint_data is None:
            return False
        name = sel[-1]
        return self._refold(lambda: self.folding.collapse_around(name), focus=name)

    def _refold(self, change, focus: str = "", fit: bool = False) -> bool:
        if self.state.graph is None:
            return False
        before = self.visible_pos(focus) if focus else None
        on_screen = self.mapFromScene(before) if before is not None else None
        if not change():
            return False
        self._rebuild()
        after = self.visible_pos(focus) if focus else None
        if fit or on_screen is None or after is None:
            self.fit()
        else:  # keep what was clicked where it was on the screen
            self.centerOn(after + (self.mapToScene(self.viewport().rect().center())
                                   - self.mapToScene(on_screen)))
        self.sig_folding_changed.emit()
        return True

    def toggle_module(self, path: str) -> bool:
        """Collapse module ``path`` into a box; if it is a box or inside one, open it."""
        folding = self.folding
        if folding.tree is None or path not in folding.tree.members:
            return False
        if folding.reveal(path):  # it was hidden: now it shows
            self._rebuild()
            self.sig_folding_changed.emit()
            return True
        key = folding.shown((folding.tree.members[path][0],))[0]
        box = folding.box(key)
        if box is not None and box.path == path and box.run is None:
            return self.expand_box(key)
        return self._refold(lambda: folding.collapse(path), focus=folding.tree.members[path][0])

    def focus_selection(self) -> bool:
        """Show only the selection and its 2-hop neighbourhood; again: the whole graph."""
        sel = self.state.selected_nodes
        if self.folding.focus is not None or not sel:
            return self._refold(lambda: self.folding.set_focus(None),
                                focus=sel[-1] if sel else "", fit=not sel)
        return self._refold(lambda: self.folding.set_focus(sel), fit=True)

    def show_module(self, path: str) -> bool:
        """Bring module ``path`` into view (opening what hides it) and ring its nodes."""
        if self.folding.tree is None or path not in self.folding.tree.members:
            return False
        members = self.folding.tree.members[path]
        if self.folding.focus is not None:
            self.folding.set_focus(None)
            self._rebuild()
        if self.folding.reveal(path):
            self._rebuild()
        self.sig_folding_changed.emit()
        self.mark(members)
        return True


def _elided(path: str, limit: int = 40) -> str:
    """A module path short enough for a menu entry (its start and end kept)."""
    return path if len(path) <= limit else f"{path[:limit // 2]}…{path[-(limit // 2):]}"

"""The label sheet's widget: the generic view tree, plus the one message it answers.

LabelWidget(sheet)   ViewWidget(label_tree(sheet), shown=sheet)
  browser: a click / Enter on a data-send="label" mark -> model.send({send, kind, item, value})
  on_msg -> sheet.apply(msg)   checked against what the sheet offered; a forged or
                               stale message writes nothing (logged by the sheet)
         -> label written  -> show(label_tree(sheet))  the new label ticked
"""

from __future__ import annotations

import logging
from typing import Any

from selfrag_nb.display.label_view import label_tree
from selfrag_nb.display.tree_widget import ViewWidget
from selfrag_nb.errors import SelfRAGError
from selfrag_nb.label_sheet import LabelSheet

_log = logging.getLogger(__name__)


class LabelWidget(ViewWidget):
    """A label sheet whose marks write labels (see the module doc)."""

    def __init__(self, sheet: LabelSheet, **kwargs: Any) -> None:
        super().__init__(label_tree(sheet), shown=sheet, **kwargs)
        self.sheet = sheet
        self.on_msg(self._on_label)

    def _on_label(self, _widget: Any, content: Any, _buffers: Any = None) -> None:
        try:
            written = self.sheet.apply(content)
        except SelfRAGError as exc:  # the file could not be written: say so, keep the view
            _log.error("label sheet %s: label not written: %s", self.sheet.qid, exc)
            return
        if written is not None:
            self.show(label_tree(self.sheet), shown=self.sheet)

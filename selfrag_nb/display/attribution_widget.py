"""The attribution's widget: the generic ViewWidget with the attribution's stylesheet.

    AttributionWidget(attribution_node(a), shown=a)
      tree = to_json(node)   mount.js: each claim (data-claim) a button; a click
                             lights its decisive cells, sentence and evidence
                             spans (data-for-claim); selected_claim follows
      _css = static/attribution.css   the same file the static face embeds

A class of its own (not a ViewWidget with another ``_css``): anywidget keys a
widget's stylesheet by its class, so two views sharing a class would
overwrite each other's styles on the page. Imported only when a widget is
built (attribution_view.py registers it lazily).
"""

from __future__ import annotations

from selfrag_nb.display.attribution_view import CSS_FILE
from selfrag_nb.display.tree_widget import ViewWidget


class AttributionWidget(ViewWidget):
    """An Attribution's view tree, mounted by mount.js, styled by attribution.css."""

    _css = CSS_FILE

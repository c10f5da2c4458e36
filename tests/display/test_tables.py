"""tables.tr, from its rule: each argument is one cell of the row; text, nodes
and lists of them go into one <td>, and a cell that already is a <td> or a
<th> is kept as it is (its class and attributes with it)."""

from __future__ import annotations

from selfrag_nb.display.tables import tr
from selfrag_nb.display.tree import h, to_html


def test_each_argument_is_one_cell_and_given_cells_are_kept() -> None:
    row = tr(
        "srnb-row",
        "plain <text>",
        [h("b", "", "bold"), " and more"],
        h("span", "srnb-id", "abc"),
        h("td", "srnb-num", "3"),
        h("th", "", "people: x"),
        data_hash="v1",
    )
    assert to_html(row) == (
        '<tr class="srnb-row" data-hash="v1">'
        "<td>plain &lt;text&gt;</td>"
        "<td><b>bold</b> and more</td>"
        '<td><span class="srnb-id">abc</span></td>'
        '<td class="srnb-num">3</td>'
        "<th>people: x</th>"
        "</tr>"
    )


def test_an_empty_argument_is_an_empty_cell() -> None:
    # a row keeps its columns: nothing to show is an empty <td>, never a missing one
    assert to_html(tr("", "a", "", None, "b")) == "<tr><td>a</td><td></td><td></td><td>b</td></tr>"

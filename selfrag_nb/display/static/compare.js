// selfrag_nb comparison view (AnyWidget ESM, vanilla JS, no build step, no network).
//
//   model.data (JSON from selfrag_nb/display/compare_widget.py: a Comparison)
//     -> render(): header (question, the two labels and their outcomes)
//                  first-divergence banner (click: expands that stage)
//                  "differences only" toggle  -> model.only_diff
//                  one row per stage in flow order: title | left | right,
//                  what changed across both columns; the first divergent row
//                  carries srnb-cmp-first
//                  configuration differences (key | left | right)
//     -> clicking a stage's title toggles it in model.expanded (its items and texts)
//
// Every piece of data is set with textContent or createTextNode: never
// innerHTML. Chunk ids only go to `title` (hover); the visible name is the
// document's. The same classes as the static HTML (compare_html.py), so one
// stylesheet (trace.css + compare.css) serves both.

// (CTL h add pieces t block badge meta come from prelude.js, joined before
// this file by display/js.py)

function cmpItem(it, labels) {
  const li = h("li", "srnb-cmp-item" + (it.mark ? " srnb-cmp-" + it.mark : ""));
  li.appendChild(t(it.text));
  // trust flags ("⚠ superseded"), worded by display/names.py like the trace view's
  for (const [text, tone, tip] of it.flags || []) add(li, t(" "), badge(text, tone, tip));
  const tips = [];
  if (it.chunk_id) tips.push("chunk " + it.chunk_id);
  if (it.mark) tips.push(labels[it.mark] || it.mark);
  if (tips.length) li.title = tips.join(" · ");
  return li;
}

class CompareView {
  constructor(model, el) {
    this.model = model;
    this.el = el;
  }

  get data() {
    return this.model.get("data") || {};
  }

  isOpen(stage) {
    return (this.model.get("expanded") || []).includes(stage);
  }

  toggle(stage) {
    const now = this.model.get("expanded") || [];
    const next = now.includes(stage) ? now.filter((s) => s !== stage) : [...now, stage];
    this.model.set("expanded", next);
    this.model.save_changes();
  }

  header() {
    const d = this.data;
    const head = h("div", "srnb-head");
    const [qa, qb] = d.questions || ["", ""];
    const labels = d.labels || ["A", "B"];
    if (qa === qb) {
      const q = h("div", "srnb-q");
      q.dir = "auto";
      add(head, add(q, t(qa)));
    } else {
      for (const [lab, x] of [[labels[0], qa], [labels[1], qb]]) {
        const q = h("div", "srnb-q");
        q.dir = "auto";
        add(head, add(q, add(h("span", "srnb-label"), t(lab)), t(x)));
      }
    }
    const line = h("div", "srnb-totals");
    const outs = d.outcomes || [null, null];
    for (let i = 0; i < 2; i++) {
      if (i) line.appendChild(h("span", "srnb-meta", "vs"));
      add(line, add(h("span", "srnb-cmp-label"), t(labels[i])), outs[i] ? badge(outs[i], "info") : badge("in progress"));
    }
    return add(head, line);
  }

  banner() {
    const first = this.data.first_divergence;
    if (!first) {
      const b = h("div", "srnb-banner srnb-cmp-banner srnb-cmp-nodiff");
      return add(b, h("strong", "", "No divergence:"), document.createTextNode(" every stage matches."));
    }
    const b = h("div", "srnb-banner srnb-banner-bad srnb-cmp-banner srnb-clickable");
    add(b, h("strong", "", "First divergence: " + first.title), document.createTextNode(` (${first.kind}) — `), t(first.what));
    b.title = "show this stage's details";
    b.addEventListener("click", () => {
      if (!this.isOpen(first.stage)) this.toggle(first.stage);
      const row = this.el.querySelector ? this.el.querySelector(`[data-stage="${first.stage}"]`) : null;
      if (row && row.scrollIntoView) row.scrollIntoView({ block: "nearest" });
    });
    return b;
  }

  bar() {
    const bar = h("div", "srnb-cmp-bar");
    const only = !!this.model.get("only_diff");
    const btn = h("button", "srnb-btn", only ? "show every stage" : "differences only");
    btn.addEventListener("click", () => {
      this.model.set("only_diff", !only);
      this.model.save_changes();
    });
    const labels = this.data.mark_labels || {};
    const legend = h("span", "srnb-legend");
    for (const k of Object.keys(labels)) legend.appendChild(h("span", "srnb-cmp-item srnb-cmp-" + k, labels[k]));
    legend.appendChild(h("span", "", "hover a chunk for its id"));
    return add(bar, btn, legend);
  }

  side(s, open) {
    if (!s.ran) return add(h("div", "srnb-cmp-cell srnb-cmp-none"), h("span", "srnb-muted", "did not run"));
    const cell = h("div", "srnb-cmp-cell");
    add(cell, add(h("div", "srnb-cmp-sum"), t(s.summary)));
    if (!open) return cell;
    const labels = this.data.mark_labels || {};
    if ((s.items || []).length) {
      const ul = h("ul", "srnb-cmp-items");
      for (const it of s.items) ul.appendChild(cmpItem(it, labels));
      cell.appendChild(ul);
    }
    if (s.text) cell.appendChild(block(s.text, "srnb-block srnb-cmp-text"));
    return cell;
  }

  row(r, first) {
    const neither = !r.left.ran && !r.right.ran;
    let state = "srnb-cmp-same";
    let tag = badge("= same", "ok");
    if (neither) [state, tag] = ["srnb-cmp-skip", badge("ran on neither side")];
    else if (!r.same && first) [state, tag] = ["srnb-cmp-diff srnb-cmp-first", badge("≠ first divergence", "bad")];
    else if (!r.same) [state, tag] = ["srnb-cmp-diff", badge("≠ differs", "warn")];
    const sec = h("section", "srnb-cmp-row " + state);
    sec.dataset.stage = r.stage;
    const open = this.isOpen(r.stage);
    const expandable = [r.left, r.right].some((s) => s.ran && ((s.items || []).length || s.text));
    const head = h("div", "srnb-cmp-stage" + (expandable ? " srnb-clickable srnb-cmp-head-row" : ""));
    add(head, h("span", "srnb-stage", (expandable ? (open ? "▾ " : "▸ ") : "") + r.title), document.createTextNode(" "), tag, h("div", "srnb-meta", r.kind));
    if (expandable) {
      head.title = open ? "hide details" : "show details";
      head.addEventListener("click", () => this.toggle(r.stage));
    }
    add(sec, head, this.side(r.left, open), this.side(r.right, open));
    if (r.what) sec.appendChild(add(h("div", "srnb-cmp-what"), t(r.what)));
    return sec;
  }

  config() {
    const rows = this.data.config || [];
    const sec = h("section", "srnb-card srnb-cmp-config");
    const head = add(h("div", "srnb-card-h"), h("span", "srnb-stage", "Configuration"));
    const n = rows.length;
    head.appendChild(n ? badge(`${n} difference${n === 1 ? "" : "s"}`, "warn") : badge("same", "ok"));
    sec.appendChild(head);
    if (!n) return sec;
    const labels = this.data.labels || ["A", "B"];
    const table = h("table", "srnb-table");
    const hr = h("tr");
    add(hr, h("th", "", "setting"), add(h("th"), t(labels[0])), add(h("th"), t(labels[1])));
    add(table, add(h("thead"), hr));
    const tb = h("tbody");
    for (const c of rows) add(tb, add(h("tr"), add(h("td", "srnb-id"), t(c.key)), add(h("td"), t(c.left)), add(h("td"), t(c.right))));
    table.appendChild(tb);
    return add(sec, table);
  }

  render() {
    const d = this.data;
    const root = h("div", "srnb-root srnb-cmp tex2jax_ignore mathjax_ignore");
    root.dir = "ltr";
    add(root, this.header(), this.banner(), this.bar());
    const grid = h("div", "srnb-cmp-grid");
    const labels = d.labels || ["A", "B"];
    add(grid, add(h("div", "srnb-cmp-row srnb-cmp-cols"), h("div"), add(h("div", "srnb-col-h"), t(labels[0])), add(h("div", "srnb-col-h"), t(labels[1]))));
    const only = !!this.model.get("only_diff");
    const firstStage = d.first_divergence ? d.first_divergence.stage : null;
    let hidden = 0;
    for (const r of d.rows || []) {
      if (only && r.same) {
        hidden++;
        continue;
      }
      grid.appendChild(this.row(r, r.stage === firstStage));
    }
    if (hidden) grid.appendChild(h("div", "srnb-muted", `${hidden} identical stage${hidden === 1 ? "" : "s"} hidden`));
    add(root, grid, this.config());
    this.el.replaceChildren(root);
  }
}

function render({ model, el }) {
  const view = new CompareView(model, el);
  const redraw = () => view.render();
  redraw();
  model.on("change:data", redraw);
  model.on("change:expanded", redraw);
  model.on("change:only_diff", redraw);
  return () => {
    model.off("change:data", redraw);
    model.off("change:expanded", redraw);
    model.off("change:only_diff", redraw);
  };
}

export default { render };

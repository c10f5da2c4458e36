// selfrag_nb trace explorer (AnyWidget ESM, vanilla JS, no build step, no network).
//
//   model.columns / model.rows (display/explore_widget.py: one short list per row,
//   no answer, no document text)
//     -> render(): counts by outcome + latency / cost histogram (SVG) of the rows
//                  the filter keeps; a free-text box; one filter box per column;
//                  a table of one page of rows (PAGE rows in the DOM at a time,
//                  however many rows there are), sortable by clicking a header
//     -> the free-text box: questions match here at once; model.text goes to
//        Python, which answers model.text_hits (rows whose answer holds it)
//     -> ticking rows sets model.selected; Python sets model.opened: one trace's
//        view or the comparison of two, a view tree (display/tree.py to_json)
//        mounted with mount.js's mount() (allow-lists, textContent only); the
//        histogram is a small SVG view tree built with build()
//
// Column filters: text columns match a substring (case-insensitive); number
// columns take 12, >200, <=1.5, 100..500. Every piece of data is set with
// textContent or createTextNode, or drawn from a view tree by mount.js's
// build(): never innerHTML.
//
// The rows are this script's own: they are ticked, sorted, filtered and paged
// here over every row (a view tree per row would cost a Python round trip per
// keystroke). What is read-only and built once, an opened trace or comparison,
// is a view tree mounted with mount.js. (build mount newState h add come from
// mount.js: explore_widget.py joins it before this file.)

// Untrusted text in a <bdi>, set as textContent (a text holding control
// characters arrives as a view tree instead: see shown and rowEl).
const bdi = (s) => h("bdi", "", String(s ?? ""));

function badge(text, tone) {
  return add(h("span", "srnb-badge" + (tone ? " srnb-" + tone : "")), bdi(text));
}

function button(label, cls, onClick) {
  const b = h("button", cls, label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

const NUM_KINDS = new Set(["num", "ms", "cost"]);
// "12", ">200", "<=1.5", "100..500" -> a test of one number (null: not a number filter).
function numTest(s) {
  s = s.trim();
  let m = s.match(/^(-?[\d.]+)\s*\.\.\s*(-?[\d.]+)$/);
  if (m) {
    const [a, b] = [Number(m[1]), Number(m[2])];
    return (v) => v !== null && v >= a && v <= b;
  }
  m = s.match(/^(<=|>=|<|>|=)?\s*(-?[\d.]+)$/);
  if (!m) return null;
  const x = Number(m[2]);
  const op = m[1] || "=";
  return {
    "<": (v) => v !== null && v < x, ">": (v) => v !== null && v > x,
    "<=": (v) => v !== null && v <= x, ">=": (v) => v !== null && v >= x,
    "=": (v) => v !== null && v === x,
  }[op];
}

// A cell is its value or [value, shown] (explore_widget.py _cell): a number's
// text, formatted in Python, or the view tree of a text holding control characters.
function shown(v, kind) {
  if (NUM_KINDS.has(kind)) return v[1];
  if (kind === "flags") return (v || []).join(", ");
  if (Array.isArray(v)) return String(v[0]);
  if (v === null || v === undefined) return "unknown";
  return String(v);
}

class ExploreView {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    this.sortKey = -1;
    this.sortDir = 1;
    this.page = 0;
    this.filters = {};
    this.text = "";
    this.metric = "latency_ms";
    this.timer = null;
    this.treeState = newState(); // open <details> and pages of the opened view
    this.index();
  }

  // Lower-cased strings per row and column, computed once per rows change.
  index() {
    this.cols = this.model.get("columns") || [];
    this.rows = this.model.get("rows") || [];
    this.low = this.rows.map((r) => r.map((v, j) => (NUM_KINDS.has(this.cols[j] && this.cols[j].kind) ? v[0] : shown(v, this.cols[j] && this.cols[j].kind).toLowerCase())));
    this.qcol = this.cols.findIndex((c) => c.key === "question");
    // the outcome badges' tones come with their column (cards.OUTCOME_TONE)
    this.tones = (this.cols.find((c) => c.kind === "outcome") || {}).tones || {};
    this.order = null;
  }

  col(key) {
    return this.cols.findIndex((c) => c.key === key);
  }

  // Row positions the filters keep, in the current sort order.
  visible() {
    const tests = [];
    for (const [j, s] of Object.entries(this.filters)) {
      if (!s.trim()) continue;
      const jj = Number(j);
      if (NUM_KINDS.has(this.cols[jj].kind)) {
        const f = numTest(s) || (() => false); // not a number filter: no row matches
        tests.push((i) => f(this.low[i][jj]));
      } else {
        const needle = s.trim().toLowerCase();
        tests.push((i) => this.low[i][jj].includes(needle));
      }
    }
    const needle = this.text.trim().toLowerCase();
    if (needle) {
      const hits = this.model.get("text_hits") || {};
      const set = hits.text === this.text ? new Set(hits.rows || []) : new Set();
      tests.push((i) => this.low[i][this.qcol].includes(needle) || set.has(i));
    }
    return this.sorted().filter((i) => tests.every((f) => f(i)));
  }

  sorted() {
    if (this.order) return this.order;
    const idx = Array.from({ length: this.rows.length }, (_, i) => i);
    const j = this.sortKey;
    if (j >= 0) {
      const dir = this.sortDir;
      idx.sort((a, b) => {
        const x = this.low[a][j]; // a number column's value, else its lower-cased text
        const y = this.low[b][j];
        if (x === null || x === undefined) return 1; // unknown last, either direction
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : x > y ? 1 : 0) * dir || a - b;
      });
    }
    this.order = idx;
    return idx;
  }

  setSelected(next) {
    this.model.set("selected", next);
    this.model.save_changes();
  }

  toggle(i) {
    const now = this.model.get("selected") || [];
    this.setSelected(now.includes(i) ? now.filter((x) => x !== i) : [...now, i]);
  }

  counts(vis) {
    const j = this.col("outcome");
    const by = {};
    for (const i of vis) {
      const k = j >= 0 ? this.rows[i][j] || "unknown" : "all";
      by[k] = (by[k] || 0) + 1;
    }
    const box = h("div", "srnb-xp-counts");
    const total = this.rows.length;
    add(box, h("span", "srnb-xp-count", `${vis.length.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} traces`));
    for (const [k, n] of Object.entries(by).sort((a, b) => b[1] - a[1])) {
      const b = badge(`${k} ${n.toLocaleString("en-US")}`, this.tones[k]);
      b.dataset.outcome = k;
      box.appendChild(b);
    }
    const skipped = this.model.get("skipped") || 0;
    if (skipped) add(box, h("span", "srnb-meta", `${skipped} file(s) skipped: ex.skipped says why`));
    return box;
  }

  histogram(vis) {
    const j = this.col(this.metric);
    const pick = h("div", "srnb-xp-hist-h");
    for (const [key, label] of [["latency_ms", "latency"], ["cost", "cost"]]) {
      const on = this.metric === key ? " srnb-xp-on" : "";
      pick.appendChild(button(label, "srnb-xp-tab" + on, () => { this.metric = key; this.draw(); }));
    }
    const wrap = add(h("div", "srnb-xp-hist"), pick);
    // [value, text] cells, smallest first: labels are the texts of real rows, never formatted here
    const cells = j < 0 ? [] : vis.map((i) => this.rows[i][j]).filter((c) => c[0] !== null && c[0] !== undefined);
    if (!cells.length) return add(wrap, h("div", "srnb-meta", "no values for the rows shown"));
    cells.sort((a, b) => a[0] - b[0]);
    const W = 420, H = 90, BINS = 24;
    const lo = cells[0], hi = cells[cells.length - 1];
    const span = hi[0] - lo[0] || 1;
    const bins = Array.from({ length: BINS }, () => []);
    for (const c of cells) bins[Math.min(BINS - 1, Math.floor(((c[0] - lo[0]) / span) * BINS))].push(c);
    const top = Math.max(...bins.map((b) => b.length));
    // the SVG as a view tree (JSON), built by mount.js's build()
    const bar = (bin, b) => {
      const bh = (bin.length / top) * H;
      const [first, last] = [bin[0], bin[bin.length - 1]];
      const range = !bin.length ? "" : first[1] === last[1] ? first[1] + ": " : `${first[1]} – ${last[1]}: `;
      const a = { x: (b * W) / BINS + 1, y: H - bh, width: W / BINS - 2, height: bh };
      return { t: "rect", c: "srnb-xp-bar", a, k: [{ t: "title", k: [`${range}${bin.length}`] }] };
    };
    const end = ([x, anchor, c]) => ({ t: "text", c: "srnb-xp-axis", a: { x, y: H + 13, "text-anchor": anchor }, k: [c[1]] });
    const kids = [...bins.map(bar), ...[[0, "start", lo], [W, "end", hi]].map(end)];
    return add(wrap, build({ t: "svg", c: "srnb-xp-svg", a: { viewBox: `0 0 ${W} ${H + 16}`, width: W, height: H + 16 }, k: kids }));
  }

  header() {
    const tr = h("tr");
    tr.appendChild(h("th", "srnb-xp-pick", ""));
    this.cols.forEach((c, j) => {
      const arrow = this.sortKey === j ? (this.sortDir > 0 ? " ▲" : " ▼") : "";
      const th = h("th", "srnb-xp-sort", c.label + arrow);
      th.dataset.key = c.key;
      th.title = "sort by " + c.label;
      th.addEventListener("click", () => {
        this.sortDir = this.sortKey === j ? -this.sortDir : 1;
        this.sortKey = j;
        this.order = null;
        this.page = 0;
        this.draw();
      });
      tr.appendChild(th);
    });
    const fr = h("tr", "srnb-xp-filters");
    fr.appendChild(h("th"));
    this.cols.forEach((c, j) => {
      const inp = h("input", "srnb-xp-filter");
      Object.assign(inp, { type: "text", placeholder: NUM_KINDS.has(c.kind) ? ">200, 1..5" : "filter", value: this.filters[j] || "" });
      inp.dataset.key = c.key;
      inp.addEventListener("input", () => {
        this.filters[j] = inp.value;
        this.page = 0;
        this.drawBody();
      });
      add(fr, add(h("th"), inp));
    });
    return add(h("thead"), tr, fr);
  }

  rowEl(i, sel) {
    const tr = h("tr", "srnb-xp-row" + (sel.includes(i) ? " srnb-xp-sel" : ""));
    tr.dataset.row = String(i);
    const box = Object.assign(h("input"), { type: "checkbox", checked: sel.includes(i), title: "select (one opens its trace, two compare)" });
    add(tr, add(h("td", "srnb-xp-pick"), box));
    this.rows[i].forEach((v, j) => {
      const c = this.cols[j];
      const td = h("td", NUM_KINDS.has(c.kind) ? "srnb-num" : c.key === "question" ? "srnb-xp-q" : "");
      if (c.kind === "outcome") td.appendChild(badge(shown(v, "text"), this.tones[v]));
      else if (c.kind === "flags") for (const f of v || []) add(td, badge(f, f === "injection" || f === "model_error" ? "bad" : "warn"), document.createTextNode(" "));
      else td.appendChild(Array.isArray(v) && !NUM_KINDS.has(c.kind) ? build(v[1]) : bdi(shown(v, c.kind)));
      tr.appendChild(td);
    });
    tr.addEventListener("click", () => this.toggle(i));
    return tr;
  }

  drawBody() {
    const vis = this.visible();
    const size = this.model.get("page_size") || 25;
    const pages = Math.max(1, Math.ceil(vis.length / size));
    this.page = Math.min(this.page, pages - 1);
    const sel = this.model.get("selected") || [];
    const body = h("tbody");
    for (const i of vis.slice(this.page * size, (this.page + 1) * size)) body.appendChild(this.rowEl(i, sel));
    this.tbody.replaceWith((this.tbody = body));
    this.countsEl.replaceWith((this.countsEl = this.counts(vis)));
    this.histEl.replaceWith((this.histEl = this.histogram(vis)));
    this.pagerEl.replaceWith((this.pagerEl = this.pager(vis.length, pages)));
  }

  pager(n, pages) {
    const size = this.model.get("page_size") || 25;
    const p = h("div", "srnb-xp-pager");
    const prev = button("‹ prev", "srnb-xp-prev", () => { this.page--; this.drawBody(); });
    const next = button("next ›", "srnb-xp-next", () => { this.page++; this.drawBody(); });
    prev.disabled = this.page === 0;
    next.disabled = this.page >= pages - 1;
    const a = n ? this.page * size + 1 : 0;
    const b = Math.min(n, (this.page + 1) * size);
    add(p, prev, h("span", "srnb-meta srnb-xp-range", `rows ${a}–${b} of ${n.toLocaleString("en-US")}`), next);
    return p;
  }

  opened() {
    const o = this.model.get("opened") || {};
    const box = h("div", "srnb-xp-opened");
    if (!o.kind) return box;
    box.dataset.kind = o.kind;
    const title = o.kind === "compare" ? "Comparison" : o.kind === "trace" ? "Opened trace" : o.title || "";
    const close = button("close", "srnb-xp-close", () => this.setSelected([]));
    add(box, add(h("div", "srnb-card-h"), h("span", "srnb-stage", title), close));
    if (o.note) box.appendChild(h("div", "srnb-banner", o.note));
    if (o.tree) {
      const body = h("div", "srnb-xp-tree");
      mount(body, o.tree, null, this.treeState);
      box.appendChild(body);
    }
    return box;
  }

  draw() {
    const root = h("div", "srnb-root srnb-xp");
    const top = h("div", "srnb-xp-top");
    const search = Object.assign(h("input", "srnb-xp-text"), { type: "search", placeholder: "search questions and answers", value: this.text });
    search.addEventListener("input", () => {
      this.text = search.value;
      this.page = 0;
      this.drawBody();
      clearTimeout(this.timer);
      this.timer = setTimeout(() => { this.model.set("text", this.text); this.model.save_changes(); }, 150);
    });
    this.countsEl = h("div");
    this.histEl = h("div");
    this.pagerEl = h("div");
    add(top, add(h("div", "srnb-xp-left"), search, this.countsEl), this.histEl);
    const table = h("table", "srnb-xp-table");
    this.tbody = h("tbody");
    add(table, this.header(), this.tbody);
    this.openedEl = this.opened();
    add(root, top, add(h("div", "srnb-xp-scroll"), table), this.pagerEl, this.openedEl);
    this.el.replaceChildren(root);
    this.drawBody();
  }
}

function render({ model, el }) {
  const view = new ExploreView(model, el);
  view.draw();
  const onBody = () => view.drawBody();
  const on = {
    "change:rows": () => { view.index(); view.draw(); },
    "change:text_hits": onBody,
    "change:selected": onBody,
    "change:opened": () => view.openedEl.replaceWith((view.openedEl = view.opened())),
  };
  for (const [ev, fn] of Object.entries(on)) model.on(ev, fn);
  return () => {
    for (const [ev, fn] of Object.entries(on)) model.off(ev, fn);
  };
}

export default { render };

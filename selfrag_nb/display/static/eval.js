// selfrag_nb evaluation view (AnyWidget ESM, vanilla JS, no build step, no network).
//
//   model.data (JSON from selfrag_nb/display/eval_widget.py), by data.mode:
//     report       header (set, variants) -> controls: metric <select>, category <select>
//                  -> SVG grouped bars: one group per category (+ "all"), one bar per variant;
//                     a rate's axis is fitted to the data and says so (fitRange)
//                  -> SVG latency box plot, one box per variant (data.latency)
//                  -> summary table (variant x category x key metrics; best value bold)
//                  -> click a bar or a row: model.cell = [variant, category]
//                     -> panel listing that cell's failing questions and their reasons
//                  -> calibration section when the report came from calibrate()
//     calibration  SVG curve per threshold value (correct / wrong refusals,
//                  unsupported answers, citation errors), suggested value marked
//                  (its label and the default's sit above the plot, off the lines),
//                  "chosen on <set, count, hash>", the sweep table
//     regression   counts, then one list at a time (model.tab): broke | still failing | fixed
//
// Every piece of data is set with textContent / createTextNode (never
// innerHTML). The charts are plain SVG so the view needs no plotly.js, no
// CDN and stays small. The DOM helpers shared with trace.js and prompt_lab.js
// (CTL SVG_NS OUTCOME_TONE h add t badge meta fmtMs fmtCost ...) come from
// prelude.js, joined before this file by display/js.py.

// Variant colours come with the data (eval/charts.py variant_colours, the
// mapping the plotly charts use); this copy of VARIANT_PALETTE only serves
// data saved before colours were sent.
const PALETTE = ["#4493f8", "#e8833a", "#2da44e", "#a371f7", "#d4a72c", "#e5534b", "#39c5cf", "#8c959f"];
const ID_SEP = /([-_/.:#@+])/;
const SERIES = [
  ["correct_refusals", "correct refusals", "ok"],
  ["wrong_refusals", "wrong refusals", "bad"],
  ["unsupported_answers", "unsupported answers", "warn"],
  ["citation_errors", "citation errors", "info"],
];

// ---------------------------------------------------------------- SVG helpers

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function svgRoot(width, height, label) {
  return svg("svg", {
    class: "srnb-svg srnb-ev-chart", viewBox: `0 0 ${width} ${height}`,
    width, height, role: "img", "aria-label": label,
  });
}

function tip(e, text) {
  e.appendChild(svg("title", {}, text));
  return e;
}

// ---------------------------------------------------------------- numbers

// Unknown cost or tokens is not zero; a rate with no labelled rows is "n/a".
function fmt(kind, v) {
  if (v === null || v === undefined) return kind === "cost" || kind === "tokens" ? "unknown" : "n/a";
  if (kind === "rate") return Number(v).toFixed(3);
  if (kind === "ms") return fmtMs(Number(v));
  if (kind === "cost") return fmtCost(Number(v));
  return Number(v).toLocaleString("en-US");
}

// The rule of eval/charts.py fitted_range: the values' span padded by 15%
// (at least 0.05), rounded out to 0.05, kept inside [lo, hi].
function fitRange(values, lo, hi) {
  const known = values.filter((v) => v !== null && v !== undefined && !Number.isNaN(Number(v))).map(Number);
  if (!known.length) return [lo, hi];
  const vmin = Math.min(...known), vmax = Math.max(...known);
  const pad = Math.max(0.05, 0.15 * (vmax - vmin));
  const bottom = Math.max(lo, Math.floor((vmin - pad) / 0.05 + 1e-9) * 0.05);
  const top = Math.min(hi, Math.ceil((vmax + pad) / 0.05 - 1e-9) * 0.05);
  return [Math.round(bottom * 100) / 100, Math.round(top * 100) / 100];
}

// An id that wraps only after a separator (<wbr>), never mid-word; longer than
// ``limit``: cut with "…", the whole id in the tooltip.
function idText(s, limit) {
  const full = String(s ?? "");
  const shown = full.length > (limit || 48) ? full.slice(0, (limit || 48) - 1) + "…" : full;
  const span = h("span", "srnb-id srnb-ev-id");
  span.title = full;
  // no break after a leading separator ("+rewrite" stays whole)
  shown.split(ID_SEP).filter((p) => p).forEach((part, i) => {
    span.appendChild(t(part));
    if (i && part.length === 1 && ID_SEP.test(part)) span.appendChild(document.createElement("wbr"));
  });
  return span;
}

function niceMax(v, whole) {
  if (!(v > 0)) return whole ? 4 : 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of whole && p < 10 ? [1, 2, 4, 5, 10] : [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// Gridline values 0..ymax; whole-number axes (counts) never get fractional ticks.
function ticks(ymax, whole) {
  let n = 4;
  if (whole) n = [4, 5, 2, 1].find((k) => Number.isInteger(ymax / k)) || 1;
  return Array.from({ length: n + 1 }, (_, i) => (ymax * i) / n);
}

// ---------------------------------------------------------------- the view

class View {
  constructor(model, el) {
    this.model = model;
    this.el = el;
  }

  get data() {
    return this.model.get("data") || {};
  }

  // One colour per variant, the one the data names (shared with the plotly charts).
  colour(name) {
    const vs = this.data.variants || [];
    const i = vs.findIndex((v) => v.name === name);
    const v = vs[i];
    return (v && v.colour) || PALETTE[Math.max(0, i) % PALETTE.length];
  }

  swatch(name) {
    const sw = h("span", "srnb-ev-swatch");
    sw.style.background = this.colour(name);
    return sw;
  }

  set(key, value) {
    this.model.set(key, value);
    this.model.save_changes();
  }

  // ------------------------------------------------------------ report

  metricIndex() {
    const ms = this.data.metrics || [];
    const i = ms.findIndex((m) => m.key === this.model.get("metric"));
    return i < 0 ? 0 : i;
  }

  shownCategories() {
    const cats = this.data.categories || [];
    const f = this.model.get("category");
    return f && cats.includes(f) ? [f, "all"] : [...cats, "all"];
  }

  cellOf(variant, category) {
    return (this.data.summary || []).find((r) => r.variant === variant && r.category === category);
  }

  isSelected(variant, category) {
    const c = this.model.get("cell") || [];
    return c.length === 2 && c[0] === variant && c[1] === category;
  }

  select(variant, category) {
    this.set("cell", this.isSelected(variant, category) ? [] : [variant, category]);
  }

  header() {
    const d = this.data;
    const s = d.set || {};
    const head = h("div", "srnb-head");
    const title = h("div", "srnb-q");
    add(title, document.createTextNode(`Evaluation: ${(d.variants || []).length} variant(s) on `), t(s.name));
    add(head, title);
    add(
      head,
      meta(
        `${d.question_count} question(s) of ${s.count}`,
        `set hash ${s.hash}`,
        `recall@${d.k}`,
        `${d.rows} rows`,
        d.seconds !== null && d.seconds !== undefined ? `${Number(d.seconds).toFixed(1)} s` : "",
        `${d.failures_total} failing row(s)`,
      ),
    );
    const vs = h("div", "srnb-legend");
    (d.variants || []).forEach((v, i) => {
      const item = h("span", "srnb-ev-key");
      item.title = `overrides ${v.overrides}` + (v.config ? ` · config ${v.config}` : "");
      add(item, this.swatch(v.name), idText(v.name));
      vs.appendChild(item);
    });
    return add(head, vs);
  }

  controls() {
    const d = this.data;
    const bar = h("div", "srnb-ev-bar");
    const mlab = h("label", "srnb-label", "metric ");
    const msel = h("select", "srnb-ev-select");
    (d.metrics || []).forEach((m) => {
      const o = h("option", "", m.label);
      o.value = m.key;
      msel.appendChild(o);
    });
    msel.value = (d.metrics || [])[this.metricIndex()]?.key || "";
    msel.addEventListener("change", (e) => this.set("metric", e.target.value));
    mlab.appendChild(msel);
    const clab = h("label", "srnb-label", "category ");
    const csel = h("select", "srnb-ev-select");
    const all = h("option", "", "every category");
    all.value = "";
    csel.appendChild(all);
    for (const c of d.categories || []) {
      const o = h("option", "", c);
      o.value = c;
      csel.appendChild(o);
    }
    csel.value = this.model.get("category") || "";
    csel.addEventListener("change", (e) => this.set("category", e.target.value));
    clab.appendChild(csel);
    return add(bar, mlab, clab);
  }

  chart() {
    const d = this.data;
    const mi = this.metricIndex();
    const m = (d.metrics || [])[mi] || { label: "", kind: "rate" };
    const vars = (d.variants || []).map((v) => v.name);
    const cats = this.shownCategories();
    const top = 22, plotH = 180;
    // Category labels are cut at 18 characters and rotated -30 degrees, ending
    // under their group: the longest reaches LABEL_PX * sin 30 below the axis and
    // the first one LABEL_PX * cos 30 left of its group's centre; the margins
    // make room for both, so the SVG never cuts a label (6.5 px a character at
    // the labels' 11 px font, a little more than the average glyph).
    const labelPx = (c) => Math.min(18, c.length) * 6.5;
    const bottom = Math.ceil(20 + 0.5 * Math.max(0, ...cats.map(labelPx)));
    const left0 = 56;
    // Bars shrink to fit about 920 px (labels stay readable, not scaled down);
    // past the 6 px floor the chart scrolls sideways instead.
    const fit = Math.floor((920 - left0 - 12) / Math.max(1, cats.length) - 18) / Math.max(1, vars.length);
    const bw = Math.max(6, Math.min(22, Math.floor(fit)));
    const gw = vars.length * bw + 18;
    const left = Math.max(left0, Math.ceil(0.87 * labelPx(cats[0] || "") - 9 - (vars.length * bw) / 2 + 4));
    const width = Math.max(420, left + cats.length * gw + 12);
    const height = top + plotH + bottom;
    const values = [];
    for (const c of cats) for (const v of vars) values.push(this.cellOf(v, c)?.values?.[mi]);
    const known = values.filter((x) => x !== null && x !== undefined).map(Number);
    const whole = ["count", "tokens", "calls"].includes(m.kind);
    // A rate's axis is fitted to the data (a 0-1 axis hides 0.82 vs 0.86);
    // other kinds start at 0. The title says when the axis does not.
    const [ymin, ymax] = m.kind === "rate" ? fitRange(known, 0, 1) : [0, niceMax(Math.max(0, ...known), whole)];
    const span = ymax - ymin || 1;
    const y = (v) => top + plotH - (plotH * Math.min(span, Math.max(0, Number(v) - ymin))) / span;
    const root = svgRoot(width, height, `${m.label} by category and variant`);
    // A fitted axis ticks at round steps (0.05 / 0.1 / 0.2), like the plotly chart.
    const step = span <= 0.3 ? 0.05 : span <= 0.6 ? 0.1 : 0.2;
    const tickVals = ymin > 0
      ? Array.from({ length: Math.floor(span / step + 1e-9) + 1 }, (_, i) => Math.round((ymin + i * step) * 100) / 100)
      : ticks(ymax, whole);
    for (const v of tickVals) {
      root.appendChild(svg("line", { class: "srnb-ev-grid", x1: left, x2: width - 6, y1: y(v), y2: y(v) }));
      root.appendChild(svg("text", { class: "srnb-svg-label srnb-ev-axis", x: left - 6, y: y(v) + 4, "text-anchor": "end" }, v === 0 ? "0" : m.kind === "rate" ? Number(v).toFixed(2) : fmt(m.kind, v)));
    }
    const fitted = ymin > 0 ? ` · axis fitted to the data: ${ymin} to ${ymax}, not from 0` : "";
    root.appendChild(svg("text", { class: "srnb-svg-label srnb-ev-title", x: left, y: 13 }, m.label + (m.better ? (m.better === "up" ? " (higher is better)" : " (lower is better)") : "") + fitted));
    cats.forEach((c, ci) => {
      const x0 = left + ci * gw + 9;
      vars.forEach((v, vi) => {
        const val = this.cellOf(v, c)?.values?.[mi];
        const x = x0 + vi * bw;
        if (val === null || val === undefined) {
          root.appendChild(svg("text", { class: "srnb-svg-label srnb-ev-na", x: x + bw / 2, y: top + plotH - 3, "text-anchor": "middle" }, "n/a"));
          return;
        }
        const yy = y(val);
        const sel = this.isSelected(v, c) ? " srnb-ev-sel" : "";
        const rect = svg("rect", {
          class: `srnb-ev-rect${sel}`, fill: this.colour(v), "data-variant": v,
          x: x + 1, y: yy, width: bw - 2, height: Math.max(0.5, top + plotH - yy), rx: 2,
        });
        tip(rect, `${v} · ${c}: ${fmt(m.kind, val)} (click: failing questions)`);
        rect.addEventListener("click", () => this.select(v, c));
        root.appendChild(rect);
      });
      const lab = svg("text", {
        class: "srnb-svg-label" + (c === "all" ? " srnb-ev-all" : ""),
        x: x0 + (vars.length * bw) / 2, y: top + plotH + 14, "text-anchor": "end",
        transform: `rotate(-30 ${x0 + (vars.length * bw) / 2} ${top + plotH + 14})`,
      }, c.length > 18 ? c.slice(0, 17) + "…" : c);
      if (c.length > 18) tip(lab, c);
      root.appendChild(lab);
    });
    root.appendChild(svg("line", { class: "srnb-ev-axisline", x1: left, x2: width - 6, y1: top + plotH, y2: top + plotH }));
    const wrap = h("div", "srnb-ev-chartwrap");
    return add(wrap, root);
  }

  // Per-question latency, one box per variant: whiskers at 1.5 IQR, a few outliers as dots.
  latencyBox() {
    const boxes = (this.data.latency || []).filter((b) => b.n);
    const left = 64, top = 24, plotH = 170, bottom = 44, bw = 34, gap = 40;
    const width = Math.max(420, left + boxes.length * (bw + gap) + 20);
    const height = top + plotH + bottom;
    const vals = boxes.flatMap((b) => [b.min, b.max, ...(b.outliers || [])]).filter((v) => v !== null && v !== undefined);
    const ymax = niceMax(Math.max(1, ...vals), false);
    const y = (v) => top + plotH - (plotH * Math.max(0, Number(v))) / ymax;
    const root = svgRoot(width, height, "latency per question by variant");
    for (const v of ticks(ymax, false)) {
      root.appendChild(svg("line", { class: "srnb-ev-grid", x1: left, x2: width - 6, y1: y(v), y2: y(v) }));
      root.appendChild(svg("text", { class: "srnb-svg-label srnb-ev-axis", x: left - 6, y: y(v) + 4, "text-anchor": "end" }, v === 0 ? "0" : fmtMs(v)));
    }
    root.appendChild(svg("text", { class: "srnb-svg-label srnb-ev-title", x: left, y: 13 }, "latency per question (lower is better)"));
    boxes.forEach((b, i) => {
      const x0 = left + gap / 2 + i * (bw + gap), cx = x0 + bw / 2, colour = this.colour(b.variant);
      const g = svg("g", { class: "srnb-ev-box", "data-variant": b.variant });
      g.appendChild(svg("line", { class: "srnb-ev-whisker", x1: cx, x2: cx, y1: y(b.whisker_lo), y2: y(b.whisker_hi), stroke: colour }));
      for (const w of [b.whisker_lo, b.whisker_hi]) g.appendChild(svg("line", { class: "srnb-ev-whisker", x1: cx - bw / 4, x2: cx + bw / 4, y1: y(w), y2: y(w), stroke: colour }));
      const top3 = y(b.q3);
      g.appendChild(tip(svg("rect", { class: "srnb-ev-boxrect", x: x0, y: top3, width: bw, height: Math.max(1, y(b.q1) - top3), fill: colour, stroke: colour }),
        `${b.variant}: median ${fmtMs(b.median)}, quartiles ${fmtMs(b.q1)} to ${fmtMs(b.q3)}, ${b.n} questions`));
      g.appendChild(svg("line", { class: "srnb-ev-median", x1: x0, x2: x0 + bw, y1: y(b.median), y2: y(b.median) }));
      for (const o of b.outliers || []) g.appendChild(tip(svg("circle", { class: "srnb-ev-outlier", cx, cy: y(o), r: 2.5, fill: colour }), `${b.variant}: ${fmtMs(o)}`));
      root.appendChild(g);
      const lab = b.variant.length > 14 ? b.variant.slice(0, 13) + "…" : b.variant;
      root.appendChild(tip(svg("text", { class: "srnb-svg-label", x: cx, y: top + plotH + 16, "text-anchor": "middle" }, lab), b.variant));
    });
    root.appendChild(svg("line", { class: "srnb-ev-axisline", x1: left, x2: width - 6, y1: top + plotH, y2: top + plotH }));
    const card = h("div", "srnb-card srnb-ev-card srnb-ev-latency");
    return add(card, add(h("div", "srnb-ev-chartwrap"), root));
  }

  best(category, mi, better) {
    if (!better || (this.data.variants || []).length < 2) return null;
    const vals = (this.data.summary || [])
      .filter((r) => r.category === category)
      .map((r) => r.values[mi])
      .filter((v) => v !== null && v !== undefined);
    // All variants tied: nothing stands out, so nothing is marked.
    if (!vals.length || vals.every((v) => v === vals[0])) return null;
    return better === "up" ? Math.max(...vals) : Math.min(...vals);
  }

  table() {
    const d = this.data;
    const mi = this.metricIndex();
    const metrics = d.metrics || [];
    const cats = new Set(this.shownCategories());
    const wrap = h("div", "srnb-ev-scroll");
    const table = h("table", "srnb-table srnb-ev-table");
    const hr = h("tr");
    add(hr, h("th", "", "variant"), h("th", "", "category"), h("th", "srnb-r", "n"));
    metrics.forEach((m, i) => {
      const th = h("th", "srnb-r srnb-clickable" + (i === mi ? " srnb-ev-hl" : ""), m.label);
      th.title = "chart this metric";
      th.addEventListener("click", () => this.set("metric", m.key));
      hr.appendChild(th);
    });
    add(table, add(h("thead"), hr));
    const tb = h("tbody");
    const bests = {};
    for (const c of cats) bests[c] = metrics.map((m, i) => this.best(c, i, m.better));
    for (const r of d.summary || []) {
      if (!cats.has(r.category)) continue;
      const tr = h("tr", "srnb-clickable srnb-ev-row" + (r.category === "all" ? " srnb-ev-allrow" : "") + (this.isSelected(r.variant, r.category) ? " srnb-ev-selrow" : ""));
      tr.title = "list the failing questions of this cell";
      const vc = h("td");
      add(vc, this.swatch(r.variant), idText(r.variant));
      add(tr, vc, add(h("td"), t(r.category)), h("td", "srnb-r srnb-num", r.n));
      metrics.forEach((m, i) => {
        const v = r.values[i];
        let cls = "srnb-r srnb-num" + (i === mi ? " srnb-ev-hl" : "");
        if (v !== null && v !== undefined && bests[r.category][i] === v) cls += " srnb-ev-best";
        if (v === null || v === undefined) cls += " srnb-muted";
        tr.appendChild(h("td", cls, fmt(m.kind, v)));
      });
      tr.addEventListener("click", () => this.select(r.variant, r.category));
      tb.appendChild(tr);
    }
    table.appendChild(tb);
    return add(wrap, table);
  }

  failuresPanel() {
    const d = this.data;
    const cell = this.model.get("cell") || [];
    if (cell.length !== 2) return h("div", "srnb-meta srnb-ev-hint", "Click a bar or a table row to list that cell's failing questions and their reasons.");
    const [variant, category] = cell;
    const fi = (d.metrics || []).findIndex((m) => m.key === "failures");
    const total = fi >= 0 ? this.cellOf(variant, category)?.values?.[fi] ?? 0 : 0;
    const n = this.cellOf(variant, category)?.n ?? 0;
    const items = (d.failures || []).filter((f) => f.variant === variant && (category === "all" || f.category === category));
    const panel = h("div", "srnb-panel srnb-ev-panel");
    const top = h("div", "srnb-card-h");
    const close = h("button", "srnb-btn", "close");
    close.addEventListener("click", () => this.set("cell", []));
    add(top, add(h("span", "srnb-stage"), t(variant), document.createTextNode(" · "), t(category)), meta(`${total} failing of ${n} row(s)`), close);
    panel.appendChild(top);
    if (!items.length) {
      panel.appendChild(h("div", "srnb-muted", total ? "Failures of this cell were cut to keep the view small: see report.failures." : "No failing questions in this cell."));
      return panel;
    }
    const table = h("table", "srnb-table");
    const hr = h("tr");
    for (const c of ["id", category === "all" ? "category" : "", "question", "outcome", "failure reason"]) if (c !== "") hr.appendChild(h("th", "", c));
    add(table, add(h("thead"), hr));
    const tb = h("tbody");
    for (const f of items) {
      const tr = h("tr", "srnb-ev-fail");
      add(tr, add(h("td"), idText(f.id)));
      if (category === "all") add(tr, add(h("td"), t(f.category)));
      add(tr, add(h("td", "srnb-ev-qtext"), t((d.questions || {})[f.id] ?? "")));
      const oc = h("td");
      add(oc, badge(f.outcome || "none", OUTCOME_TONE[f.outcome] || "bad"));
      if ((f.expected || []).length) add(oc, h("div", "srnb-meta", "expected " + f.expected.join(" / ")));
      add(tr, oc);
      const rc = h("td");
      add(rc, t(f.reason));
      if (f.error) add(rc, add(h("div", "srnb-ev-err"), t(f.error)));
      const checks = h("div", "srnb-ev-checks");
      for (const c of f.checks || []) checks.appendChild(badge(c, "bad"));
      add(rc, checks);
      add(tr, rc);
      tb.appendChild(tr);
    }
    panel.appendChild(add(table, tb));
    if (items.length < total) {
      panel.appendChild(h("div", "srnb-trunc", `showing ${items.length} of ${total}: the view keeps at most ${d.per_cell_limit} per variant and category; report.failures has every row`));
    }
    return panel;
  }

  report() {
    const d = this.data;
    const out = [this.header()];
    if (!d.rows || !(d.summary || []).length) {
      out.push(h("div", "srnb-muted", "No rows: nothing was evaluated."));
      return out;
    }
    const card = h("div", "srnb-card srnb-ev-card");
    add(card, this.controls(), this.chart(), this.failuresPanel(), this.table());
    out.push(card);
    if ((d.latency || []).some((b) => b.n)) out.push(this.latencyBox());
    if (d.agreement) out.push(this.disagreements(d.agreement));
    if ((d.roles || []).length) out.push(this.roles(d.roles));
    if (d.failures_shown < d.failures_total) {
      out.push(h("div", "srnb-trunc", `${d.failures_shown} of ${d.failures_total} failing rows are in this view; report.failures has them all.`));
    }
    if (d.calibration) out.push(...this.calibration(d.calibration));
    return out;
  }

  // ------------------------------------------------------------ variants compared

  // The questions where the variants ended differently or kept other evidence.
  disagreements(a) {
    const names = (this.data.variants || []).map((v) => v.name);
    const box = h("div", "srnb-card srnb-ev-agree");
    add(box, h("div", "srnb-col-h", `where the variants disagree: ${a.total} of ${a.questions} questions`));
    if (!a.total) return add(box, h("div", "srnb-muted", "Every variant ended the same way with the same evidence on every question."));
    const table = h("table", "srnb-table srnb-ev-table");
    const hr = h("tr");
    add(hr, h("th", "", "id"), h("th", "", "category"), h("th", "", "question"), h("th", "", "differs in"));
    for (const n of names) add(hr, add(h("th"), this.swatch(n), idText(n)));
    const tb = h("tbody");
    for (const r of a.rows) {
      const tr = h("tr", "srnb-ev-disagree");
      add(tr, add(h("td"), idText(r.id)), add(h("td"), t(r.category)), add(h("td"), t(r.question)), add(h("td"), t(r.differs)));
      for (const c of r.cells) add(tr, c === null ? h("td", "srnb-muted", "not run") : add(h("td"), t(c)));
      tb.appendChild(tr);
    }
    add(box, add(h("div", "srnb-ev-scroll"), add(table, add(h("thead"), hr), tb)));
    if (a.rows.length < a.total) add(box, h("div", "srnb-trunc", `showing ${a.rows.length} of ${a.total}: report.disagreements has every question`));
    return box;
  }

  // What each model role cost per variant: where a cheaper grader or generator saves.
  roles(rows) {
    const box = h("div", "srnb-card srnb-ev-roles");
    add(box, h("div", "srnb-col-h", "per model role"));
    const table = h("table", "srnb-table srnb-ev-table");
    const hr = h("tr");
    hr.appendChild(h("th", "", "variant"));
    hr.appendChild(h("th", "", "role"));
    for (const c of ["tokens in", "tokens out", "cost", "ms per question"]) hr.appendChild(h("th", "srnb-r", c));
    const tb = h("tbody");
    for (const r of rows) {
      const ms = r.latency_ms === null || r.latency_ms === undefined ? "–" : fmtMs(r.latency_ms);
      add(tb, add(h("tr", "srnb-ev-role"), add(h("td"), this.swatch(r.variant), idText(r.variant)), add(h("td"), t(r.role)),
        h("td", "srnb-r srnb-num", fmtTok(r.tokens_in)), h("td", "srnb-r srnb-num", fmtTok(r.tokens_out)),
        h("td", "srnb-r srnb-num", r.cost === null || r.cost === undefined ? "unknown" : fmtCost(r.cost)), h("td", "srnb-r srnb-num", ms)));
    }
    add(box, add(h("div", "srnb-ev-scroll"), add(table, add(h("thead"), hr), tb)));
    return box;
  }

  // ------------------------------------------------------------ calibration

  calibration(c) {
    const col = Object.fromEntries((c.columns || []).map((k, i) => [k, i]));
    const rows = c.rows || [];
    const s = c.chosen_on || {};
    const card = h("div", "srnb-card srnb-ev-card srnb-ev-cal");
    const head = h("div", "srnb-card-h");
    add(head, h("span", "srnb-stage", "Calibration of " + c.param), badge(`suggested ${c.param} = ${c.suggested}`, "info"), meta(`default ${c.default}`));
    card.appendChild(head);
    const chosen = h("div", "srnb-row srnb-ev-chosen");
    add(chosen, h("span", "srnb-label", "chosen on"), t(s.name), document.createTextNode(` — ${s.count} questions, hash ${s.hash}`));
    if (s.path) add(chosen, document.createTextNode(", "), t(s.path));
    card.appendChild(chosen);
    card.appendChild(h("div", "srnb-meta", "score = correct refusals − wrong refusals − unsupported answers; ties go to the default. Re-calibrate when the question set, corpus or models change."));
    if (!rows.length) return [card];

    const left = 44, top = 44, plotW = Math.max(300, rows.length * 60), plotH = 170, bottom = 40;
    const width = left + plotW + 20, height = top + plotH + bottom;
    const xs = rows.map((r) => Number(r[col.value]));
    const xmin = Math.min(...xs), xmax = Math.max(...xs);
    const x = (v) => left + (xmax === xmin ? plotW / 2 : ((Number(v) - xmin) * plotW) / (xmax - xmin));
    const ymax = niceMax(Math.max(0, ...SERIES.flatMap(([k]) => rows.map((r) => Number(r[col[k]]) || 0))), true);
    const y = (v) => top + plotH - (plotH * Number(v)) / ymax;
    const root = svgRoot(width, height, `calibration of ${c.param}`);
    for (const v of ticks(ymax, true)) {
      root.appendChild(svg("line", { class: "srnb-ev-grid", x1: left, x2: left + plotW, y1: y(v), y2: y(v) }));
      root.appendChild(svg("text", { class: "srnb-svg-label srnb-ev-axis", x: left - 6, y: y(v) + 4, "text-anchor": "end" }, v));
    }
    for (const r of rows) {
      root.appendChild(svg("text", { class: "srnb-svg-label srnb-ev-axis", x: x(r[col.value]), y: top + plotH + 16, "text-anchor": "middle" }, r[col.value]));
    }
    root.appendChild(svg("text", { class: "srnb-svg-label srnb-ev-axis", x: left + plotW / 2, y: height - 4, "text-anchor": "middle" }, c.param));
    // Both labels sit above the plot, where no series line runs, on two rows
    // (suggested on top, default below it), each on the side away from the
    // other: they overlap neither the curves nor each other.
    const hasDefault = c.default !== c.suggested && c.default >= xmin && c.default <= xmax;
    const mark = (v, cls, label, ly, anchor) => {
      root.appendChild(svg("line", { class: cls, x1: x(v), x2: x(v), y1: ly + 3, y2: top + plotH }));
      const dx = anchor === "start" ? 3 : anchor === "end" ? -3 : 0;
      root.appendChild(svg("text", { class: "srnb-svg-label " + cls + "-t", x: x(v) + dx, y: ly, "text-anchor": anchor }, label));
    };
    const side = (v, other) => (v < other ? "end" : "start");
    if (hasDefault) mark(c.default, "srnb-ev-default", `default ${c.default}`, top - 6, side(c.default, c.suggested));
    mark(c.suggested, "srnb-ev-suggest", `suggested ${c.suggested}`, top - 22, hasDefault ? side(c.suggested, c.default) : "middle");
    for (const [k, label, tone] of SERIES) {
      const pts = rows.filter((r) => r[col[k]] !== null && r[col[k]] !== undefined);
      if (!pts.length) continue;
      const dpath = pts.map((r, i) => `${i ? "L" : "M"}${x(r[col.value]).toFixed(1)} ${y(r[col[k]]).toFixed(1)}`).join(" ");
      root.appendChild(svg("path", { class: `srnb-ev-line srnb-ev-s-${tone}`, d: dpath }));
      for (const r of pts) {
        root.appendChild(tip(svg("circle", { class: `srnb-ev-dot srnb-ev-s-${tone}`, cx: x(r[col.value]), cy: y(r[col[k]]), r: 3 }), `${label} at ${r[col.value]}: ${r[col[k]]}`));
      }
    }
    card.appendChild(add(h("div", "srnb-ev-chartwrap"), root));
    const legend = h("div", "srnb-legend");
    for (const [, label, tone] of SERIES) add(legend, add(h("span", "srnb-ev-key"), h("span", `srnb-ev-swatch srnb-ev-s-${tone}`), document.createTextNode(label)));
    card.appendChild(legend);

    const table = h("table", "srnb-table srnb-ev-table srnb-ev-sweep");
    const hr = h("tr");
    for (const k of c.columns || []) hr.appendChild(h("th", k === "value" ? "" : "srnb-r", k.replaceAll("_", " ")));
    add(table, add(h("thead"), hr));
    const tb = h("tbody");
    for (const r of rows) {
      const tr = h("tr", r[col.value] === c.suggested ? "srnb-ev-selrow" : "");
      (c.columns || []).forEach((k, i) => tr.appendChild(h("td", (k === "value" ? "" : "srnb-r ") + "srnb-num", r[i] === null || r[i] === undefined ? "n/a" : k === "outcome_accuracy" ? Number(r[i]).toFixed(3) : r[i])));
      tb.appendChild(tr);
    }
    card.appendChild(add(table, tb));
    return [card];
  }

  // ------------------------------------------------------------ regression

  regression() {
    const d = this.data;
    const tot = d.totals || {};
    const tones = { broke: "bad", still_failing: "warn", fixed: "ok" };
    const head = h("div", "srnb-head");
    add(head, h("div", "srnb-q", "Regression re-run"));
    const counts = h("div", "srnb-totals");
    for (const k of d.order || []) add(counts, badge(`${tot[k] ?? 0} ${d.labels[k]}`, tones[k]));
    add(counts, h("span", "srnb-meta", `${d.passing} passing before and after` + (d.not_compared ? ` · ${d.not_compared} not in the earlier run` : "")));
    head.appendChild(counts);
    const card = h("div", "srnb-card srnb-ev-card");
    const tabs = h("div", "srnb-ev-bar");
    const cur = this.model.get("tab") || "broke";
    for (const k of d.order || []) {
      const b = h("button", "srnb-btn" + (k === cur ? " srnb-ev-tab-on" : ""), `${d.labels[k]} (${tot[k] ?? 0})`);
      b.addEventListener("click", () => this.set("tab", k));
      tabs.appendChild(b);
    }
    card.appendChild(tabs);
    const items = (d.lists || {})[cur] || [];
    if (!items.length) {
      card.appendChild(h("div", "srnb-muted", `Nothing ${d.labels[cur] || cur}.`));
      return [head, card];
    }
    const table = h("table", "srnb-table");
    const hr = h("tr");
    for (const c of ["variant", "id", "category", "question", "before", "after", "new checks"]) hr.appendChild(h("th", "", c));
    add(table, add(h("thead"), hr));
    const tb = h("tbody");
    for (const e of items) {
      const nc = h("td");
      for (const c of e.new_checks || []) nc.appendChild(badge(c, "bad"));
      add(tb, add(h("tr", "srnb-ev-fail"),
        add(h("td"), idText(e.variant)), add(h("td"), idText(e.id)), add(h("td"), t(e.category)),
        add(h("td", "srnb-ev-qtext"), t(e.question)), add(h("td"), t(e.before || "—")), add(h("td"), t(e.after || "passes")), nc));
    }
    card.appendChild(add(table, tb));
    if (items.length < (tot[cur] ?? 0)) card.appendChild(h("div", "srnb-trunc", `showing ${items.length} of ${tot[cur]}: diff.table has every row`));
    return [head, card];
  }

  render() {
    const d = this.data;
    // tex2jax_ignore / mathjax_ignore: JupyterLab's MathJax must not read "$0 ... $0" as math.
    const root = h("div", "srnb-root srnb-ev tex2jax_ignore mathjax_ignore");
    root.dir = "ltr";
    if (d.mode === "report") add(root, ...this.report());
    else if (d.mode === "calibration") add(root, ...this.calibration(d));
    else if (d.mode === "regression") add(root, ...this.regression());
    else root.appendChild(h("div", "srnb-muted", "nothing to show"));
    this.el.replaceChildren(root);
  }
}

const TRAITS = ["data", "metric", "category", "cell", "tab"];

function render({ model, el }) {
  const view = new View(model, el);
  const redraw = () => view.render();
  redraw();
  for (const k of TRAITS) model.on("change:" + k, redraw);
  return () => {
    for (const k of TRAITS) model.off("change:" + k, redraw);
  };
}

export default { render };

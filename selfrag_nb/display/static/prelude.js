// selfrag_nb widget prelude: the DOM helpers every widget module shares.
//
//   display/js.py esm(name) = a generated line declaring the CTL regex
//                             (selfrag_nb.text.VIEW_CONTROLS, the set the static
//                             HTML labels too) + this file + static/<name>
//   used by eval.js and prompt_lab.js (the record, trace and comparison views are
//   view trees mounted by mount.js, which needs none of this) (an ESM loaded from a string
//   cannot import a sibling file, so Python joins them when the widget class
//   is defined; the node tests load the same joined module).
//
// Every piece of data is set with textContent or createTextNode: never
// innerHTML. This file must not define `CTL` (generated) nor `render` (each
// module's own); it exports nothing.

const SVG_NS = "http://www.w3.org/2000/svg";
const OUTCOME_TONE = {
  answered: "ok", direct: "ok", disclaimed: "warn", regenerated: "warn", clarify: "warn", refused: "bad",
};

// ---------------------------------------------------------------- DOM helpers

function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function add(parent, ...kids) {
  for (const k of kids) if (k) parent.appendChild(k);
  return parent;
}

// Untrusted text: control characters shown as U+XXXX labels, isolated in <bdi>.
function pieces(parent, s) {
  s = String(s ?? "");
  let pos = 0;
  for (const m of s.matchAll(CTL)) {
    if (m.index > pos) parent.appendChild(document.createTextNode(s.slice(pos, m.index)));
    const code = m[0].codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
    const lab = h("span", "srnb-ctl", "U+" + code);
    lab.title = "invisible control character";
    parent.appendChild(lab);
    pos = m.index + m[0].length;
  }
  if (pos < s.length) parent.appendChild(document.createTextNode(s.slice(pos)));
  return parent;
}

function t(s) {
  return pieces(document.createElement("bdi"), s);
}

// A block with [start, end, element-factory] ranges; overlapping ranges keep the first.
function marked(s, ranges, cls) {
  s = String(s ?? "");
  const d = h("div", cls || "srnb-block");
  d.dir = "auto";
  let pos = 0;
  const sorted = ranges.filter((r) => r).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  for (const [a0, b0, make, tail] of sorted) {
    const a = Math.max(a0, pos);
    const b = Math.min(b0, s.length);
    if (b <= a) continue;
    pieces(d, s.slice(pos, a));
    const e = pieces(make(), s.slice(a, b));
    if (tail) e.appendChild(tail());
    d.appendChild(e);
    pos = b;
  }
  pieces(d, s.slice(pos));
  return d;
}

function badge(text, tone, title) {
  const b = h("span", "srnb-badge" + (tone ? " srnb-" + tone : ""));
  add(b, t(text));
  if (title) b.title = title;
  return b;
}

function meta(...items) {
  const m = h("span", "srnb-meta");
  let first = true;
  for (const it of items) {
    if (it === "" || it === null || it === undefined) continue;
    if (!first) m.appendChild(h("span", "srnb-meta-sep", "·"));
    m.appendChild(typeof it === "string" ? document.createTextNode(it) : it);
    first = false;
  }
  return m;
}

function fmtMs(ms) {
  if (ms === null || ms === undefined) return "unknown";
  if (ms < 10) return ms.toFixed(1) + " ms";
  if (ms < 1000) return Math.round(ms) + " ms";
  return (ms / 1000).toFixed(1) + " s";
}

// The rule of selfrag_nb/formats.py (a test compares the two value by value):
// $0 | <$0.0001 | $0.0012 below a cent | cents; unknown is not free.
function fmtCost(c) {
  if (c === null || c === undefined || !Number.isFinite(Number(c))) return "unknown";
  c = Number(c);
  if (c < 0) return "-" + fmtCost(-c);
  if (c === 0) return "$0";
  if (c < 0.0001) return "<$0.0001";
  if (Math.round(c * 1e4) / 1e4 < 0.01) return "$" + c.toFixed(4);
  return "$" + c.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

function fmtTok(n) {
  if (n === null || n === undefined || Number.isNaN(Number(n))) return "unknown";
  return Math.round(Number(n)).toLocaleString("en-US");
}

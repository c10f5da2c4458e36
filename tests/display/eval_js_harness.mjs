// Runs selfrag_nb/display/static/eval.js under node with a tiny DOM and a
// model double speaking the AnyWidget model API (get/set/on/off/save_changes).
//
//   node eval_js_harness.mjs <eval.js> <traits.json> <actions.json>
//
// traits.json holds the widget's synced traits (data, mode, metric, category,
// cell, tab). The DOM throws on innerHTML/outerHTML/insertAdjacentHTML, so any
// use of them fails the test. After each action it prints what a user would
// see: the text, the SVG labels and tooltips, the bars, the failures panel.
//
// actions: ["metric", key] picks from the metric <select>; ["category", name]
// from the category <select>; ["bar", i] clicks the i-th bar; ["row", i] the
// i-th summary row; ["header", label] a metric column header; ["button", text]
// the first button whose text starts with it; ["set_data", path] replaces data.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

class Node_ {
  constructor() {
    this.childNodes = [];
    this.parentNode = null;
  }
  appendChild(c) {
    if (c.parentNode) c.parentNode.childNodes = c.parentNode.childNodes.filter((x) => x !== c);
    c.parentNode = this;
    this.childNodes.push(c);
    return c;
  }
  replaceChildren(...kids) {
    this.childNodes = [];
    for (const k of kids) this.appendChild(k);
  }
  get textContent() {
    return this.childNodes.map((c) => c.textContent).join("");
  }
}

class Text_ extends Node_ {
  constructor(s) {
    super();
    this.data = String(s);
  }
  get textContent() {
    return this.data;
  }
}

class Element_ extends Node_ {
  constructor(tag, ns) {
    super();
    this.tagName = ns ? tag : tag.toUpperCase();
    this.ns = ns || "";
    this.className = "";
    this.attrs = {};
    this.listeners = {};
    this.dir = "";
    this.title = "";
    this._value = "";
  }
  get textContent() {
    return super.textContent;
  }
  set textContent(s) {
    this.childNodes = [];
    this.appendChild(new Text_(s));
  }
  set innerHTML(_) {
    throw new Error("innerHTML used");
  }
  get innerHTML() {
    throw new Error("innerHTML used");
  }
  set outerHTML(_) {
    throw new Error("outerHTML used");
  }
  insertAdjacentHTML() {
    throw new Error("insertAdjacentHTML used");
  }
  // A <select>'s value must name one of its options, as in a browser.
  get value() {
    return this._value;
  }
  set value(v) {
    v = String(v);
    if (this.tagName === "SELECT" && !this.childNodes.some((o) => o.value === v)) {
      throw new Error(`select has no option ${JSON.stringify(v)}`);
    }
    this._value = v;
  }
  setAttribute(k, v) {
    if (/^on/i.test(k)) throw new Error("event handler attribute " + k);
    this.attrs[k] = String(v);
    if (k === "class") this.className = String(v);
  }
  getAttribute(k) {
    return this.attrs[k];
  }
  addEventListener(ev, fn) {
    (this.listeners[ev] ||= []).push(fn);
  }
  fire(ev) {
    for (const fn of this.listeners[ev] || []) fn({ target: this });
  }
  classes() {
    return (this.className || "").split(/\s+/).filter(Boolean);
  }
  all(pred, out = []) {
    for (const c of this.childNodes) {
      if (c instanceof Element_) {
        if (pred(c)) out.push(c);
        c.all(pred, out);
      }
    }
    return out;
  }
  byClass(cls) {
    return this.all((e) => e.classes().includes(cls));
  }
}

globalThis.document = {
  createElement: (t) => new Element_(t),
  createElementNS: (ns, t) => new Element_(t, ns),
  createTextNode: (s) => new Text_(s),
};

const [jsPath, traitsPath, actionsPath] = process.argv.slice(2);
const traits = JSON.parse(readFileSync(traitsPath, "utf8"));
const actions = JSON.parse(readFileSync(actionsPath, "utf8"));
const handlers = {};
let saves = 0;
const model = {
  get: (k) => traits[k],
  set: (k, v) => {
    traits[k] = v;
    for (const fn of handlers["change:" + k] || []) fn();
  },
  on: (ev, fn) => (handlers[ev] ||= []).push(fn),
  off: (ev, fn) => (handlers[ev] = (handlers[ev] || []).filter((f) => f !== fn)),
  save_changes: () => saves++,
};

const mod = await import(pathToFileURL(jsPath).href);
const el = new Element_("div");
const cleanup = mod.default.render({ model, el });

const selects = () => el.all((e) => e.tagName === "SELECT");
const svgText = (pred) => el.all((e) => e.ns && pred(e)).map((e) => e.textContent);

function snapshot(label) {
  const panel = el.byClass("srnb-ev-panel")[0];
  const sels = selects();
  return {
    label,
    text: el.textContent,
    traits: { metric: traits.metric, category: traits.category, cell: traits.cell, tab: traits.tab },
    saves,
    selects: sels.map((s) => ({ value: s.value, options: s.childNodes.map((o) => o.value) })),
    svg_labels: svgText((e) => e.tagName === "text"),
    tooltips: svgText((e) => e.tagName === "title"),
    bars: el.all((e) => e.tagName === "rect").length,
    selected_bars: el.all((e) => e.tagName === "rect" && e.classes().includes("srnb-ev-sel")).length,
    lines: el.all((e) => e.tagName === "path").map((e) => e.classes().join(" ")),
    dots: el.all((e) => e.tagName === "circle").length,
    suggest_lines: el.all((e) => e.tagName === "line" && e.classes().includes("srnb-ev-suggest")).map((e) => e.getAttribute("x1")),
    rows: el.byClass("srnb-ev-row").length,
    best: el.byClass("srnb-ev-best").map((e) => e.textContent),
    header_hl: el.all((e) => e.tagName === "TH" && e.classes().includes("srnb-ev-hl")).map((e) => e.textContent),
    panel: panel ? panel.textContent : null,
    panel_rows: panel ? panel.byClass("srnb-ev-fail").length : 0,
    fail_rows: el.byClass("srnb-ev-fail").map((e) => e.textContent),
    ctl: el.byClass("srnb-ctl").map((e) => e.textContent),
    tabs_on: el.byClass("srnb-ev-tab-on").map((e) => e.textContent),
  };
}

const out = [snapshot("initial")];
for (const [act, arg] of actions) {
  if (act === "metric" || act === "category") {
    const sel = selects()[act === "metric" ? 0 : 1];
    sel.value = arg;
    sel.fire("change");
  } else if (act === "bar") {
    el.all((e) => e.tagName === "rect")[arg].fire("click");
  } else if (act === "row") {
    el.byClass("srnb-ev-row")[arg].fire("click");
  } else if (act === "header") {
    el.all((e) => e.tagName === "TH" && e.textContent === arg)[0].fire("click");
  } else if (act === "button") {
    el.all((e) => e.tagName === "BUTTON" && e.textContent.startsWith(arg))[0].fire("click");
  } else if (act === "set_data") {
    model.set("data", JSON.parse(readFileSync(arg, "utf8")));
  } else {
    throw new Error("unknown action " + act);
  }
  out.push(snapshot(act + ":" + arg));
}
cleanup();
out.push({ label: "cleanup", handlers: Object.values(handlers).reduce((a, l) => a + l.length, 0) });
process.stdout.write(JSON.stringify(out));

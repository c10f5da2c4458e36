// Runs selfrag_nb/display/static/trace.js under node with a tiny DOM and a
// model double speaking the AnyWidget model API (get/set/on/off/save_changes).
//
//   node js_harness.mjs <trace.js> <state.json> <actions.json>
//
// The DOM throws on innerHTML/outerHTML/insertAdjacentHTML, so any use of
// them by the view fails the test. After each action it prints what a user
// would see: the text, the marked spans, the selected claim panel, the pager.

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
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.className = "";
    this.style = {};
    this.dataset = {};
    this.attrs = {};
    this.listeners = {};
    this.open = false;
    this.disabled = false;
    this.dir = "";
    this.title = "";
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
  setAttribute(k, v) {
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
    if (ev === "toggle-open") {
      this.open = !this.open;
      ev = "toggle";
    }
    for (const fn of this.listeners[ev] || []) fn({ target: this });
  }
  classes() {
    return this.className.split(/\s+/).filter(Boolean);
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
  createElementNS: (_ns, t) => new Element_(t),
  createTextNode: (s) => new Text_(s),
};

const [jsPath, statePath, actionsPath] = process.argv.slice(2);
const state = JSON.parse(readFileSync(statePath, "utf8"));
const actions = JSON.parse(readFileSync(actionsPath, "utf8"));

const traits = { data: state, kind: state.kind, selected_claim: -1, page: 0 };
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

function snapshot(label) {
  const panel = el.byClass("srnb-panel")[0];
  return {
    label,
    text: el.textContent,
    marks: el.all((e) => e.tagName === "MARK").map((e) => e.textContent),
    panel: panel ? panel.textContent : null,
    panel_marks: panel ? panel.all((e) => e.tagName === "MARK").map((e) => e.textContent) : [],
    selected: traits.selected_claim,
    page: traits.page,
    saves,
    hits: el.byClass("srnb-hit").length,
    grades: el.byClass("srnb-grade").length,
    cards: el.byClass("srnb-card").map((e) => e.classes().find((c) => c.startsWith("srnb-card-"))),
    claims_in_answer: el.byClass("srnb-answer").flatMap((a) => a.byClass("srnb-claim")).map((e) => e.classes().join(" ")),
    svg_texts: el.all((e) => e.tagName === "TEXT").map((e) => e.textContent),
    ctl: el.byClass("srnb-ctl").map((e) => e.textContent),
    pager: el.byClass("srnb-pager").map((e) => e.textContent),
  };
}

const out = [snapshot("initial")];
for (const [act, arg] of actions) {
  if (act === "click_claim_in_answer") {
    const answer = el.byClass("srnb-answer")[0];
    answer.byClass("srnb-clickable")[arg].fire("click");
  } else if (act === "click_claim_row") {
    el.all((e) => e.classes().includes("srnb-row") && e.classes().includes("srnb-clickable"))[arg].fire("click");
  } else if (act === "next_page") {
    el.all((e) => e.tagName === "BUTTON" && e.textContent.startsWith("next"))[0].fire("click");
  } else if (act === "open_hit") {
    el.byClass("srnb-hit")[arg].fire("toggle-open");
  } else if (act === "set_data") {
    model.set("data", JSON.parse(readFileSync(arg, "utf8")));
  }
  out.push(snapshot(act + ":" + arg));
}
cleanup();
out.push({ label: "cleanup", handlers: Object.values(handlers).reduce((a, l) => a + l.length, 0) });
process.stdout.write(JSON.stringify(out));

// A tiny DOM and an AnyWidget model double for the node harnesses of the
// Prompt Lab's editor script (prompt_lab.js joined after mount.js).
//
// The DOM throws on innerHTML/outerHTML/insertAdjacentHTML and on event
// handler attributes, so any use of them by a view fails its test. A
// <select>'s value must name one of its options, as in a browser. Elements
// made with createElementNS (SVG) keep their lower-case tag name and `ns`.

export class Node_ {
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

export class Text_ extends Node_ {
  constructor(s) {
    super();
    this.data = String(s);
  }
  get textContent() {
    return this.data;
  }
}

export class Element_ extends Node_ {
  constructor(tag, ns) {
    super();
    this.tagName = ns ? tag : tag.toUpperCase();
    this.ns = ns || "";
    this.className = "";
    this.style = {};
    this.dataset = {};
    this.attrs = {};
    this.listeners = {};
    this.open = false;
    this.disabled = false;
    this.checked = false;
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
  // "toggle-open" flips a <details> as a click on its summary would, then fires "toggle".
  fire(ev) {
    if (ev === "toggle-open") {
      this.open = !this.open;
      ev = "toggle";
    }
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
  get firstChild() {
    return this.childNodes[0] || null;
  }
  hasAttribute(k) {
    return k in this.attrs;
  }
  // Compound selectors only, as mount.js and prompt_lab.js use them: tag, .class,
  // [attr], [attr="value"] (no descendant combinators).
  querySelectorAll(sel) {
    const m = sel.match(/^([a-z0-9]*)((?:\.[\w-]+)*)((?:\[[\w-]+(?:="[^"]*")?\])*)$/i);
    if (!m) throw new Error("mini_dom: unsupported selector " + sel);
    const classes = m[2].split(".").filter(Boolean);
    const attrs = [...m[3].matchAll(/\[([\w-]+)(?:="([^"]*)")?\]/g)].map((a) => [a[1], a[2]]);
    return this.all(
      (e) =>
        (!m[1] || e.tagName.toLowerCase() === m[1].toLowerCase()) &&
        classes.every((c) => e.classes().includes(c)) &&
        attrs.every(([k, v]) => (v === undefined ? k in e.attrs : e.attrs[k] === v)),
    );
  }
  byClass(cls) {
    return this.all((e) => e.classes().includes(cls));
  }
}

globalThis.document = {
  createDocumentFragment: () => new Node_(),
  createElement: (t) => new Element_(t),
  createElementNS: (ns, t) => new Element_(t, ns),
  createTextNode: (s) => new Text_(s),
};

// The AnyWidget model API over a plain traits object: get/set/on/off/send/save_changes.
export function modelDouble(traits) {
  const handlers = {};
  const sent = [];
  const counts = { saves: 0 };
  const model = {
    get: (k) => traits[k],
    set: (k, v) => {
      traits[k] = v;
      for (const fn of handlers["change:" + k] || []) fn();
    },
    on: (ev, fn) => (handlers[ev] ||= []).push(fn),
    off: (ev, fn) => (handlers[ev] = (handlers[ev] || []).filter((f) => f !== fn)),
    send: (m) => sent.push(m),
    save_changes: () => counts.saves++,
  };
  const listening = () => Object.values(handlers).reduce((a, l) => a + l.length, 0);
  return { model, sent, counts, listening };
}

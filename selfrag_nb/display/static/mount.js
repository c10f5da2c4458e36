// The one widget script: mount a view tree built in Python (selfrag_nb/display/tree.py).
//
//   model "tree" (JSON {t, c, a, k})  --build()-->  DOM (createElement + textContent only)
//                                      --attach()-> behaviour read from data attributes:
//     data-page="N"        a list shows N children at a time, with a pager under it
//                          (data-noun="hits": the pager says what it counts)
//     data-claim="i"       click/Enter selects claim i; every data-for-claim="i" lights up
//                          and is revealed (its folds opened, its page shown, scrolled
//                          into view); model "selected_claim" follows when the widget has it
//     <details data-key>   stays open or closed across redraws
//     data-tabs            its data-tab="label" children show one at a time, with a
//                          button per label (data-tab-open: the first one shown); the
//                          static face shows them one under the other
//     table[data-sort]     a click on a column header sorts the rows by that column:
//                          the number in each cell's text (n/a, unknown last), else text
//     data-send="name"     click/Enter sends model.send({send: name, ...its other data-*})
//                          to the Python widget, which checks it and redraws the tree
//                          (a label sheet's marks); nothing happens without a model
//
// Joined in front of a widget's own module by display/js.py (module("mount.js", ...)):
// the generic view is tree_view.js, one line; the explorer and Prompt Lab add their own.
// No view-specific code lives here: a view changes in Python, in one place. tree.py's
// allow-lists are checked again, so a tree from anywhere else cannot add
// a script, an event handler, a link or a loaded resource.

// TAGS, SVG, ATTRS, DATA_RE and STYLE_RE are generated from tree.py's allow-lists by
// display/js.py (module()), so the two checks cannot drift apart.
const SVG_NS = "http://www.w3.org/2000/svg";

/** A DOM node from one tree node; text always through createTextNode. */
export function build(node) {
  if (typeof node === "string") return document.createTextNode(node);
  if (node === null || typeof node !== "object") return document.createTextNode("");
  if (node.t === "") {
    const f = document.createDocumentFragment();
    for (const kid of node.k || []) f.appendChild(build(kid));
    return f;
  }
  if (!TAGS.has(node.t)) return document.createTextNode("");
  const el = SVG.has(node.t) ? document.createElementNS(SVG_NS, node.t) : document.createElement(node.t);
  if (node.c) el.setAttribute("class", String(node.c));
  for (const [name, value] of Object.entries(node.a || {})) {
    if (!(ATTRS.has(name) || DATA_RE.test(name))) continue;
    if (name === "style" && !STYLE_RE.test(String(value))) continue;
    el.setAttribute(name, String(value));
  }
  for (const kid of node.k || []) el.appendChild(build(kid));
  return el;
}

/** An element of a widget's own controls: class and text (textContent only). */
function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

/** Append the kids that exist; returns the parent. */
function add(parent, ...kids) {
  for (const k of kids) if (k) parent.appendChild(k);
  return parent;
}

function pager(list, state) {
  const size = parseInt(list.getAttribute("data-page"), 10);
  const items = Array.from(list.children);
  if (!(size > 0) || items.length <= size) return;
  const key = list.getAttribute("data-key") || "";
  const noun = list.getAttribute("data-noun") || "";
  const pages = Math.ceil(items.length / size);
  const bar = document.createElement("div");
  bar.className = "srnb-pager";
  const prev = document.createElement("button");
  const next = document.createElement("button");
  const label = document.createElement("span");
  prev.textContent = "‹ previous";
  next.textContent = "next ›";
  prev.type = next.type = "button";
  const show = (p) => {
    const page = Math.max(0, Math.min(pages - 1, p));
    state.pages.set(key, page);
    items.forEach((item, i) => {
      item.hidden = i < page * size || i >= (page + 1) * size;
    });
    const last = Math.min(items.length, (page + 1) * size);
    label.textContent = `${page * size + 1}–${last} of ${items.length}${noun ? " " + noun : ""}`;
    prev.disabled = page === 0;
    next.disabled = page === pages - 1;
  };
  // reveal() turns to the page holding an item (a selected claim's evidence)
  for (const [i, item] of items.entries()) pageOf.set(item, () => show(Math.floor(i / size)));
  prev.addEventListener("click", () => show((state.pages.get(key) || 0) - 1));
  next.addEventListener("click", () => show((state.pages.get(key) || 0) + 1));
  bar.append(prev, label, next);
  list.after(bar);
  show(state.pages.get(key) || 0);
}

function tabs(box, state) {
  const panels = Array.from(box.children).filter((c) => c.hasAttribute("data-tab"));
  if (!panels.length) return;
  const key = box.getAttribute("data-key") || "";
  const bar = document.createElement("div");
  bar.className = "srnb-tabbar";
  bar.setAttribute("role", "tablist");
  const buttons = panels.map((p) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "srnb-btn";
    b.setAttribute("role", "tab");
    b.textContent = p.getAttribute("data-tab");
    return b;
  });
  const show = (i) => {
    state.tabs.set(key, panels[i].getAttribute("data-tab"));
    panels.forEach((p, j) => { p.hidden = j !== i; });
    buttons.forEach((b, j) => {
      b.classList.toggle("srnb-tab-on", j === i);
      b.setAttribute("aria-selected", String(j === i));
    });
  };
  buttons.forEach((b, i) => b.addEventListener("click", () => show(i)));
  bar.append(...buttons);
  box.prepend(bar);
  box.setAttribute("data-mounted", "");
  const kept = panels.findIndex((p) => p.getAttribute("data-tab") === state.tabs.get(key));
  const first = panels.findIndex((p) => p.hasAttribute("data-tab-open"));
  show(kept >= 0 ? kept : Math.max(0, first));
}

function cellValue(row, col) {
  const cell = row.children[col];
  const text = cell ? cell.textContent.trim() : "";
  const n = parseFloat(text.replace(/[^0-9.eE+-]/g, ""));
  return /[0-9]/.test(text) && !Number.isNaN(n) ? n : text;
}

function sortable(table, state) {
  const head = table.tHead && table.tHead.rows[0];
  const body = table.tBodies[0];
  if (!head || !body) return;
  const key = table.getAttribute("data-key") || "";
  const sort = (col, dir) => {
    state.sort.set(key, [col, dir]);
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = cellValue(a, col), y = cellValue(b, col);
      const xn = typeof x === "number", yn = typeof y === "number";
      if (xn !== yn) return xn ? -1 : 1; // numbers first, n/a and unknown last
      const c = xn ? x - y : String(x).localeCompare(String(y));
      return dir === "asc" ? c : -c;
    });
    body.append(...rows);
    Array.from(head.cells).forEach((th, i) => {
      if (i === col) th.setAttribute("data-sorted", dir);
      else th.removeAttribute("data-sorted");
    });
  };
  Array.from(head.cells).forEach((th, i) => {
    th.classList.add("srnb-clickable");
    th.setAttribute("tabindex", "0");
    th.title = th.title || "sort by this column";
    const pick = () => sort(i, th.getAttribute("data-sorted") === "desc" ? "asc" : "desc");
    th.addEventListener("click", pick);
    th.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        pick();
      }
    });
  });
  const kept = state.sort.get(key);
  if (kept) sort(kept[0], kept[1]);
}

// A paged list's items -> "show the page holding me" (set by pager()).
const pageOf = new WeakMap();

/** Make `el` visible: open the <details> around it and turn paged lists to it. */
function reveal(el, root) {
  for (let node = el; node && node !== root; node = node.parentElement) {
    if (node.tagName === "DETAILS" && node !== el) node.open = true;
    if (node.hidden && pageOf.has(node)) pageOf.get(node)();
  }
}

function selectClaim(root, model, index, scroll) {
  for (const el of root.querySelectorAll(".srnb-sel")) el.classList.remove("srnb-sel");
  if (index !== null) {
    const targets = root.querySelectorAll(`[data-for-claim="${index}"]`);
    for (const el of root.querySelectorAll(`[data-claim="${index}"]`)) el.classList.add("srnb-sel");
    for (const el of targets) {
      el.classList.add("srnb-sel");
      reveal(el, root);
    }
    if (scroll && targets.length && targets[0].scrollIntoView) targets[0].scrollIntoView({ block: "nearest" });
  }
  if (model && model.get("selected_claim") !== undefined) {
    model.set("selected_claim", index === null ? -1 : parseInt(index, 10));
    model.save_changes();
  }
}

/** data-send: the element's data-* attributes as one message to the Python widget. */
function sender(el, model) {
  if (!model || typeof model.send !== "function") return;
  el.setAttribute("tabindex", "0");
  el.setAttribute("role", "button");
  el.classList.add("srnb-clickable");
  const send = () => {
    const msg = {};
    for (const [k, v] of Object.entries(el.dataset)) msg[k] = String(v);
    model.send(msg);
  };
  el.addEventListener("click", (ev) => {
    ev.preventDefault();
    send();
  });
  el.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      send();
    }
  });
}

/** Behaviour from data attributes; `state` survives redraws of the same widget. */
export function attach(root, model, state) {
  for (const d of root.querySelectorAll("details[data-key]")) {
    const key = d.getAttribute("data-key");
    if (state.open.has(key)) d.open = state.open.get(key);
    d.addEventListener("toggle", () => state.open.set(key, d.open));
  }
  for (const list of root.querySelectorAll("[data-page]")) pager(list, state);
  state.tabs = state.tabs || new Map();
  state.sort = state.sort || new Map();
  for (const box of root.querySelectorAll("[data-tabs]")) tabs(box, state);
  for (const table of root.querySelectorAll("table[data-sort]")) sortable(table, state);
  for (const el of root.querySelectorAll("[data-claim]")) {
    el.setAttribute("tabindex", "0");
    el.setAttribute("role", "button");
    const pick = () => {
      const i = el.getAttribute("data-claim");
      selectClaim(root, model, el.classList.contains("srnb-sel") ? null : i, true);
    };
    el.addEventListener("click", (ev) => {
      // a claim inside a <summary> selects; reveal() opens the fold, the click must not close it
      if (el.closest("summary")) ev.preventDefault();
      pick();
    });
    el.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        pick();
      }
    });
  }
  for (const el of root.querySelectorAll("[data-send]")) sender(el, model);
  const chosen = model ? model.get("selected_claim") : undefined;
  if (typeof chosen === "number" && chosen >= 0) selectClaim(root, null, String(chosen), false);
}

/** Mount `tree` into `el`: one call per redraw. */
export function mount(el, tree, model, state) {
  el.replaceChildren(build(tree));
  attach(el, model, state);
}

export function newState() {
  return { open: new Map(), pages: new Map(), tabs: new Map(), sort: new Map() };
}

/** anywidget's render for a widget whose model holds "tree". */
export function renderTree({ model, el }) {
  const state = newState();
  const draw = () => mount(el, model.get("tree"), model, state);
  draw();
  model.on("change:tree", draw);
  return () => model.off("change:tree", draw);
}

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

/** Behaviour from data attributes; `state` survives redraws of the same widget. */
export function attach(root, model, state) {
  for (const d of root.querySelectorAll("details[data-key]")) {
    const key = d.getAttribute("data-key");
    if (state.open.has(key)) d.open = state.open.get(key);
    d.addEventListener("toggle", () => state.open.set(key, d.open));
  }
  for (const list of root.querySelectorAll("[data-page]")) pager(list, state);
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
  const chosen = model ? model.get("selected_claim") : undefined;
  if (typeof chosen === "number" && chosen >= 0) selectClaim(root, null, String(chosen), false);
}

/** Mount `tree` into `el`: one call per redraw. */
export function mount(el, tree, model, state) {
  el.replaceChildren(build(tree));
  attach(el, model, state);
}

export function newState() {
  return { open: new Map(), pages: new Map() };
}

/** anywidget's render for a widget whose model holds "tree". */
export function renderTree({ model, el }) {
  const state = newState();
  const draw = () => mount(el, model.get("tree"), model, state);
  draw();
  model.on("change:tree", draw);
  return () => model.off("change:tree", draw);
}

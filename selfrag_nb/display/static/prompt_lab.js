// selfrag_nb Prompt Lab (AnyWidget ESM, vanilla JS, no build step, no network).
//
//   Python -> here (synced traits, one section redrawn per change):
//     head versions results                     read-only panes: view trees built in Python
//                                               (display/prompt_lab_html.py, the same trees the
//                                               static HTML is), mounted with mount.js's
//                                               mount() (build + attach); textContent only
//     roles role role_info placeholders         -> role picker + what the role is scored on
//     template template_hash baseline_hash      -> editor (the draft survives other redraws)
//     questions categories selected_ids         -> subset picker
//     status error running exported export_dir -> status line, Run / Cancel, download link
//   here -> Python:
//     model.set("role" | "selected_ids") + save_changes()
//     model.send({action: "run" | "cancel" | "save" | "revert" | "baseline" | "export" | "apply", ...})
//   The Cancel button shows while a run is in progress: the engine starts no new
//   question, and the results say "cancelled after n/N". Each row of the versions
//   pane names its version (data-hash): its revert / set baseline / export buttons
//   are added here, after the tree is mounted.
//
// Joined after mount.js by display/js.py (module("mount.js", "prompt_lab.js")): mount,
// newState, h and add come from there. Every piece of data is set with textContent,
// value or createTextNode: never innerHTML.

function button(label, onClick, cls) {
  const b = h("button", cls || "", label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

function checkbox(checked, onChange) {
  const box = Object.assign(h("input"), { type: "checkbox", checked });
  box.addEventListener("change", () => onChange(box.checked));
  return box;
}

class Lab {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    // tex2jax_ignore / mathjax_ignore: MathJax must not typeset "$0 → $0" or template text.
    this.root = Object.assign(h("div", "srnb-root srnb-lab tex2jax_ignore mathjax_ignore"), { dir: "ltr" });
    this.header = h("div", "srnb-lab-pane");
    this.editorCard = h("section", "srnb-card srnb-lab-edit");
    this.picker = h("section", "srnb-card srnb-lab-pick");
    this.versionsCard = h("div", "srnb-lab-pane");
    this.resultsCard = h("div", "srnb-lab-pane");
    this.state = newState(); // open <details> of the mounted panes survive redraws
    this.buildEditor();
    add(this.root, this.header, this.editorCard, this.picker, this.versionsCard, this.resultsCard);
    el.replaceChildren(this.root);
  }

  get(k) {
    return this.model.get(k);
  }

  send(msg) {
    this.model.send(msg);
  }

  // ------------------------------------------------------------- read-only panes
  // A view tree from Python into its pane: mount.js's mount() (build() + attach()).
  mountPane(pane, key) {
    const tree = this.get(key);
    if (tree && tree.t) mount(pane, tree, null, this.state);
    else pane.replaceChildren();
  }

  renderHeader() {
    this.mountPane(this.header, "head");
  }

  // ------------------------------------------------------------- editor
  buildEditor() {
    this.roleSelect = h("select", "srnb-lab-role");
    this.roleSelect.addEventListener("change", () => {
      this.model.set("role", this.roleSelect.value);
      this.model.save_changes();
    });
    // One line under the picker: what the selected role is scored on.
    this.roleInfo = h("div", "srnb-meta srnb-lab-scored");
    this.placeholders = h("div", "srnb-meta srnb-lab-placeholders");
    this.editor = Object.assign(h("textarea", "srnb-lab-editor"), { spellcheck: false, value: this.get("template") || "" });
    this.editor.addEventListener("input", () => this.renderEdited());
    this.hashLine = h("span", "srnb-meta");
    this.edited = h("span", "srnb-lab-edited");
    this.noteInput = Object.assign(h("input", "srnb-lab-note-input"), { type: "text", placeholder: "note for this version (optional)" });
    this.runBtn = button("Run", () => this.run(), "srnb-lab-primary srnb-lab-run");
    this.saveBtn = button("Save version", () => this.send({ action: "save", template: this.editor.value, note: this.noteInput.value }));
    this.applyBtn = button("Apply to pipeline", () => this.send({ action: "apply", template: this.editor.value }));
    this.exportBtn = button("Export best", () => this.send({ action: "export" }));
    this.cancelBtn = button("Cancel run", () => this.send({ action: "cancel" }), "srnb-lab-cancel");
    this.exportsLine = h("span", "srnb-meta srnb-lab-exports");
    this.errorBox = h("div", "srnb-banner srnb-banner-bad srnb-lab-error");
    this.status = h("div", "srnb-lab-status");
    this.download = h("div", "srnb-lab-download");
    const roleBar = add(h("div", "srnb-lab-bar"), h("span", "srnb-label", "role"), this.roleSelect);
    const buttons = [this.saveBtn, this.runBtn, this.applyBtn, this.exportBtn, this.cancelBtn];
    const actions = add(h("div", "srnb-lab-bar"), this.hashLine, this.edited, this.noteInput, ...buttons);
    add(this.editorCard, roleBar, this.roleInfo, this.placeholders, this.editor, actions, this.exportsLine, this.errorBox, this.status, this.download);
  }

  renderRole() {
    const roles = this.get("roles") || [];
    const role = this.get("role");
    this.roleSelect.replaceChildren(...roles.map((r) => Object.assign(h("option", "", r), { value: r, selected: r === role })));
    this.roleSelect.value = role;
    this.roleInfo.textContent = this.get("role_info") ? "scored on: " + this.get("role_info") : "";
    const ph = (this.get("placeholders") || []).map((p) => "{{" + p + "}}").join(" ");
    this.placeholders.textContent = ph ? "placeholders: " + ph + "   · a line === user === separates instructions from data" : "";
  }

  renderTemplate() {
    // A template from Python (revert, role switch, save) replaces the draft.
    this.editor.value = this.get("template") || "";
    this.renderEdited();
  }

  renderEdited() {
    const edited = this.editor.value !== (this.get("template") || "");
    const base = this.get("baseline_hash");
    const cur = this.get("template_hash");
    this.hashLine.textContent = "version " + cur + (cur === base ? " (baseline)" : " · baseline " + base);
    this.edited.textContent = edited ? "edited — not saved (Run or Save makes it a version)" : "";
  }

  renderStatus() {
    const err = this.get("error") || "";
    this.errorBox.replaceChildren(h("bdi", "", err));
    this.errorBox.style.display = err ? "" : "none";
    this.status.replaceChildren(h("bdi", "", this.get("status") || ""));
    const busy = !!this.get("running");
    for (const b of [this.runBtn, this.saveBtn, this.applyBtn, this.exportBtn]) b.disabled = busy;
    this.cancelBtn.style.display = busy ? "" : "none";
    this.cancelBtn.disabled = !busy;
    this.roleSelect.disabled = busy;
    const dir = this.get("export_dir") || "";
    this.exportsLine.textContent = dir ? "exports are written to " + dir + " (+ a .json sidecar each)" : "";
  }

  renderExported() {
    const ex = this.get("exported") || {};
    this.download.replaceChildren();
    if (!ex.text) return;
    const line = add(h("div", "srnb-meta"), h("bdi", "", "exported " + ex.hash + " to " + ex.path + " "));
    if (typeof URL !== "undefined" && URL.createObjectURL && typeof Blob !== "undefined") {
      const href = URL.createObjectURL(new Blob([ex.text], { type: "text/plain;charset=utf-8" }));
      add(line, Object.assign(h("a", "", "download " + ex.filename), { href, download: ex.filename }));
    }
    add(this.download, line);
  }

  run() {
    this.send({ action: "run", template: this.editor.value, note: this.noteInput.value, ids: this.get("selected_ids") || [] });
  }

  // ------------------------------------------------------------- picker
  setSelected(ids) {
    const order = (this.get("questions") || []).map((q) => q.id);
    const want = new Set(ids);
    this.model.set("selected_ids", order.filter((id) => want.has(id)));
    this.model.save_changes();
  }

  renderPicker() {
    const qs = this.get("questions") || [];
    const sel = new Set(this.get("selected_ids") || []);
    const none = button("none", () => this.setSelected([]));
    const all = button("all", () => this.setSelected(qs.map((q) => q.id)));
    const head = add(h("div", "srnb-card-h"), h("span", "srnb-stage", "Questions"), h("span", "srnb-meta", sel.size + " of " + qs.length + " selected"), none, all);
    const cats = h("div", "srnb-lab-cats");
    // A tick adds its ids to the selection, an untick takes them out.
    const pick = (ids) => (on) => {
      const next = new Set(sel);
      for (const id of ids) on ? next.add(id) : next.delete(id);
      this.setSelected([...next]);
    };
    for (const cat of this.get("categories") || []) {
      const ids = qs.filter((q) => q.category === cat).map((q) => q.id);
      const n = ids.filter((id) => sel.has(id)).length;
      const box = checkbox(n > 0 && n === ids.length, pick(ids));
      box.indeterminate = n > 0 && n < ids.length;
      add(cats, add(h("label", "srnb-lab-cat"), box, h("span", "", " " + cat + " (" + n + "/" + ids.length + ")")));
    }
    const list = Object.assign(h("details", "srnb-details srnb-lab-qlist"), { open: !!this.qOpen });
    list.addEventListener("toggle", () => (this.qOpen = list.open));
    add(list, h("summary", "", "pick single questions"));
    const box = h("div", "srnb-lab-qs");
    for (const q of qs) {
      const c = checkbox(sel.has(q.id), pick([q.id]));
      add(box, add(h("label", "srnb-lab-q"), c, h("span", "srnb-id", q.id), h("span", "srnb-meta", q.category), h("bdi", "", q.question)));
    }
    add(list, box);
    this.picker.replaceChildren(head, cats, list);
  }

  // ------------------------------------------------------------- versions
  renderVersions() {
    this.mountPane(this.versionsCard, "versions");
    // The tree names each row's version; the buttons acting on it are the editor's.
    const acts = [["revert", "revert"], ["set baseline", "baseline"], ["export", "export"]];
    for (const tr of this.versionsCard.querySelectorAll("tr[data-hash]")) {
      const hash = tr.getAttribute("data-hash");
      tr.appendChild(add(h("td", "srnb-lab-acts"), ...acts.map(([label, action]) => button(label, () => this.send({ action, hash })))));
    }
    for (const tr of this.versionsCard.querySelectorAll("tr")) {
      if (tr.parentNode && tr.parentNode.tagName === "THEAD") tr.appendChild(h("th"));
    }
  }

  // ------------------------------------------------------------- results
  renderResults() {
    this.mountPane(this.resultsCard, "results");
    if (!this.resultsCard.firstChild) {
      this.resultsCard.appendChild(h("div", "srnb-meta srnb-lab-notrun", "not run yet: pick questions and press Run"));
    }
  }

  renderAll() {
    this.renderHeader();
    this.renderRole();
    this.renderTemplate();
    this.renderStatus();
    this.renderExported();
    this.renderPicker();
    this.renderVersions();
    this.renderResults();
  }
}

function render({ model, el }) {
  const lab = new Lab(model, el);
  lab.renderAll();
  // trait -> the section it redraws
  const sections = {
    renderHeader: ["head"],
    renderRole: ["roles", "role", "role_info", "placeholders"],
    renderTemplate: ["template"],
    renderEdited: ["template_hash", "baseline_hash"],
    renderPicker: ["questions", "categories", "selected_ids"],
    renderVersions: ["versions"],
    renderResults: ["results"],
    renderStatus: ["status", "error", "running", "export_dir"],
    renderExported: ["exported"],
  };
  const on = {};
  for (const [fn, traits] of Object.entries(sections)) for (const t of traits) on["change:" + t] = () => lab[fn]();
  for (const [ev, fn] of Object.entries(on)) model.on(ev, fn);
  return () => {
    for (const [ev, fn] of Object.entries(on)) model.off(ev, fn);
  };
}

export default { render };

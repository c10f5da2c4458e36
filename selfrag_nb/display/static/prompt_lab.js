// selfrag_nb Prompt Lab (AnyWidget ESM, vanilla JS, no build step, no network).
//
//   Python -> here (synced traits, one section redrawn per change):
//     roles role role_info model offline note  -> header + role picker + offline note
//     template template_hash baseline_hash      -> editor (the draft survives other redraws)
//     questions categories selected_ids         -> subset picker
//     versions                                  -> version list (revert / baseline / export)
//     results status error running exported    -> results table, status line, download link
//     export_dir                                -> where Export writes (shown by the export buttons)
//   here -> Python:
//     model.set("role" | "selected_ids") + save_changes()
//     model.send({action: "run" | "cancel" | "save" | "revert" | "baseline" | "export" | "apply", ...})
//   The Cancel button shows while a run is in progress: the engine starts no new
//   question, and the results say "cancelled after n/N".
//   A side whose prompt did not reach a model (rule, no call, offline model) is
//   marked "prompt not used" (its note says why), its mark is "—", and the totals
//   say "prompt reached the model on k of n": agreement is over those k only.
//   The results table: per question a <tbody>, the question on a full-width row,
//   old | new below it at half the width each. A side's verdict comes as word-diff
//   parts [op, text] computed in Python (worddiff.py): "del" struck, "ins" marked.
//   Marks are one vocabulary (✓ ◐ ✗ —, key in results.marks); the percentage
//   stands beside the mark.
//
// Every piece of data is set with textContent, value or createTextNode: never
// innerHTML. The DOM helpers (CTL h add t badge ...) come from prelude.js,
// joined before this file by display/js.py.

function button(label, onClick, cls) {
  const b = h("button", cls || "", label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

class Lab {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    // tex2jax_ignore / mathjax_ignore: MathJax must not typeset "$0 → $0" or template text.
    this.root = h("div", "srnb-root srnb-lab tex2jax_ignore mathjax_ignore");
    this.root.dir = "ltr";
    this.header = h("section", "srnb-card srnb-lab-head");
    this.editorCard = h("section", "srnb-card srnb-lab-edit");
    this.picker = h("section", "srnb-card srnb-lab-pick");
    this.versionsCard = h("section", "srnb-card srnb-lab-versions");
    this.resultsCard = h("section", "srnb-card srnb-lab-results");
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

  // ------------------------------------------------------------- header
  renderHeader() {
    const head = h("div", "srnb-card-h");
    add(head, h("span", "srnb-stage", "Prompt Lab"));
    const model = this.get("model");
    if (model) add(head, badge("model " + model, this.get("offline") ? "offline" : "info"));
    add(head, h("span", "srnb-meta", (this.get("questions") || []).length + " labelled questions"));
    const kids = [head];
    const note = this.get("note");
    if (note) kids.push(add(h("div", "srnb-banner srnb-banner-info srnb-lab-note"), t(note)));
    this.header.replaceChildren(...kids);
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
    this.editor = h("textarea", "srnb-lab-editor");
    this.editor.spellcheck = false;
    this.editor.value = this.get("template") || "";
    this.editor.addEventListener("input", () => this.renderEdited());
    this.hashLine = h("span", "srnb-meta");
    this.edited = h("span", "srnb-lab-edited");
    this.noteInput = h("input", "srnb-lab-note-input");
    this.noteInput.type = "text";
    this.noteInput.placeholder = "note for this version (optional)";
    this.runBtn = button("Run", () => this.run(), "srnb-lab-primary srnb-lab-run");
    this.saveBtn = button("Save version", () =>
      this.send({ action: "save", template: this.editor.value, note: this.noteInput.value }),
    );
    this.applyBtn = button("Apply to pipeline", () => this.send({ action: "apply", template: this.editor.value }));
    this.exportBtn = button("Export best", () => this.send({ action: "export" }));
    this.cancelBtn = button("Cancel run", () => this.send({ action: "cancel" }), "srnb-lab-cancel");
    this.exportsLine = h("span", "srnb-meta srnb-lab-exports");
    this.errorBox = h("div", "srnb-banner srnb-banner-bad srnb-lab-error");
    this.status = h("div", "srnb-lab-status");
    this.download = h("div", "srnb-lab-download");
    const roleBar = add(h("div", "srnb-lab-bar"), h("span", "srnb-label", "role"), this.roleSelect);
    const actions = add(
      h("div", "srnb-lab-bar"),
      this.hashLine,
      this.edited,
      this.noteInput,
      this.saveBtn,
      this.runBtn,
      this.applyBtn,
      this.exportBtn,
      this.cancelBtn,
    );
    add(this.editorCard, roleBar, this.roleInfo, this.placeholders, this.editor, actions, this.exportsLine, this.errorBox, this.status, this.download);
  }

  renderRole() {
    const roles = this.get("roles") || [];
    const role = this.get("role");
    this.roleSelect.replaceChildren(
      ...roles.map((r) => {
        const o = h("option", "", r);
        o.value = r;
        o.selected = r === role;
        return o;
      }),
    );
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
    this.errorBox.replaceChildren(t(err));
    this.errorBox.style.display = err ? "" : "none";
    this.status.replaceChildren(t(this.get("status") || ""));
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
    const line = add(h("div", "srnb-meta"), t("exported " + ex.hash + " to " + ex.path + " "));
    if (typeof URL !== "undefined" && URL.createObjectURL && typeof Blob !== "undefined") {
      const a = h("a", "", "download " + ex.filename);
      a.href = URL.createObjectURL(new Blob([ex.text], { type: "text/plain;charset=utf-8" }));
      a.download = ex.filename;
      add(line, a);
    }
    add(this.download, line);
  }

  run() {
    this.send({
      action: "run",
      template: this.editor.value,
      note: this.noteInput.value,
      ids: this.get("selected_ids") || [],
    });
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
    const head = add(
      h("div", "srnb-card-h"),
      h("span", "srnb-stage", "Questions"),
      h("span", "srnb-meta", sel.size + " of " + qs.length + " selected"),
      button("none", () => this.setSelected([])),
      button("all", () => this.setSelected(qs.map((q) => q.id))),
    );
    const cats = h("div", "srnb-lab-cats");
    for (const cat of this.get("categories") || []) {
      const ids = qs.filter((q) => q.category === cat).map((q) => q.id);
      const n = ids.filter((id) => sel.has(id)).length;
      const box = h("input");
      box.type = "checkbox";
      box.checked = n > 0 && n === ids.length;
      box.indeterminate = n > 0 && n < ids.length;
      box.addEventListener("change", () => {
        const next = new Set(sel);
        for (const id of ids) box.checked ? next.add(id) : next.delete(id);
        this.setSelected([...next]);
      });
      add(cats, add(h("label", "srnb-lab-cat"), box, h("span", "", " " + cat + " (" + n + "/" + ids.length + ")")));
    }
    const list = h("details", "srnb-details srnb-lab-qlist");
    list.open = !!this.qOpen;
    list.addEventListener("toggle", () => (this.qOpen = list.open));
    add(list, h("summary", "", "pick single questions"));
    const box = h("div", "srnb-lab-qs");
    for (const q of qs) {
      const c = h("input");
      c.type = "checkbox";
      c.checked = sel.has(q.id);
      c.addEventListener("change", () => {
        const next = new Set(sel);
        c.checked ? next.add(q.id) : next.delete(q.id);
        this.setSelected([...next]);
      });
      add(box, add(h("label", "srnb-lab-q"), c, h("span", "srnb-id", q.id), h("span", "srnb-meta", q.category), t(q.question)));
    }
    add(list, box);
    this.picker.replaceChildren(head, cats, list);
  }

  // ------------------------------------------------------------- versions
  renderVersions() {
    const vs = this.get("versions") || [];
    const head = add(h("div", "srnb-card-h"), h("span", "srnb-stage", "Versions"), h("span", "srnb-meta", vs.length + " of " + this.get("role")));
    const table = h("table", "srnb-lab-table");
    add(table, add(h("tr"), h("th", "", "version"), h("th", "", "created (UTC)"), h("th", "", "note"), h("th", "", "agreement"), h("th", "", "")));
    for (const v of vs) {
      const name = add(h("td"), h("span", "srnb-id", v.hash));
      if (v.current) add(name, document.createTextNode(" "), badge("current", "info"));
      if (v.baseline) add(name, document.createTextNode(" "), badge("baseline"));
      if (v.best) add(name, document.createTextNode(" "), badge("best", "ok"));
      const acts = add(
        h("td"),
        button("revert", () => this.send({ action: "revert", hash: v.hash })),
        button("set baseline", () => this.send({ action: "baseline", hash: v.hash })),
        button("export", () => this.send({ action: "export", hash: v.hash })),
      );
      const score = v.score || "not run";
      add(table, add(h("tr", "srnb-lab-version"), name, h("td", "srnb-num", v.created || ""), add(h("td"), t(v.note)), h("td", "", score), acts));
    }
    this.versionsCard.replaceChildren(head, table);
  }

  // ------------------------------------------------------------- results
  // The word diff of the verdicts arrives as [op, text] parts (worddiff.py):
  // "del" words struck on the old side, "ins" words marked on the new side.
  diffText(parent, parts) {
    const box = h("bdi");
    for (const [op, text] of parts) {
      if (op === "del") add(box, add(h("del", "srnb-diff-del"), t(text)));
      else if (op === "ins") add(box, add(h("ins", "srnb-diff-ins"), t(text)));
      else add(box, t(text));
    }
    return add(parent, box);
  }

  sideCell(s, name) {
    const cell = h("td", "srnb-lab-side srnb-lab-" + name);
    const mark = h("span", "srnb-lab-mark" + (s.tone ? " srnb-" + s.tone : ""), s.mark);
    mark.title = s.score ? "agreement " + s.score : "no label";
    const head = add(h("div", "srnb-lab-side-h"), h("span", "srnb-label", name), mark);
    if (s.score) add(head, h("span", "srnb-lab-score", s.score));
    const verdict = h("div", "srnb-lab-verdict");
    verdict.dir = "auto";
    if (s.error) add(verdict, badge("error", "bad"), document.createTextNode(" "), t(s.error));
    else {
      if (s.unused) add(verdict, h("span", "srnb-badge srnb-lab-unused", s.unused), document.createTextNode(" "));
      this.diffText(verdict, s.parts || [["same", s.verdict]]);
    }
    if (s.reason) verdict.title = s.reason;
    add(cell, head, verdict);
    const meta = [];
    if (s.unused && s.prompt_note && !s.error) meta.push(s.prompt_note);
    if (s.source && !s.unused) meta.push("by " + s.source); // else the prompt note says who decided
    if (s.precision || s.recall) meta.push("P " + (s.precision || "—") + " · R " + (s.recall || "—"));
    for (const n of s.notes || []) meta.push(n);
    if (s.unparsed) meta.push(s.unparsed + " unparsed");
    if (s.cached) meta.push("cached");
    if (meta.length) add(cell, h("div", "srnb-meta", meta.join(" · ")));
    return add(cell, this.usage(s));
  }

  usage(s) {
    // Nothing was sent: no tokens, cost or latency to report ("unknown / unknown $0" said nothing).
    const box = h("div", "srnb-lab-usage");
    if (!s.calls) return add(box, h("span", "srnb-meta", "no call"));
    return add(box, h("span", "srnb-num", s.tokens), t(" tokens · "), h("span", "srnb-num", s.cost), t(" · "), h("span", "srnb-num", s.latency));
  }

  renderResults() {
    const r = this.get("results") || {};
    const rows = r.rows || [];
    if (!r.role) {
      this.resultsCard.replaceChildren(add(h("div", "srnb-card-h"), h("span", "srnb-stage", "Results"), h("span", "srnb-meta", "not run yet: pick questions and press Run")));
      return;
    }
    const head = add(
      h("div", "srnb-card-h"),
      h("span", "srnb-stage", "Results · " + r.role),
      h("span", "srnb-id", r.baseline),
      document.createTextNode("→"),
      h("span", "srnb-id", r.candidate),
      h("span", "srnb-meta", (r.done || 0) + "/" + (r.total || 0) + " questions"),
    );
    const kids = [head];
    if (!r.finished) {
      const bar = h("div", "srnb-lab-progress");
      const fill = h("div");
      fill.style.width = (r.total ? (100 * (r.done || 0)) / r.total : 0).toFixed(1) + "%";
      kids.push(add(bar, fill));
    }
    if (r.note) kids.push(add(h("div", "srnb-banner srnb-banner-info"), t(r.note)));
    if (r.cancelled) {
      const line = "cancelled after " + (r.done || 0) + "/" + (r.total || 0) + " questions: the rows below are those that finished";
      kids.push(add(h("div", "srnb-banner srnb-banner-info srnb-lab-cancelled"), t(line)));
    }
    if (r.cached) kids.push(h("div", "srnb-meta srnb-lab-cached", r.cached));
    const tot = r.totals;
    if (tot) {
      let line = " · " + tot.changed + " changed";
      if (tot.errors) line += " · " + tot.errors + " error(s)";
      if (tot.new.precision || tot.old.precision) line += " · precision " + (tot.old.precision || "—") + " → " + (tot.new.precision || "—");
      if (tot.new.recall || tot.old.recall) line += " · recall " + (tot.old.recall || "—") + " → " + (tot.new.recall || "—");
      line += " · tokens " + tot.old.tokens + " → " + tot.new.tokens + " · cost " + tot.old.cost + " → " + tot.new.cost + " · latency " + tot.old.latency + " → " + tot.new.latency;
      const totals = h("div", "srnb-lab-totals", "agreement " + tot.old.agreement + " → " + tot.new.agreement + " over the rows the prompt reached · ");
      add(totals, h("span", "srnb-lab-reach", tot.reach || ""), t(line));
      kids.push(totals);
      // Scored against human labels: kappa, precision / recall / F1 with their denominators, no label.
      if (tot.human && tot.human.line) kids.push(h("div", "srnb-lab-human", tot.human.line));
    }
    // One mark vocabulary; the percentage sits beside the mark, never in its place.
    const key = h("div", "srnb-meta srnb-lab-key");
    for (const [i, [m, what]] of (r.marks || []).entries()) {
      add(key, i ? t(" · ") : null, h("span", "srnb-lab-keymark", m), t(" " + what));
    }
    kids.push(key);
    // One <tbody> per question: the question spans the table, old and new share its width.
    const table = h("table", "srnb-lab-table srnb-lab-results");
    add(table, add(h("colgroup"), h("col", "srnb-lab-half"), h("col", "srnb-lab-half")));
    const oldH = add(h("th"), t("old · "), h("span", "srnb-id", r.baseline));
    const newH = add(h("th"), t("new · "), h("span", "srnb-id", r.candidate), t(" (words changed from old marked)"));
    add(table, add(h("thead"), add(h("tr"), oldH, newH)));
    for (const row of rows) {
      let cls = row.changed ? "srnb-lab-row srnb-lab-changed" : "srnb-lab-row";
      if (row.old.unused && row.new.unused) cls += " srnb-lab-unused-row";
      const q = h("td", "srnb-lab-question");
      q.colSpan = 2;
      add(q, h("span", "srnb-id", row.id), t(" "), h("span", "srnb-meta", row.category));
      if (row.changed) add(q, t(" "), badge("changed", "warn"));
      const qt = add(h("span"), t(" " + row.question));
      qt.dir = "auto";
      add(q, qt);
      if (row.label) add(q, add(h("span", "srnb-lab-label"), t("label: " + row.label)));
      add(table, add(h("tbody", cls), add(h("tr"), q), add(h("tr"), this.sideCell(row.old, "old"), this.sideCell(row.new, "new"))));
    }
    kids.push(table);
    this.resultsCard.replaceChildren(...kids);
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
  const on = {
    "change:model": () => lab.renderHeader(),
    "change:offline": () => lab.renderHeader(),
    "change:note": () => lab.renderHeader(),
    "change:roles": () => lab.renderRole(),
    "change:role": () => lab.renderRole(),
    "change:role_info": () => lab.renderRole(),
    "change:placeholders": () => lab.renderRole(),
    "change:template": () => lab.renderTemplate(),
    "change:template_hash": () => lab.renderEdited(),
    "change:baseline_hash": () => lab.renderEdited(),
    "change:questions": () => (lab.renderPicker(), lab.renderHeader()),
    "change:categories": () => lab.renderPicker(),
    "change:selected_ids": () => lab.renderPicker(),
    "change:versions": () => lab.renderVersions(),
    "change:results": () => lab.renderResults(),
    "change:status": () => lab.renderStatus(),
    "change:error": () => lab.renderStatus(),
    "change:running": () => lab.renderStatus(),
    "change:exported": () => lab.renderExported(),
    "change:export_dir": () => lab.renderStatus(),
  };
  for (const [ev, fn] of Object.entries(on)) model.on(ev, fn);
  return () => {
    for (const [ev, fn] of Object.entries(on)) model.off(ev, fn);
  };
}

export default { render };

// selfrag_nb trace view, part 1: how the widget names chunks, lists hits and
// draws the rerank card (the base class of trace.js's View).
//
//   data.refs[chunk_id] = {id, source, file, path, rank, flags}   (display/names.py)
//     -> chunkLabel(id): #rank file › heading path + trust-flag badges, id on hover
//     -> short(id): plain file name for the SVG chart, "⚠ " when superseded
//     -> hitItem: per-leg ranks ("vector #2 · keywords #1") instead of fused scores
//     -> rerank: slope chart + table with the reranker's reason per chunk
//
// Joined after prelude.js and before trace.js (display/js.py), so the helpers
// of both (h add t badge ... row g3 SCORE_NAMES) are in scope when these run.
// Data goes in with textContent / createTextNode only, never innerHTML.

class ChunkViews {
  ref(id) {
    return (this.data.refs || {})[id] || null;
  }

  // A name that may wrap after / _ - . and nowhere else (<wbr> between parts).
  breakable(s) {
    const b = h("bdi");
    String(s ?? "").split(/(?<=[\/_\-.])/).forEach((p, i) => {
      if (i) b.appendChild(h("wbr"));
      pieces(b, p);
    });
    return b;
  }

  flags(n, el) {
    for (const [text, tone, tip] of n.flags || []) add(el, document.createTextNode(" "), badge(text, tone, tip));
    return el;
  }

  // #rank file › heading path + trust flags; the id in the tooltip.
  chunkLabel(id, withRank = true) {
    const n = this.ref(id);
    if (!n) {
      const s = h("span", "srnb-id", String(id).length > 11 ? String(id).slice(0, 10) + "…" : String(id));
      s.title = "chunk " + id;
      return s;
    }
    const s = h("span", "srnb-chunk");
    s.title = `${n.source} · chunk ${id}`;
    if (withRank && n.rank) add(s, h("span", "srnb-rank", "#" + n.rank), document.createTextNode(" "));
    add(s, add(h("span", "srnb-src"), this.breakable(n.file)));
    if (n.path) add(s, document.createTextNode(" "), add(h("span", "srnb-path"), t(n.path)));
    return this.flags(n, s);
  }

  superseded(id) {
    const n = this.ref(id);
    return !!n && (n.flags || []).some((f) => f[1] === "bad");
  }

  short(id, n = 28) {
    const r = this.ref(id);
    let name = r ? (this.superseded(id) ? "⚠ " : "") + r.file : String(id).length > 11 ? String(id).slice(0, 10) + "…" : String(id);
    return (name.length <= n ? name : name.slice(0, n - 1) + "…").replace(CTL, "⍰");
  }

  hitItem(hit, i) {
    const s = h("span", "srnb-hit-h");
    const n = this.ref(hit.chunk_id) || { file: hit.source, path: hit.title, flags: [] };
    add(s, h("span", "srnb-rank", "#" + (hit.rank || i + 1)), add(h("span", "srnb-src"), this.breakable(n.file)));
    if (n.path) add(s, add(h("span", "srnb-path"), t(n.path)));
    this.flags(n, s);
    // Per-leg ranks explain a fused order; a single-leg score is in list order already.
    const how = hit.how || (hit.score ? "score " + g3(hit.score) : "");
    if (how) add(s, h("span", "srnb-meta", how));
    return this.details("hit-" + hit.chunk_id + "-" + i, s, (d) => {
      const c = (this.data.chunks || {})[hit.chunk_id];
      add(d, row("source", this.breakable(hit.source)), row("chunk", add(h("span", "srnb-id"), this.breakable(hit.chunk_id))), row("document", add(h("span", "srnb-id"), this.breakable(hit.doc_id))));
      for (const [k, v] of Object.entries(hit.scores || {}).sort()) add(d, row(SCORE_NAMES[k] || k, h("span", "srnb-num", g3(v))));
      add(d, block(c ? c.text : "(text not kept)"));
    }, "srnb-hit");
  }

  bump(r) {
    const n = Math.min(Math.max(r.before.length, r.after.length, 1), 50);
    const rowH = 20, top = 22, width = 640, lx = 250, rx = 330, chars = 34;
    const height = top + n * rowH + 6;
    const svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("class", "srnb-svg");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", String(width));
    svg.setAttribute("height", String(height));
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "rerank order before and after");
    const text = (x, y, s, anchor, bold, id) => {
      const e = document.createElementNS(SVG_NS, "text");
      e.setAttribute("class", "srnb-svg-label" + (id && this.superseded(id) ? " srnb-svg-bad" : ""));
      e.setAttribute("x", String(x));
      e.setAttribute("y", String(y));
      if (anchor) e.setAttribute("text-anchor", anchor);
      if (bold) e.setAttribute("font-weight", "600");
      e.appendChild(document.createTextNode(s));
      if (!id) return svg.appendChild(e);
      // The tooltip sits beside the label in a <g>, so it is never part of the label's text.
      const g = document.createElementNS(SVG_NS, "g");
      const n = this.ref(id);
      const tip = document.createElementNS(SVG_NS, "title");
      tip.textContent = (n ? `${n.source} · ${n.path} · chunk ${id}` : "chunk " + id).replace(CTL, "⍰");
      add(g, tip, e);
      svg.appendChild(g);
    };
    const path = (d, cls) => {
      const e = document.createElementNS(SVG_NS, "path");
      e.setAttribute("class", cls);
      e.setAttribute("d", d);
      svg.appendChild(e);
    };
    text(lx, 14, "before", "end", true);
    text(rx, 14, "after", "", true);
    const afterPos = new Map(r.after.map((c, i) => [c, i]));
    r.before.slice(0, n).forEach((c, i) => {
      const y = top + i * rowH + 10;
      text(lx - 8, y + 4, `${i + 1}. ${this.short(c, chars)}`, "end", false, c);
      const j = afterPos.get(c);
      if (j !== undefined && j < n) {
        const y2 = top + j * rowH + 10;
        path(`M${lx} ${y} C${lx + 40} ${y} ${rx - 40} ${y2} ${rx} ${y2}`, "srnb-svg-line");
      } else path(`M${lx} ${y} L${lx + 30} ${y}`, "srnb-svg-line srnb-svg-drop");
    });
    r.after.slice(0, n).forEach((c, j) => text(rx + 8, top + j * rowH + 14, `${j + 1}. ${this.short(c, chars)}`, "", false, c));
    return svg;
  }

  rerank(r) {
    const body = [];
    if (r.fallback) {
      const b = h("div", "srnb-banner srnb-banner-bad");
      add(b, h("strong", "", "fallback: previous order kept"), document.createTextNode(" — "), t(r.fallback));
      body.push(b);
    }
    body.push(this.bump(r));
    const table = h("table", "srnb-table");
    const hr = h("tr");
    const reasons = r.reasons || {};
    const why = Object.keys(reasons).length > 0;
    const cols = [["chunk", ""], ["before", "srnb-r"], ["after", "srnb-r"], ["move", ""], ["score", "srnb-r"]];
    if (why) cols.push(["why (reranker)", ""]);
    for (const [c, cls] of cols) hr.appendChild(h("th", cls, c));
    add(table, add(h("thead"), hr));
    const tb = h("tbody");
    const afterPos = new Map(r.after.map((c, i) => [c, i]));
    const beforePos = new Map(r.before.map((c, i) => [c, i]));
    for (const c of [...r.before, ...r.after.filter((x) => !beforePos.has(x))]) {
      const i = beforePos.get(c);
      const j = afterPos.get(c);
      const move = i === undefined ? "new" : j === undefined ? "✗ dropped" : j < i ? `↑ ${i - j}` : j > i ? `↓ ${j - i}` : "= same";
      const sc = (r.scores || {})[c];
      const tr = add(h("tr"), add(h("td"), this.chunkLabel(c)), h("td", "srnb-r srnb-num", i === undefined ? "—" : i + 1), h("td", "srnb-r srnb-num", j === undefined ? "—" : j + 1), h("td", "srnb-nowrap", move), h("td", "srnb-r srnb-num", sc === undefined ? "—" : g3(sc)));
      if (why) add(tr, add(h("td"), t(reasons[c] || "")));
      tb.appendChild(tr);
    }
    table.appendChild(tb);
    body.push(table);
    if (!why && !r.fallback && r.before.length) body.push(h("div", "srnb-muted", "the reranker gave scores, no reasons"));
    return this.card(r, [badge(r.fallback ? "fallback" : `${r.before.length} → ${r.after.length}`, r.fallback ? "bad" : "info")], body, ["by " + (r.reranker || "unknown reranker"), "keep " + r.keep]);
  }
}

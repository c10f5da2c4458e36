// selfrag_nb trace view (AnyWidget ESM, vanilla JS, no build step, no network).
//
//   model.data (JSON from selfrag_nb/display/state.py)
//     -> render(): header (trace) + one card per record, by kind:
//        decide rewrite retrieve grade rerank assess generate verify usefulness finish search
//     -> clicking a claim sets model.selected_claim -> panel with its evidence span
//     -> pager buttons set model.page (hits, grades and claims page together,
//        so page 2 of the hits lines up with page 2 of their grades)
//     -> chunks are named from data.refs (file, heading path, rank, trust
//        flags: display/names.py), never by a bare id
//     -> data.baseline (a stepper's what-if): current trace first, labelled,
//        then the trace before the what-if in a fold
//
// Every piece of data is set with textContent or createTextNode: never
// innerHTML. Open <details> survive re-renders (remembered by key).

const TITLES = {
  decide: "Decide", rewrite: "Rewrite", retrieve: "Retrieve", grade: "Grade", rerank: "Rerank",
  assess: "Assess", generate: "Generate", verify: "Verify", usefulness: "Usefulness", finish: "Outcome",
  search: "Search",
};
const USEFUL = { yes: ["answers the question", "ok"], partly: ["answers in part", "warn"], no: ["does not answer", "bad"] };
const VERDICT = {
  supported: ["✓", "supported", "ok"],
  partial: ["◐", "partly supported", "warn"],
  unsupported: ["✗", "unsupported", "bad"],
};
const SCORE_NAMES = {
  vector: "vector similarity (1 − cosine distance)", vector_distance: "cosine distance",
  fts: "keyword score (BM25)", hybrid: "fused score (reciprocal rank fusion of the two ranks)",
};
const bandOf = (v) => (v >= 80 ? "high" : v >= 50 ? "partial" : "irrelevant");
// Same words as display/html.py's MODEL_ERROR_BANNER.
const MODEL_ERROR_BANNER = "model error: model calls failed, so the check was not made (not missing evidence)";
const ACTION_TONE = { answer: "ok", clarify: "warn", refuse: "bad", answer_without_evidence: "warn" };

// ---------------------------------------------------------------- helpers
// (CTL SVG_NS OUTCOME_TONE h add pieces t block marked badge meta fmtMs fmtCost
// fmtTok come from prelude.js; ChunkViews (chunk names, hits, the rerank card)
// from trace_chunks.js: display/js.py joins them before this file)

function row(label, value) {
  const r = h("div", "srnb-row");
  add(r, h("span", "srnb-label", label));
  r.appendChild(typeof value === "string" ? t(value) : value);
  return r;
}

function g3(x) {
  return Number(x).toPrecision(3).replace(/\.?0+$/, "").replace(/\.?0+e/, "e");
}

function pct(v) {
  return Math.max(0, Math.min(100, Number(v) || 0)).toFixed(1) + "%";
}

function costOf(calls) {
  let sum = 0;
  for (const c of calls) {
    if (c.cost === null || c.cost === undefined) return null;
    sum += c.cost;
  }
  return sum;
}

// ------------------------------------------------------------------ the view

class View extends ChunkViews {
  constructor(model, el) {
    super();
    this.model = model;
    this.el = el;
    this.open = new Set();
  }

  get data() {
    return this.model.get("data") || {};
  }

  details(key, summary, fill, cls) {
    const d = h("details", "srnb-details" + (cls ? " " + cls : ""));
    const s = h("summary");
    s.appendChild(typeof summary === "string" ? t(summary) : summary);
    d.appendChild(s);
    d.dataset.key = key;
    let filled = false;
    const fillOnce = () => {
      if (!filled) {
        filled = true;
        fill(d);
      }
    };
    if (this.open.has(key)) {
      d.open = true;
      fillOnce();
    }
    d.addEventListener("toggle", () => {
      if (d.open) {
        this.open.add(key);
        fillOnce(); // lazily built: a closed chunk costs nothing
      } else this.open.delete(key);
    });
    return d;
  }

  pageSize() {
    return this.data.page_size || 20;
  }

  // The items of the current page plus a pager when the list is long.
  paged(items, noun) {
    const size = this.pageSize();
    const pages = Math.max(1, Math.ceil(items.length / size));
    const page = Math.min(Math.max(0, this.model.get("page") || 0), pages - 1);
    const slice = items.slice(page * size, (page + 1) * size).map((it, i) => [it, page * size + i]);
    if (pages <= 1) return { slice, pager: null };
    const pager = h("div", "srnb-pager");
    const prev = h("button", "srnb-btn", "‹ prev");
    const next = h("button", "srnb-btn", "next ›");
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    prev.addEventListener("click", () => this.setPage(page - 1));
    next.addEventListener("click", () => this.setPage(page + 1));
    add(pager, prev, h("span", "srnb-muted", `${noun} ${page * size + 1}-${Math.min(items.length, (page + 1) * size)} of ${items.length} · page ${page + 1}/${pages}`), next);
    return { slice, pager };
  }

  setPage(p) {
    this.model.set("page", p);
    this.model.save_changes();
  }

  selectClaim(i) {
    this.model.set("selected_claim", this.model.get("selected_claim") === i ? -1 : i);
    this.model.save_changes();
  }

  // ------------------------------------------------------------- cards

  card(rec, badges, body, extra) {
    const calls = rec.calls || [];
    const sec = h("section", "srnb-card srnb-card-" + rec.stage);
    const head = h("div", "srnb-card-h");
    add(head, h("span", "srnb-stage", TITLES[rec.stage] || rec.stage));
    for (const b of badges) add(head, b);
    add(head, meta(add(h("span", "srnb-num"), document.createTextNode(fmtMs(rec.latency_ms))),
      `${calls.length} model call${calls.length === 1 ? "" : "s"}`, ...(extra || [])));
    if (calls.some((c) => c.offline)) add(head, badge(this.data.offline_note, "offline"));
    add(sec, head);
    for (const f of rec.fallbacks || []) {
      const b = h("div", "srnb-banner");
      add(b, h("strong", "", "fallback: "), t(f.what), document.createTextNode(" — "), t(f.reason));
      add(sec, b);
    }
    for (const b of body) add(sec, b);
    if (calls.length) add(sec, this.calls(calls, rec.stage));
    return sec;
  }

  calls(calls, key) {
    const tin = calls.reduce((a, c) => a + (c.tokens_in || 0), 0);
    const tout = calls.reduce((a, c) => a + (c.tokens_out || 0), 0);
    const sum = `model calls (${calls.length}) · tokens ${fmtTok(tin)} in / ${fmtTok(tout)} out · cost ${fmtCost(costOf(calls))}`;
    return this.details("calls-" + key, sum, (d) => {
      calls.forEach((c, i) => {
        const s = h("span");
        const tone = { ok: "ok", repaired: "warn", unparsed: "bad", error: "bad" }[c.parse_status] || "";
        add(s, h("span", "srnb-rank", "#" + (i + 1)), t(`${c.role} · ${c.model} `), badge(c.parse_status, tone));
        if (c.offline) add(s, document.createTextNode(" "), badge("offline", "offline", this.data.offline_note));
        if (c.cached) add(s, document.createTextNode(" "), badge("cached", "info"));
        if ((c.injection_flags || []).length) add(s, document.createTextNode(" "), badge("injection: " + c.injection_flags.join(", "), "bad"));
        add(s, document.createTextNode(" "), meta(fmtMs(c.latency_ms), `in ${fmtTok(c.tokens_in)} / out ${fmtTok(c.tokens_out)} tokens`, "cost " + fmtCost(c.cost), c.retries ? c.retries + " retries" : ""));
        d.appendChild(this.details(`call-${key}-${i}`, s, (dd) => {
          add(dd, row("prompt hash", add(h("span", "srnb-id"), t(c.prompt_hash || "—"))));
          if (c.offline) add(dd, row("model", badge(this.data.offline_note, "offline")));
          if (c.parse_error) add(dd, row("parse error", c.parse_error));
          if (c.error) add(dd, row("error", c.error));
          if (c.fallback) add(dd, row("fallback", c.fallback));
          for (const m of c.messages || []) add(dd, h("div", "srnb-label", m.role || "?"), block(m.content, "srnb-block srnb-code"));
          add(dd, h("div", "srnb-label", "raw output"), block(c.raw, "srnb-block srnb-code"));
        }));
      });
    });
  }

  decide(r) {
    const who = r.source + (r.rule ? ` (${r.rule})` : "");
    const body = [row("reason", r.reason), row("decided by", who)];
    if (r.summary) body.push(row("history summary", r.summary));
    if (r.cache_key) body.push(row("cache key", add(h("span", "srnb-id"), t(r.cache_key))));
    return this.card(r, [badge(r.retrieve ? "RETRIEVE" : "NO RETRIEVE", r.retrieve ? "info" : "ok")], body, ["by " + r.source]);
  }

  protectedRanges(text, spans) {
    const out = [];
    for (const sp of spans) {
      if (!sp) continue;
      let i = text.indexOf(sp);
      while (i >= 0) {
        out.push([i, i + sp.length, () => { const m = h("mark", "srnb-protect"); m.title = "protected span"; return m; }]);
        i = text.indexOf(sp, i + sp.length);
      }
    }
    return out;
  }

  rewrite(r) {
    const spans = (r.protected || []).map((p) => p.text);
    const q = r.queries || [];
    const cols = h("div", "srnb-cols");
    const left = add(h("div"), h("div", "srnb-col-h", "original"), marked(q[0] || "", this.protectedRanges(q[0] || "", spans)));
    const right = add(h("div"), h("div", "srnb-col-h", `rewrites (${Math.max(q.length - 1, 0)})`));
    if (q.length > 1) for (const x of q.slice(1)) add(right, marked(x, this.protectedRanges(x, spans)));
    else add(right, h("div", "srnb-muted", "none: the original question is searched alone"));
    add(cols, left, right);
    const body = [cols];
    if (spans.length) {
      const p = h("span");
      for (const s of r.protected) add(p, add(h("mark", "srnb-protect"), t(s.text)), document.createTextNode(" "), meta(s.kind), document.createTextNode(" "));
      body.push(row("protected", p));
    }
    if ((r.rejected || []).length) {
      body.push(h("div", "srnb-col-h", `rejected rewrites (${r.rejected.length})`));
      const ul = h("ul", "srnb-list");
      for (const x of r.rejected) {
        const li = add(h("li", "srnb-list-item"), badge("rejected", "bad"), document.createTextNode(" "), t(x.text), document.createTextNode(" — "), t(x.reason));
        if ((x.missing || []).length) add(li, document.createTextNode(" "), meta("missing: " + x.missing.join(", ")));
        ul.appendChild(li);
      }
      body.push(ul);
    }
    if (r.reason) body.push(row("why", r.reason));
    return this.card(r, [badge(r.attempted ? "attempted" : "not attempted", r.attempted ? "info" : "")], body);
  }

  hitList(hits) {
    const { slice, pager } = this.paged(hits, "hits");
    const box = h("div");
    add(box, pager);
    for (const [hit, i] of slice) box.appendChild(this.hitItem(hit, i));
    return box;
  }

  retrieve(r) {
    const body = [
      row("access filter", r.access_filter || "none (every chunk visible)"),
      row("search", meta(r.mode, `k=${r.per_query_k} per query`, `cap ${r.total_cap}`, `${r.duplicates_removed} duplicates removed`, r.kb_version !== null && r.kb_version !== undefined ? `kb version ${r.kb_version}` : "")),
    ];
    if ((r.per_query || []).length) {
      body.push(h("div", "srnb-col-h", "per query"));
      const ul = h("ul", "srnb-list");
      for (const q of r.per_query) add(ul, add(h("li", "srnb-list-item"), t(q.query), document.createTextNode(" "), meta(`${q.chunk_ids.length} chunks`)));
      body.push(ul);
    }
    body.push(r.hits.length ? this.hitList(r.hits) : h("div", "srnb-muted", "no hits"));
    return this.card(r, [badge(`${r.hits.length} hits`, "info")], body, [r.mode]);
  }

  search() {
    const s = this.data.search || { hits: [] };
    const sec = h("section", "srnb-card srnb-card-search");
    add(sec, add(h("div", "srnb-card-h"), h("span", "srnb-stage", "Search"), badge(`${s.hits.length} hits`, "info"), meta(s.mode, "k=" + s.k, add(h("span"), document.createTextNode("query "), t(s.query)))));
    add(sec, row("access filter", s.access_filter || "none (every chunk visible)"));
    add(sec, s.hits.length ? this.hitList(s.hits) : h("div", "srnb-muted", "no hits"));
    return sec;
  }

  bar(score, band, ticks, title) {
    const b = h("div", "srnb-bar");
    b.title = title || "score " + score;
    const f = h("div", "srnb-bar-fill srnb-fill-" + band);
    f.style.width = pct(score);
    b.appendChild(f);
    for (const x of ticks || []) {
      const k = h("div", "srnb-tick");
      k.style.left = pct(x);
      b.appendChild(k);
    }
    return b;
  }

  grade(g) {
    const items = g.items || [];
    const rel = items.filter((x) => x.relevant).length;
    const legend = add(h("div", "srnb-legend"), h("span", "", "bars: score 0-100"), h("span", "", `╎ ${g.relevance_cutoff} relevance cutoff`), h("span", "", `╎ ${g.high_relevance} high relevance`), badge("✓ relevant", "ok"), badge("✗ not relevant", "bad"));
    const { slice, pager } = this.paged(items, "grades");
    const list = h("div");
    add(list, pager);
    for (const [x, i] of slice) {
      const c = (this.data.chunks || {})[x.chunk_id];
      const rowEl = h("div", "srnb-grade");
      add(rowEl, add(h("div", "srnb-grade-name"), this.ref(x.chunk_id) ? this.chunkLabel(x.chunk_id) : add(h("span", "srnb-src"), this.breakable(x.source || "?"))));
      add(rowEl, this.bar(x.score, x.band, [g.relevance_cutoff, g.high_relevance], `score ${x.score} (cutoff ${g.relevance_cutoff}, high ${g.high_relevance})`));
      add(rowEl, add(h("div"), h("span", "srnb-num", String(x.score)), document.createTextNode(" "), x.relevant ? badge("✓ relevant", "ok") : badge("✗ not relevant", "bad"), document.createTextNode(" "), meta(x.band)));
      const notes = h("div", "srnb-grade-notes");
      if (x.key_info) add(notes, row("key info", x.key_info));
      if (x.gaps) add(notes, row("gaps", x.gaps));
      if (x.parse_status !== "ok") add(notes, row("parse", badge(x.parse_status, "bad")));
      if (c) add(notes, this.details(`grade-chunk-${x.chunk_id}-${i}`, "chunk", (d) => add(d, block(c.text))));
      if (notes.childNodes.length) add(rowEl, notes);
      list.appendChild(rowEl);
    }
    const body = [legend, list];
    if ((g.kept || []).length) {
      const s = h("span");
      g.kept.forEach((k, i) => add(s, i ? document.createTextNode(", ") : null, this.chunkLabel(k)));
      body.push(row("kept (by score)", s));
    }
    const best = items.length ? Math.max(...items.map((x) => x.score)) : null;
    return this.card(g, [badge(`${rel}/${items.length} relevant`, rel ? "ok" : "bad")], body, [`cutoff ${g.relevance_cutoff}`, best !== null ? `best ${best}` : "", `concurrency ${g.concurrency}`]);
  }

  assess(a) {
    const body = [row("why", a.reason)];
    if ((a.options || []).length) {
      body.push(h("div", "srnb-col-h", "options to clarify"));
      const ul = h("ul", "srnb-list");
      for (const o of a.options) add(ul, add(h("li", "srnb-list-item"), t(o)));
      body.push(ul);
    }
    if (a.conflict) body.push(row("conflict", a.conflict));
    if (a.applies) body.push(row("applies", a.applies));
    if ((a.evidence || []).length) {
      const s = h("span");
      a.evidence.forEach((c, i) => add(s, i ? document.createTextNode(", ") : null, this.chunkLabel(c)));
      body.push(row("evidence", s));
    }
    return this.card(a, [badge(a.action.replace(/_/g, " ").toUpperCase(), ACTION_TONE[a.action] || "")], body);
  }

  legend() {
    const l = h("div", "srnb-legend");
    for (const v of ["supported", "partial", "unsupported"]) add(l, h("span", "srnb-claim srnb-v-" + v, `${VERDICT[v][0]} ${VERDICT[v][1]}`));
    add(l, h("span", "", "⚠ citation error"), h("span", "", "[n] cited chunk"), h("span", "", "click a claim to see its evidence"));
    return l;
  }

  // Claim selection indexes the claims of the latest Support only.
  latestSupport() {
    return this.latest;
  }

  answerView(g, sup) {
    const text = g.answer || "";
    const bad = new Set((g.citations || []).filter((c) => !c.valid).map((c) => c.marker));
    const ranges = [];
    const claimed = [];
    const live = sup && sup === this.latestSupport();
    const sel = this.model.get("selected_claim");
    if (sup) {
      sup.claims.forEach((c, i) => {
        if (!c.span) return;
        const [a, b] = c.span;
        claimed.push([a, b]);
        ranges.push([a, b, () => {
          const s = h("span", `srnb-claim srnb-v-${c.verdict}` + (live ? " srnb-clickable" : "") + (live && sel === i ? " srnb-selected" : ""));
          s.title = `claim ${i + 1}: ${VERDICT[c.verdict][1]}${c.citation_error ? " ⚠ citation" : ""}`;
          if (live) s.addEventListener("click", () => this.selectClaim(i));
          return s;
        }, () => h("sup", "srnb-claim-tag", VERDICT[c.verdict][0] + (i + 1) + (c.citation_error ? "⚠" : ""))]);
      });
    }
    for (const m of text.matchAll(/\[(\d{1,3})\]/g)) {
      if (claimed.some(([a, b]) => a <= m.index && m.index < b)) continue;
      const isBad = bad.has(Number(m[1]));
      ranges.push([m.index, m.index + m[0].length, () => {
        const s = h("span", isBad ? "srnb-cite srnb-cite-bad" : "srnb-cite");
        if (isBad) s.title = "invalid citation";
        return s;
      }]);
    }
    return marked(text, ranges, "srnb-block srnb-answer");
  }

  generate(g) {
    const sups = (this.data.records || []).filter((r) => r.stage === "verify" && r.attempt === g.attempt);
    const sup = this.data.kind === "trace" && sups.length ? sups[sups.length - 1] : null;
    const body = [];
    if (sup) body.push(this.legend());
    body.push(this.answerView(g, sup));
    if (sup && sup === this.latestSupport()) body.push(this.claimPanel(sup));
    if ((g.citations || []).length) {
      body.push(h("div", "srnb-col-h", "citations"));
      const ul = h("ul", "srnb-list");
      for (const c of g.citations) {
        const li = add(h("li", "srnb-list-item"), document.createTextNode(`[${c.marker}] `), this.chunkLabel(c.chunk_id));
        if (!c.valid) add(li, document.createTextNode(" "), badge("⚠ invalid citation", "bad"));
        ul.appendChild(li);
      }
      body.push(ul);
    }
    if ((g.evidence || []).length) {
      body.push(h("div", "srnb-col-h", "evidence shown to the model"));
      const ul = h("ul", "srnb-list");
      g.evidence.forEach((c, i) => add(ul, add(h("li", "srnb-list-item"), document.createTextNode(`[${i + 1}] `), this.chunkLabel(c))));
      body.push(ul);
    }
    const nBad = (g.citations || []).filter((c) => !c.valid).length;
    const badges = [badge(g.mode, "info")];
    if (nBad) badges.push(badge(`${nBad} invalid citation(s)`, "bad"));
    return this.card(g, badges, body, [`attempt ${g.attempt}`, `${(g.answer || "").length.toLocaleString("en-US")} chars`]);
  }

  evidenceView(c) {
    const box = h("div");
    if (!(c.evidence || []).length) return add(box, h("div", "srnb-muted", "no supporting evidence found"));
    c.evidence.forEach((ev, k) => {
      add(box, add(h("div", "srnb-label"), document.createTextNode("evidence in "), this.chunkLabel(ev.chunk_id)));
      const chunk = (this.data.chunks || {})[ev.chunk_id];
      const loc = (c.locs || [])[k];
      if (!chunk) add(box, marked(ev.span, [[0, ev.span.length, () => h("mark", "srnb-mark")]]));
      else if (!loc) add(box, h("div", "srnb-trunc", "span not found in the chunk; quoted span:"), block(ev.span), block(chunk.text));
      else add(box, marked(chunk.text, [[loc[0], loc[1], () => h("mark", "srnb-mark")]]));
    });
    return box;
  }

  claimPanel(sup) {
    const sel = this.model.get("selected_claim");
    const c = sup.claims[sel];
    const p = h("div", "srnb-panel");
    if (!c) return add(p, h("div", "srnb-muted", "Select a claim to see the span that supports it."));
    const [icon, label, tone] = VERDICT[c.verdict];
    add(p, add(h("div", "srnb-row"), h("span", "srnb-rank", `${sel + 1}.`), badge(`${icon} ${label}`, tone), document.createTextNode(" "), add(h("span", `srnb-claim srnb-v-${c.verdict}`), t(c.text))));
    if (c.citation_error) add(p, add(h("div", "srnb-banner srnb-banner-bad"), document.createTextNode("⚠ "), t(c.citation_error)));
    return add(p, this.evidenceView(c));
  }

  verify(s) {
    const claims = s.claims || [];
    const count = (v) => claims.filter((c) => c.verdict === v).length;
    const errs = claims.filter((c) => c.citation_error).length;
    const tone = { ACCEPT: "ok", ADD_DISCLAIMER: "warn", REGENERATE: "bad" }[s.recommendation];
    const live = s === this.latestSupport();
    const sel = this.model.get("selected_claim");
    const body = [this.legend(), row("claims", meta(`✓ ${count("supported")} supported`, `◐ ${count("partial")} partial`, `✗ ${count("unsupported")} unsupported`, errs ? `⚠ ${errs} citation error(s)` : ""))];
    const conf = h("div", "srnb-grade");
    add(conf, h("div", "srnb-grade-name", "overall confidence"), this.bar(s.overall_confidence, s.band || bandOf(s.overall_confidence), [50, 80], `confidence ${s.overall_confidence} of 100`), add(h("div"), h("span", "srnb-num", String(s.overall_confidence))));
    body.push(conf);
    if (live && this.data.kind !== "trace") body.push(this.claimPanel(s));
    const { slice, pager } = this.paged(claims, "claims");
    const list = h("div");
    add(list, pager);
    for (const [c, i] of slice) {
      const [icon, label, ctone] = VERDICT[c.verdict];
      const r = h("div", "srnb-row srnb-clickable" + (live && sel === i ? " srnb-selected" : ""));
      add(r, h("span", "srnb-rank", `${i + 1}.`), badge(`${icon} ${label}`, ctone), document.createTextNode(" "), add(h("span", `srnb-claim srnb-v-${c.verdict}`), t(c.text)));
      if ((c.cited || []).length) {
        const m = add(h("span", "srnb-meta"), document.createTextNode("cites "));
        c.cited.forEach((x, k) => add(m, k ? document.createTextNode(", ") : null, this.chunkLabel(x, false)));
        add(r, document.createTextNode(" "), m);
      }
      if (c.citation_error) add(r, document.createTextNode(" "), badge("⚠ citation error", "bad", c.citation_error));
      if (live) r.addEventListener("click", () => this.selectClaim(i));
      list.appendChild(r);
      if (live && sel === i && this.data.kind === "trace") list.appendChild(this.claimPanel(s));
    }
    body.push(list);
    const badges = [badge(s.recommendation, tone), s.is_fully_supported ? badge("fully supported", "ok") : badge("not fully supported", "warn")];
    return this.card(s, badges, body, [`attempt ${s.attempt}`, `confidence ${s.overall_confidence}`]);
  }

  usefulness(u) {
    const [label, tone] = USEFUL[u.verdict] || [u.verdict, ""];
    const body = [row("why", u.reason)];
    if (u.missing) body.push(row("missing", u.missing));
    const sc = h("div", "srnb-grade");
    add(sc, h("div", "srnb-grade-name", "usefulness"), this.bar(u.score, bandOf(u.score), [50, 80], `usefulness ${u.score} of 100`), add(h("div"), h("span", "srnb-num", String(u.score))));
    body.push(sc);
    return this.card(u, [badge(label, tone)], body, [`attempt ${u.attempt}`, `score ${u.score}`]);
  }

  finish(o) {
    const body = [];
    if (o.deadline_exceeded) body.push(h("div", "srnb-banner srnb-banner-bad", "deadline exceeded"));
    if (o.reason_kind === "model_error") body.push(h("div", "srnb-banner srnb-banner-bad", MODEL_ERROR_BANNER));
    if (o.disclaimer) body.push(add(h("div", "srnb-banner"), h("strong", "", "disclaimer: "), t(o.disclaimer)));
    const label = o.outcome === "refused" ? "refusal" : o.outcome === "clarify" ? "clarifying question" : "answer";
    body.push(h("div", "srnb-col-h", label), block(o.answer, "srnb-block srnb-answer"));
    if (o.reason) body.push(row("why", o.reason));
    if ((o.dropped_claims || []).length) {
      body.push(h("div", "srnb-col-h", `dropped claims (${o.dropped_claims.length})`));
      const ul = h("ul", "srnb-list");
      for (const c of o.dropped_claims) add(ul, add(h("li", "srnb-list-item"), t(c)));
      body.push(ul);
    }
    if ((o.skipped || []).length) body.push(row("skipped (deadline)", o.skipped.join(", ")));
    return this.card(o, [badge(o.outcome, o.tone || OUTCOME_TONE[o.outcome] || "")], body);
  }

  // ---------------------------------------------------------------- trace

  header() {
    const d = this.data;
    const tot = d.totals || {};
    const head = h("div", "srnb-head");
    const q = h("div", "srnb-q");
    q.dir = "auto";
    add(head, pieces(q, d.question));
    const roles = (d.user && d.user.roles.length) ? ` (${d.user.roles.join(", ")})` : "";
    const wall = tot.wall_ms || (d.stages || []).reduce((a, r) => a + r.latency_ms, 0);
    const line = add(h("div", "srnb-totals"), d.outcome ? badge(d.outcome, d.outcome_tone || OUTCOME_TONE[d.outcome] || "") : badge("in progress", "info"),
      meta(add(h("span"), document.createTextNode("user "), t((d.user ? d.user.id : "") + roles)), `${tot.stages} stages`, `${tot.model_calls} model calls`, ...(d.times || [fmtMs(wall)]), `tokens ${fmtTok(tot.tokens_in)} in / ${fmtTok(tot.tokens_out)} out`, "cost " + fmtCost(tot.cost)));
    if (d.offline) add(line, badge(d.offline_note, "offline"));
    add(head, line);
    if ((d.history || []).length) {
      add(head, this.details("history", `history (${d.history.length} turns)`, (x) => {
        for (const m of d.history) add(x, h("div", "srnb-label", m.role || "?"), block(m.content));
      }));
    }
    return head;
  }

  timeline() {
    const rows = this.data.stages || [];
    const startup = this.data.startup || [];
    // Start-up is its own first row, before the stages' clock: never a stage's bar.
    const lead = startup.length ? [{ stage: "Start-up", latency_ms: startup.reduce((a, p) => a + p[1], 0) }] : [];
    const total = rows.reduce((a, r) => a + r.latency_ms, 0) || 1;
    const scale = lead.length ? total + lead[0].latency_ms : total;
    const sec = h("section", "srnb-card srnb-card-totals");
    add(sec, add(h("div", "srnb-card-h"), h("span", "srnb-stage", "Timeline & cost")));
    const tl = h("div", "srnb-tl");
    let start = 0;
    for (const r of [...lead, ...rows]) {
      const track = h("div", "srnb-tl-track");
      const bar = h("div", "srnb-tl-bar");
      bar.style.left = pct((100 * start) / scale);
      bar.style.width = pct((100 * r.latency_ms) / scale);
      track.appendChild(bar);
      add(tl, h("div", "", TITLES[r.stage] || r.stage), track, h("div", "srnb-r srnb-num", fmtMs(r.latency_ms)));
      start += r.latency_ms;
    }
    sec.appendChild(tl);
    if (startup.length) sec.appendChild(h("div", "srnb-meta", "start-up, once, before the question's clock: " + startup.map((p) => `${p[0]} ${fmtMs(p[1])}`).join("; ")));
    const table = h("table", "srnb-table");
    const hr = h("tr");
    for (const [c, cls] of [["stage", ""], ["latency", "srnb-r"], ["calls", "srnb-r"], ["tokens in", "srnb-r"], ["tokens out", "srnb-r"], ["cost", "srnb-r"], ["fallbacks", ""]]) hr.appendChild(h("th", cls, c));
    add(table, add(h("thead"), hr));
    const tb = h("tbody");
    for (const r of rows) {
      add(tb, add(h("tr"), h("td", "", TITLES[r.stage] || r.stage), h("td", "srnb-r srnb-num", fmtMs(r.latency_ms)), h("td", "srnb-r srnb-num", r.model_calls), h("td", "srnb-r srnb-num", fmtTok(r.tokens_in)), h("td", "srnb-r srnb-num", fmtTok(r.tokens_out)), h("td", "srnb-r srnb-num", fmtCost(r.cost)), add(h("td"), t(r.fallbacks))));
    }
    const tot = this.data.totals || {};
    add(tb, add(h("tr"), add(h("td"), h("strong", "", "total")), h("td", "srnb-r srnb-num", fmtMs(total === 1 && !rows.length ? 0 : total)), h("td", "srnb-r srnb-num", tot.model_calls), h("td", "srnb-r srnb-num", fmtTok(tot.tokens_in)), h("td", "srnb-r srnb-num", fmtTok(tot.tokens_out)), h("td", "srnb-r srnb-num", fmtCost(tot.cost)), h("td")));
    table.appendChild(tb);
    sec.appendChild(table);
    return sec;
  }

  record(r) {
    const fn = this[r.stage];
    if (typeof fn !== "function") return h("div", "srnb-muted", "unknown stage: " + r.stage);
    return fn.call(this, r);
  }

  body(root) {
    const d = this.data;
    const sups = (d.records || []).filter((r) => r.stage === "verify");
    this.latest = sups.length ? sups[sups.length - 1] : null;
    if (d.kind === "trace") {
      add(root, this.header());
      for (const r of d.records || []) add(root, this.record(r));
      if ((d.records || []).length) add(root, this.timeline());
    } else if (d.kind === "search") {
      add(root, this.search());
    } else {
      for (const r of d.records || []) add(root, this.record(r));
    }
    return root;
  }

  render() {
    const d = this.data;
    // MathJax (JupyterLab, Notebook) skips these classes: "$0 -> $0" stays text.
    const root = h("div", "srnb-root tex2jax_ignore mathjax_ignore");
    root.dir = "ltr";
    if (d.baseline) {
      add(root, add(h("div", "srnb-banner srnb-banner-info"), h("strong", "", "current (what-if): "), t(d.what_if || "changed"), document.createTextNode(" — the trace before the what-if is below")));
      this.body(root);
      // The earlier trace: a read-only View over data.baseline (its own pages and folds).
      const before = new View({ get: (k) => (k === "data" ? d.baseline : k === "selected_claim" ? -1 : 0), set() {}, save_changes() {} }, null);
      before.open = this.open;
      add(root, this.details("baseline", "before the what-if (the original run)", (x) => add(x, before.body(h("div", "srnb-compare-body"))), "srnb-compare"));
    } else this.body(root);
    this.el.replaceChildren(root);
  }
}

function render({ model, el }) {
  const view = new View(model, el);
  const redraw = () => view.render();
  redraw();
  model.on("change:data", redraw);
  model.on("change:selected_claim", redraw);
  model.on("change:page", redraw);
  return () => {
    model.off("change:data", redraw);
    model.off("change:selected_claim", redraw);
    model.off("change:page", redraw);
  };
}

export default { render };

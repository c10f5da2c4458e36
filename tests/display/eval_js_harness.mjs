// Runs the evaluation view under node with the tiny DOM and model double of
// mini_dom.mjs (which throws on innerHTML and friends).
//
//   node eval_js_harness.mjs <module.mjs> <traits.json> <actions.json>
//
// <module.mjs> is what the widget loads: selfrag_nb.display.js.esm("eval.js")
// (generated CTL + prelude.js + eval.js), written to a file by the test.
// traits.json holds the widget's synced traits (data, mode, metric, category,
// cell, tab). After each action it prints what a user would
// see: the text, the SVG labels and tooltips, the bars, the failures panel.
//
// actions: ["metric", key] picks from the metric <select>; ["category", name]
// from the category <select>; ["bar", i] clicks the i-th bar; ["row", i] the
// i-th summary row; ["header", label] a metric column header; ["button", text]
// the first button whose text starts with it; ["set_data", path] replaces data.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

import { modelDouble } from "./mini_dom.mjs";

const [jsPath, traitsPath, actionsPath] = process.argv.slice(2);
const traits = JSON.parse(readFileSync(traitsPath, "utf8"));
const actions = JSON.parse(readFileSync(actionsPath, "utf8"));
const { model, counts, listening } = modelDouble(traits);

const mod = await import(pathToFileURL(jsPath).href);
const el = document.createElement("div");
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
    saves: counts.saves,
    selects: sels.map((s) => ({ value: s.value, options: s.childNodes.map((o) => o.value) })),
    svg_labels: svgText((e) => e.tagName === "text"),
    tooltips: svgText((e) => e.tagName === "title"),
    bars: el.all((e) => e.tagName === "rect" && e.classes().includes("srnb-ev-rect")).length,
    bar_fills: el.all((e) => e.tagName === "rect" && e.classes().includes("srnb-ev-rect")).map((e) => [e.getAttribute("data-variant"), e.getAttribute("fill")]),
    boxes: el.all((e) => e.tagName === "g" && e.classes().includes("srnb-ev-box")).map((e) => [e.getAttribute("data-variant"), e.all((k) => k.tagName === "rect")[0].getAttribute("fill"), e.all((k) => k.tagName === "circle").length]),
    swatches: el.byClass("srnb-ev-swatch").map((e) => e.style.background),
    root_classes: el.childNodes[0] ? el.childNodes[0].classes() : [],
    wbr: el.all((e) => e.tagName === "WBR").length,
    id_titles: el.byClass("srnb-ev-id").map((e) => e.title),
    selected_bars: el.all((e) => e.tagName === "rect" && e.classes().includes("srnb-ev-sel")).length,
    lines: el.all((e) => e.tagName === "path").map((e) => e.classes().join(" ")),
    dots: el.all((e) => e.tagName === "circle").length,
    suggest_lines: el.all((e) => e.tagName === "line" && e.classes().includes("srnb-ev-suggest")).map((e) => e.getAttribute("x1")),
    mark_labels: el.all((e) => e.tagName === "text" && (e.classes().includes("srnb-ev-suggest-t") || e.classes().includes("srnb-ev-default-t"))).map((e) => [e.textContent, Number(e.getAttribute("y")), e.getAttribute("text-anchor")]),
    plot_top: Math.min(...el.all((e) => e.tagName === "path").map((e) => Math.min(...(e.getAttribute("d") || "").split(/[ML ]+/).filter(Boolean).map(Number).filter((_, i) => i % 2 === 1)))),
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
    el.all((e) => e.tagName === "rect" && e.classes().includes("srnb-ev-rect"))[arg].fire("click");
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
out.push({ label: "cleanup", handlers: listening() });
process.stdout.write(JSON.stringify(out));

// Runs the trace view under node with the tiny DOM and model double of
// mini_dom.mjs (which throws on innerHTML and friends).
//
//   node js_harness.mjs <module.mjs> <state.json> <actions.json>
//
// <module.mjs> is what the widget loads: selfrag_nb.display.js.esm("trace.js")
// (generated CTL + prelude.js + trace.js), written to a file by the test. After each action it prints what a user
// would see: the text, the marked spans, the selected claim panel, the pager.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

import { modelDouble } from "./mini_dom.mjs";

const [jsPath, statePath, actionsPath] = process.argv.slice(2);
const state = JSON.parse(readFileSync(statePath, "utf8"));
const actions = JSON.parse(readFileSync(actionsPath, "utf8"));

const traits = { data: state, kind: state.kind, selected_claim: -1, page: 0 };
const { model, counts, listening } = modelDouble(traits);

const mod = await import(pathToFileURL(jsPath).href);
const el = document.createElement("div");
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
    saves: counts.saves,
    hits: el.byClass("srnb-hit").length,
    grades: el.byClass("srnb-grade").length,
    cards: el.byClass("srnb-card").map((e) => e.classes().find((c) => c.startsWith("srnb-card-"))),
    claims_in_answer: el.byClass("srnb-answer").flatMap((a) => a.byClass("srnb-claim")).map((e) => e.classes().join(" ")),
    svg_texts: el.all((e) => e.tagName === "text").map((e) => e.textContent),
    ctl: el.byClass("srnb-ctl").map((e) => e.textContent),
    pager: el.byClass("srnb-pager").map((e) => e.textContent),
    root_class: el.childNodes[0] ? el.childNodes[0].className : "",
    // what a chunk label shows (tooltips are attributes, not text)
    chunk_labels: el.byClass("srnb-chunk").map((e) => e.textContent),
    chunk_titles: el.byClass("srnb-chunk").map((e) => e.title),
    details: el.byClass("srnb-details").map((e) => (e.childNodes[0] ? e.childNodes[0].textContent : "")),
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
  } else if (act === "open_details") {
    el.byClass("srnb-details").filter((e) => e.childNodes[0].textContent === arg)[0].fire("toggle-open");
  } else if (act === "set_data") {
    model.set("data", JSON.parse(readFileSync(arg, "utf8")));
  }
  out.push(snapshot(act + ":" + arg));
}
cleanup();
out.push({ label: "cleanup", handlers: listening() });
process.stdout.write(JSON.stringify(out));

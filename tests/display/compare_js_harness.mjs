// Runs the comparison view (sr.compare) under node with the tiny DOM and
// model double of mini_dom.mjs (which throws on innerHTML and friends).
//
//   node compare_js_harness.mjs <module.mjs> <traits.json> <actions.json>
//
// <module.mjs> is what the widget loads: selfrag_nb.display.js.esm("compare.js")
// (generated CTL + prelude.js + compare.js), written to a file by the test.
// traits.json holds the synced traits (data, expanded, only_diff).
//
// actions: ["head", stage] clicks that stage's title; ["banner", 0] clicks the
// first-divergence banner; ["only_diff", 0] clicks the "differences only"
// button; ["set_data", path] replaces data. After each action it prints what a
// reader sees: the text, the rows shown, which is the first divergence, the
// items of each expanded row, the hover titles, the control-character labels.

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

const rows = () => el.byClass("srnb-cmp-row").filter((e) => e.dataset.stage);

function snapshot(label) {
  const expandedItems = {};
  for (const r of rows()) {
    const items = r.byClass("srnb-cmp-item").map((e) => e.textContent);
    if (items.length) expandedItems[r.dataset.stage] = items;
  }
  return {
    label,
    text: el.textContent,
    root: el.childNodes[0].classes(),
    rows: rows().map((r) => r.dataset.stage),
    first: rows().filter((r) => r.classes().includes("srnb-cmp-first")).map((r) => r.dataset.stage),
    expanded: traits.expanded,
    only_diff: traits.only_diff,
    expanded_items: expandedItems,
    titles: el.all((e) => e.tagName === "LI" && e.title).map((e) => e.title),
    ctl: el.byClass("srnb-ctl").map((e) => e.textContent),
    saves: counts.saves,
  };
}

const out = [snapshot("initial")];
for (const [act, arg] of actions) {
  if (act === "head") {
    rows().find((r) => r.dataset.stage === arg).byClass("srnb-cmp-stage")[0].fire("click");
  } else if (act === "banner") {
    el.byClass("srnb-cmp-banner")[0].fire("click");
  } else if (act === "only_diff") {
    el.all((e) => e.tagName === "BUTTON")[0].fire("click");
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

// The dashboard's page: one self-contained document (inline CSS and script, SVG charts drawn
// by the script), because workshop rooms often have no internet. It polls /state once a
// second. data-* attributes on <body> and the charts say what was drawn (tests read them).

#include "workshop/dashboard.h"

namespace pgslow::workshop {

const std::string& dashboard_page() {
  static const std::string kPage = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>pgslow live</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fafafa}
h1{font-size:20px;margin:0 0 4px} .muted{color:#666}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:12px}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 12px}
svg{width:100%;height:180px;background:#fff} .axis{stroke:#999;stroke-width:1}
.marker{stroke:#c33;stroke-dasharray:4 3} .mlabel{fill:#c33;font-size:10px}
table{border-collapse:collapse} td,th{padding:2px 8px;text-align:left} td.n{text-align:right}
pre{white-space:pre-wrap;background:#fff;border:1px solid #ddd;padding:8px}
#step{font-weight:bold;text-transform:uppercase;color:#036}
#cliff{height:240px} .guess{stroke:#639;stroke-dasharray:2 3} .glabel{fill:#639;font-size:10px}
</style></head>
<body data-rendered="false" data-points="0" data-stages="0" data-predictions="0">
<h1 id="title">pgslow</h1>
<div><span id="step"></span> <span id="steptext" class="muted"></span></div>
<div id="status" class="muted"></div>
<div class="grid">
 <div class="card"><b>Transactions per second</b><svg id="tps" viewBox="0 0 600 180"></svg></div>
 <div class="card"><b>Latency p50 / p99 (ms)</b><svg id="lat" viewBox="0 0 600 180"></svg></div>
 <div class="card"><b>Failed transactions per second</b><svg id="failed" viewBox="0 0 600 180"></svg></div>
 <div class="card"><b>Evidence</b> <span id="evsince" class="muted"></span><table id="evidence"></table>
  <div><b>Stages</b><ol id="stages"></ol></div></div>
</div>
<div class="card" id="cliffbox" style="display:none;margin-top:12px"><b>The cliff</b>
 <span id="cliffinfo" class="muted"></span><svg id="cliff" viewBox="0 0 600 240"></svg></div>
<div class="card" id="predictbox" style="display:none;margin-top:12px">
 <b>Your prediction</b> <span id="question"></span><br>
 <form id="predict">Name <input id="pname" name="name" maxlength="60" required>
 Prediction <input id="panswer" name="answer" maxlength="200" size="40" required>
 <button type="submit">Send</button> <span id="sent" class="muted"></span></form>
</div>
<div class="card" style="margin-top:12px"><b>The room's predictions</b><table id="room"></table></div>
<div class="card" style="margin-top:12px"><b>The room's laptops</b> (<code>pgslow lesson NAME --room URL</code>)<table id="laptops"></table><div id="laptops_agree"></div></div>
<pre id="reveal" style="display:none"></pre>
<script>
"use strict";
const NS = "http://www.w3.org/2000/svg";
function el(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function chart(svg, series, points, stages, colors) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const W = 600, H = 180, L = 48, B = 20;
  const n = points.length;
  const t0 = n ? points[0].t : 0, t1 = n ? Math.max(points[n - 1].t, t0 + 1) : 1;
  let max = 0;
  for (const s of series) for (const p of points) max = Math.max(max, p[s]);
  max = max > 0 ? max * 1.1 : 1;
  const x = t => L + (t - t0) / (t1 - t0) * (W - L - 8);
  const y = v => H - B - v / max * (H - B - 8);
  svg.appendChild(el("line", {x1: L, y1: H - B, x2: W, y2: H - B, class: "axis"}));
  svg.appendChild(el("line", {x1: L, y1: 0, x2: L, y2: H - B, class: "axis"}));
  svg.appendChild(el("text", {x: 2, y: 12, "font-size": 10}, max.toPrecision(3)));
  svg.appendChild(el("text", {x: 2, y: H - B, "font-size": 10}, "0"));
  for (const st of stages) {
    if (st.t < t0 || st.t > t1) continue;
    svg.appendChild(el("line", {x1: x(st.t), y1: 0, x2: x(st.t), y2: H - B, class: "marker"}));
    svg.appendChild(el("text", {x: x(st.t) + 2, y: 10, class: "mlabel"}, st.name));
  }
  series.forEach((s, i) => {
    const pl = el("polyline", {fill: "none", stroke: colors[i], "stroke-width": 1.5,
      points: points.map(p => x(p.t).toFixed(1) + "," + y(p[s]).toFixed(1)).join(" ")});
    pl.setAttribute("data-series", s);
    pl.setAttribute("data-values", points.map(p => Math.round(p[s])).join(","));
    svg.appendChild(pl);
  });
  svg.setAttribute("data-points", n);
}
// The cliff search's curve: the effect against the value on a log scale, `from` on the left,
// each point's interval as a bar; the knee found so far as a band; the room's guesses as dashed
// markers (clamped to the range).
function cliffChart(svg, c) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const W = 600, H = 240, L = 48, B = 28, T = 16;
  const span = Math.log(c.to_value) - Math.log(c.from_value);
  const clamp = v => Math.min(Math.max(v, Math.min(c.from_value, c.to_value)),
                              Math.max(c.from_value, c.to_value));
  const x = v => L + (Math.log(clamp(v)) - Math.log(c.from_value)) / span * (W - L - 16);
  let lo = -5, hi = 5;
  for (const p of c.points) { lo = Math.min(lo, (p.low - 1) * 100); hi = Math.max(hi, (p.high - 1) * 100); }
  const y = v => T + (hi - v) / (hi - lo) * (H - B - T);
  svg.appendChild(el("line", {x1: L, y1: H - B, x2: W, y2: H - B, class: "axis"}));
  svg.appendChild(el("line", {x1: L, y1: 0, x2: L, y2: H - B, class: "axis"}));
  svg.appendChild(el("line", {x1: L, y1: y(0), x2: W, y2: y(0), class: "axis", "stroke-dasharray": "3 3"}));
  svg.appendChild(el("text", {x: 2, y: y(hi) + 4, "font-size": 10}, "+" + hi.toFixed(0) + "%"));
  svg.appendChild(el("text", {x: 2, y: y(0) + 4, "font-size": 10}, "0%"));
  svg.appendChild(el("text", {x: 2, y: y(lo), "font-size": 10}, lo.toFixed(0) + "%"));
  svg.appendChild(el("text", {x: L, y: H - 8, "font-size": 11}, c.from + " (baseline)"));
  svg.appendChild(el("text", {x: W - 8, y: H - 8, "font-size": 11, "text-anchor": "end"}, c.to));
  // The knee as measured so far: from the last safe value to the first harmful one (the
  // baseline is safe). A guess inside the band is right.
  const along = c.points.slice().sort((a, b) =>
    Math.abs(Math.log(a.base_value / c.from_value)) - Math.abs(Math.log(b.base_value / c.from_value)));
  const first = along.findIndex(p => p.verdict === "harmful");
  if (first >= 0) {
    const safe = first > 0 ? along[first - 1].base_value : c.from_value;
    const x0 = Math.min(x(safe), x(along[first].base_value));
    const band = el("rect", {x: x0, y: T, width: Math.abs(x(safe) - x(along[first].base_value)),
                             height: H - B - T, fill: "#c33", "fill-opacity": 0.08});
    band.setAttribute("data-knee", (first > 0 ? along[first - 1].value : c.from) + " to " + along[first].value);
    svg.appendChild(band);
  }
  c.guesses.forEach((g, i) => {
    const gx = x(g.value);
    const m = el("line", {x1: gx, y1: T - 6, x2: gx, y2: H - B, class: "guess"});
    m.setAttribute("data-guess", g.name);
    m.setAttribute("data-value", g.value);
    svg.appendChild(m);
    svg.appendChild(el("text", {x: gx + 2, y: T - 6 + 11 * (i % 4), class: "glabel"}, g.name + " " + g.text));
  });
  const pts = c.points.slice().sort((a, b) => x(a.base_value) - x(b.base_value));
  const colors = {harmful: "#c33", uncertain: "#c90", safe: "#393"};
  svg.appendChild(el("polyline", {fill: "none", stroke: "#036", "stroke-width": 1,
    points: [[c.from_value, 0]].concat(pts.map(p => [p.base_value, (p.ratio - 1) * 100]))
      .map(([v, e]) => x(v).toFixed(1) + "," + y(e).toFixed(1)).join(" ")}));
  for (const p of pts) {
    const px = x(p.base_value);
    svg.appendChild(el("line", {x1: px, y1: y((p.low - 1) * 100), x2: px, y2: y((p.high - 1) * 100),
                                stroke: colors[p.verdict] || "#036", "stroke-width": 2}));
    const dot = el("circle", {cx: px, cy: y((p.ratio - 1) * 100), r: 4, fill: colors[p.verdict] || "#036"});
    dot.setAttribute("data-value", p.value);
    dot.setAttribute("data-verdict", p.verdict);
    dot.appendChild(el("title", {}, p.value + ": " + ((p.ratio - 1) * 100).toFixed(1) + "% [" +
      ((p.low - 1) * 100).toFixed(1) + "%, " + ((p.high - 1) * 100).toFixed(1) + "%] " + p.verdict));
    svg.appendChild(dot);
  }
  svg.setAttribute("data-cliff-points", c.points.length);
  svg.setAttribute("data-guesses", c.guesses.length);
}
function text(id, s) { document.getElementById(id).textContent = s; }
function rows(id, list) {
  const t = document.getElementById(id);
  t.innerHTML = "";
  for (const r of list) {
    const tr = t.insertRow();
    r.forEach((c, i) => { const td = tr.insertCell(); td.textContent = c; if (i > 0) td.className = "n"; });
  }
}
let prefilled = false;
function render(s) {
  text("title", s.title); text("step", s.step); text("steptext", s.step_text); text("status", s.status);
  chart(document.getElementById("tps"), ["tps"], s.points, s.stages, ["#036"]);
  chart(document.getElementById("lat"), ["p50_ms", "p99_ms"], s.points, s.stages, ["#393", "#c60"]);
  chart(document.getElementById("failed"), ["failed"], s.points, s.stages, ["#c33"]);
  rows("evidence", Object.entries(s.evidence));
  text("evsince", s.evidence_stage ? "since this run of " + s.evidence_stage + " began" : "");
  const ol = document.getElementById("stages");
  ol.innerHTML = "";
  for (const st of s.stages) {
    const li = document.createElement("li");
    li.textContent = st.name + (st.changes.length ? ": " + st.changes.join(", ") : "");
    ol.appendChild(li);
  }
  document.getElementById("cliffbox").style.display = s.cliff ? "" : "none";
  if (s.cliff) {
    text("cliffinfo", s.cliff.knob + " from " + s.cliff.from + " towards " + s.cliff.to + ": " +
         s.cliff.points.length + " point(s) measured, effect on TPS against " + s.cliff.from);
    cliffChart(document.getElementById("cliff"), s.cliff);
  }
  rows("room", s.predictions.map(p => [p.name, p.answer]));
  rows("laptops", s.room_results.map(r => [r.name, r.lesson, r.text, r.machine, "envelope: " + r.envelope]));
  text("laptops_agree", Object.entries(s.room_agree).map(([l, ok]) => l + ": " +
       (ok ? "every laptop's interval overlaps the others'" : "the laptops disagree: some intervals do not overlap")).join("; "));
  document.getElementById("predictbox").style.display = s.predictions_open ? "" : "none";
  text("question", s.question);
  const rv = document.getElementById("reveal");
  rv.style.display = s.reveal ? "" : "none";
  rv.textContent = s.reveal;
  const b = document.body;
  b.setAttribute("data-points", s.points.length);
  b.setAttribute("data-stages", s.stages.length);
  b.setAttribute("data-predictions", s.predictions.length);
  b.setAttribute("data-laptops", s.room_results.length);
  b.setAttribute("data-step", s.step);
  b.setAttribute("data-rendered", "true");
  // ?name=..&answer=..: a link the instructor hands out (and the tests use) fills the form.
  const q = new URLSearchParams(location.search);
  if (!prefilled && s.predictions_open && q.get("name") && q.get("answer")) {
    prefilled = true;
    document.getElementById("pname").value = q.get("name");
    document.getElementById("panswer").value = q.get("answer");
    if (q.get("submit")) send();
  }
}
// The server gives this browser a token (POST /join); the token owns its prediction, so no
// one else can replace it. Kept for the tab's life (a reload keeps the same entry).
let token = sessionStorage.getItem("pgslow-token") || "";
async function join() {
  const r = await fetch("join", {method: "POST"});
  if (!r.ok) throw new Error(await r.text());
  token = (await r.json()).token;
  sessionStorage.setItem("pgslow-token", token);
}
async function post() {
  const body = new URLSearchParams({name: document.getElementById("pname").value,
                                    answer: document.getElementById("panswer").value});
  return fetch("predict", {method: "POST", body, headers: {"X-Pgslow-Token": token}});
}
async function send() {
  try {
    if (!token) await join();
    let r = await post();
    if (r.status === 401) { await join(); r = await post(); }  // a new dashboard: join it
    text("sent", r.ok ? "received" : await r.text());
    if (r.ok) document.body.setAttribute("data-sent", "true");
  } catch (e) { text("sent", String(e.message || e)); }
}
document.getElementById("predict").addEventListener("submit", e => { e.preventDefault(); send(); });
async function poll() {
  try { render(await (await fetch("state", {cache: "no-store"})).json()); }
  catch (e) { text("status", "the run has ended (or the server is unreachable)"); }
}
poll();
setInterval(poll, 1000);
</script></body></html>
)PAGE";
  return kPage;
}

}  // namespace pgslow::workshop

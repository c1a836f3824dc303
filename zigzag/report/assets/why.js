// Why a design wins or loses (per-layer breakdown, memory hierarchy, multi-core terms), and the page's start.
// ---- why -----------------------------------------------------------------------------------
function defaultRow() {
  const e = OBJ.energy, l = OBJ.latency;
  let best = null;
  for (let i = 0; i < N; i++) {
    if (STATUS[i] !== "ok" || !e || !l) continue;
    if (best === null || R[e][i] * R[l][i] < R[e][best] * R[l][best]) best = i;
  }
  return best === null ? 0 : best;
}
function choose(i) { state.selected = i; if (drawn.why) fillWhy(); if (drawn.table) fillBody(); }
function drawWhy() {
  const view = $("view-why");
  if (!N) { view.innerHTML = "<p class='note'>No rows.</p>"; return; }
  if (state.selected === null) state.selected = defaultRow();
  const options = [];
  for (let i = 0; i < N; i++) options.push([String(i), D.design[i] + " — " + D.group[i] + (STATUS[i] === "ok" ? "" : " (" + STATUS[i] + ")")]);
  const s = select("why-design", options, String(state.selected));
  s.addEventListener("change", function () { choose(parseInt(s.value, 10)); });
  const controls = el("div", { class: "controls" });
  controls.appendChild(labelled("design", s));
  view.appendChild(controls);
  view.appendChild(el("div", { id: "why-body" }));
  fillWhy();
}
function detailOf(i) {
  const key = R[D.detailKey] ? String(R[D.detailKey][i]) : null;
  if (key === null) return null;
  const d = D.details[key] || (D.detailFiles ? state.details[key] : undefined);
  if (d === undefined && D.detailFiles) {
    if (!state.details.hasOwnProperty(key)) {
      state.details[key] = undefined;
      const sc = el("script", { src: "details/" + encodeURIComponent(key) + ".js" });
      sc.onerror = function () { state.details[key] = null; if (state.selected === i) fillWhy(); };
      document.body.appendChild(sc);
    }
    return undefined;
  }
  if (!d) return null;
  const groupsOf = d.groups || d;
  return groupsOf[D.group[i]] || null;
}
window.zigzagDetail = function (d) { state.details[d.id] = d; if (drawn.why) fillWhy(); };
function fillWhy() {
  const i = state.selected, body = $("why-body");
  if (!body) return;
  $("why-design").value = String(i);
  const rows = COLS.filter(function (c) { return c.shown && R[c.key][i] !== null && R[c.key][i] !== undefined && R[c.key][i] !== ""; })
    .map(function (c) { return "<tr><th class='text'>" + esc(head(c)) + "</th><td class='text'>" + esc(fmt(c, R[c.key][i])) + "</td></tr>"; });
  let html = "<h2>" + esc(D.design[i]) + " on " + esc(D.group[i]) + "</h2>";
  if (STATUS[i] !== "ok") html += "<p class='status-" + esc(STATUS[i]) + "'><b>" + esc(STATUS[i]) + "</b>: " + esc(REASON[i]) + "</p>";
  html += "<div class='twocol'><div><table class='grid'>" + rows.join("") + "</table></div><div id='why-side'></div></div>";
  html += "<div id='why-detail'></div>";
  body.innerHTML = html;
  const detail = detailOf(i);
  const target = $("why-detail");
  if (detail === undefined) { target.innerHTML = "<p class='note'>loading the per-layer figures…</p>"; return; }
  if (!detail) { target.innerHTML = "<p class='note'>No per-layer figures for this row (it did not run, or its results predate the report).</p>"; return; }
  if (detail.layers) drawLayers(detail, target); else if (detail.energy_terms) drawMulticore(detail, target);
  else target.innerHTML = "<p class='note'>No breakdown for this row (it did not run).</p>";
  const side = $("why-side");
  if (detail.hierarchyImage) side.innerHTML = "<h2>Memory hierarchy</h2><img alt='memory hierarchy' src='" + esc(detail.hierarchyImage) + "'>";
  else if (detail.hierarchy) side.innerHTML = "<h2>Memory hierarchy</h2>" + hierarchyHtml(detail.hierarchy);
  if (detail.links && detail.links.length) side.innerHTML += "<p class='links'>" + detail.links.map(function (l) { return "<a href='" + esc(l.href) + "'>" + esc(l.text) + "</a>"; }).join("") + "</p>";
}
function sizeText(bits) {
  if (typeof bits !== "number") return "";
  const units = [["GiB", 8 * Math.pow(2, 30)], ["MiB", 8 * Math.pow(2, 20)], ["KiB", 8 * 1024], ["B", 8]];
  for (let k = 0; k < units.length; k++) if (bits >= units[k][1]) return eng(bits / units[k][1]) + " " + units[k][0];
  return bits + " bits";
}
function hierarchyHtml(levels) {
  return "<div class='hierarchy'>" + levels.map(function (m) {
    return "<div><b>" + esc(m.name) + "</b> " + esc(sizeText(m.size_bits)) + " · operands " + esc((m.operands || []).join(", ")) +
      (m.bandwidth ? " · " + esc(eng(m.bandwidth)) + " bits/cycle" : "") + "</div>";
  }).join("") + "</div><p class='note'>innermost at the bottom</p>";
}
function bound(l) {
  const ideal = l.ideal_cycles || 0, stall = l.stall_cycles || 0, on = l.onloading_cycles || 0, off = l.offloading_cycles || 0;
  const underuse = Math.max(0, (l.computation_cycles || 0) - stall - ideal);
  const terms = [["compute", ideal + underuse], ["memory bandwidth (stalls)", stall], ["on-loading", on], ["off-loading", off]];
  terms.sort(function (a, b) { return b[1] - a[1]; });
  if (terms[0][0] === "compute" && underuse > ideal) return "compute, array under-used (" + eng(100 * (l.spatial_utilization || 0)) + " % spatially)";
  if (terms[0][0].indexOf("stalls") >= 0 && l.port_stall_slack) {
    const ports = Object.keys(l.port_stall_slack).sort(function (a, b) { return l.port_stall_slack[b] - l.port_stall_slack[a]; });
    if (ports.length && l.port_stall_slack[ports[0]] > 0) return "bandwidth of " + ports[0] + " (" + eng(l.port_stall_slack[ports[0]]) + " stall cycles)";
  }
  return terms[0][0];
}
function drawLayers(detail, target) {
  const L = detail.layers, names = L.map(function (l, k) { return k + " " + l.name; });
  const memories = [];
  L.forEach(function (l) { Object.keys(l.memory_energy_pJ || {}).forEach(function (m) { if (memories.indexOf(m) < 0) memories.push(m); }); });
  target.innerHTML = "<h2>Energy per layer, by memory level and MACs</h2><div id='why-energy' class='plot'></div>" +
    "<h2>Latency per layer, with its stall terms</h2><div id='why-latency' class='plot'></div>" +
    "<h2>MAC utilisation per layer</h2><div id='why-util' class='plot' style='min-height:320px'></div>" +
    "<h2>What bounds each layer</h2><div class='tablewrap'><table class='grid' id='why-bounds'></table></div>";
  const counts = {};
  let table = "<thead><tr><th>#</th><th class='text'>layer</th><th>energy [pJ]</th><th>latency [cycles]</th><th>MAC utilisation [%]</th><th class='text'>bound by</th></tr></thead><tbody>";
  L.forEach(function (l, k) {
    const b = bound(l); counts[b] = (counts[b] || 0) + 1;
    table += "<tr><td>" + k + "</td><td class='text'>" + esc(l.name) + "</td><td>" + eng(l.energy_pJ) + "</td><td>" + eng(l.latency_cycles) +
      "</td><td>" + eng(100 * (l.mac_utilization || 0)) + "</td><td class='text'>" + esc(b) + "</td></tr>";
  });
  $("why-bounds").innerHTML = table + "</tbody>";
  target.insertBefore(el("p", { class: "note" }, "Layers by what bounds them: " + Object.keys(counts).map(function (b) { return esc(b) + " " + counts[b]; }).join("; ")), $("why-bounds").parentNode);
  if (!hasPlotly()) return;
  const cfg = { displaylogo: false, responsive: true };
  const bar = function (name, ys) { return { type: "bar", name: name, x: names, y: ys }; };
  const energy = [bar("MAC", L.map(function (l) { return l.mac_energy_pJ; }))].concat(memories.map(function (m) {
    return bar(m, L.map(function (l) { return (l.memory_energy_pJ || {})[m] || 0; }));
  }));
  Plotly.newPlot($("why-energy"), energy, { barmode: "stack", margin: { t: 10, b: 120 }, yaxis: { title: { text: "energy [pJ]" } } }, cfg);
  const latency = [
    bar("ideal (full array)", L.map(function (l) { return l.ideal_cycles; })),
    bar("array under-use", L.map(function (l) { return Math.max(0, (l.computation_cycles || 0) - (l.stall_cycles || 0) - (l.ideal_cycles || 0)); })),
    bar("memory stalls", L.map(function (l) { return l.stall_cycles; })),
    bar("on-loading", L.map(function (l) { return l.onloading_cycles; })),
    bar("off-loading", L.map(function (l) { return l.offloading_cycles; }))];
  Plotly.newPlot($("why-latency"), latency, { barmode: "stack", margin: { t: 10, b: 120 }, yaxis: { title: { text: "latency [cycles]" } } }, cfg);
  const util = [bar("MAC utilisation", L.map(function (l) { return 100 * (l.mac_utilization || 0); })),
    { type: "scatter", mode: "markers", name: "spatial utilisation", x: names, y: L.map(function (l) { return 100 * (l.spatial_utilization || 0); }) }];
  Plotly.newPlot($("why-util"), util, { margin: { t: 10, b: 120 }, yaxis: { title: { text: "utilisation [%]" }, range: [0, 105] } }, cfg);
}
function drawMulticore(detail, target) {
  let html = "<h2>Energy terms and core utilisation</h2><div class='twocol'><div id='why-terms' class='plot'></div><div id='why-cores' class='plot'></div></div>";
  if (detail.gantt) html += "<p class='links'><a id='why-gantt' href='" + esc(detail.gantt) + "'>open the Gantt chart of this run</a></p>";
  if (detail.images.length) html += "<h2>Memory use and energy of this run</h2><div class='twocol'>" + detail.images.map(function (src) { return "<img alt='" + esc(src) + "' src='" + esc(src) + "'>"; }).join("") + "</div>";
  target.innerHTML = html;
  if (!hasPlotly()) return;
  const cfg = { displaylogo: false, responsive: true };
  const terms = Object.keys(detail.energy_terms);
  Plotly.newPlot($("why-terms"), [{ type: "bar", x: terms, y: terms.map(function (t) { return detail.energy_terms[t]; }) }],
    { margin: { t: 10, b: 140 }, yaxis: { title: { text: "energy [pJ]" } } }, cfg);
  const cores = Object.keys(detail.cores);
  Plotly.newPlot($("why-cores"), [{ type: "bar", x: cores, y: cores.map(function (c) { return 100 * detail.cores[c]; }) }],
    { margin: { t: 10, b: 60 }, yaxis: { title: { text: "busy [% of the latency]" } } }, cfg);
}

const DRAW = { table: drawTable, pareto: drawPareto, parallel: drawParallel, ranking: drawRanking, why: drawWhy };

// ---- page ----------------------------------------------------------------------------------
const counts = {};
STATUS.forEach(function (s) { counts[s] = (counts[s] || 0) + 1; });
let summary = N + " rows (" + Object.keys(counts).map(function (s) { return counts[s] + " " + s; }).join(", ") + ")";
if (D.target) summary += " · optimisation target: " + D.target;
if (D.constraints && D.constraints.length) summary += " · constraints: " + D.constraints.join("; ");
if (D.clock_ghz) summary += " · clock: " + D.clock_ghz + " GHz";
if (D.note) summary += " · " + D.note;
$("summary").innerHTML = esc(summary) + (D.links.length ? "<br><span class='links'>" + D.links.map(function (l) {
  return "<a href='" + esc(l.href) + "'>" + esc(l.text) + "</a>"; }).join("") + "</span>" : "");
const nav = $("tabs");
VIEWS.forEach(function (v) {
  const b = el("button", { id: "tab-" + v[0] }, v[1]);
  b.addEventListener("click", function () { show(v[0]); });
  nav.appendChild(b);
});
const start = (window.location.hash || "").replace("#", "");
show(DRAW[start] ? start : "table");

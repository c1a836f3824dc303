// The Pareto view, the parallel coordinates and the ranking across workloads.
// ---- Pareto --------------------------------------------------------------------------------
// the rows on the front of two columns, each minimised (sx, sy = 1) or maximised (-1)
function front2d(idx, xs, ys, sx, sy) {
  sx = sx || 1; sy = sy || 1;
  const pts = idx.filter(function (i) { return typeof xs[i] === "number" && typeof ys[i] === "number"; })
    .sort(function (a, b) { return sx * (xs[a] - xs[b]) || sy * (ys[a] - ys[b]); });
  const out = [];
  let best = Infinity;
  pts.forEach(function (i) { if (sy * ys[i] < best) { out.push(i); best = sy * ys[i]; } });
  return out;
}
function colourOptions() {
  const opts = Object.keys(OBJ).map(function (n) { return [OBJ[n], objLabel(n)]; });
  PARAMS.forEach(function (c) { if (c.fmt !== "text") opts.push([c.key, head(c)]); });
  return opts;
}
function drawPareto() {
  const view = $("view-pareto");
  const names = Object.keys(OBJ);
  if (names.length < 2 || !hasPlotly()) {
    view.innerHTML = '<p class="note">' + (hasPlotly() ? "Fewer than two objectives have values: nothing to draw."
      : "plotly.js could not be loaded from beside this page " + (window.plotlyUnpackError || "(plotly.min.js / plotly.gz.js missing)") + ".") + "</p>";
    return;
  }
  const opts = names.map(function (n) { return [OBJ[n], objLabel(n)]; });
  const controls = el("div", { class: "controls" });
  // an LLM step's rows: per token by default (time per output token or to first token, energy per token)
  const x = select("pareto-x", opts, OBJ["time per token"] || OBJ["time to first token"] || OBJ.latency || OBJ[names[0]]);
  const y = select("pareto-y", opts, OBJ["energy per token"] || OBJ.energy || OBJ[names[1]]);
  const colours = colourOptions();
  const c = select("pareto-colour", colours, OBJ.area || colours[0][0]);
  const gs = groups();
  const g = select("pareto-group", [["", "all " + GROUP_WORD + "s"]].concat(gs.map(function (s) { return [s, s]; })), gs.length > 1 ? gs[0] : "");
  const log = el("input", { type: "checkbox", id: "pareto-log" });
  [labelled("x", x), labelled("y", y), labelled("colour", c), labelled(GROUP_WORD, g), labelled("log axes", log)]
    .forEach(function (e) { controls.appendChild(e); });
  view.appendChild(controls);
  view.appendChild(el("div", { id: "pareto-plot", class: "plot" }));
  view.appendChild(el("p", { class: "note" }, "Red: the front over the two axes (per " + GROUP_WORD + "; tokens/s maximised, every other axis minimised); grey crosses: " +
    "excluded by a constraint (hover for the reason); dashed: the constraints' limits. Click a point for its breakdown."));
  [x, y, c, g, log].forEach(function (e) { e.addEventListener("change", plotPareto); });
  plotPareto();
}
function plotPareto() {
  const xk = $("pareto-x").value, yk = $("pareto-y").value, ck = $("pareto-colour").value, gk = $("pareto-group").value;
  const xs = R[xk], ys = R[yk], cs = R[ck];
  const idx = [];
  for (let i = 0; i < N; i++) if (RAN(i) && (!gk || D.group[i] === gk) && typeof xs[i] === "number" && typeof ys[i] === "number") idx.push(i);
  const ok = idx.filter(function (i) { return STATUS[i] === "ok"; }), out = idx.filter(function (i) { return STATUS[i] === "out"; });
  const traces = [];
  const hover = function (list) { return list.map(describe); };
  traces.push({ type: "scatter", mode: "markers", name: "excluded (" + out.length + ")", x: out.map(function (i) { return xs[i]; }),
    y: out.map(function (i) { return ys[i]; }), text: hover(out), customdata: out, hovertemplate: "%{text}<extra>excluded</extra>",
    marker: { symbol: "x", size: 7, color: "#a0a8b5" } });
  const cc = COL[ck];
  traces.push({ type: "scatter", mode: "markers", name: "kept (" + ok.length + ")", x: ok.map(function (i) { return xs[i]; }),
    y: ok.map(function (i) { return ys[i]; }), text: hover(ok), customdata: ok, hovertemplate: "%{text}<extra></extra>",
    marker: { size: 9, color: ok.map(function (i) { return cs[i]; }), colorscale: "Viridis", showscale: true,
      colorbar: { title: { text: head(cc) } }, line: { width: 0.5, color: "#333" } } });
  const byGroup = {};
  ok.forEach(function (i) { (byGroup[D.group[i]] = byGroup[D.group[i]] || []).push(i); });
  Object.keys(byGroup).forEach(function (name, k) {
    const f = front2d(byGroup[name], xs, ys, sense(xk), sense(yk));
    traces.push({ type: "scatter", mode: "lines+markers", name: "front " + name, legendgroup: "front", showlegend: k === 0 || !!gk,
      x: f.map(function (i) { return xs[i]; }), y: f.map(function (i) { return ys[i]; }), text: hover(f), customdata: f,
      hovertemplate: "%{text}<extra>on the front</extra>",
      marker: { size: 12, color: "rgba(0,0,0,0)", line: { width: 2, color: "#d62728" } }, line: { color: "#d62728", width: 1 } });
  });
  const shapes = [], annotations = [];
  (D.limits || []).forEach(function (l) {
    if (l.column === xk) { shapes.push({ type: "line", xref: "x", yref: "paper", x0: l.value, x1: l.value, y0: 0, y1: 1, line: { dash: "dash", color: "#555" } });
      annotations.push({ x: l.value, xref: "x", y: 1, yref: "paper", text: esc(l.text), showarrow: false, yanchor: "bottom" }); }
    if (l.column === yk) { shapes.push({ type: "line", xref: "paper", yref: "y", x0: 0, x1: 1, y0: l.value, y1: l.value, line: { dash: "dash", color: "#555" } });
      annotations.push({ x: 1, xref: "paper", y: l.value, yref: "y", text: esc(l.text), showarrow: false, xanchor: "right", yanchor: "bottom" }); }
  });
  const type = $("pareto-log").checked ? "log" : "linear";
  const layout = { margin: { t: 30, l: 70, r: 20, b: 50 }, hovermode: "closest", shapes: shapes, annotations: annotations,
    xaxis: { title: { text: head(COL[xk]) }, type: type }, yaxis: { title: { text: head(COL[yk]) }, type: type },
    legend: { orientation: "h", y: -0.18 } };
  const div = $("pareto-plot");
  Plotly.react(div, traces, layout, { displaylogo: false, responsive: true });
  if (!div.dataset.bound) {
    div.dataset.bound = "1";
    div.on("plotly_click", function (ev) { const p = ev.points[0]; if (p && p.customdata !== undefined) { choose(p.customdata); show("why"); } });
  }
}

// ---- parallel coordinates ------------------------------------------------------------------
function dimension(c, idx) {
  const raw = idx.map(function (i) { return R[c.key][i]; });
  if (raw.every(function (v) { return typeof v === "number"; })) {
    const dim = { label: head(c), values: raw };
    const top = Math.max.apply(null, raw.map(Math.abs));
    if (top >= 1e5 || (top > 0 && top < 1e-2)) dim.tickformat = ".3~e";  // parcoords draws no <sup> exponents
    if (c.fmt === "label") {
      const ticks = Array.from(new Set(raw)).sort(function (a, b) { return a - b; });
      dim.tickvals = ticks; dim.ticktext = ticks.map(function (v) { return fmt(c, v); });
    }
    return dim;
  }
  const cats = Array.from(new Set(raw.map(String)));
  return { label: head(c), values: raw.map(function (v) { return cats.indexOf(String(v)); }), tickvals: cats.map(function (_, k) { return k; }), ticktext: cats };
}
function drawParallel() {
  const view = $("view-parallel");
  if (!hasPlotly()) { view.innerHTML = '<p class="note">plotly.js could not be loaded from beside this page ' + (window.plotlyUnpackError || "(plotly.min.js / plotly.gz.js missing)") + '.</p>'; return; }
  const controls = el("div", { class: "controls" });
  const names = Object.keys(OBJ);
  const c = select("parallel-colour", names.map(function (n) { return [OBJ[n], objLabel(n)]; }), OBJ.energy || OBJ[names[0]]);
  const gs = groups();
  const g = select("parallel-group", [["", "all " + GROUP_WORD + "s"]].concat(gs.map(function (s) { return [s, s]; })), gs.length > 1 ? gs[0] : "");
  controls.appendChild(labelled("colour", c));
  controls.appendChild(labelled(GROUP_WORD, g));
  view.appendChild(controls);
  view.appendChild(el("div", { id: "parallel-plot", class: "plot" }));
  view.appendChild(el("p", { class: "note" }, "Drag along an axis to keep a range (brush); drag the axis titles to reorder. " +
    "The last axis marks the rows a constraint excludes (0) and those kept (1)."));
  [c, g].forEach(function (e) { e.addEventListener("change", plotParallel); });
  plotParallel();
}
function plotParallel() {
  const ck = $("parallel-colour").value, gk = $("parallel-group").value;
  const idx = [];
  for (let i = 0; i < N; i++) if (RAN(i) && (!gk || D.group[i] === gk) && Object.keys(OBJ).every(function (n) { return typeof R[OBJ[n]][i] === "number"; })) idx.push(i);
  const dims = PARAMS.concat(gk ? [] : POINT_COLS).map(function (c) { return dimension(c, idx); });
  if (!PARAMS.length) dims.push(dimension(COL[D.kind === "sweep" ? "variant" : "accelerator"] || COLS[0], idx));
  // seconds and J·s only when the clock differs between the rows (else they repeat cycles and pJ·cycles)
  const clocks = new Set(idx.map(function (i) { return R.clock_ghz ? R.clock_ghz[i] : null; }));
  Object.keys(OBJ).forEach(function (n) {
    if ((n === "seconds" || n === "J·s") && clocks.size <= 1 && OBJ.latency) return;
    dims.push(dimension(COL[OBJ[n]], idx));
  });
  dims.push({ label: "kept", values: idx.map(function (i) { return STATUS[i] === "ok" ? 1 : 0; }), tickvals: [0, 1], ticktext: ["excluded", "kept"] });
  const trace = { type: "parcoords", dimensions: dims,
    line: { color: idx.map(function (i) { return R[ck][i]; }), colorscale: "Viridis", showscale: true, colorbar: { title: { text: head(COL[ck]) } } } };
  Plotly.react($("parallel-plot"), [trace], { margin: { t: 60, l: 70, r: 70, b: 30 } }, { displaylogo: false, responsive: true });
}

// ---- ranking -------------------------------------------------------------------------------
function drawRanking() {
  const view = $("view-ranking");
  const gs = groups();
  const names = Object.keys(OBJ);
  const controls = el("div", { class: "controls" });
  const wanted = ((D.ranking && D.ranking.objective) || "energy").toLowerCase();
  // an LLM step's rows are ranked per token: energy per token, time per output token or to first token
  const perToken = { energy: ["energy per token"], latency: ["time per token", "time to first token"] }[wanted] || [];
  const named = perToken.filter(function (n) { return OBJ[n]; })[0] || names.filter(function (n) { return n.toLowerCase() === wanted; })[0];
  const o = select("rank-objective", names.map(function (n) { return [OBJ[n], objLabel(n)]; }), OBJ[named] || OBJ[names[0]]);
  const m = select("rank-method", [["geomean", "geometric mean"], ["sum", "sum"]], (D.ranking && D.ranking.method) || "geomean");
  const over = select("rank-group", [["", "all " + GROUP_WORD + "s, aggregated"]].concat(gs.map(function (s) { return [s, s + " only"]; })), "");
  controls.appendChild(labelled("objective", o));
  controls.appendChild(labelled("over", over));
  controls.appendChild(labelled("aggregate", m));
  const weights = (D.ranking && D.ranking.weights) || {};
  gs.forEach(function (g, k) {
    const w = el("input", { type: "number", step: "any", min: "0", class: "rank-weight", id: "rank-weight-" + k, "data-group": g });
    const workload = (D.groupWorkload || {})[g] || g.split(" (")[0];
    w.value = weights[g] !== undefined ? weights[g] : (weights[workload] !== undefined ? weights[workload] : 1);
    w.style.width = "5em";
    controls.appendChild(labelled("weight " + g, w));
    w.addEventListener("input", fillRanking);
  });
  [o, m, over].forEach(function (e) { e.addEventListener("change", fillRanking); });
  view.appendChild(controls);
  view.appendChild(el("p", { class: "note" }, "Each design's best kept result per " + GROUP_WORD + ", on one " + GROUP_WORD +
    " or aggregated over them (weighted sum, or weighted geometric mean); a design excluded or not run on one is not ranked." +
    (Object.keys(MAXCOL).length ? " Tokens/s ranks the largest first, every other objective the smallest." : "")));
  const wrap = el("div", { class: "tablewrap" });
  wrap.appendChild(el("table", { class: "grid", id: "ranking-table" }));
  view.appendChild(wrap);
  fillRanking();
}
function fillRanking() {
  const key = $("rank-objective").value, method = $("rank-method").value, only = $("rank-group").value;
  const gs = only ? [only] : groups(), sign = sense(key);
  const weight = {};
  document.querySelectorAll(".rank-weight").forEach(function (w) { weight[w.getAttribute("data-group")] = parseFloat(w.value) || 0; });
  const best = {};  // design -> group -> row
  const missing = {};
  for (let i = 0; i < N; i++) {
    const d = D.design[i];
    best[d] = best[d] || {};
    if (gs.indexOf(D.group[i]) < 0) continue;
    if (STATUS[i] !== "ok" || typeof R[key][i] !== "number") { missing[d] = missing[d] || (D.group[i] + ": " + STATUS[i]); continue; }
    const cur = best[d][D.group[i]];
    if (cur === undefined || sign * R[key][i] < sign * R[key][cur]) best[d][D.group[i]] = i;
  }
  const ranks = {};
  gs.forEach(function (g) {
    const list = Object.keys(best).filter(function (d) { return best[d][g] !== undefined; })
      .sort(function (a, b) { return sign * (R[key][best[a][g]] - R[key][best[b][g]]); });
    list.forEach(function (d, k) { ranks[d + "\u0000" + g] = k + 1; });
  });
  const ranked = [], unranked = [];
  Object.keys(best).forEach(function (d) {
    if (!gs.every(function (g) { return best[d][g] !== undefined; })) { unranked.push(d); return; }
    let total = 0, wsum = 0;
    gs.forEach(function (g) {
      const v = R[key][best[d][g]], w = weight[g];
      if (method === "sum") total += w * v; else { total += w * Math.log(v); wsum += w; }
    });
    ranked.push([d, method === "sum" ? total : Math.exp(total / (wsum || 1))]);
  });
  ranked.sort(function (a, b) { return sign * (a[1] - b[1]); });
  const c = COL[key];
  let html = "<thead><tr><th>rank</th><th class='text'>design</th><th>" + esc((method === "sum" ? "sum of " : "geometric mean of ") + head(c)) +
    "</th>" + gs.map(function (g) { return "<th>" + esc(g) + " " + esc(head(c)) + "</th><th>rank on " + esc(g) + "</th>"; }).join("") + "</tr></thead><tbody>";
  ranked.forEach(function (r, k) {
    html += "<tr data-row='" + best[r[0]][gs[0]] + "'><td>" + (k + 1) + "</td><td class='text'>" + esc(r[0]) + "</td><td>" + eng(r[1]) + "</td>" +
      gs.map(function (g) { return "<td>" + eng(R[key][best[r[0]][g]]) + "</td><td>" + ranks[r[0] + "\u0000" + g] + "</td>"; }).join("") + "</tr>";
  });
  unranked.forEach(function (d) {
    html += "<tr class='excluded'><td></td><td class='text'>" + esc(d) + "</td><td class='text'>not ranked (" + esc(missing[d] || "no result") + ")</td>" +
      gs.map(function (g) { const i = best[d][g]; return "<td>" + (i === undefined ? "" : eng(R[key][i])) + "</td><td>" + (ranks[d + "\u0000" + g] || "") + "</td>"; }).join("") + "</tr>";
  });
  const table = $("ranking-table");
  table.innerHTML = html + "</tbody>";
  table.querySelectorAll("tbody tr[data-row]").forEach(function (tr) {
    tr.addEventListener("click", function () { choose(parseInt(tr.getAttribute("data-row"), 10)); show("why"); });
  });
}

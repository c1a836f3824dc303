// The report page: table, Pareto view, parallel coordinates, ranking and "why", all drawn from the
// JSON in #report-data (written by zigzag.report). Plotly is the folder's shared plotly.min.js.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const N = D.n, R = D.rows, COLS = D.columns;
  const COL = {};
  COLS.forEach(function (c) { COL[c.key] = c; });
  const STATUS = R.status || new Array(N).fill("ok");
  const REASON = R.reason || new Array(N).fill("");
  const RAN = function (i) { return STATUS[i] === "ok" || STATUS[i] === "out"; };
  const OBJ = D.objectives;  // name -> column
  const PARAMS = COLS.filter(function (c) { return c.role === "param" && c.shown; });
  const state = { sort: null, desc: false, filters: {}, text: "", status: "", allColumns: false, limit: 250,
                  selected: null, details: {} };
  const $ = function (id) { return document.getElementById(id); };
  // plotly.js loads asynchronously: the table is usable at once, the plots are drawn once it is there
  const plotlyTag = document.getElementById("plotly-script");
  let plotlyMissing = false;
  function hasPlotly() { return typeof window.Plotly !== "undefined"; }
  if (plotlyTag) plotlyTag.addEventListener("error", function () { plotlyMissing = true; });

  // ---- numbers -------------------------------------------------------------------------------
  // one engineering format: 4 significant digits, exponents in steps of three (12.34e9)
  function eng(v) {
    if (v === null || v === undefined || v === "") return "";
    if (typeof v !== "number") return String(v);
    if (v === 0) return "0";
    const a = Math.abs(v);
    if (a >= 1e-3 && a < 1e4) return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
    const e = Math.floor(Math.log10(a) / 3) * 3;
    return String(Number((v / Math.pow(10, e)).toPrecision(4))) + "e" + e;
  }
  function fmt(c, v) {
    if (v === null || v === undefined) return "";
    if (c.fmt === "label") return (c.labels && c.labels[String(v)]) || String(v);
    if (c.fmt === "percent") return typeof v === "number" ? eng(v * 100) : String(v);
    if (c.fmt === "bool" || typeof v === "boolean") return v ? "yes" : "";
    if (c.fmt === "eng") return eng(v);
    return String(v);
  }
  function head(c) { return c.name + (c.unit ? " [" + c.unit + "]" : ""); }
  function objLabel(name) { const c = COL[OBJ[name]] || COL[name]; return c ? head(c) : name; }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (ch) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[ch]; });
  }
  function el(tag, attrs, html) {
    const e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (html !== undefined) e.innerHTML = html;
    return e;
  }
  function select(id, options, value) {
    const s = el("select", { id: id });
    options.forEach(function (o) {
      const opt = el("option", { value: o[0] }, esc(o[1]));
      if (o[0] === value) opt.selected = true;
      s.appendChild(opt);
    });
    return s;
  }
  function labelled(text, control) { const l = el("label", {}, esc(text) + " "); l.appendChild(control); return l; }
  function groups() { return Array.from(new Set(D.group)); }
  function describe(i) {
    const parts = ["<b>" + esc(D.design[i]) + "</b>", esc(D.group[i])];
    PARAMS.forEach(function (c) { parts.push(esc(c.name) + " = " + esc(fmt(c, R[c.key][i]))); });
    if (STATUS[i] !== "ok") parts.push(esc(STATUS[i]) + ": " + esc(REASON[i]));
    return parts.join("<br>");
  }

  // ---- tabs ----------------------------------------------------------------------------------
  const VIEWS = [["table", "Table"], ["pareto", "Pareto"], ["parallel", "Parallel coordinates"],
                 ["ranking", "Ranking"], ["why", "Why"]];
  const drawn = {};
  function show(name) {
    VIEWS.forEach(function (v) {
      $("view-" + v[0]).classList.toggle("active", v[0] === name);
      $("tab-" + v[0]).classList.toggle("active", v[0] === name);
    });
    if (!drawn[name] && name !== "table" && name !== "ranking" && !hasPlotly() && !plotlyMissing && plotlyTag) {
      $("view-" + name).innerHTML = "<p class='note'>loading plotly.js…</p>";
      const again = function () { if ($("view-" + name).classList.contains("active")) { $("view-" + name).innerHTML = ""; show(name); } };
      plotlyTag.addEventListener("load", again, { once: true });
      plotlyTag.addEventListener("error", again, { once: true });
      return;
    }
    if (!drawn[name]) { drawn[name] = true; DRAW[name](); }
    else if (hasPlotly()) $("view-" + name).querySelectorAll(".js-plotly-plot").forEach(function (p) { Plotly.Plots.resize(p); });
  }

  // ---- table ---------------------------------------------------------------------------------
  function visibleColumns() { return COLS.filter(function (c) { return state.allColumns || c.shown; }); }
  function matches(c, v, f) {
    f = f.trim();
    if (!f) return true;
    const m = /^(<=|>=|<|>|=)\s*([-+0-9.eE]+)$/.exec(f);
    if (m && typeof v === "number") {
      const x = parseFloat(m[2]) / (c.fmt === "percent" ? 100 : 1);
      return { "<": v < x, "<=": v <= x, ">": v > x, ">=": v >= x, "=": v === x }[m[1]];
    }
    return fmt(c, v).toLowerCase().indexOf(f.toLowerCase()) >= 0;
  }
  function filteredRows() {
    const keys = Object.keys(state.filters).filter(function (k) { return state.filters[k]; });
    const text = state.text.toLowerCase();
    const shown = visibleColumns();
    const rows = [];
    for (let i = 0; i < N; i++) {
      if (state.status && STATUS[i] !== state.status) continue;
      if (!keys.every(function (k) { return matches(COL[k], R[k][i], state.filters[k]); })) continue;
      if (text && !shown.some(function (c) { return fmt(c, R[c.key][i]).toLowerCase().indexOf(text) >= 0; })) continue;
      rows.push(i);
    }
    if (state.sort) {
      const values = R[state.sort], sign = state.desc ? -1 : 1;
      rows.sort(function (a, b) {
        const x = values[a], y = values[b];
        if (x === null || x === undefined) return (y === null || y === undefined) ? a - b : 1;
        if (y === null || y === undefined) return -1;
        if (x < y) return -sign;
        if (x > y) return sign;
        return a - b;
      });
    }
    return rows;
  }
  function drawTable() {
    const view = $("view-table");
    view.innerHTML = "";
    const controls = el("div", { class: "controls" });
    const search = el("input", { type: "text", id: "table-search", placeholder: "filter all columns" });
    search.value = state.text;
    search.addEventListener("input", function () { state.text = search.value; state.limit = 250; fillBody(); });
    controls.appendChild(labelled("Find", search));
    const statuses = Array.from(new Set(STATUS));
    const status = select("table-status", [["", "any status"]].concat(statuses.map(function (s) { return [s, s]; })), state.status);
    status.addEventListener("change", function () { state.status = status.value; fillBody(); });
    controls.appendChild(labelled("Status", status));
    const all = el("input", { type: "checkbox", id: "table-all" });
    all.checked = state.allColumns;
    all.addEventListener("change", function () { state.allColumns = all.checked; drawTable(); });
    controls.appendChild(labelled("all columns", all));
    controls.appendChild(el("span", { id: "table-count", class: "note" }));
    view.appendChild(controls);
    view.appendChild(el("p", { class: "note" }, "Click a header to sort (again to reverse); a filter box takes text or a " +
      "comparison such as <code>&lt;= 25</code>; click a row to see why it wins or loses." +
      (D.target ? " Optimisation target: <b>" + esc(D.target) + "</b>." : "")));
    const wrap = el("div", { class: "tablewrap" });
    const table = el("table", { class: "grid", id: "results-table" });
    const thead = el("thead");
    const names = el("tr"), filters = el("tr", { class: "filters" });
    visibleColumns().forEach(function (c) {
      const cls = c.fmt === "text" ? "text" : "";
      const arrow = state.sort === c.key ? (state.desc ? " ▼" : " ▲") : "";
      const th = el("th", { class: cls, "data-key": c.key, title: c.path || c.key },
        esc(head(c)) + '<span class="arrow">' + arrow + "</span>");
      th.addEventListener("click", function () {
        if (state.sort === c.key) state.desc = !state.desc; else { state.sort = c.key; state.desc = false; }
        drawTable();
      });
      names.appendChild(th);
      const f = el("th", { class: cls });
      const input = el("input", { type: "text", class: "colfilter", "data-key": c.key, placeholder: "filter" });
      input.value = state.filters[c.key] || "";
      input.addEventListener("input", function () { state.filters[c.key] = input.value; state.limit = 250; fillBody(); });
      f.appendChild(input);
      filters.appendChild(f);
    });
    thead.appendChild(names);
    thead.appendChild(filters);
    table.appendChild(thead);
    table.appendChild(el("tbody", { id: "table-body" }));
    wrap.appendChild(table);
    view.appendChild(wrap);
    view.appendChild(el("p", { id: "table-more" }));
    fillBody();
  }
  function fillBody() {
    const rows = filteredRows(), shown = visibleColumns();
    const html = [];
    rows.slice(0, state.limit).forEach(function (i) {
      const cls = (STATUS[i] === "ok" ? "" : "excluded ") + (state.selected === i ? "selected" : "");
      html.push('<tr data-row="' + i + '" class="' + cls + '">' + shown.map(function (c) {
        const v = R[c.key][i];
        const extra = c.key === "status" ? " status-" + esc(v) : "";
        return '<td class="' + (c.fmt === "text" ? "text" : "") + extra + '">' + esc(fmt(c, v)) + "</td>";
      }).join("") + "</tr>");
    });
    const body = $("table-body");
    body.innerHTML = html.join("");
    body.querySelectorAll("tr").forEach(function (tr) {
      tr.addEventListener("click", function () { choose(parseInt(tr.getAttribute("data-row"), 10)); show("why"); });
    });
    $("table-count").textContent = rows.length + " of " + N + " rows";
    const more = $("table-more");
    more.innerHTML = "";
    if (rows.length > state.limit) {
      const b = el("button", { id: "table-show-all" }, "show all " + rows.length + " rows");
      b.addEventListener("click", function () { state.limit = Infinity; fillBody(); });
      more.appendChild(b);
    }
  }

  // ---- Pareto --------------------------------------------------------------------------------
  function front2d(idx, xs, ys) {
    const pts = idx.filter(function (i) { return typeof xs[i] === "number" && typeof ys[i] === "number"; })
      .sort(function (a, b) { return xs[a] - xs[b] || ys[a] - ys[b]; });
    const out = [];
    let best = Infinity;
    pts.forEach(function (i) { if (ys[i] < best) { out.push(i); best = ys[i]; } });
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
        : "plotly.min.js was not found beside this page.") + "</p>";
      return;
    }
    const opts = names.map(function (n) { return [OBJ[n], objLabel(n)]; });
    const controls = el("div", { class: "controls" });
    const x = select("pareto-x", opts, OBJ.latency || OBJ[names[0]]);
    const y = select("pareto-y", opts, OBJ.energy || OBJ[names[1]]);
    const colours = colourOptions();
    const c = select("pareto-colour", colours, OBJ.area || colours[0][0]);
    const gs = groups();
    const g = select("pareto-group", [["", "all workloads"]].concat(gs.map(function (s) { return [s, s]; })), gs.length > 1 ? gs[0] : "");
    const log = el("input", { type: "checkbox", id: "pareto-log" });
    [labelled("x", x), labelled("y", y), labelled("colour", c), labelled("workload", g), labelled("log axes", log)]
      .forEach(function (e) { controls.appendChild(e); });
    view.appendChild(controls);
    view.appendChild(el("div", { id: "pareto-plot", class: "plot" }));
    view.appendChild(el("p", { class: "note" }, "Red: the front over the two axes (per workload); grey crosses: " +
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
      const f = front2d(byGroup[name], xs, ys);
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
    if (!hasPlotly()) { view.innerHTML = '<p class="note">plotly.min.js was not found beside this page.</p>'; return; }
    const controls = el("div", { class: "controls" });
    const names = Object.keys(OBJ);
    const c = select("parallel-colour", names.map(function (n) { return [OBJ[n], objLabel(n)]; }), OBJ.energy || OBJ[names[0]]);
    const gs = groups();
    const g = select("parallel-group", [["", "all workloads"]].concat(gs.map(function (s) { return [s, s]; })), gs.length > 1 ? gs[0] : "");
    controls.appendChild(labelled("colour", c));
    controls.appendChild(labelled("workload", g));
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
    const dims = PARAMS.map(function (c) { return dimension(c, idx); });
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
    const named = names.filter(function (n) { return n.toLowerCase() === wanted; })[0];
    const o = select("rank-objective", names.map(function (n) { return [OBJ[n], objLabel(n)]; }), OBJ[named] || OBJ[names[0]]);
    const m = select("rank-method", [["geomean", "geometric mean"], ["sum", "sum"]], (D.ranking && D.ranking.method) || "geomean");
    controls.appendChild(labelled("objective", o));
    controls.appendChild(labelled("aggregate", m));
    const weights = (D.ranking && D.ranking.weights) || {};
    gs.forEach(function (g, k) {
      const w = el("input", { type: "number", step: "any", min: "0", class: "rank-weight", id: "rank-weight-" + k, "data-group": g });
      w.value = weights[g] !== undefined ? weights[g] : (weights[g.split(" (")[0]] !== undefined ? weights[g.split(" (")[0]] : 1);
      w.style.width = "5em";
      controls.appendChild(labelled("weight " + g, w));
      w.addEventListener("input", fillRanking);
    });
    [o, m].forEach(function (e) { e.addEventListener("change", fillRanking); });
    view.appendChild(controls);
    view.appendChild(el("p", { class: "note" }, "Each design's best kept result per workload, aggregated over the workloads " +
      "(weighted sum, or weighted geometric mean); a design excluded or not run on a workload is not ranked."));
    const wrap = el("div", { class: "tablewrap" });
    wrap.appendChild(el("table", { class: "grid", id: "ranking-table" }));
    view.appendChild(wrap);
    fillRanking();
  }
  function fillRanking() {
    const key = $("rank-objective").value, method = $("rank-method").value, gs = groups();
    const weight = {};
    document.querySelectorAll(".rank-weight").forEach(function (w) { weight[w.getAttribute("data-group")] = parseFloat(w.value) || 0; });
    const best = {};  // design -> group -> row
    const missing = {};
    for (let i = 0; i < N; i++) {
      const d = D.design[i];
      best[d] = best[d] || {};
      if (STATUS[i] !== "ok" || typeof R[key][i] !== "number") { missing[d] = missing[d] || (D.group[i] + ": " + STATUS[i]); continue; }
      const cur = best[d][D.group[i]];
      if (cur === undefined || R[key][i] < R[key][cur]) best[d][D.group[i]] = i;
    }
    const ranks = {};
    gs.forEach(function (g) {
      const list = Object.keys(best).filter(function (d) { return best[d][g] !== undefined; })
        .sort(function (a, b) { return R[key][best[a][g]] - R[key][best[b][g]]; });
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
    ranked.sort(function (a, b) { return a[1] - b[1]; });
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
})();

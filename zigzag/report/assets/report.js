// The report page's data, number formats, tabs and table (zigzag.report joins report.js, views.js
// and why.js into one script of the page, in that order, inside one function scope).
const D = JSON.parse(document.getElementById("report-data").textContent);
const N = D.n, R = D.rows, COLS = D.columns;
const COL = {};
COLS.forEach(function (c) { COL[c.key] = c; });
const STATUS = R.status || new Array(N).fill("ok");
const REASON = R.reason || new Array(N).fill("");
const RAN = function (i) { return STATUS[i] === "ok" || STATUS[i] === "out"; };
const OBJ = D.objectives;  // name -> column
const MAXCOL = {};  // the columns where more is better (tokens/s); every other objective is minimised
(D.maximise || []).forEach(function (n) { if (OBJ[n]) MAXCOL[OBJ[n]] = true; });
function sense(key) { return MAXCOL[key] ? -1 : 1; }
// a sweep over workload fields (an LLM's batch, context, phase) compares rows per workload point
const POINT_COLS = COLS.filter(function (c) { return c.role === "point"; });
const POINTS = POINT_COLS.length > 0;
const GROUP_WORD = POINTS ? "workload point" : "workload";
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
    // plotly.min.js defines Plotly when loaded; plotly.gz.js once unpacked ("plotly-ready")
    plotlyTag.addEventListener("load", function () { if (hasPlotly()) again(); }, { once: true });
    document.addEventListener("plotly-ready", function () { if (!hasPlotly()) plotlyMissing = true; again(); }, { once: true });
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

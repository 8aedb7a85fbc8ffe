// gradcli explore: the page. Every number shown comes from the server (gradcli's engine);
// this script only draws them and keeps the view's state in the address's fragment.
"use strict";

const initial = JSON.parse(document.getElementById("initial").textContent);
const TOKEN = initial.token;
const PAGE = Math.random().toString(36).slice(2) + Date.now().toString(36);
const $ = (id) => document.getElementById(id);
const plotDiv = $("plot");
const CLIPPED = "#e6007e";
const SYMBOLS = {minimum: "circle", maximum: "square", saddle: "x", degenerate: "diamond",
  "stable node": "circle", "unstable node": "square", "stable focus": "circle-open",
  "unstable focus": "square-open", center: "diamond-open"};

// --- state ------------------------------------------------------------------------------
// e: expression; g: grid specs of the drawn variables; at: held values (--at specs);
// c: colour; k: contours; p: the pinned point; m, lr, n: the optimiser; show: paths drawn
const state = {e: "", g: [], at: [], c: "", k: false, p: null, m: "adam", lr: "0.1",
  n: 100, show: []};
let field = null;       // the last good field
let panel = null;       // the last panel
let home = null;        // the grid of the first view (autoscale returns to it)
const drawn = {descend: null, flow: null, critical: null};
let busy = 0;

function readHash() {
  const h = location.hash.slice(1);
  if (!h) return false;
  const q = new URLSearchParams(h);
  if (!q.has("e")) return false;
  state.e = q.get("e");
  state.g = q.getAll("g");
  state.at = q.getAll("at");
  state.c = q.get("c") || "";
  state.k = q.get("k") === "1";
  state.p = q.has("p") ? parsePoint(q.get("p")) : null;
  state.m = q.get("m") || "adam";
  state.lr = q.get("lr") || "0.1";
  state.n = parseInt(q.get("n") || "100", 10);
  state.show = (q.get("show") || "").split(",").filter((s) => s in drawn);
  return true;
}

function writeHash() {
  const q = new URLSearchParams();
  q.set("e", state.e);
  for (const g of state.g) q.append("g", g);
  for (const a of state.at) q.append("at", a);
  if (state.c) q.set("c", state.c);
  if (state.k) q.set("k", "1");
  if (state.p) q.set("p", pointText(state.p));
  q.set("m", state.m);
  q.set("lr", state.lr);
  q.set("n", String(state.n));
  const shown = Object.keys(drawn).filter((k) => drawn[k]);
  if (shown.length) q.set("show", shown.join(","));
  history.replaceState(null, "", "#" + q.toString());
}

function parsePoint(text) {
  const out = {};
  for (const part of text.split(",")) {
    const [k, v] = part.split("=");
    if (k && v !== undefined && isFinite(Number(v))) out[k.trim()] = Number(v);
  }
  return Object.keys(out).length ? out : null;
}

const pointText = (p) => Object.entries(p).map(([k, v]) => `${k}=${num(v)}`).join(",");
// numbers as the shortest text that reads back as the same double (as Python's repr)
function num(v) {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return "[" + v.map(num).join(", ") + "]";
  if (Number.isNaN(v)) return "nan";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  const s = String(v);
  if (/e/.test(s) || Math.abs(v) < 1e-4 && v !== 0 || Math.abs(v) >= 1e16) {
    // Python's repr: 1e-05, 1.5e+20; JavaScript: 0.00001, 1.5e+20
    let [m, e] = v.toExponential().split("e");
    const exp = parseInt(e, 10);
    return `${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return s;
}

// --- the server -------------------------------------------------------------------------
async function ask(kind, payload) {
  busy += 1;
  document.body.dataset.busy = String(busy);
  try {
    const started = performance.now();
    const answer = await fetch("/api/" + kind, {
      method: "POST", headers: {"Content-Type": "application/json", "X-Gradcli-Token": TOKEN},
      body: JSON.stringify(Object.assign({page: PAGE + ":" + kind}, payload))});
    const body = await answer.json();
    body._status = answer.status;
    body._ms = performance.now() - started;
    return body;
  } catch (err) {
    return {_status: 0, error: "gradcli: error: the server does not answer (" + err + ")"};
  } finally {
    busy -= 1;
    document.body.dataset.busy = String(busy);
  }
}

function f64(text) {
  const bytes = atob(text);
  const buffer = new ArrayBuffer(bytes.length);
  const view = new Uint8Array(buffer);
  for (let i = 0; i < bytes.length; i++) view[i] = bytes.charCodeAt(i);
  return new Float64Array(buffer);
}

function showError(body) {
  const box = $("error");
  box.className = "";
  if (!body) { box.hidden = true; box.textContent = ""; return; }
  box.hidden = false;
  box.textContent = body.error;
}

function status(text) { $("status").textContent = text; }

// the formula's warnings, as the command line prints them on stderr (x/2pi is (x/2)*pi)
function showWarnings(lines) {
  const box = $("error");
  box.hidden = false;
  box.className = "warning";
  box.textContent = lines.join("\n");
}

// --- the field --------------------------------------------------------------------------
async function draw(loose) {
  const body = await ask("field", {expression: state.e, grid: state.g, at: state.at,
    color: state.c || null, loose: !!loose});
  if (body._status === 409) return;
  if (body._status !== 200) { showError(body); return; }
  showError(null);
  if (body.warnings) showWarnings(body.warnings);
  field = decode(body);
  state.g = body.grid.slice();
  state.at = body.at.slice();
  if (!home || home.e !== state.e) home = {e: state.e, g: body.grid.slice()};
  // variables the server held at 0 get a slider, as --at values
  for (const name of body.sliders) {
    if (!state.at.some((a) => a.split("=")[0].trim() === name)) state.at.push(`${name}=0`);
  }
  render();
  controls();
  status(`${field.names.join(" × ")}: ${field.coords.map((c) => c.length).join(" × ")} ` +
    `points in ${body._ms.toFixed(0)} ms`);
  writeHash();
  commands();
  if (state.p) await pin(state.p);
  for (const k of state.show) if (!drawn[k]) await path(k);
}

function decode(body) {
  const out = {kind: body.kind, names: body.names, coords: body.coords.map(f64),
    held: body.held, labels: body.labels, heatName: body.heat, color: body.color,
    units: body.units || {}, columns: {}};
  for (const [k, v] of Object.entries(body.columns)) out.columns[k] = f64(v);
  return out;
}

// "x [m]" for a variable or column with a physical unit (--unit), else the name
function lab(fl, k) {
  return fl.units && fl.units[k] ? `${k} [${fl.units[k]}]` : k;
}

// a value with its unit, for the hover labels ("250 Ω")
function withUnit(fl, k, v) {
  return fl.units && fl.units[k] ? `${num(v)} ${fl.units[k]}` : num(v);
}

function heatOf(fl) {
  const c = fl.columns;
  const n = fl.coords.reduce((a, b) => a * b.length, 1);
  if (fl.kind === "scalar") {
    if (!fl.color) return {name: "f", values: c.f};
    if (fl.color === "magnitude") return {name: "|∇f|", values: hypot(fl.names.map((v) => c["df/d" + v]), n)};
    return {name: fl.color === "laplacian" ? "∇²f" : fl.color, values: c[fl.color]};
  }
  if (fl.color === "divergence") return {name: "div F", values: c.div};
  if (fl.color === "curl") return {name: "curl F", values: c.curl};
  return {name: "|F|", values: hypot([c["f[0]"], c["f[1]"]], n)};
}

function hypot(parts, n) {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (const p of parts) s += p[i] * p[i];
    out[i] = Math.sqrt(s);
  }
  return out;
}

function heldText(fl) {
  return Object.entries(fl.held).map(([k, v]) => `<br>${k} = ${num(v)} (held)`).join("");
}

function render() {
  const fl = field;
  const traces = [];
  let layout;
  const names = Object.keys(fl.columns).filter((k) => !fl.names.includes(k));
  if (fl.kind === "curve") {
    const x = fl.coords[0], name = fl.names[0];
    const comps = fl.columns.f ? ["f"] : names.filter((k) => /^f\[\d+\]$/.test(k));
    const held = heldText(fl);
    const text = Array.from(x, (xv, i) => `${name} = ${num(xv)}${held}<br>` +
      names.map((k) => `${k} = ${withUnit(fl, k, fl.columns[k][i])}`).join("<br>"));
    comps.forEach((c, i) => {
      traces.push({type: "scatter", mode: "lines", name: comps.length > 1 ? c : `f(${name})`,
        x: x, y: fl.columns[c], text: text, hovertemplate: "%{text}<extra></extra>",
        line: {width: 2}});
      traces.push({type: "scatter", mode: "lines", name: `d${c}/d${name}`, x: x,
        y: fl.columns[`d${c}/d${name}`], text: text,
        hovertemplate: "%{text}<extra></extra>", line: {dash: "dash", width: 1.5}});
    });
    layout = {xaxis: {title: {text: lab(fl, name)}, range: [x[0], x[x.length - 1]]},
      yaxis: {title: {text: `f(${name}) = ${state.e.slice(0, 50)}`}}, hovermode: "closest"};
  } else {
    const [x, y] = fl.coords, nx = x.length, ny = y.length;
    const heat = heatOf(fl);
    const z = [], text = [];
    const held = heldText(fl);
    for (let j = 0; j < ny; j++) {
      const row = new Array(nx), trow = new Array(nx);
      for (let i = 0; i < nx; i++) {
        const k = i * ny + j;
        row[i] = heat.values[k];
        trow[i] = `${fl.names[0]} = ${num(x[i])}<br>${fl.names[1]} = ${num(y[j])}${held}<br>` +
          names.map((c) => `${c} = ${withUnit(fl, c, fl.columns[c][k])}`).join("<br>");
      }
      z.push(row);
      text.push(trow);
    }
    const signed = ["divergence", "curl", "laplacian"].includes(fl.color);
    traces.push({type: "heatmap", x: x, y: y, z: z, text: text, name: heat.name,
      hovertemplate: "%{text}<extra></extra>", zsmooth: false,
      colorscale: signed ? "RdBu" : "Viridis", reversescale: signed, zmid: signed ? 0 : undefined,
      colorbar: {title: {text: lab(fl, heat.name), side: "right"}}});
    if (state.k) {
      traces.push({type: "contour", x: x, y: y, z: z, ncontours: 14, showscale: false,
        contours: {coloring: "lines"}, line: {color: "white", width: 1}, hoverinfo: "skip",
        name: "contours"});
    }
    traces.push(...arrows(fl));
    const dx = x[1] - x[0], dy = y[1] - y[0];
    const sx = x[nx - 1] - x[0], sy = y[ny - 1] - y[0];
    layout = {xaxis: {title: {text: lab(fl, fl.names[0])},
      range: [x[0] - dx / 2, x[nx - 1] + dx / 2],
      constrain: "domain"}, yaxis: {title: {text: lab(fl, fl.names[1])},
      range: [y[0] - dy / 2, y[ny - 1] + dy / 2], constrain: "domain"},
    legend: {orientation: "h", y: -0.12}};
    if (Math.max(sx / sy, sy / sx) <= 10) layout.yaxis.scaleanchor = "x";
  }
  layout.title = {text: `f(${fl.names.join(", ")}) = ${escapeHtml(state.e.slice(0, 80))}`};
  layout.margin = {l: 60, r: 20, t: 50, b: 60};
  layout.uirevision = state.e;
  layout.template = null;
  for (const t of markTraces()) traces.push(t);
  Plotly.react(plotDiv, traces, layout, {displaylogo: false, responsive: false,
    modeBarButtonsToRemove: ["sendDataToCloud", "select2d", "lasso2d"]});
}

function escapeHtml(s) {
  return s.replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
}

// gradient arrows (or the field's), on a lattice of about 20 per axis; full length is the
// 95th percentile of the lengths, longer ones are clipped and drawn magenta (plot's rule)
function arrows(fl) {
  const [x, y] = fl.coords, nx = x.length, ny = y.length;
  const [u, v] = fl.kind === "scalar" ? [fl.columns["df/d" + fl.names[0]],
    fl.columns["df/d" + fl.names[1]]] : [fl.columns["f[0]"], fl.columns["f[1]"]];
  const ex = Math.max(1, Math.round(nx / 20)), ey = Math.max(1, Math.round(ny / 20));
  const sx = (x[nx - 1] - x[0]) || 1, sy = (y[ny - 1] - y[0]) || 1;
  const ratio = Math.max(sx / sy, sy / sx) <= 10 ? 1 : sy / sx;
  const picked = [];
  for (let i = Math.floor(ex / 2); i < nx; i += ex) {
    for (let j = Math.floor(ey / 2); j < ny; j += ey) {
      const k = i * ny + j;
      if (Number.isFinite(u[k]) && Number.isFinite(v[k])) {
        picked.push([x[i], y[j], u[k], v[k], Math.hypot(u[k], v[k] / ratio)]);
      }
    }
  }
  const lengths = picked.map((p) => p[4]).filter((l) => l > 0).sort((a, b) => a - b);
  if (!lengths.length) return [];
  const p95 = lengths[Math.min(lengths.length - 1, Math.floor(0.95 * lengths.length))];
  const full = lengths[lengths.length - 1] > 2 * p95 ? p95 : lengths[lengths.length - 1];
  const spacing = Math.min((x[1] - x[0]) * ex, (y[1] - y[0]) * ey / ratio) * 0.9;
  const lines = {black: [[], []], clipped: [[], []]};
  for (const [px, py, du, dv, len] of picked) {
    if (len === 0) continue;
    const clip = len > full;
    const s = spacing / full * (clip ? full / len : 1);
    const ax = du * s, ay = dv * s;
    const tx = px - ax / 2, ty = py - ay / 2, hx = px + ax / 2, hy = py + ay / 2;
    const l = Math.hypot(ax, ay / ratio), ux = ax / l, uy = ay / ratio / l, head = 0.3 * l;
    const into = lines[clip ? "clipped" : "black"];
    into[0].push(tx, hx, null);
    into[1].push(ty, hy, null);
    for (const t of [0.42, -0.42]) {
      const bx = ux * Math.cos(t) - uy * Math.sin(t), by = ux * Math.sin(t) + uy * Math.cos(t);
      into[0].push(hx, hx - head * bx, null);
      into[1].push(hy, hy - head * by * ratio, null);
    }
  }
  const out = [];
  for (const [name, color] of [["black", "black"], ["clipped", CLIPPED]]) {
    if (!lines[name][0].length) continue;
    out.push({type: "scatter", mode: "lines", x: lines[name][0], y: lines[name][1],
      line: {color: color, width: 1.3}, hoverinfo: "skip", showlegend: name === "clipped",
      name: name === "clipped" ? "clipped arrows" : (fl.kind === "scalar" ? "∇f" : "F")});
  }
  return out;
}

// the pin, the tangent, paths and critical points, drawn over the field
function markTraces() {
  const out = [];
  if (!field) return out;
  const [a, b] = field.names;
  if (state.p && field.kind === "curve" && panel && panel.values) {
    const x = field.coords[0], p = state.p[a];
    const f = panel.values.f, d = panel.values["df/d" + a];
    if (typeof f === "number" && typeof d === "number") {
      const x0 = x[0], x1 = x[x.length - 1];
      out.push({type: "scatter", mode: "lines", name: "tangent", x: [x0, x1],
        y: [f + d * (x0 - p), f + d * (x1 - p)], line: {color: "#d62728", width: 1.5},
        hoverinfo: "skip"});
      out.push({type: "scatter", mode: "markers", name: "pinned", x: [p], y: [f],
        marker: {color: "#d62728", size: 10}, hoverinfo: "skip"});
    }
  } else if (state.p && field.kind !== "curve") {
    out.push({type: "scatter", mode: "markers", name: "pinned", x: [state.p[a]],
      y: [state.p[b]], marker: {color: "#d62728", size: 12, symbol: "cross",
        line: {color: "white", width: 1}}, hoverinfo: "skip"});
  }
  for (const [kind, color] of [["descend", "#ff7f0e"], ["flow", "#17becf"]]) {
    const d = drawn[kind];
    if (!d) continue;
    const xs = d.columns[a], ys = field.kind === "curve" ? d.columns.f : d.columns[b];
    if (!xs || !ys) continue;
    out.push({type: "scatter", mode: kind === "descend" ? "lines+markers" : "lines",
      name: kind === "descend" ? `${state.m} path` : "flow line", x: xs, y: ys,
      line: {color: color, width: 2}, marker: {size: 4}, text: hovers(d),
      hoverinfo: "text+name"});
  }
  const c = drawn.critical;
  if (c) {
    const types = [...new Set(c.types)];
    for (const t of types) {
      const pick = c.types.map((s, i) => (s === t ? i : -1)).filter((i) => i >= 0);
      const ys = field.kind === "curve" ? c.columns.f : c.columns[b];
      const text = hovers(c);
      out.push({type: "scatter", mode: "markers", name: t,
        x: pick.map((i) => c.columns[a][i]), y: pick.map((i) => ys[i]),
        marker: {symbol: SYMBOLS[t] || "circle", size: 11,
          color: (SYMBOLS[t] || "").endsWith("-open") ? "black" : "white",
          line: {color: "black", width: 2}}, text: pick.map((i) => text[i]),
        hoverinfo: "text+name"});
    }
  }
  return out;
}

// each row of a path's or the critical points' table as a hover label, every number with
// its unit ("x = 100 cm<br>f = 2 m^2"): the point, f, the time, |grad f| or |F|
function hovers(d) {
  const keys = Object.keys(d.columns).filter((k) => k !== "type" && k !== "run" &&
    !k.startsWith("vec[") && !k.startsWith("im["));
  const n = keys.length ? d.columns[keys[0]].length : 0;
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push(keys.map((k) => `${k} = ${withUnit(d, k, d.columns[k][i])}`).join("<br>"));
  }
  return out;
}

function redrawMarks() {
  if (field) render();
}

// --- the controls -----------------------------------------------------------------------
function specParts(spec) {
  const [name, rest] = spec.split("=");
  const [a, b, n] = (rest || "").split(":");
  return {name: name.trim(), a: a, b: b, n: n};
}

function controls() {
  const ranges = $("ranges");
  ranges.textContent = "";
  state.g.forEach((spec, idx) => {
    const s = specParts(spec);
    const label = document.createElement("label");
    label.append(`${s.name} from `);
    const lo = Object.assign(document.createElement("input"), {value: s.a, id: `lo-${s.name}`});
    const hi = Object.assign(document.createElement("input"), {value: s.b, id: `hi-${s.name}`});
    label.append(lo, " to ", hi);
    const change = () => { state.g[idx] = `${s.name}=${lo.value}:${hi.value}:${specParts(state.g[idx]).n}`; draw(); };
    lo.addEventListener("change", change);
    hi.addEventListener("change", change);
    ranges.append(label, " ");
  });
  $("resolution").value = specParts(state.g[0] || "x=0:1:2").n;
  const color = $("color");
  const choices = field.kind === "scalar" ? [["", "f"], ["magnitude", "|∇f|"], ["laplacian", "∇²f"]]
    : field.kind === "vector" ? [["", "|F|"], ["divergence", "div F"], ["curl", "curl F"]] : [["", "—"]];
  color.textContent = "";
  for (const [value, text] of choices) color.append(new Option(text, value, false, value === state.c));
  color.disabled = field.kind === "curve";
  $("contours").checked = state.k;
  sliders();
}

function sliders() {
  const box = $("sliders");
  box.textContent = "";
  state.at.forEach((spec, idx) => {
    const name = spec.split("=")[0].trim(), text = spec.slice(spec.indexOf("=") + 1);
    const value = Number(text);
    if (!isFinite(value) || spec.includes(",")) return;  // vectors and expressions: as typed
    const label = Object.assign(document.createElement("label"), {className: "slider"});
    const input = Object.assign(document.createElement("input"), {type: "range",
      min: Math.min(-5, value), max: Math.max(5, value), step: "0.05", value: value,
      id: `slider-${name}`});
    const out = Object.assign(document.createElement("output"), {value: text});
    label.append(`${name}`, input, out);
    let timer = null;
    input.addEventListener("input", () => {
      out.value = input.value;
      state.at[idx] = `${name}=${input.value}`;
      clearTimeout(timer);
      timer = setTimeout(draw, 60);
    });
    box.append(label);
  });
}

// --- the pinned point -------------------------------------------------------------------
async function pin(point) {
  state.p = point;
  writeHash();
  commands();
  const body = await ask("point", {expression: state.e, point: point, at: state.at});
  if (body._status === 409) return;
  if (body._status !== 200) { showError(body); return; }
  panel = body;
  showPanel(body);
  redrawMarks();
  status(`panel at ${pointText(point)} in ${body._ms.toFixed(0)} ms`);
}

function table(headers, rows) {
  const t = document.createElement("table");
  const head = t.insertRow();
  for (const h of headers) {
    const th = document.createElement("th");
    th.textContent = h;
    head.append(th);
  }
  for (const r of rows) {
    const row = t.insertRow();
    r.forEach((cell, i) => {
      const td = row.insertCell();
      td.textContent = cell;
      if (i > 0 && typeof cell === "string" && /^[-0-9[]/.test(cell)) td.className = "num";
    });
  }
  return t;
}

function section(title, ...content) {
  const s = document.createElement("div");
  const h = document.createElement("h3");
  h.textContent = title;
  s.append(h, ...content);
  return s;
}

function showPanel(body) {
  const box = $("point");
  box.textContent = "";
  const unit = (k) => (body.units && body.units[k] ? ` [${body.units[k]}]` : "");
  const values = Object.entries(body.values).map(([k, v]) => [k + unit(k), num(v)]);
  const where = Object.entries(body.point).map(([k, v]) => [k + unit(k), num(v)]);
  const v = table(["", "value"], [...where, ...values]);
  v.id = "values";
  box.append(section(`${body.derivative} at the point`, v));
  if (body.formula) {
    const pre = document.createElement("pre");
    pre.id = "formula";
    pre.textContent = Object.entries(body.formula).map(([k, f]) =>
      f === null ? `${k}: ${body.formula_notes[k]}` : `${k} = ${f}`).join("\n");
    box.append(section("the derivative as a formula (--formula)", pre));
  } else if (body.formula_error) {
    box.append(section("the derivative as a formula", note(body.formula_error)));
  }
  if (body.graph) {
    // a value with its unit as gradcli graph prints it ("0.5 m"; a pure number bare)
    const withU = (v, u) => (u && u !== "1" ? `${num(v)} ${u}` : num(v));
    const rows = body.graph.nodes.map((n) => [n.id + (n.id === body.graph.output ? " (f)" : ""),
      n.op, n.inputs.join(", "), withU(n.value, n.unit),
      n.adjoint === null ? "" : withU(n.adjoint, n.adjoint_unit)]);
    const t = table(["node", "operation", "inputs", "value", "adjoint ∂f/∂node"], rows);
    t.id = "graph";
    box.append(section("computation graph (gradcli graph)", t));
  } else if (body.graph_error) {
    box.append(section("computation graph", note(body.graph_error)));
  }
  if (body.program) {
    const rows = body.program.split("\n").map((line) => {
      const name = line.split(" = ")[0];
      return [line, name in body.steps ? num(body.steps[name]) : ""];
    });
    const t = table(["backward program (--formula program)", "value here"], rows);
    t.id = "program";
    box.append(section("backward program, each step's value at the point", t));
  } else if (body.program_error) {
    box.append(section("backward program", note(body.program_error)));
  }
  for (const kind of ["descend", "flow"]) if (drawn[kind]) showPath(kind);
}

function note(text) {
  return Object.assign(document.createElement("p"), {className: "note", textContent: text});
}

function onClick(event) {
  if (!field || event.button !== 0) return;
  const p = toData(event);
  if (p) {
    plotDiv.focus({preventScroll: true});  // the arrow keys move the pin from now on
    pin(p);
  }
}

function toData(event) {
  const full = plotDiv._fullLayout;
  if (!full || !full.xaxis) return null;
  const box = plotDiv.getBoundingClientRect();
  const xa = full.xaxis, ya = full.yaxis;
  const px = event.clientX - box.left - xa._offset, py = event.clientY - box.top - ya._offset;
  if (px < 0 || px > xa._length || py < 0 || py > ya._length) return null;
  const [a, b] = field.names;
  const x = nice(xa.p2d(px), xa.range), out = {[a]: x};
  if (field.kind !== "curve") out[b] = nice(ya.p2d(py), ya.range);
  return out;
}

// a clicked coordinate rounded to a hundredth of the visible range (a power of ten):
// a short number to read and to copy
function nice(v, range) {
  const step = Math.pow(10, Math.floor(Math.log10(Math.abs(range[1] - range[0]) || 1)) - 2);
  return Number((Math.round(v / step) * step).toPrecision(12));
}

function move(dx, dy) {
  if (!state.p || !field) return;
  const [a, b] = field.names, x = field.coords[0];
  const p = Object.assign({}, state.p);
  p[a] = Number((p[a] + dx * (x[1] - x[0])).toPrecision(12));
  if (b !== undefined && field.kind !== "curve") {
    const y = field.coords[1];
    p[b] = Number((p[b] + dy * (y[1] - y[0])).toPrecision(12));
  }
  pin(p);
}

// --- paths ------------------------------------------------------------------------------
async function path(kind) {
  if (!field) return;
  let body;
  const names = field.names;
  const start = state.p ? pick(state.p, names) : null;
  if (kind === "critical") {
    body = await ask("critical", {expression: state.e, grid: visibleGrid(15), at: state.at});
  } else {
    if (!start) { status("pin a point first: the path starts there"); return; }
    if (kind === "descend") {
      const lr = Number(state.lr);
      body = await ask("descend", {expression: state.e, start: start, at: state.at,
        method: state.m, lr: isFinite(lr) ? lr : null, steps: state.n});
    } else {
      body = await ask("flow", {expression: state.e, start: start, at: state.at,
        t: "0:10:1001", box: visibleGrid(2)});
    }
  }
  if (body._status === 409) return;
  if (body._status !== 200) { showError(body); return; }
  showError(null);
  const columns = {};
  for (const [k, v] of Object.entries(body.columns)) columns[k] = k === "type" ? v : f64(v);
  drawn[kind] = {columns: columns, notes: body.notes, types: columns.type || [],
    units: body.units || {}};
  if (kind === "critical") showCritical();
  else showPath(kind);
  writeHash();
  commands();
  redrawMarks();
  status(`${kind}: ${body.notes.join("; ") || "done"} in ${body._ms.toFixed(0)} ms`);
}

function pick(p, names) {
  const out = {};
  for (const n of names) if (n in p) out[n] = p[n];
  return out;
}

function visibleGrid(count) {
  const full = plotDiv._fullLayout;
  return field.names.map((n, i) => {
    // the visible part of the sampled range (a curve's one axis is x)
    const axis = full && (i === 0 ? full.xaxis : full.yaxis);
    const c = field.coords[i];
    let [lo, hi] = [c[0], c[c.length - 1]];
    if (axis && axis.range) {
      const r = axis.range;
      lo = Math.max(Math.min(r[0], r[1]), lo);
      hi = Math.min(Math.max(r[0], r[1]), hi);
    }
    return `${n}=${num(Number(lo.toPrecision(6)))}:${num(Number(hi.toPrecision(6)))}:${count}`;
  });
}

function showPath(kind) {
  const d = drawn[kind];
  const id = kind + "-table";
  const old = $(id);
  if (old) old.parentElement.remove();
  const cols = Object.keys(d.columns);
  const n = d.columns[cols[0]].length;
  const rows = [];
  for (let i = 0; i < n; i++) {
    if (i >= 20 && i < n - 1) { if (i === 20) rows.push(cols.map(() => "…")); continue; }
    rows.push(cols.map((c) => num(d.columns[c][i])));
  }
  const t = table(cols.map((c) => lab(d, c)), rows);
  t.id = id;
  const title = kind === "descend" ? `descent (${state.m}, lr ${state.lr})` : "flow line";
  $("point").append(section(d.notes.length ? `${title}: ${d.notes.join("; ")}` : title, t));
}

function showCritical() {
  const d = drawn.critical;
  const old = $("critical-table");
  if (old) old.parentElement.remove();
  const names = [...field.names, ...(d.columns.f ? ["f"] : [])];
  const rows = d.types.map((t, i) => [...names.map((c) => num(d.columns[c][i])), t]);
  const tab = table([...names.map((c) => lab(d, c)), "type"], rows);
  tab.id = "critical-table";
  $("point").append(section(`critical points of the visible region: ${d.notes.join("; ") || d.types.length + " found"}`, tab));
}

// --- the command lines ------------------------------------------------------------------
function quote(s) {
  if (/^[A-Za-z0-9_.,:=+\-/^*@]+$/.test(s)) return s;
  if (!/["$`\\!]/.test(s)) return `"${s}"`;
  return "'" + s.replace(/'/g, "'\\''") + "'";
}

function commands() {
  const e = quote(state.e);
  const grids = state.g.map((g) => `--grid ${quote(g)}`).join(" ");
  const held = state.at.length ? " --at " + quote(state.at.join(",")) : "";
  const lines = [];
  let plot = `gradcli plot ${e} ${grids}${held}`;
  if (state.c) plot += ` --color ${state.c}`;
  if (state.k) plot += " --contour 14";
  if (drawn.critical) plot += " --mark-critical";
  lines.push(plot + " -o field.png");
  if (state.p) {
    const at = quote([pointText(state.p), ...state.at].join(","));
    if (field && field.kind === "vector") {  // a vector field: its Jacobian, no graph
      lines.push(`gradcli jacobian ${e} --at ${at}`);
      lines.push(`gradcli jacobian ${e} --formula`);
    } else {
      lines.push(`gradcli grad ${e} --at ${at}`);
      lines.push(`gradcli graph ${e} --at ${at}`);
      lines.push(`gradcli grad ${e} --formula program`);
    }
    if (drawn.descend) {
      lines.push(`gradcli descend ${e} --from ${quote(pointText(pick(state.p, field ? field.names : [])))}${held} ` +
        `--method ${state.m} --lr ${state.lr} --steps ${state.n}`);
    }
    if (drawn.flow) {
      lines.push(`gradcli flow ${e} --from ${quote(pointText(pick(state.p, field ? field.names : [])))}${held} ` +
        `--t 0:10:1001 --box ${quote(visibleGrid(2).map((g) => g.replace(/:2$/, "")).join(","))}`);
    }
  }
  if (drawn.critical) lines.push(`gradcli critical ${e} ${visibleGrid(15).map((g) => "--grid " + g).join(" ")}${held}`);
  const box = $("command");
  box.textContent = "";
  lines.forEach((line, i) => {
    const c = Object.assign(document.createElement("code"), {textContent: line});
    c.className = "command";
    box.append(...(i ? [document.createElement("br"), c] : [c]));
  });
  let share = `gradcli explore ${e} ${grids}${held}`;
  if (state.c) share += ` --color ${state.c}`;
  if (state.k) share += " --contour";
  if (state.p) share += ` --point ${quote(pointText(state.p))}`;
  $("share").textContent = share;
}

// --- wiring -----------------------------------------------------------------------------
function start() {
  if (!readHash()) {
    state.e = initial.expression;
    state.g = initial.grid || [];
    state.at = initial.at || [];
    state.c = initial.color || "";
    state.k = !!initial.contour;
    state.p = initial.point ? parsePoint(initial.point) : null;
  }
  $("expression").value = state.e;
  $("method").value = state.m;
  $("lr").value = state.lr;
  $("steps").value = state.n;
  $("form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("expression").value;
    if (text !== state.e) {
      state.e = text;
      state.p = null;
      state.c = "";
      for (const k in drawn) drawn[k] = null;
      state.show = [];
      panel = null;
      $("point").textContent = "";
      draw(true);
      return;
    }
    draw();
  });
  $("resolution").addEventListener("change", () => {
    const n = Math.max(2, Math.min(2000, parseInt($("resolution").value, 10) || 2));
    state.g = state.g.map((g) => { const s = specParts(g); return `${s.name}=${s.a}:${s.b}:${n}`; });
    draw();
  });
  $("color").addEventListener("change", () => { state.c = $("color").value; draw(); });
  $("contours").addEventListener("change", () => { state.k = $("contours").checked; render(); writeHash(); commands(); });
  $("method").addEventListener("change", () => { state.m = $("method").value; writeHash(); });
  $("lr").addEventListener("change", () => { state.lr = $("lr").value; writeHash(); });
  $("steps").addEventListener("change", () => { state.n = parseInt($("steps").value, 10) || 0; writeHash(); });
  $("descend").addEventListener("click", () => path("descend"));
  $("flow").addEventListener("click", () => path("flow"));
  $("critical").addEventListener("click", () => path("critical"));
  $("clear").addEventListener("click", () => {
    for (const k in drawn) drawn[k] = null;
    state.show = [];
    for (const id of ["descend-table", "flow-table", "critical-table"]) {
      const t = $(id);
      if (t) t.parentElement.remove();
    }
    writeHash(); commands(); redrawMarks();
  });
  $("copy").addEventListener("click", () => {
    const text = $("command").querySelector("code").textContent;
    if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
  });
  plotDiv.tabIndex = 0;
  plotDiv.addEventListener("keydown", (ev) => {
    const keys = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1]};
    if (keys[ev.key] && state.p) { ev.preventDefault(); move(...keys[ev.key]); }
  });
  // a click pins; a press on the pin drags it (the picture's zoom is off meanwhile)
  let dragging = false, downAt = null;
  plotDiv.addEventListener("mousedown", (ev) => {
    downAt = [ev.clientX, ev.clientY];
    if (!state.p || !field || !plotDiv._fullLayout) return;
    const full = plotDiv._fullLayout, box = plotDiv.getBoundingClientRect();
    const [a, b] = field.names;
    const px = box.left + full.xaxis._offset + full.xaxis.d2p(state.p[a]);
    const py = field.kind === "curve" ? ev.clientY : box.top + full.yaxis._offset + full.yaxis.d2p(state.p[b]);
    if (Math.hypot(ev.clientX - px, ev.clientY - py) < 10) {
      dragging = true;
      ev.stopPropagation();
      ev.preventDefault();
    }
  }, true);
  window.addEventListener("mousemove", (ev) => {
    if (!dragging) return;
    const p = toData(ev);
    if (p) { state.p = Object.assign({}, state.p, p); redrawMarks(); pin(state.p); }
  }, true);
  window.addEventListener("mouseup", (ev) => {
    if (dragging) { dragging = false; ev.stopPropagation(); return; }
    if (downAt && Math.hypot(ev.clientX - downAt[0], ev.clientY - downAt[1]) < 4) onClick(ev);
    downAt = null;
  }, true);
  let zoomTimer = null;
  const zoomed = (ev) => {
    if (!field) return;
    if (ev["xaxis.autorange"] || ev["yaxis.autorange"]) {
      if (home && home.e === state.e) { state.g = home.g.slice(); clearTimeout(zoomTimer); zoomTimer = setTimeout(draw, 50); }
      return;
    }
    const ranges = [[ev["xaxis.range[0]"], ev["xaxis.range[1]"]], [ev["yaxis.range[0]"], ev["yaxis.range[1]"]]];
    let changed = false;
    field.names.forEach((n, i) => {
      const [lo, hi] = ranges[i];
      if (lo === undefined || hi === undefined) return;
      if (field.kind === "curve" && i > 0) return;
      const s = specParts(state.g[i]);
      state.g[i] = `${n}=${num(Number(lo.toPrecision(6)))}:${num(Number(hi.toPrecision(6)))}:${s.n}`;
      changed = true;
    });
    if (changed) { clearTimeout(zoomTimer); zoomTimer = setTimeout(draw, 150); }
  };
  draw().then(() => {
    plotDiv.on("plotly_relayout", zoomed);
    document.body.dataset.ready = "1";
  });
  window.addEventListener("pagehide", () => {
    for (const kind of ["field", "point", "descend", "flow", "critical"]) {
      const blob = new Blob([JSON.stringify({page: PAGE + ":" + kind})], {type: "application/json"});
      navigator.sendBeacon("/api/cancel?token=" + encodeURIComponent(TOKEN), blob);
    }
  });
}

window.explorer = {state: state, get field() { return field; }, get panel() { return panel; },
  drawn: drawn, draw: draw, pin: pin, path: path};
document.body.dataset.busy = "0";
start();

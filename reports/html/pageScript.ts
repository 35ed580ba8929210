import { createHash } from 'node:crypto';

/**
 * `report --format html --layers`: a lane per GPU under its idle lane with the step's layer spans
 * (`layers` in the step's payload), stacked in rows where a layer's kernels on several streams
 * overlap another span; the step's layer note and counts on the timeline's root (`data-layer-*`).
 */
const LAYER_LANES = String.raw`var LAYER_COLORS = ['#3d4f7c', '#6e7fab'], OUTSIDE_COLOR = '#8c959f';
function layerLane(s, d) {
  var items = s.layers.spans.filter(function (x) { return x[0] === d; }).map(function (x) {
    return { s: x[1], e: x[2], layer: x[3], pass: x[4], ns: x[5], count: x[6], kinds: x[7], name: x[3] < 0 ? 'outside layers' : 'layer ' + x[3], kind: 'layer', row: 0 };
  }).sort(function (a, b) { return a.s - b.s || b.e - a.e; });
  var ends = [];
  items.forEach(function (it) {
    var r = 0;
    while (r < ends.length && ends[r] > it.s) r++;
    it.row = r;
    ends[r] = it.e;
  });
  return { label: 'GPU ' + d + ' layers (' + s.layers.source + ')', layers: true, rows: Math.max(1, ends.length), items: items };
}
function layerTip(it) {
  var kinds = Object.keys(it.kinds).sort(function (a, b) { return it.kinds[b] - it.kinds[a]; }).map(function (k) { return k + ' ' + fmt(it.kinds[k]); });
  return it.name + (it.pass > 1 ? ' (pass ' + it.pass + ')' : '') + ' \u00b7 ' + fmt(it.e - it.s) + '\n' + it.count + ' kernels, ' + fmt(it.ns) + ' kernel time' + (kinds.length ? '\n' + kinds.join(' \u00b7 ') : '');
}
function layerNote(st) {
  var l = st.step.layers, el = st.root.querySelector('[data-role=layers]'), spans = 0, outside = 0;
  var lanes = st.lanes.lanes.filter(function (x) { return x.layers; });
  lanes.forEach(function (x) { x.items.forEach(function (it) { if (it.layer < 0) outside++; else spans++; }); });
  st.root.setAttribute('data-layer-lanes', String(lanes.length));
  st.root.setAttribute('data-layer-spans', String(spans));
  st.root.setAttribute('data-outside-spans', String(outside));
  st.root.setAttribute('data-layer-lane-y', lanes.length ? String(lanes[0].y) : '');
  if (el) el.textContent = l ? 'Layers of iteration ' + st.step.iter + ': ' + l.note : 'Iteration ' + st.step.iter + ' has no layer split.';
}
`;

/**
 * The report page's one script, inline (the page fetches nothing): the overview chart's hover
 * text, the links that open a step's timeline, and the timeline itself, drawn on a canvas (a few
 * thousand kernels per step: SVG nodes would slow the page). Plain ES2017 for any current browser.
 * Text from the export reaches the page only through `textContent` and the canvas, never as markup.
 * Lines `//@layers:NAME` are hooks for the layer lanes' code (`pageScript`), none of them on a page
 * without layer lanes.
 */
const SCRIPT = String.raw`(function () {
'use strict';
function closest(el, sel) { return el && el.closest ? el.closest(sel) : null; }
function fmt(ns) {
  var a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(1) + ' us';
  return Math.round(ns) + ' ns';
}
function overview() {
  var chart = document.getElementById('overview-chart');
  var tip = document.getElementById('overview-tip');
  if (!chart || !tip) return;
  chart.addEventListener('mousemove', function (e) {
    var g = closest(e.target, '[data-tip]');
    if (!g) { tip.hidden = true; return; }
    tip.textContent = g.getAttribute('data-tip');
    tip.hidden = false;
    var r = chart.getBoundingClientRect();
    tip.style.left = Math.max(0, Math.min(e.clientX - r.left + 14, r.width - 300)) + 'px';
    tip.style.top = (e.clientY - r.top + 14) + 'px';
  });
  chart.addEventListener('mouseleave', function () { tip.hidden = true; });
}
var HOST_COLORS = { nvtx: '#9fb7d4', gc: '#b2182b', gil_wait: '#e08214', gil_hold: '#b07aa1', sync: '#8c510a' };
var LABEL = 170, ROW = 14, AXIS = 22;
//@layers:defs
function buildLanes(data, s) {
  var out = [];
  var byTid = new Map();
  s.host.forEach(function (h) {
    if (!byTid.has(h[0])) byTid.set(h[0], []);
    byTid.get(h[0]).push({ s: h[3], e: h[4], kind: data.hostKinds[h[1]], name: data.names[h[2]], tid: h[0], row: 0 });
  });
  var tids = Array.from(byTid.keys()).sort(function (a, b) { return (b === s.executorTid) - (a === s.executorTid) || a - b; });
  tids.forEach(function (tid) {
    var items = byTid.get(tid).sort(function (a, b) { return a.s - b.s || b.e - a.e; });
    var stack = [], depth = 1;
    items.forEach(function (it) {
      while (stack.length && stack[stack.length - 1] <= it.s) stack.pop();
      it.row = stack.length;
      stack.push(it.e);
      depth = Math.max(depth, stack.length);
    });
    out.push({ label: (tid === s.executorTid ? 'executor thread ' : 'thread ') + tid, tid: tid, rows: depth, items: items });
  });
  var streams = new Map();
  for (var j = 0; j < s.ops.length; j += 8) {
    var o = s.ops, key = o[j + 2] + ':' + o[j + 3];
    if (!streams.has(key)) streams.set(key, []);
    streams.get(key).push({ s: o[j], e: o[j + 1], dev: o[j + 2], stream: o[j + 3], cat: o[j + 4], name: data.names[o[j + 5]], ls: o[j + 6], ltid: o[j + 7], kind: 'op', row: 0 });
  }
  var devices = new Set(s.gaps.map(function (g) { return g[0]; }));
  streams.forEach(function (v) { devices.add(v[0].dev); });
//@layers:devices
  Array.from(devices).sort(function (a, b) { return a - b; }).forEach(function (d) {
    var gaps = s.gaps.filter(function (g) { return g[0] === d; }).map(function (g) { return { s: g[1], e: g[2], name: 'idle: ' + g[3], cause: g[3], kind: 'gap', row: 0 }; });
    out.push({ label: 'GPU ' + d + ' idle (cause)', rows: 1, items: gaps });
//@layers:lane
    Array.from(streams.values()).filter(function (v) { return v[0].dev === d; }).sort(function (a, b) { return a[0].stream - b[0].stream; }).forEach(function (v) {
      out.push({ label: 'GPU ' + d + ' stream ' + v[0].stream, rows: 1, items: v.sort(function (a, b) { return a.s - b.s; }) });
    });
  });
  var y = AXIS;
  out.forEach(function (l) { l.y = y; l.h = l.rows * ROW + 4; y += l.h; });
  return { lanes: out, height: y + 4 };
}
function colorOf(data, it) {
  if (it.kind === 'op') return data.categoryColors[it.cat] || '#999';
  if (it.kind === 'gap') return data.causeColors[it.cause] || '#999';
//@layers:color
  return HOST_COLORS[it.kind] || '#999';
}
function tipText(data, it) {
  var d = fmt(it.e - it.s);
  if (it.kind === 'op') return it.name + '\n' + data.categories[it.cat] + ' \u00b7 ' + d + ' \u00b7 GPU ' + it.dev + ' stream ' + it.stream + '\nlaunched by thread ' + it.ltid + ' at +' + fmt(it.ls) + ', started ' + fmt(it.s - it.ls) + ' after its launch';
  if (it.kind === 'gap') return it.name + ' \u00b7 ' + d;
//@layers:tip
  return it.name + ' (' + it.kind + ', thread ' + it.tid + ') \u00b7 ' + d;
}
// The timeline's state (st): its elements, the step shown, its lanes, the visible span [view],
// the hovered item and a drag in progress. The functions below read and update it.
function width(st) { return st.canvas.clientWidth || 800; }
function xOf(st, t) { return LABEL + ((t - st.view[0]) / (st.view[1] - st.view[0])) * (width(st) - LABEL); }
function tOf(st, px) { return st.view[0] + ((px - LABEL) / (width(st) - LABEL)) * (st.view[1] - st.view[0]); }
function drawAxis(st, c) {
  var span = st.view[1] - st.view[0], raw = span / 8, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  var step = [1, 2, 5, 10].map(function (f) { return f * mag; }).filter(function (v) { return v >= raw; })[0];
  c.fillStyle = '#59636e';
  c.strokeStyle = '#e6e6e6';
  for (var v = Math.ceil(st.view[0] / step) * step; v <= st.view[1]; v += step) {
    var px = xOf(st, v);
    c.fillRect(px, AXIS - 6, 1, 6);
    c.fillText('+' + fmt(v), px + 2, 8);
    c.beginPath(); c.moveTo(px + 0.5, AXIS); c.lineTo(px + 0.5, st.lanes.height); c.stroke();
  }
  c.fillText('step ' + st.step.iter, 4, 8);
}
function drawLane(st, c, l, li, w) {
  if (li % 2) { c.fillStyle = '#f6f8fa'; c.fillRect(0, l.y, w, l.h); }
  c.fillStyle = '#1f2328';
  c.fillText(l.label, 4, l.y + 9);
  c.save();
  c.beginPath(); c.rect(LABEL, l.y, w - LABEL, l.h); c.clip();
  l.items.forEach(function (it) {
    if (it.e < st.view[0] || it.s > st.view[1]) return;
    var x0 = xOf(st, it.s), x1 = Math.max(x0 + 1, xOf(st, it.e)), yy = l.y + 2 + it.row * ROW;
    c.fillStyle = colorOf(st.data, it);
    c.fillRect(x0, yy, x1 - x0, ROW - 2);
    if (x1 - x0 > 36 && it.name) {
      var n = Math.floor((Math.min(x1, w) - Math.max(x0, LABEL) - 4) / 6);
      c.fillStyle = '#fff';
      if (n > 2) c.fillText(it.name.length > n ? it.name.slice(0, n - 1) + '\u2026' : it.name, Math.max(x0, LABEL) + 2, yy + ROW / 2 - 1);
    }
  });
  c.restore();
}
// The launch-to-kernel link of the hovered kernel: from its launch call on the launching thread's lane.
function drawLink(st, c) {
  if (!st.hover || st.hover.it.kind !== 'op') return;
  var op = st.hover.it, from = st.lanes.lanes.filter(function (l) { return l.tid === op.ltid; })[0];
  var y0 = from ? from.y + ROW / 2 : AXIS, y1 = st.hover.lane.y + ROW / 2;
  c.strokeStyle = '#cf222e'; c.lineWidth = 1.5;
  c.beginPath(); c.moveTo(xOf(st, op.ls), y0); c.lineTo(xOf(st, op.s), y1); c.stroke();
  c.fillStyle = '#cf222e'; c.fillRect(xOf(st, op.ls) - 2, y0 - 2, 4, 4);
  c.lineWidth = 1;
}
function draw(st) {
  var dpr = window.devicePixelRatio || 1, w = width(st), h = st.lanes.height, canvas = st.canvas;
  canvas.style.height = h + 'px';
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr); }
  var c = canvas.getContext('2d');
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  c.clearRect(0, 0, w, h);
  c.font = '11px system-ui, sans-serif';
  c.textBaseline = 'middle';
  drawAxis(st, c);
  st.lanes.lanes.forEach(function (l, li) { drawLane(st, c, l, li, w); });
  c.strokeStyle = '#1f2328'; c.setLineDash([4, 3]);
  st.step.window.forEach(function (v) { if (v >= st.view[0] && v <= st.view[1]) { c.beginPath(); c.moveTo(xOf(st, v) + 0.5, AXIS); c.lineTo(xOf(st, v) + 0.5, h); c.stroke(); } });
  c.setLineDash([]);
  drawLink(st, c);
}
// The visible span, kept within the step and at least 200 ns; written on the root for tests and users.
function setView(st, a, b) {
  var total = Math.max(1, st.step.span), span = Math.min(total, Math.max(200, b - a));
  a = Math.min(Math.max(0, a), total - span);
  st.view = [a, a + span];
  st.root.setAttribute('data-view-start', String(Math.round(st.view[0])));
  st.root.setAttribute('data-view-end', String(Math.round(st.view[1])));
  st.spanEl.textContent = 'Visible: ' + fmt(span) + ' of ' + fmt(total) + ' (from +' + fmt(a) + ').';
  draw(st);
}
function zoomAt(st, px, f) { var c = tOf(st, px); setView(st, c - (c - st.view[0]) * f, c + (st.view[1] - c) * f); }
function pan(st, share) { var d = (st.view[1] - st.view[0]) * share; setView(st, st.view[0] + d, st.view[1] + d); }
function legend(st) {
  var d = st.data, el = st.legendEl, used = new Set();
  el.textContent = '';
  for (var j = 4; j < st.step.ops.length; j += 8) used.add(st.step.ops[j]);
  var keys = Array.from(used).sort(function (a, b) { return a - b; }).map(function (i) { return [d.categories[i], d.categoryColors[i]]; });
  Object.keys(d.causeColors).forEach(function (k) { keys.push(['idle: ' + k, d.causeColors[k]]); });
  Object.keys(HOST_COLORS).forEach(function (k) { keys.push([k, HOST_COLORS[k]]); });
//@layers:legend
  keys.forEach(function (k) {
    var span = document.createElement('span'), sw = document.createElement('i');
    span.className = 'key';
    sw.style.background = k[1];
    span.appendChild(sw);
    span.appendChild(document.createTextNode(k[0]));
    el.appendChild(span);
  });
}
function select(st, i) {
  st.step = st.data.steps[i];
  st.lanes = buildLanes(st.data, st.step);
  st.hover = null;
  st.buttons.forEach(function (b) { b.setAttribute('aria-pressed', String(Number(b.getAttribute('data-step')) === i)); });
  st.root.setAttribute('data-step', String(i));
  st.root.setAttribute('data-iter', String(st.step.iter));
  legend(st);
//@layers:select
  setView(st, 0, st.step.span);
}
// The item under the pointer: lane by y, row by y within the lane, item by x (2 px of slack).
function hit(st, mx, my) {
  var lane = st.lanes.lanes.filter(function (l) { return my >= l.y && my < l.y + l.h; })[0];
  if (!lane || mx < LABEL) return null;
  var row = Math.floor((my - lane.y - 2) / ROW), t = tOf(st, mx), slack = ((st.view[1] - st.view[0]) / (width(st) - LABEL)) * 2, found = null;
  lane.items.forEach(function (it) { if (it.row === row && it.s - slack <= t && t <= it.e + slack) found = it; });
  return found ? { it: found, lane: lane } : null;
}
function onMouse(st) {
  var canvas = st.canvas;
  canvas.addEventListener('mousemove', function (e) {
    var r = canvas.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
    if (st.drag) { var d = ((st.drag.x - mx) / (width(st) - LABEL)) * (st.drag.view[1] - st.drag.view[0]); setView(st, st.drag.view[0] + d, st.drag.view[1] + d); return; }
    st.hover = hit(st, mx, my);
    if (st.hover) { st.tip.textContent = tipText(st.data, st.hover.it); st.tip.hidden = false; st.tip.style.left = Math.min(mx + 14, width(st) - 320) + 'px'; st.tip.style.top = (my + 14) + 'px'; }
    else st.tip.hidden = true;
    draw(st);
  });
  canvas.addEventListener('mouseleave', function () { st.tip.hidden = true; st.hover = null; st.drag = null; draw(st); });
  canvas.addEventListener('mousedown', function (e) { st.drag = { x: e.clientX - canvas.getBoundingClientRect().left, view: st.view.slice() }; st.root.focus({ preventScroll: true }); });
  window.addEventListener('mouseup', function () { st.drag = null; });
  canvas.addEventListener('wheel', function (e) {
    var r = canvas.getBoundingClientRect();
    if (e.ctrlKey || e.metaKey || e.altKey) { e.preventDefault(); zoomAt(st, e.clientX - r.left, Math.exp(e.deltaY * 0.002)); }
    else if (e.shiftKey) { e.preventDefault(); pan(st, (e.deltaY || e.deltaX) / (width(st) - LABEL)); }
  }, { passive: false });
}
// W/S zoom around the middle, A/D pan by a fifth, 0 the whole step: as trace viewers do.
function onKeys(st) {
  st.root.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var k = e.key.toLowerCase(), mid = LABEL + (width(st) - LABEL) / 2;
    if (k === 'w') zoomAt(st, mid, 0.8);
    else if (k === 's') zoomAt(st, mid, 1.25);
    else if (k === 'a') pan(st, -0.2);
    else if (k === 'd') pan(st, 0.2);
    else if (k === '0') setView(st, 0, st.step.span);
    else return;
    e.preventDefault();
  });
}
function timeline(root, data) {
  var st = {
    root: root, data: data, canvas: root.querySelector('canvas'), tip: root.querySelector('[data-role=tip]'),
    spanEl: root.querySelector('[data-role=span]'), legendEl: root.querySelector('[data-role=legend]'),
    buttons: Array.from(root.querySelectorAll('button[data-step]')), step: null, lanes: null, view: [0, 1], hover: null, drag: null
  };
  onMouse(st);
  onKeys(st);
  st.buttons.forEach(function (b) { b.addEventListener('click', function () { select(st, Number(b.getAttribute('data-step'))); }); });
  window.addEventListener('resize', function () { if (st.step) draw(st); });
  select(st, 0);
  return {
    openIter: function (iter) {
      for (var i = 0; i < data.steps.length; i++) if (data.steps[i].iter === iter) { select(st, i); return true; }
      return false;
    }
  };
}
overview();
var root = document.querySelector('[data-timeline]');
var dataEl = document.getElementById('timeline-data');
var api = root && dataEl ? timeline(root, JSON.parse(dataEl.textContent)) : null;
document.addEventListener('click', function (e) {
  var a = closest(e.target, '[data-open-step]');
  if (!a || !api || !api.openIter(Number(a.getAttribute('data-open-step')))) return;
  e.preventDefault();
  root.scrollIntoView({ block: 'start' });
  root.focus({ preventScroll: true });
});
})();`;

/** The layer lanes' code, by the hook line of `SCRIPT` it stands for (each hook a whole line). */
const LAYER_HOOKS: Record<string, string> = {
  defs: LAYER_LANES,
  devices: `  if (s.layers) s.layers.spans.forEach(function (x) { devices.add(x[0]); });\n`,
  lane: `    if (s.layers && s.layers.spans.some(function (x) { return x[0] === d; })) out.push(layerLane(s, d));\n`,
  color: `  if (it.kind === 'layer') return it.layer < 0 ? OUTSIDE_COLOR : LAYER_COLORS[it.layer % 2];\n`,
  tip: `  if (it.kind === 'layer') return layerTip(it);\n`,
  legend: `  if (st.step.layers) keys.push(['layer (even)', LAYER_COLORS[0]], ['layer (odd)', LAYER_COLORS[1]], ['outside layers', OUTSIDE_COLOR]);\n`,
  select: `  layerNote(st);\n`,
};
const HOOK_LINE = /^\/\/@layers:(\w+)\n/gm;

/**
 * The page script: with `layers`, the layer lanes' code in place of each hook line; without, no
 * trace of them (`PAGE_SCRIPT`), so a page without layer lanes is what it was before they existed.
 */
export function pageScript(opts: { layers?: boolean } = {}): string {
  return SCRIPT.replace(HOOK_LINE, (_, name: string) => (opts.layers ? LAYER_HOOKS[name] : ''));
}

export const PAGE_SCRIPT = pageScript();

/** The CSP source that allows exactly this script (and no other). */
export function scriptHashSource(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
}

import { createHash } from 'node:crypto';

/**
 * The report page's one script, inline (the page fetches nothing): the overview chart's hover
 * text, the links that open a step's timeline, and the timeline itself, drawn on a canvas (a few
 * thousand kernels per step: SVG nodes would slow the page). Plain ES2017 for any current browser.
 * Text from the export reaches the page only through `textContent` and the canvas, never as markup.
 */
export const PAGE_SCRIPT = String.raw`(function () {
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
  Array.from(devices).sort(function (a, b) { return a - b; }).forEach(function (d) {
    var gaps = s.gaps.filter(function (g) { return g[0] === d; }).map(function (g) { return { s: g[1], e: g[2], name: 'idle: ' + g[3], cause: g[3], kind: 'gap', row: 0 }; });
    out.push({ label: 'GPU ' + d + ' idle (cause)', rows: 1, items: gaps });
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
  return HOST_COLORS[it.kind] || '#999';
}
function tipText(data, it) {
  var d = fmt(it.e - it.s);
  if (it.kind === 'op') return it.name + '\n' + data.categories[it.cat] + ' \u00b7 ' + d + ' \u00b7 GPU ' + it.dev + ' stream ' + it.stream + '\nlaunched by thread ' + it.ltid + ' at +' + fmt(it.ls) + ', started ' + fmt(it.s - it.ls) + ' after its launch';
  if (it.kind === 'gap') return it.name + ' \u00b7 ' + d;
  return it.name + ' (' + it.kind + ', thread ' + it.tid + ') \u00b7 ' + d;
}
function timeline(root, data) {
  var canvas = root.querySelector('canvas');
  var tip = root.querySelector('[data-role=tip]');
  var spanEl = root.querySelector('[data-role=span]');
  var legendEl = root.querySelector('[data-role=legend]');
  var buttons = Array.from(root.querySelectorAll('button[data-step]'));
  var step = null, lanes = null, view = [0, 1], hover = null, drag = null;
  function width() { return canvas.clientWidth || 800; }
  function x(t) { return LABEL + ((t - view[0]) / (view[1] - view[0])) * (width() - LABEL); }
  function t(px) { return view[0] + ((px - LABEL) / (width() - LABEL)) * (view[1] - view[0]); }
  function drawAxis(c, w) {
    var span = view[1] - view[0], raw = span / 8, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var st = [1, 2, 5, 10].map(function (f) { return f * mag; }).filter(function (v) { return v >= raw; })[0];
    c.fillStyle = '#59636e';
    c.strokeStyle = '#e6e6e6';
    for (var v = Math.ceil(view[0] / st) * st; v <= view[1]; v += st) {
      var px = x(v);
      c.fillRect(px, AXIS - 6, 1, 6);
      c.fillText('+' + fmt(v), px + 2, 8);
      c.beginPath(); c.moveTo(px + 0.5, AXIS); c.lineTo(px + 0.5, lanes.height); c.stroke();
    }
    c.fillText('step ' + step.iter, 4, 8);
  }
  function drawLane(c, l, li, w) {
    if (li % 2) { c.fillStyle = '#f6f8fa'; c.fillRect(0, l.y, w, l.h); }
    c.fillStyle = '#1f2328';
    c.fillText(l.label, 4, l.y + 9);
    c.save();
    c.beginPath(); c.rect(LABEL, l.y, w - LABEL, l.h); c.clip();
    l.items.forEach(function (it) {
      if (it.e < view[0] || it.s > view[1]) return;
      var x0 = x(it.s), x1 = Math.max(x0 + 1, x(it.e)), yy = l.y + 2 + it.row * ROW;
      c.fillStyle = colorOf(data, it);
      c.fillRect(x0, yy, x1 - x0, ROW - 2);
      if (x1 - x0 > 36 && it.name) {
        var n = Math.floor((Math.min(x1, w) - Math.max(x0, LABEL) - 4) / 6);
        c.fillStyle = '#fff';
        if (n > 2) c.fillText(it.name.length > n ? it.name.slice(0, n - 1) + '\u2026' : it.name, Math.max(x0, LABEL) + 2, yy + ROW / 2 - 1);
      }
    });
    c.restore();
  }
  function drawLink(c) {
    if (!hover || hover.it.kind !== 'op') return;
    var op = hover.it, from = lanes.lanes.filter(function (l) { return l.tid === op.ltid; })[0];
    var y0 = from ? from.y + ROW / 2 : AXIS, y1 = hover.lane.y + ROW / 2;
    c.strokeStyle = '#cf222e'; c.lineWidth = 1.5;
    c.beginPath(); c.moveTo(x(op.ls), y0); c.lineTo(x(op.s), y1); c.stroke();
    c.fillStyle = '#cf222e'; c.fillRect(x(op.ls) - 2, y0 - 2, 4, 4);
    c.lineWidth = 1;
  }
  function draw() {
    var dpr = window.devicePixelRatio || 1, w = width(), h = lanes.height;
    canvas.style.height = h + 'px';
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr); }
    var c = canvas.getContext('2d');
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, w, h);
    c.font = '11px system-ui, sans-serif';
    c.textBaseline = 'middle';
    drawAxis(c, w);
    lanes.lanes.forEach(function (l, li) { drawLane(c, l, li, w); });
    c.strokeStyle = '#1f2328'; c.setLineDash([4, 3]);
    step.window.forEach(function (v) { if (v >= view[0] && v <= view[1]) { c.beginPath(); c.moveTo(x(v) + 0.5, AXIS); c.lineTo(x(v) + 0.5, h); c.stroke(); } });
    c.setLineDash([]);
    drawLink(c);
  }
  function setView(a, b) {
    var total = Math.max(1, step.span), span = Math.min(total, Math.max(200, b - a));
    a = Math.min(Math.max(0, a), total - span);
    view = [a, a + span];
    root.setAttribute('data-view-start', String(Math.round(view[0])));
    root.setAttribute('data-view-end', String(Math.round(view[1])));
    spanEl.textContent = 'Visible: ' + fmt(span) + ' of ' + fmt(total) + ' (from +' + fmt(a) + ').';
    draw();
  }
  function zoomAt(px, f) { var c = t(px); setView(c - (c - view[0]) * f, c + (view[1] - c) * f); }
  function pan(share) { var d = (view[1] - view[0]) * share; setView(view[0] + d, view[1] + d); }
  function legend() {
    legendEl.textContent = '';
    var used = new Set();
    for (var j = 4; j < step.ops.length; j += 8) used.add(step.ops[j]);
    var keys = Array.from(used).sort(function (a, b) { return a - b; }).map(function (i) { return [data.categories[i], data.categoryColors[i]]; });
    Object.keys(data.causeColors).forEach(function (k) { keys.push(['idle: ' + k, data.causeColors[k]]); });
    Object.keys(HOST_COLORS).forEach(function (k) { keys.push([k, HOST_COLORS[k]]); });
    keys.forEach(function (k) {
      var span = document.createElement('span'), sw = document.createElement('i');
      span.className = 'key';
      sw.style.background = k[1];
      span.appendChild(sw);
      span.appendChild(document.createTextNode(k[0]));
      legendEl.appendChild(span);
    });
  }
  function select(i) {
    step = data.steps[i];
    lanes = buildLanes(data, step);
    hover = null;
    buttons.forEach(function (b) { b.setAttribute('aria-pressed', String(Number(b.getAttribute('data-step')) === i)); });
    root.setAttribute('data-step', String(i));
    root.setAttribute('data-iter', String(step.iter));
    legend();
    setView(0, step.span);
  }
  function hit(mx, my) {
    var lane = lanes.lanes.filter(function (l) { return my >= l.y && my < l.y + l.h; })[0];
    if (!lane || mx < LABEL) return null;
    var row = Math.floor((my - lane.y - 2) / ROW), tt = t(mx), slack = (view[1] - view[0]) / (width() - LABEL) * 2, found = null;
    lane.items.forEach(function (it) { if (it.row === row && it.s - slack <= tt && tt <= it.e + slack) found = it; });
    return found ? { it: found, lane: lane } : null;
  }
  canvas.addEventListener('mousemove', function (e) {
    var r = canvas.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
    if (drag) { var d = ((drag.x - mx) / (width() - LABEL)) * (drag.view[1] - drag.view[0]); setView(drag.view[0] + d, drag.view[1] + d); return; }
    hover = hit(mx, my);
    if (hover) { tip.textContent = tipText(data, hover.it); tip.hidden = false; tip.style.left = Math.min(mx + 14, width() - 320) + 'px'; tip.style.top = (my + 14) + 'px'; }
    else tip.hidden = true;
    draw();
  });
  canvas.addEventListener('mouseleave', function () { tip.hidden = true; hover = null; drag = null; draw(); });
  canvas.addEventListener('mousedown', function (e) { drag = { x: e.clientX - canvas.getBoundingClientRect().left, view: view.slice() }; root.focus({ preventScroll: true }); });
  window.addEventListener('mouseup', function () { drag = null; });
  canvas.addEventListener('wheel', function (e) {
    var r = canvas.getBoundingClientRect();
    if (e.ctrlKey || e.metaKey || e.altKey) { e.preventDefault(); zoomAt(e.clientX - r.left, Math.exp(e.deltaY * 0.002)); }
    else if (e.shiftKey) { e.preventDefault(); pan(((e.deltaY || e.deltaX) / (width() - LABEL))); }
  }, { passive: false });
  root.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var k = e.key.toLowerCase(), mid = LABEL + (width() - LABEL) / 2;
    if (k === 'w') zoomAt(mid, 0.8);
    else if (k === 's') zoomAt(mid, 1.25);
    else if (k === 'a') pan(-0.2);
    else if (k === 'd') pan(0.2);
    else if (k === '0') setView(0, step.span);
    else return;
    e.preventDefault();
  });
  buttons.forEach(function (b) { b.addEventListener('click', function () { select(Number(b.getAttribute('data-step'))); }); });
  window.addEventListener('resize', function () { if (step) draw(); });
  select(0);
  return {
    openIter: function (iter) {
      for (var i = 0; i < data.steps.length; i++) if (data.steps[i].iter === iter) { select(i); return true; }
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

/** The CSP source that allows exactly this script (and no other). */
export function scriptHashSource(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
}

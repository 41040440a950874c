// Shared helpers of the shardsim reports: SVG elements, number formats that match the C++ ones
// (sim/base/units.h), axis ticks, the tooltip, legends, and the runner that draws each chart
// from the page's JSON data block and marks the page as rendered.
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';

  function el(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    if (attrs) {
      for (var k in attrs) {
        if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
      }
    }
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, attrs) {
    var t = el('text', attrs, parent);
    t.setAttribute('x', x);
    t.setAttribute('y', y);
    t.textContent = s;
    return t;
  }
  function svg(parent, width, height, cls) {
    return el('svg', {width: width, height: height, viewBox: '0 0 ' + width + ' ' + height,
                      'class': cls || ''}, parent);
  }
  function width(node, fallback) {
    var w = node.clientWidth;
    return w > 0 ? w : fallback;
  }

  // As FormatSig: `digits` significant digits, no exponent.
  function sig(v, digits) {
    digits = digits || 3;
    if (v === 0 || !isFinite(v)) return String(v);
    var magnitude = Math.floor(Math.log10(Math.abs(v)));
    return v.toFixed(Math.min(20, Math.max(0, digits - 1 - magnitude)));
  }
  function scaled(v, steps, unit) {
    for (var i = 0; i < steps.length; i++) {
      if (Math.abs(v) >= steps[i][0] || i === steps.length - 1) {
        return sig(v / steps[i][0]) + ' ' + steps[i][1] + unit;
      }
    }
    return sig(v) + ' ' + unit;
  }
  var KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;
  function bytes(b) {
    return scaled(b, [[TiB * 1024, 'PiB'], [TiB, 'TiB'], [GiB, 'GiB'], [MiB, 'MiB'], [KiB, 'KiB'],
                      [1, 'B']], '');
  }
  function seconds(s) {
    var a = Math.abs(s);
    if (a >= 3600 * 48) return sig(s / 86400) + ' days';
    if (a >= 7200) return sig(s / 3600) + ' h';
    if (a >= 1 || a === 0) return sig(s) + ' s';
    if (a >= 1e-3) return sig(s * 1e3) + ' ms';
    if (a >= 1e-6) return sig(s * 1e6) + ' us';
    return sig(s * 1e9) + ' ns';
  }
  function rate(v, unit) {
    return scaled(v, [[1e18, 'E'], [1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1, '']], unit);
  }
  function percent(f) { return sig(f * 100, 3) + '%'; }
  function grouped(v) {
    if (Math.abs(v) < 1000 && v !== Math.floor(v)) return sig(v, 4);
    return Math.round(v).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }

  // About `n` round values covering [lo, hi].
  function ticks(lo, hi, n) {
    if (!(hi > lo)) return [lo];
    var raw = (hi - lo) / Math.max(1, n);
    var p = Math.pow(10, Math.floor(Math.log10(raw)));
    var f = raw / p;
    var step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
      out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
    return out;
  }
  // Labels for time ticks `step_ns` apart, in the unit that suits the step.
  function timeLabel(t_ns, step_ns) {
    var units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us'], [1, 'ns']];
    for (var i = 0; i < units.length; i++) {
      if (step_ns >= units[i][0] || i === units.length - 1) {
        var decimals = Math.max(0, -Math.floor(Math.log10(step_ns / units[i][0]) + 1e-9));
        return (t_ns / units[i][0]).toFixed(Math.min(decimals, 6)) + ' ' + units[i][1];
      }
    }
    return String(t_ns);
  }

  var tip = null;
  function tooltip(evt, lines) {
    if (!tip) {
      tip = document.createElement('div');
      tip.className = 'tooltip';
      tip.id = 'tooltip';
      document.body.appendChild(tip);
    }
    tip.textContent = lines.join('\n');
    tip.hidden = false;
    var x = evt.clientX + 14, y = evt.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, evt.clientX - tip.offsetWidth - 10);
    if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, evt.clientY - tip.offsetHeight - 10);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTooltip() { if (tip) tip.hidden = true; }

  // items: [{cls, label}] under the chart `id` (legend-<id>).
  function legend(id, items) {
    var box = document.getElementById('legend-' + id);
    if (!box) return;
    box.textContent = '';
    items.forEach(function (it) {
      var s = document.createElement('span');
      s.setAttribute('data-legend', it.cls);
      var sw = document.createElement('span');
      sw.className = 'sw ' + it.cls;
      s.appendChild(sw);
      s.appendChild(document.createTextNode(it.label));
      box.appendChild(s);
    });
  }
  // A y axis of byte values in GiB with grid lines; returns the y scale.
  function gibAxis(s, left, right, top, plotH, maxBytes, n) {
    var y = function (v) { return top + plotH - v / maxBytes * plotH; };
    var g = el('g', {'class': 'grid'}, s);
    ticks(0, maxBytes / GiB, n || 5).forEach(function (t) {
      var yy = y(t * GiB);
      el('line', {x1: left, x2: right, y1: yy, y2: yy}, g);
      text(s, left - 6, yy + 4, sig(t, 3) + ' GiB', {'text-anchor': 'end'});
    });
    return y;
  }
  function message(root, s) {
    var p = document.createElement('p');
    p.className = 'hint';
    p.setAttribute('data-empty', 'true');
    p.textContent = s;
    root.appendChild(p);
  }

  var api = {
    NS: NS, GiB: GiB, el: el, text: text, svg: svg, width: width, sig: sig, bytes: bytes,
    seconds: seconds, rate: rate, percent: percent, grouped: grouped, ticks: ticks,
    timeLabel: timeLabel, tooltip: tooltip, hideTooltip: hideTooltip, legend: legend,
    gibAxis: gibAxis, message: message, selftest: null
  };

  // Draws each chart [name, function(data)] from the JSON data block. A chart that throws is
  // reported (errors.js) and the others still draw. The body then carries data-render="done",
  // data-render-ms (the JSON parse, drawing, and the browser's style and layout of the result)
  // and data-ready-ms (the same moment, counted from navigation start: includes loading).
  // With #selftest in the URL the page also runs api.selftest, which drives the charts with
  // synthetic events and writes "pass" or the failures to the body's data-selftest.
  api.run = function (charts) {
    var t0 = performance.now();
    var data = JSON.parse(document.getElementById('shardsim-data').textContent);
    charts.forEach(function (c) {
      try {
        c[1](data);
      } catch (e) {
        window.shardsimRecordError(c[0] + ': ' + (e && e.stack ? e.stack : e));
      }
    });
    document.body.getBoundingClientRect();  // force style and layout: count them as drawing
    var t1 = performance.now();
    document.body.setAttribute('data-render-ms', (t1 - t0).toFixed(1));
    document.body.setAttribute('data-ready-ms', t1.toFixed(1));
    document.body.setAttribute('data-render', 'done');
    if (location.hash.indexOf('selftest') >= 0 && api.selftest) {
      var failures;
      try {
        failures = api.selftest(data);
      } catch (e) {
        failures = ['selftest threw: ' + (e && e.message ? e.message : e)];
      }
      document.body.setAttribute('data-selftest', failures.length ? 'fail: ' + failures.join('; ') : 'pass');
    }
  };
  window.SS = api;
})();

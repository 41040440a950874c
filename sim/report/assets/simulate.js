// The charts of `shardsim simulate --html`: where the step goes, the zoomable timeline of the
// step, memory per stage and over the step, and exposed time by cause and by link class. Data:
// sim/report/html_simulate_data.h documents every field.
(function () {
  'use strict';
  var SS = window.SS;
  var KIND_LABEL = {
    forward: 'forward', backward: 'backward', recompute: 'recompute',
    tp: 'TP communication (exposed)', cp: 'CP communication (exposed)',
    ep: 'EP all-to-all (exposed)', pp_send: 'pipeline send', grad_reduce: 'gradient reduction',
    param_gather: 'parameter gather', zero3_gather: 'ZeRO-3 gather',
    embedding_sync: 'embedding sync', optimizer: 'optimizer step', idle: 'idle (bubble)'
  };
  var PART_LABEL = {
    weights: 'weights', gradients: 'gradients', optimizer: 'optimizer state',
    activations: 'activations', buffers: 'buffers', reserve: 'reserve (context, fragmentation)'
  };
  var timelineState = null;

  function breakdown(d) {
    var root = document.getElementById('chart-breakdown');
    var parts = d.breakdown;
    if (!parts.length) return SS.message(root, 'The step is empty.');
    var total = parts.reduce(function (a, p) { return a + p.seconds; }, 0);
    var W = SS.width(root, 1000), s = SS.svg(root, W, 30, 'breakdown');
    var x = 0;
    parts.forEach(function (p) {
      var w = p.seconds / total * W;
      SS.el('rect', {x: x, y: 2, width: Math.max(w, 0.5), height: 26, 'class': 'k-' + p.part,
                     'data-part': p.part, 'data-seconds': p.seconds}, s);
      if (w > 90) {
        var ink = p.part === 'idle' ? '#1f2430' : '#fff';
        SS.text(s, x + 6, 19, p.label + ' ' + SS.percent(p.seconds / d.step_s), {style: 'fill:' + ink});
      }
      x += w;
    });
    s.addEventListener('mousemove', function (e) {
      var part = e.target.getAttribute && e.target.getAttribute('data-part');
      if (!part) return SS.hideTooltip();
      var sec = Number(e.target.getAttribute('data-seconds'));
      var p = parts.filter(function (q) { return q.part === part; })[0];
      SS.tooltip(e, [p.label, SS.seconds(sec) + ' (' + SS.percent(sec / d.step_s) + ' of the step)']);
    });
    s.addEventListener('mouseleave', SS.hideTooltip);
    SS.legend('breakdown', parts.map(function (p) {
      return {cls: 'k-' + p.part, label: p.label + ' ' + SS.seconds(p.seconds) + ' (' +
              SS.percent(p.seconds / d.step_s) + ')'};
    }));
  }

  function timeline(d) {
    var tl = d.timeline, root = document.getElementById('chart-timeline');
    if (!tl) return SS.message(root, 'No timeline: the result carries no task graph.');
    var T = tl.tasks, n = T.start.length, rows = tl.rows, kinds = tl.kinds;
    var W = SS.width(root, 1100), gutter = 200, plotW = Math.max(100, W - gutter - 12);
    var rowH = 18, gap = 3, top = 4, axisH = 22, H = top + rows.length * (rowH + gap) + axisH;
    var s = SS.svg(root, W, H, 'timeline');
    s.setAttribute('data-rows', rows.length);
    s.setAttribute('data-tasks', n);
    var clip = SS.el('clipPath', {id: 'timeline-clip'}, SS.el('defs', null, s));
    SS.el('rect', {x: gutter, y: 0, width: plotW, height: H}, clip);
    rows.forEach(function (r, i) {
      var y = top + i * (rowH + gap);
      SS.el('rect', {x: gutter, y: y, width: plotW, height: rowH, 'class': 'row-band'}, s);
      SS.text(s, gutter - 8, y + rowH * 0.72, r.label, {'text-anchor': 'end', 'data-row': i});
    });
    var bars = SS.el('g', {'clip-path': 'url(#timeline-clip)', 'class': 'bars'}, s);
    var axis = SS.el('g', {'class': 'axis'}, s);
    var full = Math.max(1, tl.step_ns), view = {lo: 0, hi: full};
    var viewLabel = document.getElementById('timeline-view');
    function X(t) { return gutter + (t - view.lo) / (view.hi - view.lo) * plotW; }
    function segments(i) {
      var k = kinds[T.kind[i]];
      if (k !== 'forward' && k !== 'backward') return [[k, T.end[i] - T.start[i]]];
      var parts = [];
      if (T.recompute[i] > 0) parts.push(['recompute', T.recompute[i]]);
      parts.push([k, T.compute[i]]);
      if (T.tp[i] > 0) parts.push(['tp', T.tp[i]]);
      if (T.cp[i] > 0) parts.push(['cp', T.cp[i]]);
      if (T.ep[i] > 0) parts.push(['ep', T.ep[i]]);
      return parts;
    }
    // Tasks by row, then start: the order in which neighbours can be merged.
    var order = [];
    for (var o = 0; o < n; o++) order.push(o);
    order.sort(function (a, b) { return T.row[a] - T.row[b] || T.start[a] - T.start[b]; });
    function draw() {
      var frag = document.createDocumentFragment(), last = null;
      // Level of detail: a bar that would touch the previous bar of its row with the same kind
      // extends it (data-n counts what it stands for), a task under 2 px is drawn as its main
      // kind alone, and idle gaps under a pixel are not drawn, so a zoomed-out view of 100,000
      // tasks stays a few thousand rects.
      function emit(kind, x0, x1, row, i) {
        if (kind === 'idle' && x1 - x0 < 1) return;  // the row's band shows through
        if (last && last.row === row && last.kind === kind && x0 - last.x1 < 1) {
          last.x1 = Math.max(last.x1, x1);
          last.n++;
          return;
        }
        flushBar();
        last = {kind: kind, x0: x0, x1: x1, row: row, i: i, n: 1};
      }
      function flushBar() {
        if (!last) return;
        var r = document.createElementNS(SS.NS, 'rect');
        r.setAttribute('x', last.x0.toFixed(2));
        r.setAttribute('y', top + last.row * (rowH + gap));
        r.setAttribute('width', Math.max(last.x1 - last.x0, 0.6).toFixed(2));
        r.setAttribute('height', rowH);
        r.setAttribute('class', 'k-' + last.kind);
        r.setAttribute('data-kind', last.kind);
        r.setAttribute('data-i', last.i);
        if (last.n > 1) r.setAttribute('data-n', last.n);
        frag.appendChild(r);
        last = null;
      }
      for (var o = 0; o < n; o++) {
        var i = order[o], s0 = T.start[i], e0 = T.end[i];
        if (e0 < view.lo || s0 > view.hi) continue;
        var xs = X(s0), xe = X(e0), segs, total = 0, j;
        segs = xe - xs < 2 ? [[kinds[T.kind[i]], e0 - s0]] : segments(i);
        for (j = 0; j < segs.length; j++) total += segs[j][1];
        var scale = total > 0 ? (e0 - s0) / total : 0, t = s0;
        // A pixel of gap ends each task wide enough to spare it, so neighbours stay apart.
        var xEnd = xe - (xe - xs > 4 ? 1 : 0);
        for (j = 0; j < segs.length; j++) {
          var dur = total > 0 ? segs[j][1] * scale : e0 - s0;
          if (dur <= 0 && total > 0) continue;
          emit(segs[j][0], X(t), Math.min(X(t + dur), xEnd), T.row[i], i);
          t += dur;
          if (total === 0) break;
        }
      }
      flushBar();
      bars.textContent = '';
      bars.appendChild(frag);
      axis.textContent = '';
      var yAxis = top + rows.length * (rowH + gap) + 2;
      SS.el('path', {d: 'M' + gutter + ',' + yAxis + 'H' + (gutter + plotW)}, axis);
      var tk = SS.ticks(view.lo, view.hi, Math.max(2, Math.floor(plotW / 110)));
      var step = tk.length > 1 ? tk[1] - tk[0] : view.hi - view.lo;
      tk.forEach(function (t) {
        var x = X(t);
        SS.el('line', {x1: x, x2: x, y1: yAxis, y2: yAxis + 4}, axis);
        SS.text(axis, x, yAxis + 16, SS.timeLabel(t, step), {'text-anchor': 'middle'});
      });
      root.setAttribute('data-view-lo', view.lo);
      root.setAttribute('data-view-hi', view.hi);
      if (viewLabel) {
        viewLabel.textContent = 'showing ' + SS.seconds(view.lo * 1e-9) + ' to ' +
                                SS.seconds(view.hi * 1e-9) + ' of ' + SS.seconds(full * 1e-9);
      }
    }
    var pending = false;
    function schedule() {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(flush);
    }
    function flush() {
      if (!pending) return;
      pending = false;
      draw();
    }
    function setView(lo, hi) {
      var span = Math.min(full, Math.max(hi - lo, Math.min(full, 100)));
      lo = Math.max(0, Math.min(lo, full - span));
      view.lo = lo;
      view.hi = lo + span;
      schedule();
    }
    function zoomAt(center, factor) {
      var f = (center - view.lo) / (view.hi - view.lo), span = (view.hi - view.lo) * factor;
      setView(center - f * span, center - f * span + span);
    }
    function localX(e) { return e.clientX - s.getBoundingClientRect().left; }
    function timeAt(x) {
      return view.lo + Math.min(1, Math.max(0, (x - gutter) / plotW)) * (view.hi - view.lo);
    }
    s.addEventListener('wheel', function (e) {
      e.preventDefault();
      zoomAt(timeAt(localX(e)), Math.pow(1.0015, e.deltaY));
    }, {passive: false});
    var drag = null;
    s.addEventListener('mousedown', function (e) {
      drag = {x: e.clientX, lo: view.lo, hi: view.hi};
      e.preventDefault();
    });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var shift = -(e.clientX - drag.x) / plotW * (drag.hi - drag.lo);
      setView(drag.lo + shift, drag.hi + shift);
    });
    window.addEventListener('mouseup', function () { drag = null; });
    s.addEventListener('dblclick', function () { setView(0, full); });
    var toolbar = document.querySelector('#timeline .toolbar');
    if (toolbar) {
      toolbar.addEventListener('click', function (e) {
        var z = e.target.getAttribute && e.target.getAttribute('data-zoom');
        var mid = (view.lo + view.hi) / 2;
        if (z === 'in') zoomAt(mid, 0.5);
        if (z === 'out') zoomAt(mid, 2);
        if (z === 'reset') setView(0, full);
      });
    }
    bars.addEventListener('mousemove', function (e) {
      if (drag) return;
      var i = Number(e.target.getAttribute('data-i'));
      if (!(i >= 0)) return;
      var k = kinds[T.kind[i]], lines = [rows[T.row[i]].label + ': ' + KIND_LABEL[k]];
      var merged = Number(e.target.getAttribute('data-n') || 1);
      if (merged > 1) lines.push(merged + ' bars merged at this zoom; zoom in to see them apart. The first:');
      if (T.mb[i] >= 0) lines.push('micro-batch ' + T.mb[i] + ', chunk ' + T.chunk[i]);
      lines.push('from ' + SS.seconds(T.start[i] * 1e-9) + ' for ' +
                 SS.seconds((T.end[i] - T.start[i]) * 1e-9));
      if (k === 'forward' || k === 'backward') {
        var p = 'kernels ' + SS.seconds(T.compute[i] * 1e-9);
        if (T.recompute[i] > 0) p += ', recompute ' + SS.seconds(T.recompute[i] * 1e-9);
        if (T.tp[i] > 0) p += ', TP exposed ' + SS.seconds(T.tp[i] * 1e-9);
        if (T.cp[i] > 0) p += ', CP exposed ' + SS.seconds(T.cp[i] * 1e-9);
        if (T.ep[i] > 0) p += ', EP exposed ' + SS.seconds(T.ep[i] * 1e-9);
        lines.push(p);
      } else if (T.link[i] >= 0) {
        lines.push(SS.bytes(T.bytes[i]) + ' over ' + tl.links[T.link[i]]);
      }
      SS.tooltip(e, lines);
    });
    bars.addEventListener('mouseleave', SS.hideTooltip);
    // #view=FROM,TO (seconds) opens the timeline zoomed on that window.
    var m = /view=([0-9.eE+-]+),([0-9.eE+-]+)/.exec(location.hash);
    if (m && Number(m[2]) > Number(m[1])) {
      view.lo = Math.max(0, Number(m[1]) * 1e9);
      view.hi = Math.min(full, Number(m[2]) * 1e9);
    }
    draw();
    var present = {};
    for (var i = 0; i < n; i++) {
      var segs = segments(i);
      for (var j = 0; j < segs.length; j++) present[segs[j][0]] = true;
    }
    SS.legend('timeline', Object.keys(KIND_LABEL).filter(function (k) { return present[k]; })
      .map(function (k) { return {cls: 'k-' + k, label: KIND_LABEL[k]}; }));
    timelineState = {svg: s, view: view, full: full, flush: flush};
  }

  // The capacity of a device as a line across a memory chart with y scale `y`.
  function capacityLine(s, left, right, y, cap) {
    var yc = y(cap);
    SS.el('line', {x1: left, x2: right, y1: yc, y2: yc, 'class': 'capacity', 'data-bytes': cap}, s);
    SS.text(s, right, yc - 4, 'capacity ' + SS.bytes(cap),
            {'text-anchor': 'end', 'class': 'capacity-label'});
  }

  function memoryStages(d) {
    var m = d.memory, root = document.getElementById('chart-memory-stages');
    if (!m) return SS.message(root, 'No memory data.');
    var st = m.stages, W = SS.width(root, 520), H = 300, left = 64, right = W - 12, top = 18;
    var plotH = H - top - 30, plotW = right - left;
    var maxY = Math.max(m.capacity, Math.max.apply(null, st.map(function (x) { return x.total; }))) * 1.1;
    var s = SS.svg(root, W, H, 'memory-stages');
    var y = SS.gibAxis(s, left, right, top, plotH, maxY, 5);
    var slot = plotW / st.length, bw = Math.min(64, slot * 0.6);
    st.forEach(function (stage, i) {
      var cx = left + (i + 0.5) * slot, acc = 0;
      var g = SS.el('g', {'data-stage': stage.stage, 'data-total': stage.total,
                          'data-worst': i === m.worst_stage ? 'true' : 'false'}, s);
      stage.values.forEach(function (v, j) {
        var y0 = y(acc), y1 = y(acc + v);
        SS.el('rect', {x: cx - bw / 2, y: y1, width: bw, height: Math.max(0, y0 - y1),
                       'class': 'm-' + m.parts[j], 'data-stage': stage.stage,
                       'data-part': m.parts[j], 'data-bytes': v}, g);
        acc += v;
      });
      SS.text(s, cx, y(stage.total) - 4, SS.bytes(stage.total),
              {'text-anchor': 'middle', 'class': 'value-label'});
      SS.text(s, cx, top + plotH + 16, 'stage ' + stage.stage, {'text-anchor': 'middle'});
    });
    capacityLine(s, left, right, y, m.capacity);
    s.addEventListener('mousemove', function (e) {
      var part = e.target.getAttribute && e.target.getAttribute('data-part');
      if (!part) return SS.hideTooltip();
      var stage = st.filter(function (x) {
        return String(x.stage) === e.target.getAttribute('data-stage');
      })[0];
      var lines = ['stage ' + stage.stage + ' (device ' + stage.device + '): ' + PART_LABEL[part],
                   SS.bytes(Number(e.target.getAttribute('data-bytes')))];
      var detail = stage.detail[part] || {};
      Object.keys(detail).forEach(function (k) {
        if (detail[k] > 0) lines.push(k + ': ' + SS.bytes(detail[k]));
      });
      if (part === 'activations') {
        lines.push('simulated peak; closed form holds ' + SS.sig(stage.in_flight, 3) +
                   ' micro-batches');
      }
      lines.push('total ' + SS.bytes(stage.total) + ' of ' + SS.bytes(m.capacity));
      SS.tooltip(e, lines);
    });
    s.addEventListener('mouseleave', SS.hideTooltip);
    SS.legend('memory-stages', m.parts.map(function (p) {
      return {cls: 'm-' + p, label: PART_LABEL[p]};
    }));
  }

  function memoryTime(d) {
    var root = document.getElementById('chart-memory-time');
    if (!d.memory) return SS.message(root, 'No memory data.');
    var o = d.memory.over_time, cap = d.memory.capacity, n = o.t_ns.length;
    var W = SS.width(root, 520), H = 300, left = 64, right = W - 12, top = 18;
    var plotH = H - top - 30, plotW = right - left, tmax = Math.max(1, o.step_ns);
    var peak = o.base, peakAt = 0;
    for (var i = 0; i < n; i++) if (o.bytes[i] > peak) { peak = o.bytes[i]; peakAt = i; }
    var maxY = Math.max(cap, peak) * 1.1;
    var s = SS.svg(root, W, H, 'memory-time');
    var y = SS.gibAxis(s, left, right, top, plotH, maxY, 5);
    var x = function (t) { return left + t / tmax * plotW; };
    SS.el('rect', {x: left, y: y(o.base), width: plotW, height: y(0) - y(o.base),
                   'class': 'm-base', 'data-bytes': o.base}, s);
    var line = 'M' + x(0) + ',' + y(n ? o.bytes[0] : o.base);
    for (i = 1; i < n; i++) line += 'H' + x(o.t_ns[i]).toFixed(2) + 'V' + y(o.bytes[i]).toFixed(2);
    line += 'H' + x(tmax);
    SS.el('path', {d: line + 'V' + y(o.base) + 'H' + x(0) + 'Z', 'class': 'm-activations',
                   'fill-opacity': 0.55}, s);
    SS.el('path', {d: line, fill: 'none', stroke: '#6b3f63', 'stroke-width': 1.2,
                   'data-series': 'memory', 'data-points': n, 'data-peak': peak}, s);
    capacityLine(s, left, right, y, cap);
    var px = x(n ? o.t_ns[peakAt] : 0), py = y(peak);
    SS.el('circle', {cx: px, cy: py, r: 3.5, fill: '#6b3f63', 'data-peak-bytes': peak}, s);
    SS.text(s, Math.min(px + 6, right - 90), py - 6, 'peak ' + SS.bytes(peak), {'class': 'value-label'});
    var g = SS.el('g', {'class': 'axis'}, s);
    var tk = SS.ticks(0, tmax, Math.max(2, Math.floor(plotW / 90)));
    var step = tk.length > 1 ? tk[1] - tk[0] : tmax;
    tk.forEach(function (t) { SS.text(g, x(t), top + plotH + 16, SS.timeLabel(t, step), {'text-anchor': 'middle'}); });
    s.addEventListener('mousemove', function (e) {
      var t = (e.clientX - s.getBoundingClientRect().left - left) / plotW * tmax;
      if (t < 0 || t > tmax || !n) return SS.hideTooltip();
      var lo = 0, hi = n - 1;
      while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (o.t_ns[mid] <= t) lo = mid; else hi = mid - 1; }
      SS.tooltip(e, ['at ' + SS.seconds(t * 1e-9) + ': ' + SS.bytes(o.bytes[lo]),
                     'activations ' + SS.bytes(o.bytes[lo] - o.base) + ' above ' + SS.bytes(o.base) +
                     ' of model states, buffers and reserve']);
    });
    s.addEventListener('mouseleave', SS.hideTooltip);
    SS.legend('memory-time', [
      {cls: 'm-base', label: 'model states, buffers, reserve'},
      {cls: 'm-activations', label: 'live activations (device ' + o.device + ', stage ' + o.stage + ')'}]);
  }

  // Horizontal bars: items [{label, value, note, cls, attrs}].
  function hbars(root, items, prefix) {
    var W = SS.width(root, 1000), rowH = 24, labelW = Math.min(340, W * 0.38), valueW = 130;
    var plotW = Math.max(60, W - labelW - valueW), H = items.length * rowH + 4;
    var s = SS.svg(root, W, H, prefix);
    var max = Math.max.apply(null, items.map(function (it) { return it.value; }).concat([1e-30]));
    items.forEach(function (it, i) {
      var y = 2 + i * rowH;
      SS.text(s, labelW - 8, y + 15, it.label, {'text-anchor': 'end'});
      var attrs = {x: labelW, y: y + 3, width: Math.max(1, it.value / max * plotW), height: rowH - 8,
                   'class': it.cls};
      for (var k in it.attrs) attrs[k] = it.attrs[k];
      SS.el('rect', attrs, s);
      SS.text(s, labelW + Math.max(1, it.value / max * plotW) + 6, y + 15, it.note, {'class': 'value-label'});
    });
    return s;
  }

  function communication(d) {
    var root = document.getElementById('chart-communication');
    var b = d.exposed.bottlenecks;
    if (!b.length) return SS.message(root, 'Nothing is exposed beyond kernels: the step is compute-bound.');
    hbars(root, b.map(function (x) {
      var on = x.kind === 'communication' || x.kind === 'optimizer' ? ' (' + x.resource + ')' : '';
      return {label: x.label + on, value: x.exposed_s,
              note: SS.seconds(x.exposed_s) + ' (' + SS.percent(x.share) + ')', cls: 'b-' + x.kind,
              attrs: {'data-label': x.label, 'data-kind': x.kind, 'data-resource': x.resource,
                      'data-exposed': x.exposed_s}};
    }), 'communication');
    var seen = {};
    SS.legend('communication', b.filter(function (x) {
      if (seen[x.kind]) return false;
      seen[x.kind] = true;
      return true;
    }).map(function (x) { return {cls: 'b-' + x.kind, label: x.kind.replace('_', ' ')}; }));
  }

  function links(d) {
    var root = document.getElementById('chart-links');
    var l = d.exposed.by_link;
    if (!l.length) return SS.message(root, 'No communication on the critical path.');
    hbars(root, l.map(function (x) {
      return {label: x.link, value: x.exposed_s,
              note: SS.seconds(x.exposed_s) + ' (' + SS.percent(x.exposed_s / d.step_s) + ')',
              cls: 'b-link', attrs: {'data-link': x.link, 'data-exposed': x.exposed_s}};
    }), 'links');
  }

  // Drives the charts with synthetic events: zoom the timeline with the wheel, hover a bar,
  // reset with a double-click, hover a memory bar.
  SS.selftest = function () {
    var fails = [], st = timelineState;
    if (!st) return ['no timeline'];
    var box = st.svg.getBoundingClientRect();
    st.svg.dispatchEvent(new WheelEvent('wheel', {deltaY: -800, clientX: box.left + box.width * 0.6,
                                                   clientY: box.top + 10, bubbles: true, cancelable: true}));
    st.flush();
    var span = st.view.hi - st.view.lo;
    if (!(span < st.full * 0.5)) fails.push('wheel did not zoom in (span ' + span + ' of ' + st.full + ')');
    var bar = st.svg.querySelector('rect[data-i]');
    if (!bar) {
      fails.push('no bar drawn after zooming');
    } else {
      var r = bar.getBoundingClientRect();
      bar.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + 1, clientY: r.top + 1, bubbles: true}));
      var tip = document.getElementById('tooltip');
      if (!tip || tip.hidden || !tip.textContent) fails.push('hovering a bar shows no tooltip');
    }
    st.svg.dispatchEvent(new MouseEvent('dblclick', {bubbles: true}));
    st.flush();
    if (st.view.lo !== 0 || st.view.hi !== st.full) fails.push('double-click did not reset the view');
    var mem = document.querySelector('#chart-memory-stages rect[data-part]');
    if (mem) {
      var mr = mem.getBoundingClientRect();
      mem.dispatchEvent(new MouseEvent('mousemove', {clientX: mr.left + 1, clientY: mr.top + 1, bubbles: true}));
      if (document.getElementById('tooltip').textContent.indexOf('stage') !== 0) {
        fails.push('hovering a memory bar shows no stage');
      }
    }
    SS.hideTooltip();
    return fails;
  };

  SS.run([['breakdown', breakdown], ['timeline', timeline], ['memory per stage', memoryStages],
          ['memory over the step', memoryTime], ['exposed time', communication],
          ['exposed by link', links]]);
})();

// The charts of `shardsim sweep --html`: throughput of every point against GPUs or memory
// headroom with the Pareto front, infeasible points greyed with their reason on hover, and the
// layout of a point on a click (on the chart or on a row of the top-k table). Data:
// sim/report/html_sweep.cc (Data) writes the columns read here.
(function () {
  'use strict';
  var SS = window.SS;
  var state = {x: 'gpus', selected: -1, d: null};

  function headroom(d, i) {
    var p = d.peak_bytes[i];
    return p === null ? null : d.capacity_bytes[i] - p;
  }
  function describe(d, i) {
    var lines = [];
    if (d.feasible[i]) {
      lines.push(SS.grouped(d.tokens_per_s[i]) + ' tokens/s on ' + d.gpus[i] + ' GPUs (MFU ' +
                 SS.percent(d.mfu[i]) + ')');
    } else {
      lines.push('infeasible: ' + d.reasons[d.reason[i]]);
      if (d.simulated[i]) lines.push(SS.grouped(d.tokens_per_s[i]) + ' tokens/s on ' + d.gpus[i] + ' GPUs');
    }
    if (d.peak_bytes[i] !== null) {
      lines.push('memory ' + SS.bytes(d.peak_bytes[i]) + ' of ' + SS.bytes(d.capacity_bytes[i]));
    }
    d.keys.forEach(function (k, j) { lines.push(k + ' = ' + d.values[j][d.inputs[j][i]]); });
    return lines;
  }

  function select(i) {
    var d = state.d;
    state.selected = i;
    var box = document.getElementById('point-detail');
    box.textContent = '';
    box.setAttribute('data-i', i);
    var h = document.createElement('p');
    h.textContent = 'Point ' + i + (d.feasible[i] ? '' : ' (infeasible: ' + d.reasons[d.reason[i]] + ')');
    box.appendChild(h);
    var table = document.createElement('table');
    function row(name, value) {
      var tr = document.createElement('tr'), th = document.createElement('th'), td = document.createElement('td');
      th.textContent = name;
      td.textContent = value;
      tr.setAttribute('data-field', name);
      tr.appendChild(th);
      tr.appendChild(td);
      table.appendChild(tr);
    }
    d.keys.forEach(function (k, j) { row(k, d.values[j][d.inputs[j][i]]); });
    row('GPUs', String(d.gpus[i]));
    if (d.simulated[i]) {
      row('tokens/s', SS.grouped(d.tokens_per_s[i]) + ' (' + SS.grouped(d.tokens_per_s_per_gpu[i]) + ' per GPU)');
      row('MFU', SS.percent(d.mfu[i]));
      if (d.executed_fraction_of_peak && d.executed_fraction_of_peak[i] !== null) {
        row('executed', SS.percent(d.executed_fraction_of_peak[i]) + ' of peak');
      }
      row('step time', SS.seconds(d.step_time_s[i]));
    }
    if (d.peak_bytes[i] !== null) {
      row('peak memory', SS.bytes(d.peak_bytes[i]) + ' of ' + SS.bytes(d.capacity_bytes[i]));
      row('headroom', SS.bytes(headroom(d, i)));
    }
    if (d.time_to_train_s && d.time_to_train_s[i] !== null) row('time to train', SS.seconds(d.time_to_train_s[i]));
    if (d.cost && d.cost[i] !== null) row('cost', SS.grouped(d.cost[i]));
    if (d.bottleneck[i] >= 0) row('bottleneck', d.bottlenecks[d.bottleneck[i]]);
    box.appendChild(table);
    var old = document.querySelectorAll('.selected');
    for (var k = 0; k < old.length; k++) old[k].classList.remove('selected');
    var c = document.querySelector('#chart-scatter circle[data-i="' + i + '"]');
    if (c) c.classList.add('selected');
    var tr = document.querySelector('#top-table tr[data-i="' + i + '"]');
    if (tr) tr.classList.add('selected');
  }

  function scatter(d) {
    var root = document.getElementById('chart-scatter');
    root.textContent = '';
    var n = d.gpus.length, mode = state.x;
    var W = SS.width(root, 640), H = 380, left = 92, right = W - 14, top = 12;
    var plotH = H - top - 64, plotW = right - left, stripY = top + plotH + 40;
    var s = SS.svg(root, W, H, 'scatter');
    s.setAttribute('data-x', mode);
    var xs = new Array(n), shown = 0, hidden = 0, i;
    var lo = Infinity, hi = -Infinity, ymax = 0;
    for (i = 0; i < n; i++) {
      var v = mode === 'gpus' ? d.gpus[i] : headroom(d, i);
      xs[i] = v;
      if (v === null) continue;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
      if (d.simulated[i]) ymax = Math.max(ymax, d.tokens_per_s[i]);
    }
    if (!(hi >= lo)) { lo = 0; hi = 1; }
    ymax = (ymax > 0 ? ymax : 1) * 1.06;
    var log = mode === 'gpus' && lo > 0 && hi / lo >= 4;
    var pad = (hi - lo) * 0.04 || Math.abs(hi) * 0.1 || 1;
    var x0 = log ? Math.log2(lo) - 0.25 : lo - pad, x1 = log ? Math.log2(hi) + 0.25 : hi + pad;
    function X(v) { return left + ((log ? Math.log2(v) : v) - x0) / (x1 - x0) * plotW; }
    function Y(v) { return top + plotH - v / ymax * plotH; }
    var grid = SS.el('g', {'class': 'grid'}, s);
    SS.ticks(0, ymax, 6).forEach(function (t) {
      SS.el('line', {x1: left, x2: right, y1: Y(t), y2: Y(t)}, grid);
      SS.text(s, left - 6, Y(t) + 4, SS.grouped(t), {'text-anchor': 'end'});
    });
    var xt = [];
    if (log) {
      for (var e = Math.ceil(x0); e <= Math.floor(x1); e++) xt.push(Math.pow(2, e));
    } else {
      xt = SS.ticks(x0, x1, Math.max(2, Math.floor(plotW / 90)));
    }
    xt.forEach(function (t) {
      SS.el('line', {x1: X(t), x2: X(t), y1: top, y2: top + plotH}, grid);
      SS.text(s, X(t), top + plotH + 16, mode === 'gpus' ? String(t) : SS.sig(t / SS.GiB, 3) + ' GiB',
              {'text-anchor': 'middle'});
    });
    SS.text(s, left + plotW / 2, top + plotH + 30, mode === 'gpus' ? 'GPUs' : 'memory headroom per GPU',
            {'text-anchor': 'middle'});
    SS.text(s, 14, top + plotH / 2, 'tokens/s', {transform: 'rotate(-90 14 ' + (top + plotH / 2) + ')',
                                                 'text-anchor': 'middle'});
    SS.text(s, left - 6, stripY + 4, 'not simulated', {'text-anchor': 'end', 'class': 'strip-label'});
    SS.el('line', {x1: left, x2: right, y1: stripY, y2: stripY}, grid);
    var front = mode === 'gpus' ? d.front_gpus : d.front_headroom, onFront = {};
    front.forEach(function (k) { onFront[k] = true; });
    function jitter(k) { return mode === 'gpus' ? ((k * 2654435761) >>> 0) % 9 - 4 : 0; }
    var frag = document.createDocumentFragment();
    // Infeasible first (underneath), then feasible, then the front on top.
    [0, 1, 2].forEach(function (layer) {
      for (var k = 0; k < n; k++) {
        var cls = onFront[k] ? 2 : d.feasible[k] ? 1 : 0;
        if (cls !== layer) continue;
        if (xs[k] === null) { hidden++; continue; }
        var c = document.createElementNS(SS.NS, 'circle');
        c.setAttribute('cx', (X(xs[k]) + jitter(k)).toFixed(1));
        c.setAttribute('cy', (d.simulated[k] ? Y(d.tokens_per_s[k]) : stripY + jitter(k + 7) * 1.5).toFixed(1));
        c.setAttribute('r', cls === 2 ? 4.5 : 3.2);
        c.setAttribute('class', 'pt ' + (cls === 2 ? 'feasible front' : cls === 1 ? 'feasible' : 'infeasible'));
        c.setAttribute('data-i', k);
        if (k === state.selected) c.classList.add('selected');
        frag.appendChild(c);
        shown++;
      }
    });
    if (front.length) {
      var path = '';
      front.forEach(function (k, j) {
        var px = X(xs[k]), py = Y(d.tokens_per_s[k]);
        path += j === 0 ? 'M' + px + ',' + py : (mode === 'gpus' ? 'H' + px + 'V' + py : 'V' + py + 'H' + px);
      });
      SS.el('path', {d: path, 'class': 'pareto', 'data-points': front.length}, s);
    }
    s.appendChild(frag);
    s.setAttribute('data-shown', shown);
    var note = document.getElementById('scatter-note');
    if (note) {
      note.textContent = shown + ' points' + (hidden ? ', ' + hidden + ' without a memory estimate not shown' : '') +
                         '; Pareto front: ' + front.length;
    }
    s.addEventListener('mousemove', function (ev) {
      var k = ev.target.getAttribute && ev.target.getAttribute('data-i');
      if (k === null || k === undefined) return SS.hideTooltip();
      SS.tooltip(ev, describe(d, Number(k)));
    });
    s.addEventListener('mouseleave', SS.hideTooltip);
    s.addEventListener('click', function (ev) {
      var k = ev.target.getAttribute && ev.target.getAttribute('data-i');
      if (k !== null && k !== undefined) select(Number(k));
    });
    SS.legend('scatter', [{cls: 'pt feasible', label: 'feasible'},
                          {cls: 'pt front', label: 'Pareto front (' + (mode === 'gpus' ? 'tokens/s vs GPUs' : 'tokens/s vs headroom') + ')'},
                          {cls: 'pt infeasible', label: 'infeasible'}]);
  }

  function setup(d) {
    state.d = d;
    state.x = d.default_x;
    var sel = document.getElementById('x-axis');
    sel.value = state.x;
    sel.addEventListener('change', function () {
      var t0 = performance.now();
      state.x = sel.value;
      scatter(d);
      document.body.getBoundingClientRect();
      document.body.setAttribute('data-switch-ms', (performance.now() - t0).toFixed(1));
    });
    var table = document.getElementById('top-table');
    if (table) {
      table.addEventListener('click', function (e) {
        var tr = e.target.closest('tr[data-i]');
        if (tr) select(Number(tr.getAttribute('data-i')));
      });
    }
    scatter(d);
  }

  // Drives the page with synthetic events: hover an infeasible point (its reason), click a
  // feasible one (its layout), click a table row, switch the x axis and back.
  SS.selftest = function (d) {
    var fails = [];
    var bad = document.querySelector('#chart-scatter circle.infeasible');
    if (bad) {
      var r = bad.getBoundingClientRect();
      bad.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + 1, clientY: r.top + 1, bubbles: true}));
      var want = d.reasons[d.reason[Number(bad.getAttribute('data-i'))]];
      var tip = document.getElementById('tooltip');
      if (!tip || tip.textContent.indexOf(want) < 0) fails.push('hovering an infeasible point does not show "' + want + '"');
    }
    var good = document.querySelector('#chart-scatter circle.front') || document.querySelector('#chart-scatter circle.feasible');
    if (good) {
      good.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      var box = document.getElementById('point-detail');
      if (box.getAttribute('data-i') !== good.getAttribute('data-i') || !box.querySelector('tr[data-field="GPUs"]')) {
        fails.push('clicking a point does not show its layout');
      }
    }
    var row = document.querySelector('#top-table tbody tr[data-i]');
    if (row) {
      row.cells[0].dispatchEvent(new MouseEvent('click', {bubbles: true}));
      if (document.getElementById('point-detail').getAttribute('data-i') !== row.getAttribute('data-i')) {
        fails.push('clicking a table row does not select its point');
      }
    }
    var sel = document.getElementById('x-axis'), before = sel.value;
    sel.value = before === 'gpus' ? 'headroom' : 'gpus';
    sel.dispatchEvent(new Event('change'));
    if (document.querySelector('#chart-scatter svg').getAttribute('data-x') !== sel.value) fails.push('x axis did not switch');
    sel.value = before;
    sel.dispatchEvent(new Event('change'));
    SS.hideTooltip();
    return fails;
  };

  SS.run([['scatter', setup]]);
})();

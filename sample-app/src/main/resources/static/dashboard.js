// The demo's live dashboard: polls /api/demo/series once a second and plots the last five minutes
// with uPlot (served from the uplot WebJar). window.dashboard exposes the points and the charts'
// plotted data (the browser test reads them).
(function () {
  'use strict';

  const WINDOW_SECONDS = 300;
  const REASONS = ['non_retryable_status', 'max_attempts', 'throttled', 'budget', 'max_extra_load', 'pushback', 'deadline', 'committed', 'buffer_limit'];
  const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#17becf'];

  const state = { points: [], lastT: 0, settings: null, strategies: [], engine: '?', charts: {}, polls: 0, errors: 0 };
  window.dashboard = state;

  // --- chart definitions: id, title, series (label, value of a point), y-axis options
  const defs = [
    { id: 'traffic', title: 'Calls and attempts per second', series: [
        { label: 'calls/s', value: p => p.calls, stroke: COLORS[0] },
        { label: 'attempts/s (reaching the backend)', value: p => p.attempts, stroke: COLORS[1] },
        { label: 'attempts/s (engine meter)', value: p => p.clientAttempts, stroke: COLORS[3], dash: [4, 4] }] },
    { id: 'amplification', title: 'Amplification (attempts ÷ calls)', min: 0, cap: 5, series: [
        { label: 'amplification', value: p => p.amplification, stroke: COLORS[1] },
        { label: 'no amplification', value: p => 1, stroke: '#999', dash: [6, 6] }] },
    { id: 'success', title: 'Success rate (%)', min: 0, max: 100, series: [
        { label: 'success %', value: p => p.successRate, stroke: COLORS[2] }] },
    { id: 'tokens', title: 'Token bucket of "retry + throttling" (retries stop at or below the threshold)', min: 0, series: [
        { label: 'tokens', value: p => p.tokens, stroke: COLORS[0] },
        { label: 'threshold', value: p => p.threshold, stroke: COLORS[1], dash: [6, 6] },
        { label: 'max tokens', value: p => p.maxTokens, stroke: '#999', dash: [2, 4] }] },
    { id: 'budget', title: 'Retry budget balance of "retry + budget" (retries permitted now)', min: 0, series: [
        { label: 'balance', value: p => p.budgetBalance, stroke: COLORS[4] }] },
    { id: 'suppressed', title: 'Retries suppressed per second, by reason', min: 0,
      now: p => p.suppressed ? Object.values(p.suppressed).reduce((a, b) => a + b, 0) : null, series:
        REASONS.map((r, i) => ({ label: r, value: p => (p.suppressed && r in p.suppressed) ? p.suppressed[r] : null, stroke: COLORS[i] })) },
    { id: 'latency', title: 'Latency of the current strategy (ms, last seconds)', min: 0, series: [
        { label: 'p50', value: p => p.p50Ms, stroke: COLORS[0] },
        { label: 'p99', value: p => p.p99Ms, stroke: COLORS[1] }] },
  ];

  function width() {
    const el = document.getElementById('charts');
    const cols = el.clientWidth >= 1232 ? 2 : 1;
    return Math.max(320, Math.floor((el.clientWidth - (cols - 1) * 16) / cols) - 4);
  }

  function createCharts() {
    const container = document.getElementById('charts');
    for (const d of defs) {
      const box = document.createElement('section');
      box.className = 'chart';
      box.id = 'chart-' + d.id;
      const h = document.createElement('h2');
      h.innerHTML = d.title + ' <span class="value" id="value-' + d.id + '"></span>';
      box.appendChild(h);
      container.appendChild(box);
      const opts = {
        width: width(), height: 200,
        scales: { x: { time: true }, y: { range: (u, lo, hi) => [d.min !== undefined ? d.min : lo,
            d.max !== undefined ? d.max : Math.min(d.cap || Infinity, Math.max(hi * 1.1, (d.min || 0) + 1))] } },
        series: [{}].concat(d.series.map(s => ({ label: s.label, stroke: s.stroke, width: 2, dash: s.dash, spanGaps: false, points: { show: false } }))),
        axes: [{}, { size: 50 }],
        legend: { live: false },
      };
      state.charts[d.id] = new uPlot(opts, [[]].concat(d.series.map(() => [])), box);
    }
    window.addEventListener('resize', () => { for (const c of Object.values(state.charts)) c.setSize({ width: width(), height: 200 }); });
  }

  function redraw() {
    redrawQueue();
    const pts = state.points;
    const xs = pts.map(p => p.t / 1000);
    for (const d of defs) {
      const data = [xs].concat(d.series.map(s => pts.map(p => { const v = s.value(p); return v === undefined ? null : v; })));
      state.charts[d.id].setData(data);
      const last = pts.length ? pts[pts.length - 1] : null;
      const label = document.getElementById('value-' + d.id);
      if (last) {
        const v = d.now ? d.now(last) : d.series[0].value(last);
        label.textContent = v === null || v === undefined ? '(not observable with this engine)' : '· now ' + (Math.round(v * 100) / 100);
      }
    }
  }

  async function poll() {
    try {
      const r = await fetch('/api/demo/series?since=' + state.lastT, { cache: 'no-store' });
      if (!r.ok) throw new Error('HTTP ' + r.status);
      const fresh = await r.json();
      if (fresh.length) {
        state.points.push(...fresh);
        state.lastT = fresh[fresh.length - 1].t;
        const cutoff = state.lastT - WINDOW_SECONDS * 1000;
        while (state.points.length && state.points[0].t < cutoff) state.points.shift();
        redraw();
      }
      state.polls++;
      showStatus();
    } catch (e) {
      state.errors++;
      document.getElementById('status').textContent = 'cannot reach the sample: ' + e.message;
    }
  }

  function showStatus() {
    const s = state.settings;
    if (!s) return;
    const st = state.strategies.find(x => x.name === s.strategy);
    document.getElementById('status').textContent = 'engine: ' + state.engine + ' · strategy: ' + (st ? st.label : s.strategy)
      + ' (channel ' + (st ? st.channel : '?') + ') · ' + s.rate + ' calls/s · failure ' + Math.round(s.failureRate * 100)
      + ' % · slow ' + Math.round(s.slowShare * 100) + ' % by ' + s.slowMs + ' ms';
  }

  function fillForm(s) {
    document.getElementById('rate').value = s.rate;
    document.getElementById('failureRate').value = Math.round(s.failureRate * 100);
    document.getElementById('slowShare').value = Math.round(s.slowShare * 100);
    document.getElementById('slowMs').value = s.slowMs;
    document.getElementById('strategy').value = s.strategy;
    describe();
  }

  function describe() {
    const st = state.strategies.find(x => x.name === document.getElementById('strategy').value);
    document.getElementById('strategyDescription').textContent = st ? st.channel + ': ' + st.description : '';
  }

  async function apply(ev) {
    ev.preventDefault();
    const body = {
      rate: Number(document.getElementById('rate').value),
      failureRate: Number(document.getElementById('failureRate').value) / 100,
      slowShare: Number(document.getElementById('slowShare').value) / 100,
      slowMs: Number(document.getElementById('slowMs').value),
      strategy: document.getElementById('strategy').value,
    };
    const r = await fetch('/api/demo/settings', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const json = await r.json();
    if (!r.ok) {
      document.getElementById('status').textContent = 'rejected: ' + json.error;
      return;
    }
    state.settings = json;
    state.applied = (state.applied || 0) + 1;
    showStatus();
  }

  async function init() {
    const r = await fetch('/api/demo', { cache: 'no-store' });
    const overview = await r.json();
    state.settings = overview.settings;
    state.strategies = overview.strategies;
    state.engine = overview.engine;
    const select = document.getElementById('strategy');
    for (const s of overview.strategies) {
      const o = document.createElement('option');
      o.value = s.name;
      o.textContent = s.label;
      select.appendChild(o);
    }
    select.addEventListener('change', describe);
    fillForm(overview.settings);
    document.getElementById('controls').addEventListener('submit', apply);
    createCharts();
    await initQueue();
    await poll();
    setInterval(poll, 1000);
    state.ready = true;
  }

  // --- server queue: the stall control and the queue / goodput chart ----------------------------------
  // The backend serves successful attempts with a fixed number of workers behind a FIFO queue
  // (/api/demo/server). "Stall" sets its capacity to 0 for 2 s; the chart shows the queue (left axis)
  // against offered calls and goodput (right axis). The queue is emptied when the strategy changes.

  const queueSeries = [
    { label: 'queue (end of second)', value: p => p.queue ? p.queue.length : null, stroke: COLORS[1], scale: 'q' },
    { label: 'queue (max in second)', value: p => p.queue ? p.queue.maxLength : null, stroke: COLORS[1], scale: 'q', dash: [4, 4] },
    { label: 'offered calls/s', value: p => p.queue ? p.queue.offered : null, stroke: '#999', scale: 'r' },
    { label: 'goodput (OK calls/s)', value: p => p.queue ? p.queue.goodput : null, stroke: COLORS[2], scale: 'r' },
    { label: 'capacity (calls/s)', value: p => p.queue ? p.queue.capacity : null, stroke: COLORS[0], scale: 'r', dash: [6, 6] },
  ];

  async function initQueue() {
    const box = document.getElementById('queue-chart');
    const h = document.createElement('h2');
    h.innerHTML = 'Server queue and goodput <span class="value" id="value-queue"></span>';
    box.appendChild(h);
    const opts = {
      width: Math.max(320, document.getElementById('charts').clientWidth - 4), height: 220,
      scales: { x: { time: true }, q: { range: (u, lo, hi) => [0, Math.max(10, hi * 1.1)] },
        r: { range: (u, lo, hi) => [0, Math.max(10, hi * 1.1)] } },
      series: [{}].concat(queueSeries.map(s => ({ label: s.label, stroke: s.stroke, width: 2, dash: s.dash, scale: s.scale,
        spanGaps: false, points: { show: false } }))),
      axes: [{}, { scale: 'q', size: 60, label: 'calls waiting' }, { scale: 'r', side: 1, size: 50, label: 'calls/s', grid: { show: false } }],
      legend: { live: false },
    };
    state.charts.queue = new uPlot(opts, [[]].concat(queueSeries.map(() => [])), box);
    window.addEventListener('resize', () => state.charts.queue.setSize({
      width: Math.max(320, document.getElementById('charts').clientWidth - 4), height: 220 }));
    state.stalls = 0;
    document.getElementById('stall').addEventListener('click', async () => {
      const r = await fetch('/api/demo/server/stall', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ seconds: 2 }) });
      if (r.ok) {
        state.stalls++;
        showServer(await r.json());
      }
    });
    document.getElementById('dropExpired').addEventListener('change', async ev => {
      const r = await fetch('/api/demo/server', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ dropExpired: ev.target.checked }) });
      if (r.ok) showServer(await r.json());
    });
    const r = await fetch('/api/demo/server', { cache: 'no-store' });
    if (r.ok) showServer(await r.json());
  }

  function showServer(s) {
    state.server = s;
    document.getElementById('dropExpired').checked = s.dropExpired;
    showServerText(s.stalled);
  }

  function showServerText(stalled) {
    const s = state.server;
    if (!s) return;
    document.getElementById('serverState').textContent = s.workers + ' workers × ' + s.serviceTimeMs + ' ms = '
      + Math.round(s.capacity) + ' calls/s, at most ' + s.queueLimit + ' waiting' + (stalled ? ' · STALLED' : '');
  }

  function redrawQueue() {
    const chart = state.charts.queue;
    if (!chart) return;
    const pts = state.points;
    chart.setData([pts.map(p => p.t / 1000)].concat(queueSeries.map(s => pts.map(p => { const v = s.value(p); return v === undefined ? null : v; }))));
    const last = pts.length ? pts[pts.length - 1] : null;
    if (last && last.queue) {
      showServerText(last.queue.stalled);
      document.getElementById('value-queue').textContent = '· now ' + last.queue.length + ' waiting, '
        + last.queue.goodput + ' of ' + last.queue.offered + ' calls OK' + (last.queue.stalled ? ' · stalled' : '');
    }
  }

  init().catch(e => { document.getElementById('status').textContent = 'start-up failed: ' + e; });
})();

// The waterfall of the last retried or hedged calls (docs/observability.md): polls /api/demo/waterfall once
// a second and draws one row per call, one bar per attempt on a time axis (ms since the call started):
// waits between retries are gaps, hedges overlap, the winner is outlined and starred, retries the engine
// did not make are ticks with their reason; each row names the backend (port) of each attempt. Drawn with uPlot (the dashboard's chart library) in a draw hook.
// window.waterfall exposes the rows and what the last draw put on the canvas (the browser test reads them).
(function () {
  'use strict';

  const ROWS = 20;
  const ROW_PX = 22;
  const FILL = { OK: '#2ca02c', CANCELLED: '#b0b0b0', running: '#9ecae1' };
  const FAILED = '#d62728';
  const state = { rows: [], drawn: [], chart: null, polls: 0 };
  window.waterfall = state;

  function width() {
    const el = document.getElementById('waterfall');
    return Math.max(320, el.clientWidth - 4);
  }

  function maxMs() {
    let m = 10;
    for (const r of state.rows) {
      m = Math.max(m, r.durationMs || 0);
      for (const a of r.attempts) m = Math.max(m, a.endMs === null ? a.startMs : a.endMs);
      for (const s of r.suppressed) m = Math.max(m, s.atMs);
    }
    return m * 1.2; // room for the last mark's label
  }

  function drawRows(u) {
    const ctx = u.ctx;
    const drawn = [];
    ctx.save();
    ctx.font = (11 * devicePixelRatio) + 'px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'left'; // uPlot leaves the y axis's right alignment on the context
    state.rows.forEach((r, i) => {
      const y0 = u.valToPos(ROWS - i - 0.15, 'y', true); // row 0 (the newest) on top
      const y1 = u.valToPos(ROWS - i - 0.85, 'y', true);
      const top = Math.min(y0, y1);
      const h = Math.abs(y1 - y0);
      let bars = 0;
      for (const a of r.attempts) {
        const end = a.endMs === null ? (r.durationMs || a.startMs) : a.endMs;
        const x0 = u.valToPos(a.startMs, 'x', true);
        const x1 = Math.max(x0 + 2 * devicePixelRatio, u.valToPos(end, 'x', true));
        ctx.fillStyle = FILL[a.status] || FAILED;
        ctx.globalAlpha = a.kind === 'hedge' ? 0.75 : 1;
        ctx.fillRect(x0, top, x1 - x0, h);
        ctx.globalAlpha = 1;
        if (a.port > 0 && x1 - x0 > 40 * devicePixelRatio) { // the backend the attempt reached, inside its bar
          ctx.fillStyle = '#ffffff';
          ctx.fillText(':' + a.port, x0 + 3 * devicePixelRatio, top + h / 2);
        }
        if (a.winner) {
          ctx.strokeStyle = '#1d2330';
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.strokeRect(x0, top, x1 - x0, h);
          ctx.fillStyle = '#1d2330';
          ctx.fillText('★', x1 + 3 * devicePixelRatio, top + h / 2);
        }
        bars++;
      }
      for (const s of r.suppressed) {
        const x = u.valToPos(s.atMs, 'x', true);
        ctx.strokeStyle = '#ff7f0e';
        ctx.lineWidth = 2 * devicePixelRatio;
        ctx.beginPath();
        ctx.moveTo(x, top - 2);
        ctx.lineTo(x, top + h + 2);
        ctx.stroke();
        ctx.fillStyle = '#ff7f0e';
        ctx.fillText('✕ ' + s.reason, x + 4 * devicePixelRatio, top + h / 2);
      }
      ctx.fillStyle = '#1d2330';
      ctx.fillText(rowLabel(r), 4 * devicePixelRatio, top + h / 2); // in the left gutter
      drawn.push({ bars: bars, suppressed: r.suppressed.length });
    });
    ctx.restore();
    state.drawn = drawn;
  }

  function rowLabel(r) {
    // the backend (port) of each attempt, in order: the sample's channels have one backend, several would show here
    const ports = r.attempts.map(a => a.port > 0 ? ':' + a.port : '?').join(' ');
    return r.channel + ' ' + r.attempts.length + '× ' + (r.status || '…') + ' ' + ports
        + (r.traceId ? ' ' + r.traceId.slice(0, 8) : '');
  }

  function create() {
    const box = document.getElementById('waterfall');
    const opts = {
      width: width(), height: ROWS * ROW_PX + 60,
      scales: { x: { time: false, range: () => [0, maxMs()] }, y: { range: () => [0, ROWS] } },
      series: [{}, { label: 'attempts', stroke: 'transparent', points: { show: false } }],
      axes: [
        { label: 'ms since the call started' },
        { size: 320, values: (u, splits) => splits.map(() => ''), grid: { show: false } }, // labels: drawRows
      ],
      legend: { show: false },
      cursor: { show: false },
      hooks: { draw: [drawRows] },
    };
    state.chart = new uPlot(opts, [[0, 1], [null, null]], box);
    window.addEventListener('resize', () => state.chart.setSize({ width: width(), height: ROWS * ROW_PX + 60 }));
  }

  async function poll() {
    try {
      const r = await fetch('/api/demo/waterfall', { cache: 'no-store' });
      if (!r.ok) throw new Error('HTTP ' + r.status);
      state.rows = (await r.json()).slice(-ROWS).reverse(); // the newest on top
      state.chart.setData([[0, maxMs()], [null, null]]);
      document.getElementById('waterfall-count').textContent = state.rows.length
        ? '· ' + state.rows.length + ' calls' : '· none yet (raise the failure rate, or pick hedging with slow attempts)';
      state.polls++;
    } catch (e) {
      document.getElementById('waterfall-count').textContent = '· unavailable: ' + e.message;
    }
  }

  function start() {
    create();
    poll();
    setInterval(poll, 1000);
    state.ready = true;
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();

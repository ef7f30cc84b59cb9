// spoolparse correction workbench: the #models view: the serving model, its held-out LAS over
// time and the history of cycles, and "retrain now".
'use strict';

// ---------------------------------------------------------------- models view

// An event's time in milliseconds: the server gives seconds since the epoch (a date string is
// taken too).
const millis = (e) => (typeof e.time === 'number' ? e.time * 1000 : Date.parse(e.time));
// As UTC, to the second: 2026-11-27 21:24:38.
const when = (e) => new Date(millis(e)).toISOString().replace('T', ' ').replace(/\.\d+Z$/, '');

async function loadModels() {
  const data = await attempt(() => api('GET', '/api/models'));
  if (!data) return;
  $('#models-current').textContent = data.current || 'none';
  $('#models-stored').textContent = data.stored_since_last_cycle ?? '–';
  const events = [...data.models].sort((a, b) => millis(a) - millis(b));
  drawChart(events);
  $('#model-history tbody').replaceChildren(...events.reverse().map(historyRow));
  $('#annotator-standing tbody').replaceChildren(...(data.annotators || []).map(standingRow));
  showPrecision(data.precision);
}

// What the answered sentences of the uniform sample say: the precision of accepted/ at the
// serving threshold, and the threshold each precision would get on the user's text.
function showPrecision(p) {
  const pct = (x) => (x === null || x === undefined ? '–' : `${(x * 100).toFixed(1)}%`);
  let text;
  if (!p || !p.sentences) {
    text = 'No sampled sentence reviewed yet. One task in [annotate] sample_every (10 by default) is a sentence drawn at random from everything parsed; reviewed whole, such sentences measure the precision of what reaches accepted/.';
  } else {
    const whose = p.of_serving_model
      ? `published by the serving model${p.answered > p.sentences ? ` (of ${p.answered} answered in all)` : ''}`
      : 'published by other models, or by files that name none: none of the serving model\'s is answered yet';
    text = `${p.sentences} sampled sentence${p.sentences === 1 ? '' : 's'} reviewed whole (${p.words} words), ${whose}. `;
    if (p.error) text += `The serving threshold: ${p.error}`;
    else if (p.threshold === null) text += 'No threshold is configured: every sentence is accepted.';
    else {
      const m = p.at_threshold;
      text += `At the serving threshold ${p.threshold.toFixed(2)}: ${pct(m.kept)} of their words accepted, ${pct(m.precision)} of those right (at least ${pct(m.bound)} with 90% confidence).`;
    }
  }
  $('#precision-summary').textContent = text;
  const rows = (p && p.sentences ? p.targets : []).map((t) => {
    const row = document.createElement('tr');
    const cells = t.threshold === null
      ? [pct(t.target), 'not reachable with these answers', '–', '–']
      : [pct(t.target), t.threshold.toFixed(2), pct(t.kept), pct(t.precision)];
    row.replaceChildren(...cells.map((c) => {
      const cell = document.createElement('td');
      cell.textContent = c;
      return cell;
    }));
    return row;
  });
  $('#precision-targets tbody').replaceChildren(...rows);
  // No answers, no table: a header over nothing reads as a broken page.
  $('#precision-targets').closest('.table-wrap').hidden = !rows.length;
}

// An annotator's known-answer checks: passed, failed, and whether their answers are held back.
function standingRow(a) {
  const row = document.createElement('tr');
  row.className = a.held_back ? 'held-back' : 'in-good-standing';
  const standing = a.held_back ? `held back: ${a.held_back}` : (a.passed + a.failed ? 'answers stored' : 'no check answered yet');
  row.replaceChildren(...[a.name, a.passed, a.failed, standing].map((text) => {
    const cell = document.createElement('td');
    cell.textContent = String(text);
    return cell;
  }));
  return row;
}

// LAS as a percentage, whether the server gives 0.87 or 87.
const percent = (x) => (x === null || x === undefined ? null : (x <= 1 ? x * 100 : x));
const formatLas = (x) => (percent(x) === null ? '–' : percent(x).toFixed(2));
// A candidate's LAS with its change over the model it was gated against: 87.31 (+0.22).
const formatChange = (x, before) => {
  if (percent(x) === null || percent(before) === null) return formatLas(x);
  const change = percent(x) - percent(before);
  return `${formatLas(x)} (${change < 0 ? '−' : '+'}${Math.abs(change).toFixed(2)})`;
};

function historyRow(event) {
  const row = document.createElement('tr');
  row.className = `event-${event.event}`;
  const cells = [when(event), event.event, event.model, formatChange(event.heldout_las, event.heldout_las_before), formatChange(event.your_text_las, event.your_text_las_before), formatChange(event.annotations_las, event.annotations_las_before), (event.reasons || []).join('; ')];
  row.replaceChildren(...cells.map((text) => {
    const cell = document.createElement('td');
    cell.textContent = text;
    return cell;
  }));
  return row;
}

// Held-out LAS over time: the serving model's line (promotions, rollbacks, configurations),
// rejected candidates as hollow red dots under or over it.
function drawChart(events) {
  const box = $('#las-chart');
  const points = events.filter((e) => percent(e.heldout_las) !== null).map((e) => ({ t: millis(e), las: percent(e.heldout_las), e }));
  if (!points.length) {
    box.textContent = 'No held-out LAS yet: the first retraining cycle measures it.';
    return;
  }
  const width = 640;
  const height = 220;
  const pad = { left: 44, right: 16, top: 12, bottom: 28 };
  const t0 = Math.min(...points.map((p) => p.t));
  const t1 = Math.max(...points.map((p) => p.t));
  const lo = Math.floor(Math.min(...points.map((p) => p.las)) - 0.5);
  const hi = Math.ceil(Math.max(...points.map((p) => p.las)) + 0.5);
  const x = (t) => pad.left + (t1 === t0 ? 0.5 : (t - t0) / (t1 - t0)) * (width - pad.left - pad.right);
  const y = (las) => pad.top + (1 - (las - lo) / (hi - lo)) * (height - pad.top - pad.bottom);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': 'held-out LAS over time' });
  for (let i = 0; i <= 4; i++) {
    const las = lo + ((hi - lo) * i) / 4;
    svg('line', { class: 'grid', x1: pad.left, x2: width - pad.right, y1: y(las), y2: y(las) }, chart);
    svg('text', { class: 'tick', x: pad.left - 6, y: y(las) + 4, 'text-anchor': 'end' }, chart).textContent = las.toFixed(1);
  }
  const day = (t) => new Date(t).toISOString().slice(0, 10);
  svg('text', { class: 'tick', x: pad.left, y: height - 8 }, chart).textContent = day(t0);
  if (t1 !== t0) svg('text', { class: 'tick', x: width - pad.right, y: height - 8, 'text-anchor': 'end' }, chart).textContent = day(t1);
  const serving = points.filter((p) => p.e.event !== 'rejected');
  if (serving.length > 1) {
    svg('polyline', { class: 'line', points: serving.map((p) => `${x(p.t)},${y(p.las)}`).join(' ') }, chart);
  }
  for (const p of points) {
    const dot = svg('circle', { class: `dot ${p.e.event}`, cx: x(p.t), cy: y(p.las), r: 4.5 }, chart);
    svg('title', {}, dot).textContent = `${when(p.e)} ${p.e.event} ${p.e.model}: ${p.las.toFixed(2)}`;
  }
  box.replaceChildren(chart);
}

async function retrain() {
  const result = $('#retrain-result');
  result.className = '';
  result.textContent = 'asking…';
  try {
    await api('POST', '/api/retrain');
    result.textContent = 'Retraining asked: the daemon runs its cycle now.';
  } catch (e) {
    result.className = 'error';
    result.textContent = e.message;
  }
}

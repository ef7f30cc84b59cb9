// spoolparse correction workbench: the browser side of `spoolparse annotate`.
//
// One page, two views: #check (the default: correct the arcs of low-confidence sentences,
// keyboard first) and #models (the model history and "retrain now"). Plain JavaScript, no
// build step, nothing fetched but the server's own JSON API; the tree is inline SVG drawn here.
//
// The state of a task is the tree the server last gave (GET /api/next, then POST /api/reparse
// after every change) plus the arcs the annotator fixed: accepted (as the parser had them),
// corrected, or unknown (a head nobody can tell: never sent). Only fixed arcs are answered.
// A word's UPOS (the tag under it) can be changed too (click it, or t): the tags set are sent
// with the arcs ("upos" on a word's arc object, or alone), re-parsed with, and stored.
'use strict';

const TOKEN_KEY = 'spoolparse.workbench.token';
const LOW_CONFIDENCE = 0.8; // arcs below this (or flagged by the server) are coloured
// Relations whose words are leaves in UD (their dependents, other than these ALLOWED_UNDER_LEAF
// ones, are a warning: usually an attachment error, sometimes a rare valid tree).
const LEAF_RELATIONS = new Set(['aux', 'case', 'cc', 'clf', 'cop', 'det', 'fixed', 'flat', 'goeswith', 'mark', 'punct']);
const ALLOWED_UNDER_LEAF = new Set(['conj', 'fixed', 'goeswith', 'punct', 'reparandum']);
const SUBJECTS = new Set(['nsubj', 'csubj']);
// The universal part-of-speech tags of UD, as the server checks them.
const UPOS = ['ADJ', 'ADP', 'ADV', 'AUX', 'CCONJ', 'DET', 'INTJ', 'NOUN', 'NUM', 'PART', 'PRON', 'PROPN', 'PUNCT', 'SCONJ', 'SYM', 'VERB', 'X'];

const state = {
  token: sessionStorage.getItem(TOKEN_KEY),
  labels: [],
  task: null,        // the task as GET /api/next gave it (its words are the parser's first tree)
  words: [],         // the tree drawn: the last reparse
  flagged: [],       // ids of the words the server asks to check, in sentence order
  arcs: new Map(),   // word id -> {id, head, deprel, kind}: kind accepted | corrected | unknown
  tags: new Map(),   // word id -> the UPOS the annotator set
  history: [],       // [{arcs, tags, current}] before each change, for undo
  current: null,     // the focused word
  proposed: null,    // a head chosen by moving (h/l), not yet confirmed
  picking: null,     // a word clicked with the mouse, waiting for its head
  reparseSeq: 0,     // only the answer to the latest reparse is drawn
  pending: 0,
  tokenPrompt: null, // the open token form's promise: every 401 waits for the same one
  tagging: null,     // the word whose tag the tag chooser is open for
};

const $ = (selector) => document.querySelector(selector);

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function setPending(delta) {
  state.pending += delta;
  document.body.dataset.pending = String(state.pending);
}

// One JSON request. A 401 asks for a token (once for all the requests waiting) and tries
// again; any other failure throws an ApiError with the server's own message.
async function api(method, path, body) {
  setPending(1);
  try {
    for (;;) {
      const headers = { Accept: 'application/json' };
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      if (state.token) headers.Authorization = `Bearer ${state.token}`;
      let response;
      try {
        response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (e) {
        throw new ApiError(0, `${method} ${path}: the server cannot be reached (${e.message})`);
      }
      if (response.status === 401) {
        await askToken(state.token ? 'The token was refused: enter it again.' : '');
        continue;
      }
      if (response.status === 204) return null;
      const text = await response.text();
      let data = {};
      try {
        data = text ? JSON.parse(text) : {};
      } catch (e) {
        if (response.ok) throw new ApiError(response.status, `${method} ${path}: the answer is not JSON`);
      }
      if (!response.ok) {
        const message = data && data.error ? data.error : text || response.statusText;
        throw new ApiError(response.status, `${method} ${path} (${response.status}): ${message}`);
      }
      return data;
    }
  } finally {
    setPending(-1);
  }
}

// Shows the token form; resolves when a token is entered. Kept for the tab (sessionStorage).
function askToken(message) {
  if (!state.tokenPrompt) {
    state.tokenPrompt = new Promise((resolve) => {
      $('#auth-message').textContent = message;
      $('#auth').hidden = false;
      $('#auth-token').value = '';
      $('#auth-token').focus();
      $('#auth-form').onsubmit = (event) => {
        event.preventDefault();
        state.token = $('#auth-token').value.trim();
        sessionStorage.setItem(TOKEN_KEY, state.token);
        $('#auth').hidden = true;
        state.tokenPrompt = null;
        resolve();
      };
    });
  }
  return state.tokenPrompt;
}

// Runs an action, showing its error (never swallowed). Returns the action's result or undefined.
async function attempt(action) {
  try {
    return await action();
  } catch (e) {
    showError(e.message || String(e));
    return undefined;
  }
}

function showError(message) {
  $('#error-text').textContent = message;
  $('#error').hidden = false;
}

let noticeTimer = null;
function showNotice(message) {
  const notice = $('#notice');
  notice.textContent = message;
  notice.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { notice.hidden = true; }, 4000);
}

// ---------------------------------------------------------------- tasks

async function loadNext() {
  const task = await attempt(() => api('GET', '/api/next'));
  if (task === undefined) return; // the error is shown; the old task stays
  setTask(task);
  loadStats();
}

function setTask(task) {
  state.task = task;
  state.words = task ? task.words : [];
  state.flagged = state.words.filter((w) => w.check).map((w) => w.id);
  state.arcs = new Map();
  state.tags = new Map();
  state.history = [];
  state.current = state.flagged.length ? state.flagged[0] : (state.words.length ? 1 : null);
  state.proposed = null;
  state.picking = null;
  $('#empty').hidden = Boolean(task);
  $('#task').hidden = !task;
  if (task) {
    $('#sent-id').textContent = task.sent_id;
    $('#sent-text').textContent = task.text;
  }
  render();
  $('#sentence').scrollLeft = 0;
  scrollToWord(state.current);
}

async function loadStats() {
  const stats = await attempt(() => api('GET', '/api/stats'));
  if (!stats) return;
  $('#stat-answered').textContent = stats.answered_today;
  $('#stat-rate').textContent = Number(stats.arcs_per_hour).toFixed(0);
  $('#stat-queue').textContent = stats.queue_left;
}

async function loadLabels() {
  const data = await attempt(() => api('GET', '/api/labels'));
  if (data) state.labels = data.labels;
}

const word = (id) => state.words.find((w) => w.id === id);
const original = (id) => state.task.words.find((w) => w.id === id);

// The arcs sent to reparse and answer: the fixed ones, unknown heads left out, each with the
// UPOS set on its word; a tag set on a word without a fixed arc goes alone ({id, upos}). A
// label left open (null) is sent as null to reparse (any label) and as the drawn one in an
// answer.
function fixedArcs(fillLabels) {
  const arcs = [];
  for (const arc of state.arcs.values()) {
    if (arc.kind === 'unknown') continue;
    const deprel = arc.deprel === null && fillLabels ? word(arc.id).deprel : arc.deprel;
    arcs.push({ id: arc.id, head: arc.head, deprel });
  }
  return withTags(arcs);
}

// `arcs` with the tags set: on a word's arc, or alone; sorted by word.
function withTags(arcs) {
  for (const [id, upos] of state.tags) {
    const arc = arcs.find((a) => a.id === id);
    if (arc) arc.upos = upos;
    else arcs.push({ id, upos });
  }
  return arcs.sort((a, b) => a.id - b.id);
}

// The UPOS shown under a word: the one the annotator set, else the task's.
const shownTag = (w) => state.tags.get(w.id) || w.upos || '';

// Fixes one word's arc (head null: unknown), keeping the previous arcs for undo, then asks
// the server for its best tree holding every fixed arc.
function setArc(id, head, deprel) {
  if (head === 0) deprel = 'root';
  state.history.push({ arcs: new Map(state.arcs), tags: new Map(state.tags), current: id });
  const first = original(id);
  let kind = 'corrected';
  if (head === null) kind = 'unknown';
  else if (head === first.head && (deprel === null || deprel === first.deprel)) kind = 'accepted';
  state.arcs.set(id, { id, head, deprel, kind });
  state.proposed = null;
  state.picking = null;
  render();
  reparse();
}

// Sets one word's UPOS (undoable), then re-parses with it.
function setTag(id, upos) {
  state.history.push({ arcs: new Map(state.arcs), tags: new Map(state.tags), current: id });
  state.tags.set(id, upos);
  state.current = id;
  render();
  reparse();
}

async function reparse() {
  const seq = ++state.reparseSeq;
  const task = state.task;
  const result = await attempt(() => api('POST', '/api/reparse', { task: task.task, arcs: fixedArcs(false) }));
  if (!result || seq !== state.reparseSeq || task !== state.task) return;
  state.words = result.words;
  render();
}

// A word is done when its head and its label are fixed (or its head is unknown).
const done = (id) => state.arcs.has(id) && (state.arcs.get(id).deprel !== null || state.arcs.get(id).kind === 'unknown');
const unresolved = () => state.flagged.filter((id) => !done(id));

// After a word is done: on to the next flagged word not done yet, after this one (wrapping).
function advance() {
  const open = unresolved();
  if (!open.length) {
    showNotice('Every flagged word is checked: Enter or Ctrl-Enter submits.');
    render();
    return;
  }
  focusWord(open.find((id) => id > state.current) || open[0]);
}

function focusWord(id) {
  state.current = id;
  state.proposed = null;
  render();
  scrollToWord(id);
}

async function submit() {
  const arcs = fixedArcs(true);
  if (!arcs.some((a) => a.head !== undefined)) {
    showError('Nothing is fixed yet: accept or correct an arc first (or press a if the whole sentence is right, s to skip).');
    return;
  }
  await answer(arcs, false);
}

async function acceptWhole() {
  const unknown = [...state.arcs.values()].filter((a) => a.kind === 'unknown');
  if (unknown.length) {
    showError(`${unknown.length} word(s) have an unknown head: submit with Ctrl-Enter instead of accepting the whole sentence.`);
    return;
  }
  const arcs = withTags(state.words.map((w) => ({ id: w.id, head: w.head, deprel: w.deprel })));
  await answer(arcs, true);
}

async function answer(arcs, whole) {
  const result = await attempt(() => api('POST', '/api/answer', { task: state.task.task, arcs, whole }));
  if (!result) return;
  const tags = result.tags ? ` and ${result.tags} tag(s)` : '';
  showNotice(`Stored ${result.stored} arc(s)${tags} of ${state.task.sent_id}.`);
  await loadNext();
}

async function skip() {
  if (await attempt(() => api('POST', '/api/skip', { task: state.task.task }))) await loadNext();
}

function openBad() {
  $('#bad-dialog').hidden = false;
  $('#bad-reason').value = '';
  $('#bad-reason').focus();
}

async function sendBad(reason) {
  $('#bad-dialog').hidden = true;
  if (await attempt(() => api('POST', '/api/bad', { task: state.task.task, reason }))) {
    showNotice(`${state.task.sent_id} flagged as bad: never trained on.`);
    await loadNext();
  }
}

function undo() {
  const last = state.history.pop();
  if (!last) {
    showNotice('Nothing to undo on this sentence.');
    return;
  }
  state.arcs = last.arcs;
  state.tags = last.tags;
  state.current = last.current;
  state.proposed = null;
  state.picking = null;
  render();
  reparse();
}

// ---------------------------------------------------------------- keyboard

// Enter: confirms a proposed head; else fixes the label of a word whose head was just set;
// else accepts the current arc; on a done word with nothing left to check, submits.
function enter() {
  const id = state.current;
  const w = word(id);
  if (!w) return;
  if (state.proposed !== null) {
    const head = state.proposed;
    if (head === w.head) {
      setArc(id, head, w.deprel);
      advance();
    } else {
      setArc(id, head, null); // stay: the label may need / next
    }
    return;
  }
  if (done(id) && !unresolved().length) {
    submit();
    return;
  }
  if (!done(id)) setArc(id, w.head, w.deprel);
  advance();
}

function moveHead(delta) {
  const w = word(state.current);
  if (!w) return;
  let head = state.proposed === null ? w.head : state.proposed;
  head += delta;
  if (head === w.id) head += delta; // a word is never its own head
  head = Math.max(0, Math.min(state.words.length, head));
  if (head === w.id) return; // the word is at the edge: nowhere further to go
  state.proposed = head;
  render();
  scrollToWord(head);
}

function takeAlternative(n) {
  const w = word(state.current);
  const alternative = w && w.alternatives ? w.alternatives[n - 1] : undefined;
  if (!alternative) {
    showNotice(`No alternative ${n} for this word.`);
    return;
  }
  setArc(w.id, alternative.head, alternative.deprel);
  advance();
}

function moveFlagged(step) {
  const list = state.flagged.length ? state.flagged : state.words.map((w) => w.id);
  const at = list.indexOf(state.current);
  let next;
  if (at >= 0) next = list[(at + step + list.length) % list.length];
  else if (step > 0) next = list.find((id) => id > state.current) || list[0];
  else next = [...list].reverse().find((id) => id < state.current) || list[list.length - 1];
  focusWord(next);
}

function moveWord(step) {
  const id = Math.max(1, Math.min(state.words.length, (state.current || 1) + step));
  focusWord(id);
}

function markUnknown() {
  if (state.current === null) return;
  setArc(state.current, null, null);
  advance();
}

function cancel() {
  state.proposed = null;
  state.picking = null;
  $('#error').hidden = true;
  render();
}

const KEYS = {
  j: () => moveFlagged(1),
  k: () => moveFlagged(-1),
  J: () => moveWord(1),
  K: () => moveWord(-1),
  h: () => moveHead(-1),
  l: () => moveHead(1),
  ArrowLeft: () => moveHead(-1),
  ArrowRight: () => moveHead(1),
  Enter: enter,
  '/': () => openLabels(),
  t: () => openTags(state.current),
  u: markUnknown,
  z: undo,
  a: acceptWhole,
  b: openBad,
  s: skip,
  Escape: cancel,
};

function onKey(event) {
  if (event.target.closest('input, textarea, select, .overlay')) return;
  if (event.altKey || event.metaKey || $('#check-view').hidden || !state.task) return;
  if (event.ctrlKey) {
    if (event.key === 'Enter') {
      event.preventDefault();
      submit();
    }
    return; // leave the browser's own Ctrl keys alone
  }
  let action = KEYS[event.key];
  if (event.key === 'Tab') action = () => moveFlagged(event.shiftKey ? -1 : 1);
  if (/^[1-9]$/.test(event.key)) action = () => takeAlternative(Number(event.key));
  if (!action) return;
  event.preventDefault(); // also keeps Enter and space off a focused button
  action();
}

// ---------------------------------------------------------------- label chooser

function openLabels() {
  const w = word(state.current);
  if (!w) return;
  $('#label-word').textContent = `${w.form} (${w.id})`;
  $('#label-chooser').hidden = false;
  const input = $('#label-input');
  input.value = '';
  filterLabels();
  input.focus();
}

function closeLabels() {
  $('#label-chooser').hidden = true;
}

// The model's labels matching what is typed: prefixes first, then the ones containing it.
function matchingLabels(typed) {
  const t = typed.trim().toLowerCase();
  const starts = state.labels.filter((l) => l.toLowerCase().startsWith(t));
  const contains = state.labels.filter((l) => !l.toLowerCase().startsWith(t) && l.toLowerCase().includes(t));
  return starts.concat(contains);
}

function filterLabels() {
  const list = $('#label-list');
  list.replaceChildren(...matchingLabels($('#label-input').value).map((label, i) => {
    const item = document.createElement('li');
    item.textContent = label;
    item.dataset.label = label;
    item.setAttribute('role', 'option');
    if (i === 0) item.classList.add('active');
    return item;
  }));
  if (!list.children.length) {
    const none = document.createElement('li');
    none.className = 'none';
    none.textContent = state.labels.length ? 'no label of the model matches' : 'the labels did not load';
    list.append(none);
  }
}

function moveActiveLabel(step) {
  const items = [...$('#label-list').querySelectorAll('li[data-label]')];
  if (!items.length) return;
  const at = items.findIndex((li) => li.classList.contains('active'));
  items[at].classList.remove('active');
  const next = items[(at + step + items.length) % items.length];
  next.classList.add('active');
  next.scrollIntoView({ block: 'nearest' });
}

// Sets the label of the current word, on its proposed head if one is being chosen.
function chooseLabel(label) {
  closeLabels();
  const w = word(state.current);
  if (!w || !label) return;
  const arc = state.arcs.get(w.id);
  let head = w.head;
  if (state.proposed !== null) head = state.proposed;
  else if (arc && arc.kind !== 'unknown') head = arc.head;
  setArc(w.id, head, label);
  advance();
}

function onLabelKey(event) {
  if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
    event.preventDefault();
    moveActiveLabel(event.key === 'ArrowDown' ? 1 : -1);
  } else if (event.key === 'Escape') {
    event.preventDefault();
    closeLabels();
  } else if (event.key === 'Enter') {
    event.preventDefault();
    const active = $('#label-list li.active');
    if (active) chooseLabel(active.dataset.label);
  }
}

// ---------------------------------------------------------------- tag chooser

function openTags(id) {
  const w = word(id);
  if (!w) return;
  state.tagging = id;
  $('#tag-word').textContent = `${w.form} (${w.id})`;
  const select = $('#tag-select');
  select.value = shownTag(w);
  $('#tag-dialog').hidden = false;
  select.focus();
}

function closeTags() {
  $('#tag-dialog').hidden = true;
  state.tagging = null;
}

// Sets the tag chosen; a tag that is the task's already counts as confirmed (it is sent too).
function chooseTag() {
  const id = state.tagging;
  const upos = $('#tag-select').value;
  closeTags();
  if (id !== null && UPOS.includes(upos)) setTag(id, upos);
}

// ---------------------------------------------------------------- mouse

// A click on a word picks it; a click on another word (or ROOT) then makes that its head.
function onTreeClick(event) {
  const tag = event.target.closest('[data-tag-of]');
  if (tag) {
    openTags(Number(tag.dataset.tagOf));
    return;
  }
  const target = event.target.closest('[data-word-id]');
  if (!target) return;
  const id = Number(target.dataset.wordId);
  if (state.picking === null) {
    if (id === 0) return;
    state.picking = id;
    state.current = id;
    state.proposed = null;
    render();
  } else if (id === state.picking) {
    state.picking = null;
    render();
  } else {
    const dependent = state.picking;
    const w = word(dependent);
    setArc(dependent, id, id === w.head ? w.deprel : null);
    state.current = dependent;
    render();
  }
}

function onAlternativeClick(event) {
  const button = event.target.closest('[data-alternative]');
  if (button) takeAlternative(Number(button.dataset.alternative));
}

// ---------------------------------------------------------------- warnings

// UD rules the page can check on the drawn tree. Warnings, never blocks.
function warnings(words) {
  const found = [];
  const base = (deprel) => (deprel || '').split(':')[0];
  const byId = new Map(words.map((w) => [w.id, w]));
  const roots = words.filter((w) => w.head === 0);
  if (roots.length > 1) {
    found.push({ ids: roots.map((w) => w.id), text: `${roots.length} words hang from ROOT: ${roots.map((w) => w.form).join(', ')}` });
  }
  for (const w of words) {
    if ((w.head === 0) !== (base(w.deprel) === 'root')) {
      found.push({ ids: [w.id], text: `"${w.form}" is ${w.deprel} ${w.head === 0 ? 'under ROOT' : 'but not under ROOT'}` });
    }
    const head = byId.get(w.head);
    if (head && LEAF_RELATIONS.has(base(head.deprel)) && (base(head.deprel) === 'punct' || !ALLOWED_UNDER_LEAF.has(base(w.deprel)))) {
      found.push({ ids: [head.id, w.id], text: `"${head.form}" (${head.deprel}) has a dependent "${w.form}" (${w.deprel}): ${base(head.deprel)} is a leaf relation` });
    }
  }
  const subjects = new Map();
  for (const w of words) {
    if (!SUBJECTS.has(base(w.deprel))) continue;
    if (!subjects.has(w.head)) subjects.set(w.head, []);
    subjects.get(w.head).push(w);
  }
  for (const [headId, deps] of subjects) {
    if (deps.length < 2) continue;
    const head = byId.get(headId);
    found.push({ ids: deps.map((w) => w.id), text: `"${head ? head.form : 'ROOT'}" has ${deps.length} subjects: ${deps.map((w) => w.form).join(', ')}` });
  }
  return found;
}

// ---------------------------------------------------------------- drawing

const SVG_NS = 'http://www.w3.org/2000/svg';
const WORD_FONT = '15px system-ui, sans-serif';
const TAG_FONT = '11px system-ui, sans-serif';
const ROOT_WIDTH = 58;
const WORD_ROWS = 52; // the form, the tag and the flag mark under the arcs

function svg(name, attributes, parent) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (parent) parent.append(element);
  return element;
}

const measureContext = document.createElement('canvas').getContext('2d');
function textWidth(text, font) {
  measureContext.font = font;
  return measureContext.measureText(text).width;
}

// Columns: ROOT, then one per word, wide enough for its form and tag.
function columns(words) {
  const cols = [{ x: 0, width: ROOT_WIDTH }];
  let x = ROOT_WIDTH;
  for (const w of words) {
    const width = Math.max(44, Math.ceil(Math.max(textWidth(w.form, WORD_FONT), textWidth(w.upos || '', TAG_FONT))) + 22);
    cols.push({ x, width });
    x += width;
  }
  return cols;
}

// displaCy-style levels: an arc sits one level above every shorter arc it overlaps, so that
// labels never collide, crossing (non-projective) arcs included.
function levels(arcs) {
  const sorted = [...arcs].sort((a, b) => (a.hi - a.lo) - (b.hi - b.lo) || a.lo - b.lo);
  const placed = [];
  for (const arc of sorted) {
    let level = 1;
    for (const other of placed) {
      if (other.lo < arc.hi && other.hi > arc.lo) level = Math.max(level, other.level + 1);
    }
    arc.level = level;
    placed.push(arc);
  }
  return placed.reduce((max, arc) => Math.max(max, arc.level), 0);
}

// Colour of an arc the annotator has not fixed: red (0) to yellow (LOW_CONFIDENCE) when it is
// low or flagged; none (the quiet grey of the stylesheet) otherwise.
function confidenceColour(w) {
  if (!(w.check || w.conf < LOW_CONFIDENCE)) return null;
  const hue = Math.round(50 * Math.max(0, Math.min(1, w.conf / LOW_CONFIDENCE)));
  return `hsl(${hue}, 85%, 42%)`;
}

function arcClass(w) {
  const arc = state.arcs.get(w.id);
  if (!arc) return confidenceColour(w) ? 'low' : 'quiet';
  if (arc.kind === 'unknown') return 'unknown';
  return arc.kind;
}

function render() {
  const found = state.task ? warnings(state.words) : [];
  warnedIds = new Set(found.flatMap((f) => f.ids)); // marked in the tree too
  renderTree();
  renderPanel();
  renderWarnings(found);
  renderProgress();
}

function renderTree() {
  const box = $('#sentence');
  if (!state.task) {
    box.replaceChildren();
    return;
  }
  const words = state.words;
  const cols = columns(words);
  const center = (id) => cols[id].x + cols[id].width / 2;
  const arcs = words.filter((w) => w.head > 0).map((w) => ({ w, lo: Math.min(w.id, w.head), hi: Math.max(w.id, w.head) }));
  const top = levels(arcs);
  const step = Math.max(20, Math.min(30, Math.floor(240 / top))); // tall trees a little flatter
  const base = (top + 2) * step + 8; // room for the root arc's label (and a proposed head) on top
  const width = cols[cols.length - 1].x + cols[cols.length - 1].width;
  const root = svg('svg', { width, height: base + WORD_ROWS, viewBox: `0 0 ${width} ${base + WORD_ROWS}`, role: 'img' });
  const dataset = { task: state.task.task, sentId: state.task.sent_id, words: String(words.length), proposed: state.proposed === null ? '' : String(state.proposed) };
  Object.assign(box.dataset, dataset);

  const arcLayer = svg('g', { class: 'arcs' }, root);
  const labelLayer = svg('g', { class: 'labels' }, root); // above every arc: no leg runs over a label
  const spread = (id, level) => Math.min(cols[id].width / 2 - 4, 2 + level * 3);
  for (const arc of arcs) drawArc(arcLayer, labelLayer, arc, center, spread, base, arc.level * step);
  for (const w of words.filter((x) => x.head === 0)) drawRootArc(arcLayer, labelLayer, w, center(w.id), base, (top + 1) * step);
  if (state.proposed !== null && state.current !== null) drawProposed(arcLayer, center, base, (top + 1.6) * step);
  const unknownLayer = svg('g', { class: 'unknowns' }, root);
  for (const arc of state.arcs.values()) {
    if (arc.kind === 'unknown') svg('text', { class: 'unknown-mark', x: center(arc.id), y: base - 6 }, unknownLayer).textContent = '?';
  }

  drawWordColumn(root, { id: 0, form: 'ROOT', upos: '' }, cols[0], base);
  for (const w of words) drawWordColumn(root, w, cols[w.id], base);
  const scroll = box.scrollLeft;
  box.replaceChildren(root);
  box.scrollLeft = scroll;
}

// An arc from its head to its dependent: up, across at its level, down to an arrowhead. The
// head end is shifted by level so that arcs leaving one word do not run over each other.
function drawArc(layer, labels, arc, center, spread, base, height) {
  const { w } = arc;
  const kind = arcClass(w);
  const colour = kind === 'low' ? confidenceColour(w) : null;
  const direction = w.id > w.head ? 1 : -1;
  const x1 = center(w.head) + direction * spread(w.head, arc.level);
  const x2 = center(w.id);
  const y = base - height;
  const r = Math.min(8, Math.abs(x2 - x1) / 2, height / 2);
  const g = svg('g', { class: `arc ${kind}`, 'data-dep': w.id, 'data-head': w.head }, layer);
  if (w.check) g.classList.add('flagged');
  if (w.id === state.current) g.classList.add('current');
  const d = `M${x1},${base} V${y + r} Q${x1},${y} ${x1 + direction * r},${y} H${x2 - direction * r} Q${x2},${y} ${x2},${y + r} V${base - 1}`;
  const path = svg('path', { d }, g);
  const head = svg('path', { class: 'arrow', d: `M${x2 - 4},${base - 7} L${x2 + 4},${base - 7} L${x2},${base} Z` }, g);
  if (colour) {
    path.style.stroke = colour;
    head.style.fill = colour;
  }
  drawLabel(labels, g, w.deprel, (x1 + x2) / 2, y, colour, `${w.deprel} ${Number(w.conf).toFixed(2)}`);
}

function drawRootArc(layer, labels, w, x, base, height) {
  const kind = arcClass(w);
  const colour = kind === 'low' ? confidenceColour(w) : null;
  const g = svg('g', { class: `arc root ${kind}`, 'data-dep': w.id, 'data-head': 0 }, layer);
  const path = svg('path', { d: `M${x},${base - height + 8} V${base - 1}` }, g);
  const head = svg('path', { class: 'arrow', d: `M${x - 4},${base - 7} L${x + 4},${base - 7} L${x},${base} Z` }, g);
  if (colour) {
    path.style.stroke = colour;
    head.style.fill = colour;
  }
  drawLabel(labels, g, w.deprel, x, base - height, colour, `${w.deprel} ${Number(w.conf).toFixed(2)}`);
}

function drawProposed(layer, center, base, height) {
  const from = center(state.proposed);
  const to = center(state.current);
  const y = base - height;
  const g = svg('g', { class: 'arc proposed' }, layer);
  svg('path', { d: `M${from},${base} C${from},${y} ${to},${y} ${to},${base - 1}` }, g);
  svg('path', { class: 'arrow', d: `M${to - 4},${base - 7} L${to + 4},${base - 7} L${to},${base} Z` }, g);
}

// An arc's label, in the label layer, with the arc's classes (for the stylesheet).
function drawLabel(layer, arc, text, x, y, colour, title) {
  const g = svg('g', { class: arc.getAttribute('class'), 'data-dep': arc.dataset.dep }, layer);
  const width = textWidth(text, '12px system-ui, sans-serif') + 8;
  svg('rect', { class: 'label-bg', x: x - width / 2, y: y - 8, width, height: 16, rx: 3 }, g);
  const label = svg('text', { class: 'label', x, y: y + 4 }, g);
  label.textContent = text;
  if (colour) label.style.fill = colour;
  svg('title', {}, g).textContent = title;
}

function drawWordColumn(root, w, col, base) {
  const g = svg('g', { class: 'word', 'data-word-id': w.id }, root);
  const x = col.x + col.width / 2;
  svg('rect', { class: 'hit', x: col.x + 2, y: base + 2, width: col.width - 4, height: WORD_ROWS - 4, rx: 5 }, g);
  svg('text', { class: 'form', x, y: base + 20 }, g).textContent = w.form;
  svg('text', { class: 'upos', x, y: base + 35 }, g).textContent = w.id === 0 ? '' : shownTag(w);
  if (w.id === 0) {
    g.classList.add('root-marker');
    if (state.proposed === 0) g.classList.add('proposed');
    return;
  }
  // The tag's own target: a click there changes the tag, not the arc. It starts below the
  // column's middle, so that a click in the middle still picks the word.
  const tagHit = svg('rect', { class: 'tag-hit', x: col.x + 6, y: base + 27, width: col.width - 12, height: 14, rx: 3, 'data-tag-of': w.id }, g);
  svg('title', {}, tagHit).textContent = `UPOS ${shownTag(w)}: click (or t) to change it`;
  if (state.tags.has(w.id)) g.classList.add(state.tags.get(w.id) === original(w.id).upos ? 'tag-confirmed' : 'tag-fixed');
  g.dataset.upos = shownTag(w);
  const arc = state.arcs.get(w.id);
  Object.assign(g.dataset, { head: w.head, deprel: w.deprel, conf: w.conf, check: Boolean(w.check), state: arc ? arc.kind : '' });
  if (state.flagged.includes(w.id)) {
    g.classList.add('flagged');
    svg('path', { class: 'flag', d: `M${x - 5},${base + WORD_ROWS - 4} L${x + 5},${base + WORD_ROWS - 4} L${x},${base + WORD_ROWS - 11} Z` }, g);
  }
  if (w.id === state.current) g.classList.add('current');
  if (w.id === state.picking) g.classList.add('picking');
  if (w.id === state.proposed) g.classList.add('proposed');
  if (arc) g.classList.add(`fixed-${arc.kind}`);
  if (warnedIds.has(w.id)) g.classList.add('warned');
}

let warnedIds = new Set();

function renderWarnings(found) {
  const list = $('#warnings');
  if (!found.length) {
    list.innerHTML = '<li class="none">none</li>';
    return;
  }
  list.replaceChildren(...found.map((f) => {
    const item = document.createElement('li');
    item.textContent = f.text;
    item.dataset.words = f.ids.join(' ');
    return item;
  }));
}

function formOf(id) {
  if (id === 0) return 'ROOT';
  const w = word(id);
  return w ? w.form : `#${id}`;
}

function renderPanel() {
  const panel = $('#word-panel');
  const w = word(state.current);
  if (!w) {
    panel.replaceChildren();
    return;
  }
  const arc = state.arcs.get(w.id);
  const status = arc ? { accepted: 'accepted', corrected: 'corrected', unknown: 'head unknown' }[arc.kind] : (w.check ? 'to check' : 'not checked');
  const heading = document.createElement('h3');
  heading.textContent = `${w.form} (${w.id}) ← ${formOf(w.head)} (${w.head}) ${w.deprel} · ${Number(w.conf).toFixed(2)} · ${status}`;
  const parts = [heading];
  if (state.picking !== null) parts.push(paragraph(`Click the head of "${formOf(state.picking)}" (or ROOT); click it again to cancel.`));
  if (state.proposed !== null) parts.push(paragraph(`Proposed head: ${formOf(state.proposed)} (${state.proposed}). Enter confirms, / sets the label too, Esc cancels.`));
  if (arc && arc.kind !== 'unknown' && arc.deprel === null) parts.push(paragraph('Head set: Enter keeps the label drawn, / chooses another.'));
  const alternatives = (w.alternatives || []).slice(0, 9);
  if (alternatives.length) {
    const list = document.createElement('ol');
    list.className = 'alternatives';
    alternatives.forEach((alt, i) => {
      const item = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.tabIndex = -1;
      button.dataset.alternative = String(i + 1);
      button.textContent = `${i + 1}  ${formOf(alt.head)} (${alt.head}) ${alt.deprel} · ${Number(alt.conf).toFixed(2)}`;
      item.append(button);
      list.append(item);
    });
    parts.push(list);
  }
  panel.replaceChildren(...parts);
}

function paragraph(text) {
  const p = document.createElement('p');
  p.textContent = text;
  return p;
}

function renderProgress() {
  if (!state.task) return;
  const open = unresolved().length;
  const fixed = [...state.arcs.values()].length;
  const tags = state.tags.size ? ` · ${state.tags.size} tag(s) set` : '';
  $('#progress').textContent = `${state.flagged.length - open}/${state.flagged.length} flagged checked · ${fixed} fixed${tags}`;
  $('#submit').classList.toggle('ready', open === 0 && fixed > 0);
}

function scrollToWord(id) {
  if (id === null || id === undefined) return;
  const box = $('#sentence');
  const g = box.querySelector(`[data-word-id="${id}"] rect`);
  if (!g) return;
  const x = Number(g.getAttribute('x'));
  const width = Number(g.getAttribute('width'));
  if (x < box.scrollLeft + 20 || x + width > box.scrollLeft + box.clientWidth - 20) {
    box.scrollLeft = Math.max(0, x + width / 2 - box.clientWidth / 2);
  }
}

// ---------------------------------------------------------------- models view

async function loadModels() {
  const data = await attempt(() => api('GET', '/api/models'));
  if (!data) return;
  $('#models-current').textContent = data.current || 'none';
  $('#models-stored').textContent = data.stored_since_last_cycle;
  const events = [...data.models].sort((a, b) => a.time.localeCompare(b.time));
  drawChart(events);
  $('#model-history tbody').replaceChildren(...events.reverse().map(historyRow));
}

// LAS as a percentage, whether the server gives 0.87 or 87.
const percent = (x) => (x === null || x === undefined ? null : (x <= 1 ? x * 100 : x));
const formatLas = (x) => (percent(x) === null ? '–' : percent(x).toFixed(2));

function historyRow(event) {
  const row = document.createElement('tr');
  row.className = `event-${event.event}`;
  const cells = [event.time.replace('T', ' ').replace(/\.\d+/, ''), event.event, event.model, formatLas(event.heldout_las), formatLas(event.annotations_las), (event.reasons || []).join('; ')];
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
  const points = events.filter((e) => percent(e.heldout_las) !== null).map((e) => ({ t: Date.parse(e.time), las: percent(e.heldout_las), e }));
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
    svg('title', {}, dot).textContent = `${p.e.time} ${p.e.event} ${p.e.model}: ${p.las.toFixed(2)}`;
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

// ---------------------------------------------------------------- routes and start

// #models (or the path /models) shows the model page; anything else the check view.
function route() {
  const models = location.hash === '#models' || (location.hash === '' && /\/models\/?$/.test(location.pathname));
  $('#models-view').hidden = !models;
  $('#check-view').hidden = models;
  $('#nav-models').classList.toggle('active', models);
  $('#nav-check').classList.toggle('active', !models);
  if (models) loadModels();
  else if (!state.task) loadNext();
}

function start() {
  setPending(0);
  document.addEventListener('keydown', onKey);
  $('#sentence').addEventListener('click', onTreeClick);
  $('#word-panel').addEventListener('click', onAlternativeClick);
  $('#label-input').addEventListener('input', filterLabels);
  $('#label-input').addEventListener('keydown', onLabelKey);
  $('#label-list').addEventListener('click', (e) => {
    const item = e.target.closest('li[data-label]');
    if (item) chooseLabel(item.dataset.label);
  });
  $('#label-chooser').addEventListener('click', (e) => { if (e.target.id === 'label-chooser') closeLabels(); });
  $('#tag-select').replaceChildren(...UPOS.map((tag) => {
    const option = document.createElement('option');
    option.value = tag;
    option.textContent = tag;
    return option;
  }));
  $('#tag-form').addEventListener('submit', (e) => {
    e.preventDefault();
    chooseTag();
  });
  $('#tag-select').addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      chooseTag();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      closeTags();
    }
  });
  $('#tag-select').addEventListener('dblclick', chooseTag);
  $('#tag-form .cancel').addEventListener('click', closeTags);
  $('#tag-dialog').addEventListener('click', (e) => { if (e.target.id === 'tag-dialog') closeTags(); });
  $('#bad-form').addEventListener('submit', (e) => {
    e.preventDefault();
    sendBad($('#bad-reason').value.trim());
  });
  $('#bad-form .cancel').addEventListener('click', () => { $('#bad-dialog').hidden = true; });
  $('#bad-reason').addEventListener('keydown', (e) => { if (e.key === 'Escape') $('#bad-dialog').hidden = true; });
  $('#error-close').addEventListener('click', () => { $('#error').hidden = true; });
  $('#reload-next').addEventListener('click', loadNext);
  $('#retrain').addEventListener('click', retrain);
  const buttons = { '#submit': submit, '#accept-all': acceptWhole, '#undo': undo, '#skip': skip, '#bad': openBad };
  for (const [selector, action] of Object.entries(buttons)) {
    $(selector).addEventListener('click', (e) => {
      e.currentTarget.blur(); // keys go to the page again, not to the button
      action();
    });
  }
  window.addEventListener('hashchange', route);
  loadLabels();
  route();
  if ($('#models-view').hidden) return;
  loadStats();
}

start();

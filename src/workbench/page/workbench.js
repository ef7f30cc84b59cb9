// spoolparse correction workbench: the browser side of `spoolparse annotate`.
//
// One page, two views: #check (the default: correct the arcs of low-confidence sentences,
// keyboard first) and #models (the model history and "retrain now"). Plain JavaScript, no
// build step, nothing fetched but the server's own JSON API; the tree is inline SVG drawn here.
//
// The state of a task is the tree the server last gave (GET /api/next, then POST /api/reparse
// after every change) plus the arcs the annotator fixed: accepted (as the parser had them),
// corrected, or unknown (a head nobody can tell: never sent). Only fixed arcs are answered.
// A word's UPOS (the tag under it) can be changed too (click it, or t), and its lemma (the
// line under the tag: click it, or e): what is set is sent with the arcs ("upos", "lemma" on a
// word's arc object, or alone), re-parsed with, and stored. The other scripts: api.js (the
// JSON API and banners), tree.js (drawing), choosers.js (the label, tag and lemma dialogs),
// models.js (the #models view).
'use strict';

const TOKEN_KEY = 'spoolparse.workbench.token';
// The task on the page and what the annotator set on it, kept for the tab: a reload resumes it.
const SAVED_KEY = 'spoolparse.workbench.task';
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
  relations: [],     // UD's relations and documented subtypes: a label the model lacks may still be one
  task: null,        // the task as GET /api/next gave it (its words are the parser's first tree)
  words: [],         // the tree drawn: the last reparse
  flagged: [],       // ids of the words the server asks to check, in sentence order
  arcs: new Map(),   // word id -> {id, head, deprel, kind}: kind accepted | corrected | unknown
  tags: new Map(),   // word id -> the UPOS the annotator set
  lemmas: new Map(), // word id -> the lemma the annotator set
  history: [],       // [{arcs, tags, lemmas, current}] before each change, for undo
  current: null,     // the focused word
  proposed: null,    // a head chosen by moving (h/l), not yet confirmed
  picking: null,     // a word clicked with the mouse, waiting for its head
  reparseSeq: 0,     // only the answer to the latest reparse is drawn
  pending: 0,
  tokenPrompt: null, // the open token form's promise: every 401 waits for the same one
  tagging: null,     // the word whose tag the tag chooser is open for
  lemmatizing: null, // the word whose lemma the lemma editor is open for
  skipArmed: 0,      // when s was pressed with changes not submitted (a second s skips)
  errorOfTask: null, // the task the error shown is about, when it is about one task only
};

const $ = (selector) => document.querySelector(selector);

// ---------------------------------------------------------------- tasks

async function loadNext() {
  const task = await attempt(() => api('GET', '/api/next'));
  if (task === undefined) return; // the error is shown; the old task stays
  setTask(task);
  save();
  loadStats();
}

// Keeps the task and what was set on it for the tab (sessionStorage), so that a reload loses
// nothing: see resume.
function save() {
  if (!state.task) {
    sessionStorage.removeItem(SAVED_KEY);
    return;
  }
  const plain = (s) => ({ arcs: [...s.arcs.values()], tags: [...s.tags], lemmas: [...s.lemmas], current: s.current });
  const saved = { task: state.task.task, ...plain(state), history: state.history.map(plain) };
  sessionStorage.setItem(SAVED_KEY, JSON.stringify(saved));
}

// After a reload: the task the tab had, if it is still the annotator's (POST /api/resume), with
// what had been set on it; otherwise the next one.
async function resume() {
  let saved = null;
  try {
    saved = JSON.parse(sessionStorage.getItem(SAVED_KEY) || 'null');
  } catch (e) {
    saved = null;
  }
  if (!saved || !saved.task) return loadNext();
  let task;
  try {
    task = await api('POST', '/api/resume', { task: saved.task });
  } catch (e) {
    sessionStorage.removeItem(SAVED_KEY);
    if (e.status !== 410) showError(e.message);
    return loadNext();
  }
  setTask(task);
  const restored = (s) => ({
    arcs: new Map((s.arcs || []).map((arc) => [arc.id, arc])),
    tags: new Map(s.tags || []),
    lemmas: new Map(s.lemmas || []),
    current: s.current,
  });
  Object.assign(state, restored(saved));
  if (!word(state.current)) state.current = state.flagged.length ? state.flagged[0] : (state.words.length ? 1 : null);
  // Undo reaches back past the reload (it used to find nothing to undo).
  state.history = (saved.history || []).map(restored);
  const kept = state.arcs.size + state.tags.size + state.lemmas.size;
  if (kept && !state.history.length) state.history = [restored({ current: state.current })];
  if (kept) showNotice(`Resumed ${task.sent_id} with the ${kept} change(s) made before the reload.`);
  render();
  scrollToWord(state.current);
  if (kept) reparse();
  loadStats();
}

function setTask(task) {
  // A warning about the sentence left (changes not submitted) is not the next one's.
  if (state.errorOfTask && (!task || task.task !== state.errorOfTask)) $('#error').hidden = true;
  state.errorOfTask = null;
  state.task = task;
  state.words = task ? task.words : [];
  state.flagged = state.words.filter((w) => w.check).map((w) => w.id);
  state.arcs = new Map();
  state.tags = new Map();
  state.lemmas = new Map();
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
  // A sentence of the uniform sample measures what reaches accepted/: only a whole review counts.
  $('#sample-note').hidden = !(task && task.sample);
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
  // An empty queue may be one of held-out sentences only (the example daemon's en_ewt dev).
  const heldOut = $('#held-out-note');
  heldOut.hidden = !stats.held_out;
  heldOut.textContent = `${stats.held_out} low-confidence sentence(s) of the retraining gate's held-out file ([retrain] heldout) are not queued: a correction of them could never be trained on.`;
}

async function loadLabels() {
  const data = await attempt(() => api('GET', '/api/labels'));
  if (data) {
    state.labels = data.labels;
    state.relations = data.relations || [];
  }
}

const word = (id) => state.words.find((w) => w.id === id);
const original = (id) => state.task.words.find((w) => w.id === id);

// The arcs sent to reparse and answer: the fixed ones, unknown heads left out, each with the
// UPOS and lemma set on its word; a tag or lemma set on a word without a fixed arc goes alone
// ({id, upos}, {id, lemma}). A
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

// `arcs` with the tags and lemmas set: on a word's arc, or alone; sorted by word.
function withTags(arcs) {
  for (const [key, set] of [['upos', state.tags], ['lemma', state.lemmas]]) {
    for (const [id, value] of set) {
      let arc = arcs.find((a) => a.id === id);
      if (!arc) {
        arc = { id };
        arcs.push(arc);
      }
      arc[key] = value;
    }
  }
  return arcs.sort((a, b) => a.id - b.id);
}

// The UPOS shown under a word: the one the annotator set, else the task's; the same for the
// lemma.
const shownTag = (w) => state.tags.get(w.id) || w.upos || '';
const shownLemma = (w) => state.lemmas.get(w.id) || w.lemma || '';

// What undo restores.
const snapshot = (id) => ({ arcs: new Map(state.arcs), tags: new Map(state.tags), lemmas: new Map(state.lemmas), current: id });

// Fixes one word's arc (head null: unknown), keeping the previous arcs for undo, then asks
// the server for its best tree holding every fixed arc.
function setArc(id, head, deprel) {
  if (head === 0) deprel = 'root';
  state.history.push(snapshot(id));
  const first = original(id);
  let kind = 'corrected';
  if (head === null) kind = 'unknown';
  else if (head === first.head && (deprel === null || deprel === first.deprel)) kind = 'accepted';
  state.arcs.set(id, { id, head, deprel, kind });
  state.proposed = null;
  state.picking = null;
  render();
  reparse();
  save();
}

// Sets one word's UPOS (undoable), then re-parses with it.
function setTag(id, upos) {
  state.history.push(snapshot(id));
  state.tags.set(id, upos);
  state.current = id;
  render();
  reparse();
  save();
}

// Sets one word's lemma (undoable), then re-parses with it (a parser may read lemmas).
function setLemma(id, lemma) {
  state.history.push(snapshot(id));
  state.lemmas.set(id, lemma);
  state.current = id;
  render();
  reparse();
  save();
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
  const tags = result.tags ? `, ${result.tags} tag(s)` : '';
  const lemmas = result.lemmas ? `, ${result.lemmas} lemma(s)` : '';
  if (result.held_back) showError(`${state.task.sent_id} held back, not stored as reviewed: ${result.held_back}.`);
  else showNotice(`Stored ${result.stored} arc(s)${tags}${lemmas} of ${state.task.sent_id}.`);
  await loadNext();
}

// Skips the task. With changes not submitted, the first s only says so: a second one within
// five seconds drops them and skips (Ctrl-Enter submits them instead).
async function skip() {
  const changes = state.arcs.size + state.tags.size + state.lemmas.size;
  if (changes && Date.now() - state.skipArmed > 5000) {
    state.skipArmed = Date.now();
    showError(`${changes} change(s) on this sentence are not submitted: Ctrl-Enter submits them; s again skips and drops them.`);
    state.errorOfTask = state.task.task;
    return;
  }
  state.skipArmed = 0;
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
  state.lemmas = last.lemmas;
  save();
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
  e: () => openLemma(state.current),
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
  if (/^[1-9]$/.test(event.key)) action = () => takeAlternative(Number(event.key));
  if (!action) return;
  event.preventDefault(); // also keeps Enter and space off a focused button
  action();
}

// ---------------------------------------------------------------- mouse

// A click on a word picks it; a click on another word (or ROOT) then makes that its head.
function onTreeClick(event) {
  const tag = event.target.closest('[data-tag-of]');
  if (tag) {
    openTags(Number(tag.dataset.tagOf));
    return;
  }
  const lemma = event.target.closest('[data-lemma-of]');
  if (lemma) {
    openLemma(Number(lemma.dataset.lemmaOf));
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

// ---------------------------------------------------------------- routes and start

// #models (or the path /models) shows the model page; anything else the check view.
function route() {
  const models = location.hash === '#models' || (location.hash === '' && /\/models\/?$/.test(location.pathname));
  $('#models-view').hidden = !models;
  $('#check-view').hidden = models;
  $('#nav-models').classList.toggle('active', models);
  $('#nav-check').classList.toggle('active', !models);
  if (models) loadModels();
  else if (!state.task) resume();
}

function start() {
  setPending(0);
  document.addEventListener('keydown', onKey);
  $('#sentence').addEventListener('click', onTreeClick);
  // A narrower window must not leave the word asked about out of view.
  window.addEventListener('resize', () => scrollToWord(state.current));
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
  $('#lemma-form').addEventListener('submit', (e) => {
    e.preventDefault();
    chooseLemma();
  });
  $('#lemma-input').addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      closeLemma();
    }
  });
  $('#lemma-form .cancel').addEventListener('click', closeLemma);
  $('#lemma-dialog').addEventListener('click', (e) => { if (e.target.id === 'lemma-dialog') closeLemma(); });
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

// spoolparse correction workbench: the dialogs that set one thing of the current word: its
// label (typed, matched against the model's), its tag (one of UD's 17) and its lemma. They read
// and change the state that workbench.js owns, through its setArc, setTag and setLemma.
'use strict';

// Shows a dialog below the tree, so that the arc and word it is about stay in sight: the page
// is scrolled first if the window has no room for both.
function showBelowTree(overlay) {
  overlay.hidden = false;
  const dialog = overlay.querySelector('.dialog');
  let tree = $('#sentence').getBoundingClientRect();
  if (tree.bottom + 8 + dialog.offsetHeight > window.innerHeight) {
    window.scrollBy(0, Math.max(0, tree.top - 8));
    tree = $('#sentence').getBoundingClientRect();
  }
  const room = window.innerHeight - dialog.offsetHeight - 8;
  overlay.style.paddingTop = `${Math.max(8, Math.min(tree.bottom + 8, room))}px`;
}

// ---------------------------------------------------------------- label chooser

function openLabels() {
  const w = word(state.current);
  if (!w) return;
  $('#label-word').textContent = `${w.form} (${w.id})`;
  showBelowTree($('#label-chooser'));
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
  const found = starts.concat(contains);
  // A UD relation the model has not seen (obl:tmod) is offered as typed: the server takes it.
  if (isRelation(t) && !state.labels.includes(t)) found.push(t);
  return found;
}

// Whether `name` is a UD relation: a universal one or a subtype UD documents, as GET /api/labels
// lists them (any other subtype, obl:tmodx, is a typo the server refuses).
function isRelation(name) {
  return state.relations.includes(name);
}

function filterLabels() {
  const list = $('#label-list');
  list.replaceChildren(...matchingLabels($('#label-input').value).map((label, i) => {
    const item = document.createElement('li');
    item.textContent = state.labels.includes(label) ? label : `${label} (a UD relation the model has not seen)`;
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
  showBelowTree($('#tag-dialog'));
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

// ---------------------------------------------------------------- lemma editor

function openLemma(id) {
  const w = word(id);
  if (!w) return;
  state.lemmatizing = id;
  $('#lemma-word').textContent = `${w.form} (${w.id})`;
  const input = $('#lemma-input');
  input.value = shownLemma(w);
  showBelowTree($('#lemma-dialog'));
  input.focus();
  input.select();
}

function closeLemma() {
  $('#lemma-dialog').hidden = true;
  state.lemmatizing = null;
}

// Sets the lemma typed; the task's own counts as confirmed (it is sent too).
function chooseLemma() {
  const id = state.lemmatizing;
  const lemma = $('#lemma-input').value.trim();
  closeLemma();
  if (id === null) return;
  if (!lemma || lemma === '_' || /[\t\n]/.test(lemma)) {
    showError('A lemma is not empty, not _ and has no tabs.');
    return;
  }
  setLemma(id, lemma);
}

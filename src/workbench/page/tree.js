// spoolparse correction workbench: what is drawn of a task: the tree (inline SVG), the
// warnings on it, the panel of the current word and the progress line. Reads the state that
// workbench.js owns; changes none of it.
'use strict';

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
const LEMMA_FONT = 'italic 11px system-ui, sans-serif';
const WORD_ROWS = 66; // the form, the tag, the lemma and the flag mark under the arcs

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

// Columns: ROOT, then one per word, wide enough for its form, tag and lemma.
function columns(words) {
  const cols = [{ x: 0, width: ROOT_WIDTH }];
  let x = ROOT_WIDTH;
  for (const w of words) {
    const text = Math.max(textWidth(w.form, WORD_FONT), textWidth(w.upos || '', TAG_FONT), textWidth(shownLemma(w), LEMMA_FONT));
    const width = Math.max(44, Math.ceil(text) + 22);
    cols.push({ x, width });
    x += width;
  }
  return cols;
}

// displaCy-style levels: an arc sits one level above every shorter arc it overlaps, its label
// included (a label wider than its arc reaches over its neighbours'), so that labels never
// collide, crossing (non-projective) arcs included.
function levels(arcs) {
  const sorted = [...arcs].sort((a, b) => (a.hi - a.lo) - (b.hi - b.lo) || a.lo - b.lo);
  const placed = [];
  for (const arc of sorted) {
    let level = 1;
    for (const other of placed) {
      if (other.left < arc.right && other.right > arc.left) level = Math.max(level, other.level + 1);
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
  const arcs = words.filter((w) => w.head > 0).map((w) => withExtent({ w, lo: Math.min(w.id, w.head), hi: Math.max(w.id, w.head) }, center));
  const top = levels(arcs);
  const step = Math.max(20, Math.min(30, Math.floor(240 / top))); // tall trees a little flatter
  const base = (top + 2) * step + 8; // room for the root arc's label (and a proposed head) on top
  const width = cols[cols.length - 1].x + cols[cols.length - 1].width;
  const root = svg('svg', { width, height: base + WORD_ROWS, viewBox: `0 0 ${width} ${base + WORD_ROWS}`, role: 'img' });
  const dataset = { task: state.task.task, sentId: state.task.sent_id, words: String(words.length), proposed: state.proposed === null ? '' : String(state.proposed) };
  Object.assign(box.dataset, dataset);

  const arcLayer = svg('g', { class: 'arcs' }, root);
  const labelLayer = svg('g', { class: 'labels' }, root); // above every arc: no leg runs over a label
  const legs = legOffsets(arcs, cols);
  for (const arc of arcs) drawArc(arcLayer, labelLayer, arc, center, legs.get(arc), base, arc.level * step);
  for (const w of words.filter((x) => x.head === 0)) drawRootArc(arcLayer, labelLayer, w, center(w.id), base, (top + 1) * step);
  if (state.proposed !== null && state.current !== null) drawProposed(arcLayer, center, base, (top + 1.6) * step);
  const unknownLayer = svg('g', { class: 'unknowns' }, root);
  for (const arc of state.arcs.values()) {
    if (arc.kind === 'unknown') svg('text', { class: 'unknown-mark', x: center(arc.id), y: base - 6 }, unknownLayer).textContent = '?';
  }

  drawWordColumn(root, { id: 0, form: 'ROOT', upos: '', lemma: '' }, cols[0], base);
  for (const w of words) drawWordColumn(root, w, cols[w.id], base);
  const scroll = box.scrollLeft;
  box.replaceChildren(root);
  box.scrollLeft = scroll;
}

// Where each arc leaves its head, as an offset from the head's centre: the centre is the
// arrowhead of the head's own arc, and the legs leaving on one side are spaced apart, lowest
// arc innermost, so that no leg runs into an arrowhead or over another leg however many
// dependents a word has (the spacing shrinks to fit the column).
const ARROW_CLEARANCE = 7;
function legOffsets(arcs, cols) {
  const sides = new Map();
  for (const arc of arcs) {
    const key = `${arc.w.head}:${arc.w.id > arc.w.head ? 1 : -1}`;
    if (!sides.has(key)) sides.set(key, []);
    sides.get(key).push(arc);
  }
  const offsets = new Map();
  for (const leaving of sides.values()) {
    leaving.sort((a, b) => a.level - b.level);
    const room = cols[leaving[0].w.head].width / 2 - 3 - ARROW_CLEARANCE;
    const gap = leaving.length > 1 ? Math.min(4, room / (leaving.length - 1)) : 0;
    leaving.forEach((arc, rank) => offsets.set(arc, ARROW_CLEARANCE + rank * gap));
  }
  return offsets;
}

// Arcs wider than this carry their label near the word they point at, not in their middle:
// the middle of a long arc is often scrolled out of view while its word is asked about.
const LONG_ARC = 240;
// The corner radius of an arc (at most), and the room kept around a label: legs further out
// than the first (legOffsets) move it a few pixels.
const CORNER = 8;
const LABEL_SLACK = 3;

// Where the label of an arc from `head` to `dep` (centres) goes, before legs are offset.
function labelX(head, dep, text) {
  const direction = dep > head ? 1 : -1;
  return Math.abs(dep - head) > LONG_ARC ? dep - direction * (labelWidth(text) / 2 + 2 * CORNER + 4) : (head + dep) / 2;
}

// `arc` with the horizontal extent it and its label take: `left` and `right`, in pixels.
function withExtent(arc, center) {
  const dep = center(arc.w.id);
  const head = center(arc.w.head) + (dep > center(arc.w.head) ? 1 : -1) * ARROW_CLEARANCE;
  const x = labelX(head, dep, arc.w.deprel);
  const half = labelWidth(arc.w.deprel) / 2 + LABEL_SLACK;
  arc.left = Math.min(center(arc.lo), x - half);
  arc.right = Math.max(center(arc.hi), x + half);
  return arc;
}

// An arc from its head to its dependent: up, across at its level, down to an arrowhead. The
// head end is shifted by `leg` (legOffsets) so that arcs leaving one word do not run over
// each other or into its arrowhead.
function drawArc(layer, labels, arc, center, leg, base, height) {
  const { w } = arc;
  const kind = arcClass(w);
  const colour = kind === 'low' ? confidenceColour(w) : null;
  const direction = w.id > w.head ? 1 : -1;
  const x1 = center(w.head) + direction * leg;
  const x2 = center(w.id);
  const y = base - height;
  const r = Math.min(CORNER, Math.abs(x2 - x1) / 2, height / 2);
  const g = svg('g', { class: `arc ${kind}`, 'data-dep': w.id, 'data-head': w.head, 'data-x1': x1, 'data-x2': x2 }, layer);
  if (w.check) g.classList.add('flagged');
  if (w.id === state.current) g.classList.add('current');
  const d = `M${x1},${base} V${y + r} Q${x1},${y} ${x1 + direction * r},${y} H${x2 - direction * r} Q${x2},${y} ${x2},${y + r} V${base - 1}`;
  const path = svg('path', { d }, g);
  const head = svg('path', { class: 'arrow', d: `M${x2 - 4},${base - 7} L${x2 + 4},${base - 7} L${x2},${base} Z` }, g);
  if (colour) {
    path.style.stroke = colour;
    head.style.fill = colour;
  }
  drawLabel(labels, g, w.deprel, labelX(x1, x2, w.deprel), y, colour, `${w.deprel} ${Number(w.conf).toFixed(2)}`);
}

function drawRootArc(layer, labels, w, x, base, height) {
  const kind = arcClass(w);
  const colour = kind === 'low' ? confidenceColour(w) : null;
  const g = svg('g', { class: `arc root ${kind}`, 'data-dep': w.id, 'data-head': 0, 'data-x2': x }, layer);
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

function labelWidth(text) {
  return textWidth(text, '12px system-ui, sans-serif') + 8;
}

// An arc's label, in the label layer, with the arc's classes (for the stylesheet).
function drawLabel(layer, arc, text, x, y, colour, title) {
  const g = svg('g', { class: arc.getAttribute('class'), 'data-dep': arc.dataset.dep }, layer);
  const width = labelWidth(text);
  svg('rect', { class: 'label-bg', x: x - width / 2, y: y - 8, width, height: 16, rx: 3 }, g);
  const label = svg('text', { class: 'label', x, y: y + 4 }, g);
  label.textContent = text;
  if (colour) label.style.fill = colour;
  svg('title', {}, g).textContent = title;
}

function drawWordColumn(root, w, col, base) {
  const g = svg('g', { class: 'word', 'data-word-id': w.id }, root);
  const x = col.x + col.width / 2;
  // The word's target covers its form and tag; its middle stays above the tag's target, so that
  // a click in the middle picks the word (the lemma below has a target of its own).
  svg('rect', { class: 'hit', x: col.x + 2, y: base + 2, width: col.width - 4, height: 48, rx: 5 }, g);
  svg('text', { class: 'form', x, y: base + 20 }, g).textContent = w.form;
  svg('text', { class: 'upos', x, y: base + 35 }, g).textContent = w.id === 0 ? '' : shownTag(w);
  svg('text', { class: 'lemma', x, y: base + 49 }, g).textContent = w.id === 0 ? '' : shownLemma(w);
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
  // The lemma's own target, below the tag's.
  const lemmaHit = svg('rect', { class: 'lemma-hit', x: col.x + 6, y: base + 41, width: col.width - 12, height: 13, rx: 3, 'data-lemma-of': w.id }, g);
  svg('title', {}, lemmaHit).textContent = `lemma ${shownLemma(w)}: click (or e) to change it`;
  if (state.lemmas.has(w.id)) g.classList.add(state.lemmas.get(w.id) === original(w.id).lemma ? 'lemma-confirmed' : 'lemma-fixed');
  g.dataset.lemma = shownLemma(w);
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
  const feats = w.feats && w.feats !== '_' ? ` · ${w.feats.split('|').join(' ')}` : '';
  parts.push(paragraph(`${shownTag(w)} · lemma ${shownLemma(w) || '–'}${feats}`));
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
  const lemmas = state.lemmas.size ? ` · ${state.lemmas.size} lemma(s) set` : '';
  $('#progress').textContent = `${state.flagged.length - open}/${state.flagged.length} flagged checked · ${fixed} fixed${tags}${lemmas}`;
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

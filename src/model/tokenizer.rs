//! Tokenization and sentence splitting of raw text, learned from treebanks: an averaged
//! perceptron over hashed character-window features decides, after each character that is not
//! whitespace, whether a token ends there, a sentence ends there, or neither; and a dictionary
//! learned from the treebank's multiword tokens (`1-2 du` → `de le`) splits tokens into words.
//!
//! Training text is rebuilt from the treebank: each sentence's tokens joined as their
//! `SpaceAfter=No` says, sentences of one paragraph joined by one space (none after a
//! `SpaceAfter=No` last token), and a new paragraph at every `# newdoc` and `# newpar`
//! (paragraph ends are sentence ends by definition, so they teach nothing). A multiword token is
//! one token of the text; its words train the dictionary ([`MwtDict`]).
//!
//! Features of the decision after character `i` (all hashed, written into a reused buffer):
//! the lowercase characters at −2…+2 and their bigrams and trigrams around `i`; the classes
//! (upper, lower, digit, other letter, whitespace, newline, each ASCII punctuation sign alone,
//! other) at −3…+3; the whitespace-delimited chunk holding `i`, the part of it up to `i` and
//! the part after `i`, and how far `i` is from its end; at a chunk's end, the next chunk and the
//! class of its first character, and whether a line break lies between. Whitespace always ends
//! a token (so a form never holds a space: forms of treebanks that do, such as `400 000`, are
//! learned as two tokens), and no token ends before a combining mark, a zero-width joiner, a
//! variation selector or an emoji modifier, or after a joiner ([`glued`]), so that a character
//! and its marks, and an emoji sequence, stay one token whatever the weights say. URLs, e-mail
//! addresses, file paths and command-line options are one token whatever the weights say too
//! ([`crate::model::whole_token`]): the decisions inside them are no boundary, those at their
//! edges inside a chunk a token end (so punctuation after them still splits off); a chunk's
//! last decision stays the classifier's, so that the sentence ends the splitter finds from a
//! chunk's end alone are those of the whole text. A curly apostrophe is read as a straight one
//! ([`crate::model::apostrophe`]), in the characters' features and in the multiword-token
//! dictionary, whose words keep the apostrophe the token had.
//!
//! Character attributes are computed once per text into reused arrays; classifying allocates
//! nothing per character. This module owns the decisions and their training; it does not read
//! files or build sentences (the raw reader of `crate::parse::raw` does).
//!
//! Measured (one quick run each, on a machine shared with other builds; F1 over character
//! spans of tokens and of sentences on the treebank's dev file, as `train` prints it and
//! `inspect` shows it; the raw text is rebuilt from the dev file as training text is):
//!
//! | treebank  | tokens F1 | sentences F1 | multiword forms | training |
//! |-----------|-----------|--------------|-----------------|----------|
//! | en_ewt    | 99.15     | 88.97        | 470             | 3.6 s    |
//! | el_gdt    | 99.79     | 94.03        | 7               | 0.9 s    |
//! | hu_szeged | 99.92     | 98.53        | 0               | 0.5 s    |
//!
//! from `spoolparse train --train ../shared/data/ud/TB/train.conllu.zst --dev
//! ../shared/data/ud/TB/dev.conllu.zst --output M --tokenizer --epochs 1` (the tokenizer's
//! default 8 epochs). hu_szeged has no `# newpar`: its training text is one paragraph.
//! The official figures (words, multiword tokens, through the CoNLL 2018 evaluator) are
//! `spoolparse eval`'s. Speed: tokenizing costs about a fifth of a raw-text parse (see
//! `crate::parse::raw`).

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::base::hash::{combine, mix, Templates};
use crate::corpus::{Column, Sentence, TokenKind};
use crate::learn::perceptron::{Perceptron, Weights};
use crate::learn::scorer::Scorer;
use crate::model::apostrophe;
use crate::model::whole_token;

/// Name and version of the tokenizer's feature templates; stored in models.
pub const TOKENIZER_FEATURE_SET: &str = "char-window+chunk/1";

/// No boundary after the character (and the label of whitespace).
pub const NONE: u8 = 0;
/// A token ends after the character.
pub const TOKEN: u8 = 1;
/// A sentence (and its last token) ends after the character.
pub const SENTENCE: u8 = 2;
/// Classes scored.
const CLASSES: usize = 3;

/// Characters of a chunk counted from its end, capped.
const REST_CAP: usize = 4;

/// Whether `c` separates tokens: whitespace, and control and format characters that have no
/// place in a form (they are kept in the output as whitespace is, see `crate::parse::raw`).
#[inline]
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || c.is_control() || c == '\u{feff}'
}

/// Whether `c` attaches to the character before it: combining marks (the common blocks), the
/// zero-width joiner and non-joiner, variation selectors and emoji skin-tone modifiers.
#[inline]
pub fn glued(c: char) -> bool {
    matches!(c,
        '\u{0300}'..='\u{036f}' | '\u{0483}'..='\u{0489}' | '\u{0591}'..='\u{05bd}' | '\u{0610}'..='\u{061a}'
        | '\u{064b}'..='\u{065f}' | '\u{0900}'..='\u{0903}' | '\u{093a}'..='\u{094f}' | '\u{1ab0}'..='\u{1aff}'
        | '\u{1dc0}'..='\u{1dff}' | '\u{200c}' | '\u{200d}' | '\u{20d0}'..='\u{20ff}' | '\u{fe00}'..='\u{fe0f}'
        | '\u{fe20}'..='\u{fe2f}' | '\u{1f3fb}'..='\u{1f3ff}' | '\u{e0100}'..='\u{e01ef}')
}

/// The class of a character, as a feature value.
#[inline]
fn class_of(c: char) -> u8 {
    let c = apostrophe::read_as(c);
    if c == '\n' {
        b'n'
    } else if is_space(c) {
        b's'
    } else if c.is_ascii_punctuation() {
        c as u8
    } else if c.is_uppercase() {
        b'U'
    } else if c.is_lowercase() {
        b'L'
    } else if c.is_numeric() {
        b'D'
    } else if c.is_alphabetic() {
        b'A'
    } else if glued(c) {
        b'M'
    } else {
        b'O'
    }
}

#[inline]
fn lower(c: char) -> char {
    let c = apostrophe::read_as(c);
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

/// Per-character attributes of a text, in arrays reused from text to text.
#[derive(Debug, Default, Clone)]
struct Attrs {
    id: Vec<u64>,
    class: Vec<u8>,
    /// The chunk (maximal run of non-space characters) holding the character; 0 for spaces.
    chunk: Vec<u64>,
    /// The chunk's characters up to and including this one.
    before: Vec<u64>,
    /// The chunk's characters after this one.
    after: Vec<u64>,
    /// Characters left in the chunk after this one, capped at [`REST_CAP`].
    rest: Vec<u8>,
    /// At a chunk's last character: the next chunk, with the class of its first character and
    /// whether a line break comes first; 0 elsewhere.
    next: Vec<u64>,
}

/// Value of positions outside the text.
const PAD: u64 = 0x5041_4421;

impl Attrs {
    fn fill(&mut self, chars: &[char]) {
        let n = chars.len();
        for v in [&mut self.id, &mut self.chunk, &mut self.before, &mut self.after, &mut self.next] {
            v.clear();
            v.resize(n, 0);
        }
        self.class.clear();
        self.class.extend(chars.iter().map(|&c| class_of(c)));
        self.rest.clear();
        self.rest.resize(n, 0);
        for (id, &c) in self.id.iter_mut().zip(chars) {
            *id = mix(u64::from(lower(c) as u32) ^ 0x4348_0000_0000);
        }
        // Chunks, left to right; each chunk's `next` is filled when the following one is known.
        let mut i = 0;
        let mut prev_end: Option<usize> = None;
        while i < n {
            if is_space(chars[i]) {
                i += 1;
                continue;
            }
            let start = i;
            let mut h = 0x0043_4855_4e4b_u64;
            while i < n && !is_space(chars[i]) {
                h = combine(h, self.id[i]);
                self.before[i] = h;
                i += 1;
            }
            let end = i;
            let mut a = 0x0041_4654_4552_u64;
            for j in (start..end).rev() {
                self.after[j] = a;
                a = combine(a, self.id[j]);
                self.chunk[j] = h;
                self.rest[j] = (end - 1 - j).min(REST_CAP) as u8;
            }
            if let Some(pe) = prev_end {
                let newline = chars[pe + 1..start].contains(&'\n');
                self.next[pe] = combine(combine(h, u64::from(self.class[start])), u64::from(newline));
            }
            prev_end = Some(end - 1);
        }
        if let Some(pe) = prev_end {
            self.next[pe] = PAD;
        }
    }

    /// Writes the features of the decision after character `i` into `out`.
    #[inline]
    fn extract(&self, i: usize, out: &mut Vec<u64>) {
        out.clear();
        let n = self.id.len() as isize;
        let id = |j: isize| if j < 0 || j >= n { PAD } else { self.id[j as usize] };
        let cl = |j: isize| if j < 0 || j >= n { 0u64 } else { u64::from(self.class[j as usize]) };
        let ii = i as isize;
        let mut templates = Templates::new(out, 0x0074_6f6b);
        let mut push = |vals: &[u64]| templates.push(vals);
        let (m2, m1, c0, p1, p2) = (id(ii - 2), id(ii - 1), id(ii), id(ii + 1), id(ii + 2));
        push(&[]);
        push(&[c0]);
        push(&[p1]);
        push(&[m1]);
        push(&[p2]);
        push(&[m1, c0]);
        push(&[c0, p1]);
        push(&[p1, p2]);
        push(&[m2, m1, c0]);
        push(&[c0, p1, p2]);
        push(&[m1, c0, p1]);
        let classes = (-3..=3).fold(0u64, |h, d| h << 8 | cl(ii + d));
        push(&[classes]);
        push(&[cl(ii - 1), cl(ii), cl(ii + 1)]);
        push(&[cl(ii), cl(ii + 1), cl(ii + 2)]);
        let rest = u64::from(self.rest[i]);
        push(&[self.chunk[i], rest]);
        push(&[self.before[i]]);
        push(&[self.before[i], p1]);
        push(&[self.after[i], cl(ii)]);
        push(&[rest, cl(ii), cl(ii + 1)]);
        let next = self.next[i];
        push(&[next]);
        push(&[next, self.before[i]]);
        push(&[next, c0]);
    }
}

/// Which decisions are allowed after character `i` of `chars` (not whitespace): a token ends
/// before whitespace and the end of the text; never before a glued character or after a joiner.
#[inline]
fn allowed(chars: &[char], i: usize, class: usize) -> bool {
    match chars.get(i + 1) {
        None => class != NONE as usize,
        Some(&next) if is_space(next) => class != NONE as usize,
        Some(&next) if glued(next) || chars[i] == '\u{200d}' => class == NONE as usize,
        Some(_) => true,
    }
}

/// The dictionary of multiword tokens: a token's lowercase form → its words (lowercase), for
/// forms that were multiword tokens in most of their occurrences in training.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MwtDict {
    entries: HashMap<String, Vec<String>>,
}

impl MwtDict {
    /// Number of forms.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if no form is split.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The words of `token` if it is a multiword token, cased like it: all capitals for a
    /// token in capitals (of more than one letter), the first word capitalised for a
    /// capitalised token; a token written with a curly apostrophe is looked up as with a
    /// straight one, and its words get the curly one. `scratch` is reused for the lowercase
    /// form.
    pub fn expand(&self, token: &str, scratch: &mut String, out: &mut Vec<String>) -> bool {
        out.clear();
        if self.entries.is_empty() {
            return false;
        }
        scratch.clear();
        scratch.extend(token.chars().map(apostrophe::read_as).flat_map(char::to_lowercase));
        let Some(words) = self.entries.get(scratch.as_str()) else { return false };
        let curly = token.contains(apostrophe::CURLY);
        let mut letters = token.chars().filter(|c| c.is_alphabetic());
        let first_upper = letters.next().is_some_and(char::is_uppercase);
        let all_upper = first_upper
            && token.chars().filter(|c| c.is_alphabetic()).count() > 1
            && token.chars().filter(|c| c.is_alphabetic()).all(char::is_uppercase);
        for (k, w) in words.iter().enumerate() {
            let cased = if all_upper {
                w.to_uppercase()
            } else if first_upper && k == 0 {
                let mut cs = w.chars();
                cs.next().map(|c| c.to_uppercase().chain(cs).collect()).unwrap_or_default()
            } else {
                w.clone()
            };
            // The words keep the apostrophe the token had.
            out.push(if curly { cased.replace('\'', "’") } else { cased });
        }
        true
    }
}

/// Counts of tokens and multiword tokens seen in training, for [`MwtDict`].
#[derive(Debug, Default)]
struct MwtCounts {
    /// Lowercase form → (times a plain token, expansions with their counts).
    forms: HashMap<String, (u32, HashMap<Vec<String>, u32>)>,
}

impl MwtCounts {
    fn build(self) -> MwtDict {
        let entries = self
            .forms
            .into_iter()
            .filter_map(|(form, (plain, expansions))| {
                let split: u32 = expansions.values().sum();
                let (words, _) = expansions.into_iter().max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))?;
                (split > plain && words.iter().all(|w| !w.is_empty() && !w.contains(is_space))).then_some((form, words))
            })
            .collect();
        MwtDict { entries }
    }
}

/// A paragraph of training text: its characters and, after each, the gold decision.
#[derive(Debug, Clone, Default)]
pub struct Paragraph {
    pub chars: Vec<char>,
    pub gold: Vec<u8>,
}

/// Raw training text rebuilt from a treebank ([`RawCorpus::add`] each sentence in order).
#[derive(Debug, Default)]
pub struct RawCorpus {
    pub paragraphs: Vec<Paragraph>,
    counts: MwtCounts,
    /// The last sentence's last token had `SpaceAfter=No`.
    glued_to_next: bool,
}

/// A form lowercased, its curly apostrophes read as straight ones: a key of [`MwtDict`].
fn read_lower(form: &str) -> String {
    apostrophe::read_form(form).to_lowercase()
}

/// Whether a MISC value holds `SpaceAfter=No`.
fn space_after_no(misc: &str) -> bool {
    misc.split('|').any(|e| e == "SpaceAfter=No")
}

impl RawCorpus {
    /// The text, a blank line between paragraphs: what a raw file of it reads.
    pub fn text(&self) -> String {
        let paragraphs: Vec<String> = self.paragraphs.iter().map(|p| p.chars.iter().collect()).collect();
        paragraphs.join("\n\n")
    }

    /// Adds the next sentence of the treebank.
    pub fn add(&mut self, sent: &Sentence) {
        let new_par = sent.comments.iter().any(|c| {
            let c = c.trim_start_matches('#').trim_start();
            c.starts_with("newdoc") || c.starts_with("newpar")
        });
        if new_par || self.paragraphs.is_empty() {
            if self.paragraphs.last().is_none_or(|p| !p.chars.is_empty()) {
                self.paragraphs.push(Paragraph::default());
            }
        } else if let Some(p) = self.paragraphs.last_mut().filter(|p| !p.chars.is_empty()) {
            if !self.glued_to_next {
                p.chars.push(' ');
                p.gold.push(NONE);
            }
        }
        let lines = sent.token_lines();
        let mut skip_until = 0usize;
        let mut last_token_end = None;
        let mut space_after = true;
        let Some(p) = self.paragraphs.last_mut() else { return };
        for (k, line) in lines.iter().enumerate() {
            let id = line.get(Column::Id);
            let (form, words): (&str, Vec<String>) = match line.kind() {
                TokenKind::Empty => continue,
                TokenKind::Word => {
                    let n: usize = id.parse().unwrap_or(0);
                    if n <= skip_until {
                        continue;
                    }
                    (line.get(Column::Form), Vec::new())
                }
                TokenKind::Range => {
                    let last: usize = id.split_once('-').and_then(|(_, b)| b.parse().ok()).unwrap_or(0);
                    skip_until = last;
                    let words = lines[k + 1..]
                        .iter()
                        .filter(|l| l.kind() == TokenKind::Word)
                        .take_while(|l| l.get(Column::Id).parse::<usize>().is_ok_and(|n| n <= last))
                        .map(|l| read_lower(l.get(Column::Form)))
                        .collect();
                    (line.get(Column::Form), words)
                }
            };
            if form.is_empty() {
                continue;
            }
            if last_token_end.is_some() && space_after {
                p.chars.push(' ');
                p.gold.push(NONE);
            }
            p.chars.extend(form.chars());
            p.gold.extend(std::iter::repeat_n(NONE, form.chars().count()));
            if let Some(g) = p.gold.last_mut() {
                *g = TOKEN;
            }
            last_token_end = Some(p.gold.len() - 1);
            space_after = !space_after_no(line.get(Column::Misc));
            let entry = self.counts.forms.entry(read_lower(form)).or_default();
            if words.is_empty() {
                entry.0 += 1;
            } else {
                *entry.1.entry(words).or_default() += 1;
            }
        }
        if let Some(end) = last_token_end {
            p.gold[end] = SENTENCE;
        }
        self.glued_to_next = !space_after;
    }

    /// The multiword-token dictionary of the sentences added so far.
    pub fn mwt_dict(&mut self) -> MwtDict {
        std::mem::take(&mut self.counts).build()
    }
}

/// Reads the raw text of every sentence of `paths`, in file order (a new file starts a new
/// paragraph, as a `# newdoc` would).
pub fn load_raw(paths: &[std::path::PathBuf]) -> Result<RawCorpus, crate::corpus::CorpusError> {
    let mut corpus = RawCorpus::default();
    for path in paths {
        corpus.paragraphs.push(Paragraph::default());
        for sent in crate::corpus::Reader::open(path, crate::corpus::Format::from_path(path))? {
            corpus.add(&sent?);
        }
    }
    corpus.paragraphs.retain(|p| !p.chars.is_empty());
    Ok(corpus)
}

/// A trained tokenizer in memory.
#[derive(Debug, Clone)]
pub struct TokenizerModel {
    pub weights: Weights,
    pub mwt: MwtDict,
}

/// Trains the boundary classifier for `epochs` epochs over `paragraphs` (their order shuffled
/// per epoch with `seed`).
pub fn train_tokenizer(paragraphs: &[Paragraph], mwt: MwtDict, epochs: u32, seed: u64) -> TokenizerModel {
    let mut p = Perceptron::new(CLASSES);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..paragraphs.len()).collect();
    let (mut attrs, mut feats, mut scores) = (Attrs::default(), Vec::new(), [0.0f32; CLASSES]);
    for _ in 0..epochs {
        order.shuffle(&mut rng);
        for &k in &order {
            let par = &paragraphs[k];
            attrs.fill(&par.chars);
            for (i, (&c, &gold)) in par.chars.iter().zip(&par.gold).enumerate() {
                // The end of a paragraph is a sentence end whatever the weights say.
                if is_space(c) || i + 1 == par.chars.len() || !allowed(&par.chars, i, gold as usize) {
                    continue;
                }
                attrs.extract(i, &mut feats);
                p.score(&feats, &mut scores);
                let guess = best(&scores, &par.chars, i);
                if guess != gold as usize {
                    p.update(&feats, gold as usize, guess);
                }
                p.tick();
            }
        }
    }
    TokenizerModel { weights: p.averaged(), mwt }
}

#[inline]
fn best(scores: &[f32], chars: &[char], i: usize) -> usize {
    let mut best = usize::MAX;
    for (c, &s) in scores.iter().enumerate().take(CLASSES) {
        if allowed(chars, i, c) && (best == usize::MAX || s > scores[best]) {
            best = c;
        }
    }
    if best == usize::MAX {
        TOKEN as usize
    } else {
        best
    }
}

/// The buffers of tokenizing, reused from text to text; the weights are passed to each call,
/// so that a reader that owns its model (behind an `Arc`) can own these too.
#[derive(Debug, Default, Clone)]
pub struct Workspace {
    attrs: Attrs,
    whole: Vec<std::ops::Range<usize>>,
    feats: Vec<u64>,
    scores: [f32; CLASSES],
    scratch: String,
}

impl Workspace {
    /// Decides what follows each character of `chars`, writing [`NONE`], [`TOKEN`] or
    /// [`SENTENCE`] per character into `out` (whitespace gets [`NONE`]). The last character
    /// that is not whitespace always ends a token (the caller decides whether the text's end is
    /// a sentence end).
    pub fn classify<S: Scorer>(&mut self, weights: &S, chars: &[char], out: &mut Vec<u8>) {
        self.classify_with_margins(weights, chars, out, None)
    }

    /// [`Workspace::classify`], also writing into `margins` (when given) how far each
    /// decision's score was above the best other allowed class's (infinite for whitespace and
    /// for a decision with no other choice).
    pub fn classify_with_margins<S: Scorer>(
        &mut self,
        weights: &S,
        chars: &[char],
        out: &mut Vec<u8>,
        mut margins: Option<&mut Vec<f32>>,
    ) {
        out.clear();
        out.resize(chars.len(), NONE);
        if let Some(m) = margins.as_deref_mut() {
            m.clear();
            m.resize(chars.len(), f32::INFINITY);
        }
        self.attrs.fill(chars);
        for (i, &c) in chars.iter().enumerate() {
            if is_space(c) {
                continue;
            }
            self.attrs.extract(i, &mut self.feats);
            weights.score(&self.feats, &mut self.scores);
            let chosen = best(&self.scores, chars, i);
            out[i] = chosen as u8;
            if let Some(m) = margins.as_deref_mut() {
                let other = (0..CLASSES)
                    .filter(|&c| c != chosen && allowed(chars, i, c))
                    .map(|c| self.scores[c])
                    .fold(f32::NEG_INFINITY, f32::max);
                m[i] = self.scores.get(chosen).map_or(f32::INFINITY, |&s| s - other);
            }
        }
        self.keep_whole(chars, out, margins);
    }

    /// Overrides the decisions inside the whole tokens of `chars` ([`whole_token`]): no boundary
    /// inside one, a token end at its edges inside its chunk (infinite margins: nothing was
    /// weighed). A chunk's last decision is never changed.
    fn keep_whole(&mut self, chars: &[char], out: &mut [u8], mut margins: Option<&mut Vec<f32>>) {
        let mut start = 0;
        while let Some(s) = chars[start..].iter().position(|&c| !is_space(c)).map(|p| p + start) {
            let end = chars[s..].iter().position(|&c| is_space(c)).map_or(chars.len(), |p| p + s);
            start = end;
            whole_token::find(&chars[s..end], &mut self.whole);
            for r in &self.whole {
                let (a, b) = (s + r.start, s + r.end);
                let before = (a > s && out[a - 1] == NONE).then_some(a - 1);
                let after = (b < end).then_some(b - 1);
                let forced = (a..b - 1).map(|i| (i, NONE)).chain(before.into_iter().chain(after).map(|i| (i, TOKEN)));
                for (i, label) in forced {
                    out[i] = label;
                    if let Some(m) = margins.as_deref_mut() {
                        m[i] = f32::INFINITY;
                    }
                }
            }
        }
    }

    /// The decision after character `i` of `chars` alone, as [`Workspace::classify`] makes it
    /// over any text that holds `chars`, provided `chars` holds the whole context of `i`: from
    /// three characters before the chunk of `i` to three after the end of the chunk after it
    /// (the features read no further). For finding sentence ends without classifying a whole
    /// text: at a chunk's end, which [`whole_token`] never overrides.
    pub fn decide<S: Scorer>(&mut self, weights: &S, chars: &[char], i: usize) -> u8 {
        if chars.get(i).is_none_or(|&c| is_space(c)) {
            return NONE;
        }
        self.attrs.fill(chars);
        self.attrs.extract(i, &mut self.feats);
        weights.score(&self.feats, &mut self.scores);
        best(&self.scores, chars, i) as u8
    }

    /// The words of `token` if `mwt` splits it ([`MwtDict::expand`]).
    pub fn expand(&mut self, mwt: &MwtDict, token: &str, out: &mut Vec<String>) -> bool {
        mwt.expand(token, &mut self.scratch, out)
    }
}

/// A tokenizer over borrowed weights, with reusable buffers.
pub struct Tokenizer<'m, S: Scorer> {
    weights: S,
    mwt: &'m MwtDict,
    work: Workspace,
}

impl<'m> Tokenizer<'m, &'m Weights> {
    /// A tokenizer over a model in memory.
    pub fn from_model(model: &'m TokenizerModel) -> Self {
        Tokenizer::new(&model.weights, &model.mwt)
    }
}

impl<'m, S: Scorer> Tokenizer<'m, S> {
    /// A tokenizer over its weights and dictionary.
    pub fn new(weights: S, mwt: &'m MwtDict) -> Self {
        Tokenizer { weights, mwt, work: Workspace::default() }
    }

    /// [`Workspace::classify`] with this tokenizer's weights.
    pub fn classify(&mut self, chars: &[char], out: &mut Vec<u8>) {
        self.work.classify(&self.weights, chars, out)
    }

    /// The words of `token` if the dictionary splits it ([`MwtDict::expand`]).
    pub fn expand(&mut self, token: &str, out: &mut Vec<String>) -> bool {
        self.work.expand(self.mwt, token, out)
    }
}

/// Token and sentence F1 (percent) of a tokenizer on gold paragraphs, over character spans.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    pub tokens: f64,
    pub sentences: f64,
}

/// Spans (start, end) of tokens and of sentences given per-character decisions; the last
/// non-space character of the text ends both.
fn spans(chars: &[char], labels: &[u8], tokens: &mut Vec<(usize, usize)>, sentences: &mut Vec<(usize, usize)>) {
    tokens.clear();
    sentences.clear();
    let (mut tok_start, mut sent_start) = (None, None);
    let last = chars.iter().rposition(|&c| !is_space(c));
    for (i, &c) in chars.iter().enumerate() {
        if is_space(c) {
            continue;
        }
        tok_start.get_or_insert(i);
        sent_start.get_or_insert(i);
        let label = if Some(i) == last { SENTENCE } else { labels[i] };
        if label >= TOKEN {
            tokens.push((tok_start.take().unwrap_or(i), i));
        }
        if label == SENTENCE {
            sentences.push((sent_start.take().unwrap_or(i), i));
        }
    }
}

/// Scores `tokenizer` on gold paragraphs.
pub fn evaluate<S: Scorer>(tokenizer: &mut Tokenizer<'_, S>, paragraphs: &[Paragraph]) -> Scores {
    let (mut labels, mut gt, mut gs, mut pt, mut ps) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut counts = [(0usize, 0usize, 0usize); 2];
    for par in paragraphs {
        tokenizer.classify(&par.chars, &mut labels);
        spans(&par.chars, &par.gold, &mut gt, &mut gs);
        spans(&par.chars, &labels, &mut pt, &mut ps);
        for (k, (g, p)) in [(&gt, &pt), (&gs, &ps)].into_iter().enumerate() {
            let gold: std::collections::HashSet<_> = g.iter().collect();
            counts[k].0 += g.len();
            counts[k].1 += p.len();
            counts[k].2 += p.iter().filter(|s| gold.contains(s)).count();
        }
    }
    let score = |(g, p, c): (usize, usize, usize)| if g + p == 0 { 100.0 } else { 200.0 * c as f64 / (g + p) as f64 };
    Scores { tokens: score(counts[0]), sentences: score(counts[1]) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Format, Reader};

    const TREEBANK: &str = "# newdoc id = d1\n# text = Hello, world.\n1\tHello\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No\n2\t,\t_\t_\t_\t_\t1\tpunct\t_\t_\n3\tworld\t_\t_\t_\t_\t1\tx\t_\tSpaceAfter=No\n4\t.\t_\t_\t_\t_\t1\tpunct\t_\t_\n\n# text = Du vin.\n1-2\tDu\t_\t_\t_\t_\t_\t_\t_\t_\n1\tDe\t_\t_\t_\t_\t3\tcase\t_\t_\n2\tle\t_\t_\t_\t_\t3\tdet\t_\t_\n3\tvin\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No\n4\t.\t_\t_\t_\t_\t3\tpunct\t_\t_\n\n";

    fn corpus(text: &str) -> RawCorpus {
        let mut c = RawCorpus::default();
        for s in Reader::new(text.as_bytes(), std::path::Path::new("t.conllu"), Format::Conllu) {
            c.add(&s.unwrap());
        }
        c
    }

    #[test]
    fn training_text_is_rebuilt_with_its_spacing_paragraphs_and_multiword_tokens() {
        let mut c = corpus(TREEBANK);
        assert_eq!(c.paragraphs.len(), 1);
        let p = &c.paragraphs[0];
        assert_eq!(p.chars.iter().collect::<String>(), "Hello, world. Du vin.");
        let ends: String = p.gold.iter().map(|&g| char::from(b'0' + g)).collect();
        assert_eq!(ends, "000011000001200100012");
        let dict = c.mwt_dict();
        let mut out = Vec::new();
        assert!(dict.expand("Du", &mut String::new(), &mut out));
        assert_eq!(out, ["De", "le"]);
        assert!(dict.expand("DU", &mut String::new(), &mut out));
        assert_eq!(out, ["DE", "LE"]);
        assert!(!dict.expand("vin", &mut String::new(), &mut out) && out.is_empty());
    }

    #[test]
    fn a_trained_tokenizer_splits_punctuation_and_sentences_it_saw() {
        let text = TREEBANK.repeat(20).replace("# newdoc id = d1\n", "");
        let mut c = corpus(&text);
        let mwt = c.mwt_dict();
        let model = train_tokenizer(&c.paragraphs, mwt, 5, 1);
        let mut t = Tokenizer::from_model(&model);
        let scores = evaluate(&mut t, &c.paragraphs);
        assert!(scores.tokens > 99.0 && scores.sentences > 99.0, "{scores:?}");
    }

    #[test]
    fn glued_characters_never_start_a_token() {
        let chars: Vec<char> = "e\u{301}👍\u{1f3fd}a\u{200d}b".chars().collect();
        for i in 0..chars.len() - 1 {
            let next_glued = glued(chars[i + 1]) || chars[i] == '\u{200d}';
            assert_eq!(allowed(&chars, i, TOKEN as usize), !next_glued, "after {i}");
        }
    }
}

//! Training and dev data: gold sentences read into oracle-ready form ([`TrainingSet`],
//! [`DevSentence`]) from files ([`load_training`], [`load_dev`]), or for a whole run with a
//! tagger trained on the way ([`prepare`]). This module owns which gold sentences are trained
//! on and why the others are skipped; it must not train or score.
//!
//! With a pseudo-projective scheme ([`TrainingSet::projective`]), non-projective full trees
//! are lifted (Nivre & Nilsson 2005) and trained on like the others, their lifted labels
//! interned; the model records the scheme and its parses are lowered back.

use std::path::{Path, PathBuf};

use crate::base::hash::{combine, hash_str};
use crate::base::label::{Label, LabelSet};
use crate::corpus::tree::{gold_heads, is_projective, is_projective_partial, partial_heads, PartialHeads};
use crate::corpus::{Column, CorpusError, ErrorKind, Format, Reader, Sentence};
use crate::model::analysis::{copy_analysis, train_analysis, AnalysisModel, AnalysisOptions, AnalysisScores, Analyze};
use crate::model::features::{encode_sentence, tag_hash, Morphology, TokenAttrs};
use crate::transition::projective::{lift, parse_mark, Scheme, DOWN, UP};
use crate::transition::GoldTree;

use crate::learn::perceptron::Weights;
use crate::model::features::feature_set;
use crate::model::{Model, TrainingInfo};
use crate::transition::System;

use super::domain::Domain;
use super::options::{Lifting, TaggerOptions};

/// A training sentence: token attributes and gold tree.
#[derive(Debug, Clone)]
pub struct TrainSentence {
    pub attrs: Vec<TokenAttrs>,
    /// The words' forms (a neural model reads their characters).
    pub forms: Vec<String>,
    pub gold: GoldTree,
    /// Per word, the hash of its UPOS and XPOS as the file gives them
    /// ([`TokenAttrs::tag`] of the columns before any retagging put predicted tags in
    /// `attrs`): what a neural model that tags learns.
    pub gold_tags: Vec<u64>,
    /// Times the sentence is trained on in each epoch (1 as read; retraining oversamples the
    /// user's annotations against the base treebank, `retrain.annotation_weight`).
    pub copies: u32,
    /// The treebank's or the user's ([`super::domain`]: with domain features, a user sentence
    /// also trains the user copies).
    pub domain: Domain,
}

/// A dev sentence: token attributes and what evaluation compares against.
#[derive(Debug, Clone)]
pub struct DevSentence {
    pub attrs: Vec<TokenAttrs>,
    /// The words' forms (a neural model reads their characters).
    pub forms: Vec<String>,
    /// Gold head of each word (0 = root), `None` where HEAD is `_`: such a word is not
    /// annotated and not scored.
    pub heads: Vec<Option<usize>>,
    /// Gold DEPREL of each word; `_` under a known head leaves the label open (any label is
    /// right).
    pub deprels: Vec<String>,
    /// Gold UPOS of each word (for scores without punctuation).
    pub upos: Vec<String>,
    /// Gold XPOS of each word (a neural model that tags is scored on both).
    pub xpos: Vec<String>,
}

/// [`TrainSentence::gold_tags`] of `sent`'s columns.
fn gold_tags(sent: &Sentence) -> Vec<u64> {
    sent.words().map(|w| tag_hash(w.get(Column::Upos), w.get(Column::Xpos))).collect()
}

/// The forms of `sent`'s words.
fn forms_of(sent: &Sentence) -> Vec<String> {
    sent.words().map(|w| w.get(Column::Form).to_string()).collect()
}

/// The DEPREL of a word whose label is not annotated.
pub(super) const UNANNOTATED: &str = "_";

/// Refuses a sentence whose DEPREL column holds `↑` or `↓` anywhere: pseudo-projective
/// labels are made of them ([`crate::transition::projective`]), so a gold label with one would
/// be lowered as a lifted arc at parse time, or make lifting refuse the whole training set.
pub fn check_marks(sent: &Sentence, path: &Path) -> Result<(), CorpusError> {
    let marked = sent.words().enumerate().find(|(_, w)| w.get(Column::Deprel).contains([UP, DOWN]));
    match marked {
        None => Ok(()),
        Some((i, w)) => {
            let deprel = w.get(Column::Deprel);
            Err(CorpusError {
                path: path.to_path_buf(),
                line: sent.line_of_word(i + 1),
                kind: ErrorKind::ReservedMark {
                    word: i + 1,
                    deprel: deprel.to_string(),
                    base: parse_mark(deprel).base.to_string(),
                },
            })
        }
    }
}

/// The heads of `sent`, full or partial: a full tree is read by [`gold_heads`] (so a tree with
/// several root words is no error here), one with a HEAD of `_` by [`partial_heads`].
fn annotated_heads(sent: &Sentence, path: &Path) -> Result<PartialHeads, CorpusError> {
    match sent.heads() {
        Ok(None) => partial_heads(sent, path),
        _ => Ok(gold_heads(sent, path)?.into_iter().map(Some).collect()),
    }
}

impl DevSentence {
    /// Reads a gold dev sentence, which may be a partial annotation (HEAD and DEPREL `_`),
    /// with features reading LEMMA and FEATS as `morphology` says. Errors name `path` and the
    /// line (see [`partial_heads`]).
    pub fn from_sentence(sent: &Sentence, path: &Path, morphology: Morphology) -> Result<DevSentence, CorpusError> {
        let heads = annotated_heads(sent, path)?;
        let mut attrs = Vec::new();
        encode_sentence(sent, morphology, &mut attrs);
        Ok(DevSentence {
            forms: forms_of(sent),
            heads,
            deprels: sent.words().map(|w| w.get(Column::Deprel).to_string()).collect(),
            upos: sent.words().map(|w| w.get(Column::Upos).to_string()).collect(),
            xpos: sent.words().map(|w| w.get(Column::Xpos).to_string()).collect(),
            attrs,
        })
    }

    /// A dev sentence whose features read `sent` as `analyze` rewrites it (predicted tags, FEATS,
    /// lemmas), scored against its own gold columns.
    pub fn analyzed(
        mut sent: Sentence,
        path: &Path,
        morphology: Morphology,
        analyze: &mut dyn FnMut(&mut Sentence),
    ) -> Result<DevSentence, CorpusError> {
        // Evaluation compares against gold UPOS (punctuation), so that is read before
        // retagging; the features then see the retagged words.
        let mut dev = DevSentence::from_sentence(&sent, path, morphology)?;
        analyze(&mut sent);
        encode_sentence(&sent, morphology, &mut dev.attrs);
        Ok(dev)
    }

    /// The words' forms, borrowed.
    pub fn form_refs(&self) -> Vec<&str> {
        self.forms.iter().map(String::as_str).collect()
    }

    /// Number of words with an annotated head: the words that are scored.
    pub fn annotated(&self) -> usize {
        self.heads.iter().filter(|h| h.is_some()).count()
    }

    /// The gold DEPREL to score word `i` (0-based) against, given the system's `label`: the
    /// system's own when the gold label is open.
    pub(super) fn gold_deprel<'a>(&'a self, i: usize, label: &'a str) -> &'a str {
        match self.deprels[i].as_str() {
            UNANNOTATED => label,
            d => d,
        }
    }
}

/// Training data ready for the oracles, with what was left out.
#[derive(Debug, Default)]
pub struct TrainingSet {
    pub sentences: Vec<TrainSentence>,
    pub labels: Option<LabelSet>,
    /// Words of the kept sentences, annotated or not.
    pub words: usize,
    /// Kept sentences with some HEAD or DEPREL `_`, trained on their annotated arcs only.
    pub partial_sentences: usize,
    /// Words with an annotated head in the kept sentences (every word of a full tree).
    pub annotated_words: usize,
    pub skipped_nonprojective: usize,
    pub skipped_root: usize,
    /// Sentences without any annotated arc (every HEAD `_`): nothing to learn from.
    pub skipped_unannotated: usize,
    /// Order-sensitive hash of every token line read (see `TrainingInfo::train_fingerprint`).
    pub fingerprint: u64,
    /// What features read for LEMMA and FEATS (see `Model::morphology`).
    pub morphology: Morphology,
    /// Pseudo-projective lifting of non-projective full trees (Nivre & Nilsson 2005): with a
    /// scheme they are lifted and kept, without one skipped.
    pub projective: Option<Scheme>,
    /// Non-projective trees kept by lifting, and the lift operations made.
    pub lifted_sentences: usize,
    pub lifts: usize,
    /// Arcs whose encoded label [`TrainingSet::strip_rare_encoded_labels`] replaced by its base.
    pub stripped_rare_lifts: usize,
}

impl TrainingSet {
    /// A model of this set's parser alone (no analysis or tokenizer, uncalibrated): what either
    /// kind of training fills in.
    pub fn parser_model(
        &self,
        system: System,
        labels: LabelSet,
        fallback: Label,
        weights: Weights,
        info: TrainingInfo,
    ) -> Model {
        Model {
            system,
            projective: self.projective,
            feature_set: feature_set(system, self.morphology),
            labels,
            fallback,
            weights,
            info,
            morphology: self.morphology,
            tagger: None,
            feats: None,
            lemmatizer: None,
            tokenizer: None,
            temperature: 1.0,
            arc_calibration: None,
        }
    }

    /// Records what this set is (its size, fingerprint and what was left out) in `info`.
    pub fn record_in(&self, info: &mut TrainingInfo) {
        info.train_sentences = self.sentences.len();
        info.train_words = self.words;
        info.train_fingerprint = self.fingerprint;
        info.skipped_nonprojective = self.skipped_nonprojective;
        info.skipped_root = self.skipped_root;
    }

    /// Adds one gold sentence, full or partial (HEAD or DEPREL `_`), and folds its token lines,
    /// as given, into the fingerprint. Features read LEMMA and FEATS as `self.morphology` says.
    /// Errors name `path` and the line: a bad HEAD, a cycle, and in a partial annotation a
    /// second word with HEAD 0 (see [`partial_heads`]).
    ///
    /// The root label is the DEPREL of the root arc of the first sentence added ("root" if
    /// that sentence has no annotated root word or leaves its DEPREL open). Skipped and
    /// counted: sentences without any annotated arc; sentences whose annotated arcs cannot be
    /// completed into a projective tree ([`is_projective_partial`]; for a full tree,
    /// [`is_projective`]); full trees without exactly one root word; and sentences with the
    /// root label on another arc than the root arc, or another label on the root arc (among
    /// annotated DEPREL). A partial annotation without a root word is fine. Labels are
    /// interned from annotated DEPREL only.
    pub fn add(&mut self, sent: &Sentence, path: &Path) -> Result<(), CorpusError> {
        self.fingerprint_lines(sent);
        self.add_tree(sent, path)
    }

    /// [`TrainingSet::add`] of `analyzed`, a copy of `gold` whose columns an analysis
    /// rewrote: the features read its tags, and a neural model that tags learns `gold`'s
    /// ([`TrainSentence::gold_tags`]).
    pub fn add_analyzed(&mut self, analyzed: &Sentence, gold: &Sentence, path: &Path) -> Result<(), CorpusError> {
        let before = self.sentences.len();
        self.add(analyzed, path)?;
        if let Some(added) = self.sentences.get_mut(before) {
            added.gold_tags = gold_tags(gold);
        }
        Ok(())
    }

    /// [`TrainingSet::add`] of each of `sentences` (each with its file), those trained on
    /// `copies` times an epoch, of `domain`: text that is not the treebank's, such as a
    /// teacher's parses or the daemon's own output.
    pub fn add_all(
        &mut self,
        sentences: &[(Sentence, PathBuf)],
        copies: u32,
        domain: Domain,
    ) -> Result<(), CorpusError> {
        let first = self.sentences.len();
        for (sent, path) in sentences {
            self.add(sent, path)?;
        }
        for s in &mut self.sentences[first..] {
            (s.copies, s.domain) = (copies, domain);
        }
        Ok(())
    }

    /// Replaces the labels that a pseudo-projective encoding made (`d↑h`, `p↓`, ...) and that
    /// occur fewer than `min` times by their base label (`d`, `p`), and renumbers the labels.
    /// The trees stay projective and are all trained on; a lifted arc whose label lost its
    /// mark is simply not lowered (Nivre & Nilsson's baseline, for that arc only).
    ///
    /// Each label is a class of every LEFT-ARC and RIGHT-ARC, so encoded labels cost parse
    /// speed in proportion to their number, and most occur once or twice: too rarely to be
    /// learned (see [`DEFAULT_MIN_LIFTED`](super::DEFAULT_MIN_LIFTED) for the measurements).
    pub fn strip_rare_encoded_labels(&mut self, min: usize) {
        let Some(labels) = &self.labels else { return };
        let mut counts = vec![0usize; labels.len()];
        for s in &self.sentences {
            for l in s.gold.labels() {
                counts[l.index()] += 1;
            }
        }
        let mut kept = LabelSet::new(labels.name(Label::ROOT));
        let mut stripped = 0;
        let renumber: Vec<Label> = (0..labels.len())
            .map(|i| {
                let name = labels.name(Label::from_index(i));
                let mark = parse_mark(name);
                if (mark.lifted || mark.down) && counts[i] < min {
                    stripped += counts[i];
                    kept.intern(mark.base)
                } else {
                    kept.intern(name)
                }
            })
            .collect();
        if kept.len() == labels.len() {
            return;
        }
        for s in &mut self.sentences {
            s.gold.map_labels(|l| renumber[l.index()]);
        }
        self.labels = Some(kept);
        self.stripped_rare_lifts += stripped;
    }

    /// Folds the token lines of `sent` into the fingerprint.
    fn fingerprint_lines(&mut self, sent: &Sentence) {
        for t in sent.token_lines() {
            self.fingerprint = combine(self.fingerprint, hash_str(t.text()));
        }
    }

    /// [`TrainingSet::add`] without the fingerprint.
    fn add_tree(&mut self, sent: &Sentence, path: &Path) -> Result<(), CorpusError> {
        check_marks(sent, path)?;
        let heads = annotated_heads(sent, path)?;
        let annotated = heads.iter().filter(|h| h.is_some()).count();
        if annotated == 0 {
            self.skipped_unannotated += 1;
            return Ok(());
        }
        // DEPREL only where the head is annotated; `None` also where the label is left open.
        let deprels: Vec<Option<&str>> = sent
            .words()
            .zip(&heads)
            .map(|(w, h)| h.and(Some(w.get(Column::Deprel))).filter(|&d| d != UNANNOTATED))
            .collect();
        let partial = annotated < heads.len() || deprels.contains(&None);
        let labels = self.labels.get_or_insert_with(|| {
            let root = heads.iter().zip(&deprels).find_map(|(&h, &d)| if h == Some(0) { d } else { None });
            LabelSet::new(root.unwrap_or("root"))
        });
        let root_name = labels.name(Label::ROOT).to_string();
        let roots = heads.iter().filter(|&&h| h == Some(0)).count();
        // A full tree needs its one root word; a partial annotation may leave it open (and
        // `partial_heads` refused two).
        let root_ok = (roots == 1 || (partial && roots == 0))
            && heads.iter().zip(&deprels).all(|(&h, &d)| d.is_none_or(|d| (h == Some(0)) == (d == root_name)));
        if !root_ok {
            self.skipped_root += 1;
            return Ok(());
        }
        // A full tree takes the path it always took (labels interned in word order).
        let mut full: Option<Vec<usize>> = (!partial).then(|| heads.iter().flatten().copied().collect());
        let mut full_deprels: Vec<String> = deprels.iter().flatten().map(|d| d.to_string()).collect();
        let projective = match &mut full {
            Some(full) if !is_projective(full) => match self.projective {
                Some(scheme) => {
                    let lifts = lift(full, &mut full_deprels, scheme).map_err(|e| CorpusError {
                        path: path.to_path_buf(),
                        line: sent.line_of_word(1),
                        kind: ErrorKind::Unliftable(e.to_string()),
                    })?;
                    self.lifted_sentences += 1;
                    self.lifts += lifts;
                    true
                }
                None => false,
            },
            Some(_) => true,
            None => is_projective_partial(&heads),
        };
        if !projective {
            self.skipped_nonprojective += 1;
            return Ok(());
        }
        let gold = match full {
            Some(full) => {
                let arc_labels: Vec<Label> = full_deprels
                    .iter()
                    .map(|d| {
                        // A lifted label's base and head labels are interned too, so that
                        // lowering finds them whether or not they occur unlifted.
                        let mark = parse_mark(d);
                        if mark.lifted {
                            labels.intern(mark.base);
                            mark.up.map(|u| labels.intern(u));
                        }
                        labels.intern(d)
                    })
                    .collect();
                GoldTree::new(&full, &arc_labels)
            }
            None => {
                let arc_labels: Vec<Option<Label>> = deprels.iter().map(|d| d.map(|d| labels.intern(d))).collect();
                GoldTree::partial(&heads, &arc_labels)
            }
        };
        let mut attrs = Vec::new();
        encode_sentence(sent, self.morphology, &mut attrs);
        self.words += sent.len();
        self.annotated_words += annotated;
        self.partial_sentences += usize::from(partial);
        self.sentences.push(TrainSentence {
            attrs,
            forms: forms_of(sent),
            gold,
            gold_tags: gold_tags(sent),
            copies: 1,
            domain: Domain::Base,
        });
        Ok(())
    }
}

/// Reads gold training files, full or partial annotations, as [`TrainingSet::add`] does.
pub fn load_training(paths: &[PathBuf]) -> Result<TrainingSet, CorpusError> {
    load_training_with(paths, Morphology::Columns, None, &mut |_, _| {})
}

/// [`load_training`], with features reading LEMMA and FEATS as `morphology` says, and
/// `retag(i, sentence)` called on the `i`-th sentence of the files (counting from 0, skipped
/// ones included) before its features are taken, to put predicted tags in.
pub fn load_training_with(
    paths: &[PathBuf],
    morphology: Morphology,
    lifting: Option<Lifting>,
    retag: &mut dyn FnMut(usize, &mut Sentence),
) -> Result<TrainingSet, CorpusError> {
    let projective = lifting.map(|l| l.scheme);
    let mut set = TrainingSet { morphology, projective, ..TrainingSet::default() };
    let mut index = 0;
    for path in paths {
        for sent in Reader::open(path, Format::from_path(path))? {
            let mut sent = sent?;
            // The fingerprint is of the file as read, before retagging.
            set.fingerprint_lines(&sent);
            let gold = gold_tags(&sent);
            retag(index, &mut sent);
            index += 1;
            let before = set.sentences.len();
            set.add_tree(&sent, path)?;
            if let Some(added) = set.sentences.get_mut(before) {
                added.gold_tags = gold;
            }
        }
    }
    if let Some(l) = lifting {
        set.strip_rare_encoded_labels(l.min_count);
    }
    Ok(set)
}

/// Reads a gold dev file for per-epoch evaluation.
pub fn load_dev(path: &Path) -> Result<Vec<DevSentence>, CorpusError> {
    load_dev_with(path, Morphology::Columns, &mut |_| {})
}

/// [`load_dev`] with the `morphology` switch and a `retag` hook as in [`load_training_with`].
pub fn load_dev_with(
    path: &Path,
    morphology: Morphology,
    retag: &mut dyn FnMut(&mut Sentence),
) -> Result<Vec<DevSentence>, CorpusError> {
    let mut out = Vec::new();
    for sent in Reader::open(path, Format::from_path(path))? {
        out.push(DevSentence::analyzed(sent?, path, morphology, retag)?);
    }
    Ok(out)
}

/// Training and dev data ready for [`train`](super::train()), and the analysis trained on the
/// way.
pub struct Prepared {
    pub set: TrainingSet,
    pub dev: Option<Vec<DevSentence>>,
    pub analysis: Option<AnalysisModel>,
    /// The analysis's accuracy on the dev file's gold tokens.
    pub dev_analysis: Option<AnalysisScores>,
}

/// Every sentence of `paths`, in file order.
fn read_sentences(paths: &[PathBuf]) -> Result<Vec<Sentence>, CorpusError> {
    let mut out = Vec::new();
    for path in paths {
        for sent in Reader::open(path, Format::from_path(path))? {
            out.push(sent?);
        }
    }
    Ok(out)
}

/// Reads the training and dev files. With a tagger: trains the analysis (tagger, FEATS,
/// lemmas) on all training data, gives the parser every column as jackknifing predicts it (or
/// the gold columns without jackknifing), and analyzes the dev file with the final stages, so
/// that dev scores and the choice of the best epoch reflect parsing of tokenized text.
pub fn prepare(
    train: &[PathBuf],
    dev: Option<&Path>,
    tagger: Option<TaggerOptions>,
    lifting: Option<Lifting>,
    seed: u64,
) -> Result<Prepared, CorpusError> {
    let Some(topts) = tagger else {
        let set = load_training_with(train, Morphology::Columns, lifting, &mut |_, _| {})?;
        let dev = dev.map(load_dev).transpose()?;
        return Ok(Prepared { set, dev, analysis: None, dev_analysis: None });
    };
    let gold = read_sentences(train)?;
    let opts = AnalysisOptions { epochs: topts.epochs, folds: topts.jackknife, seed };
    let (mut analysis, jackknifed) = train_analysis(&gold, opts);
    drop(gold);
    let set = load_training_with(train, Morphology::Analysis, lifting, &mut |i, sent| {
        if let Some(p) = jackknifed.as_ref().and_then(|p| p.get(i)) {
            copy_analysis(p, sent);
        }
    })?;
    let (dev, dev_analysis) = match dev {
        None => (None, None),
        Some(path) => {
            let gold = read_sentences(&[path.to_path_buf()])?;
            let mut analyzed = gold.clone();
            let mut analyzer = analysis.analyzer();
            analyzed.iter_mut().for_each(|s| analyzer.analyze(s, Analyze::ALL));
            let scores = AnalysisScores::of(&gold, &analyzed);
            let mut next = analyzed.iter();
            let dev = load_dev_with(path, Morphology::Analysis, &mut |sent| {
                if let Some(a) = next.next() {
                    copy_analysis(a, sent);
                }
            })?;
            (Some(dev), Some(scores))
        }
    };
    if let Some(s) = dev_analysis {
        if let Some(f) = analysis.feats.as_mut() {
            f.dev_accuracy = Some(s.ufeats);
        }
        if let Some(l) = analysis.lemmatizer.as_mut() {
            l.dev_accuracy = Some(s.lemmas);
        }
    }
    Ok(Prepared { set, dev, analysis: Some(analysis), dev_analysis })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::fixtures::{conllu, sentences, set_of, FULL};
    use crate::transition::NONE;

    /// A non-projective tree over the words of [`FULL`]: `det` from word 1 to word 3 crosses
    /// the root word 2, so Head lifting relabels it `det↑nsubj` under word 2.
    const NON_PROJECTIVE: [(&str, &str); 4] = [("2", "nsubj"), ("0", "root"), ("1", "det"), ("2", "punct")];

    #[test]
    fn rare_lifted_labels_lose_their_mark_and_the_others_are_renumbered() {
        let path = Path::new("t.conllu");
        for (copies, min, kept) in [(1, 2, false), (2, 2, true)] {
            let mut set = TrainingSet { projective: Some(Scheme::Head), ..TrainingSet::default() };
            let mut text: Vec<&[(&str, &str)]> = vec![&FULL; 3];
            text.extend(std::iter::repeat_n(&NON_PROJECTIVE[..], copies));
            for sent in sentences(&conllu(&text)) {
                set.add(&sent, path).unwrap();
            }
            assert_eq!(set.lifted_sentences, copies);
            set.strip_rare_encoded_labels(min);
            let labels = set.labels.as_ref().unwrap();
            assert_eq!(labels.get("det↑nsubj").is_some(), kept, "{copies} copies, min {min}");
            assert_eq!(set.sentences.len(), 3 + copies);
            assert_eq!(set.stripped_rare_lifts, if kept { 0 } else { copies });
            // Renumbering keeps every tree's labels; the lifted arc keeps its mark or loses it.
            let lifted = if kept { "det↑nsubj" } else { "det" };
            for (i, s) in set.sentences.iter().enumerate() {
                let names: Vec<&str> = s.gold.labels().map(|l| labels.name(l)).collect();
                let expected =
                    if i < 3 { ["det", "nsubj", "root", "punct"] } else { ["nsubj", "root", lifted, "punct"] };
                assert_eq!(names, expected, "sentence {i}");
            }
        }
    }

    #[test]
    fn add_reads_full_trees_as_load_training_does() {
        let two_roots = [("0", "root"), ("3", "nsubj"), ("0", "root"), ("3", "punct")];
        let crossing = [("3", "det"), ("4", "nsubj"), ("0", "root"), ("3", "punct")];
        let text = conllu(&[&FULL, &two_roots, &crossing, &FULL]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.conllu");
        std::fs::write(&path, &text).unwrap();
        let loaded =
            load_training_with(std::slice::from_ref(&path), Morphology::Unspecified, None, &mut |_, _| {}).unwrap();
        let mut added = TrainingSet::default();
        for s in sentences(&text) {
            added.add(&s, &path).unwrap();
        }
        for set in [&loaded, &added] {
            assert_eq!((set.sentences.len(), set.words, set.annotated_words), (2, 8, 8));
            assert_eq!((set.skipped_root, set.skipped_nonprojective, set.partial_sentences), (1, 1, 0));
            assert!(set.sentences.iter().all(|s| !s.gold.is_partial()));
        }
        assert_ne!(loaded.fingerprint, 0);
        assert_eq!(loaded.fingerprint, added.fingerprint);
        assert_eq!(loaded.labels, added.labels);
    }

    #[test]
    fn partial_sentences_keep_their_annotated_arcs_only() {
        let partial = [("_", "_"), ("3", "nsubj"), ("0", "root"), ("_", "_")];
        let open_labels = [("2", "det"), ("3", "_"), ("0", "_"), ("3", "punct")];
        let unannotated = [("_", "_"); 4];
        // 1 <- 2 and 1 -> 3 annotated, 2 not: no completion is projective.
        let uncompletable = [("2", "amod"), ("_", "_"), ("1", "obl"), ("_", "_")];
        let root_label_below = [("_", "_"), ("3", "root"), ("_", "_"), ("_", "_")];
        let set = set_of(&conllu(&[&partial, &open_labels, &unannotated, &uncompletable, &root_label_below])).unwrap();
        assert_eq!(set.sentences.len(), 2);
        assert_eq!((set.words, set.annotated_words, set.partial_sentences), (8, 6, 2));
        assert_eq!((set.skipped_unannotated, set.skipped_nonprojective, set.skipped_root), (1, 1, 1));
        let labels = set.labels.as_ref().unwrap();
        // Labels come from annotated DEPREL only, in order: never `_`, nor from skipped sentences.
        assert_eq!(
            (0..labels.len()).map(|i| labels.name(Label::from_index(i))).collect::<Vec<_>>(),
            ["root", "nsubj", "det", "punct"]
        );
        let gold = &set.sentences[0].gold;
        assert!(gold.is_partial());
        assert_eq!((gold.annotated(), gold.head(1), gold.head(2), gold.head(4)), (2, NONE, 3, NONE));
        assert_eq!(gold.label(2), labels.get("nsubj"));
        let gold = &set.sentences[1].gold;
        assert!(gold.is_partial());
        assert_eq!((gold.annotated(), gold.label(2), gold.label(3)), (4, None, Some(Label::ROOT)));
    }

    #[test]
    fn partial_sentences_with_two_root_words_are_errors() {
        let two_roots = [("0", "root"), ("_", "_"), ("0", "root"), ("_", "_")];
        let e = set_of(&conllu(&[&FULL, &two_roots])).unwrap_err();
        assert_eq!(e.to_string(), "t.conllu:8: words 1 and 3 both have HEAD 0: a tree has one root word");
    }

    #[test]
    fn the_root_label_comes_from_the_first_sentence() {
        let top = [("2", "det"), ("3", "nsubj"), ("0", "TOP"), ("3", "punct")];
        let open_root = [("2", "det"), ("3", "nsubj"), ("0", "_"), ("_", "_")];
        let set = set_of(&conllu(&[&top, &open_root])).unwrap();
        assert_eq!(set.labels.unwrap().name(Label::ROOT), "TOP");
        assert_eq!(set.sentences.len(), 2);
        // A first sentence without an annotated root DEPREL gives the UD default.
        let set = set_of(&conllu(&[&open_root, &top])).unwrap();
        assert_eq!(set.labels.unwrap().name(Label::ROOT), "root");
        assert_eq!((set.sentences.len(), set.skipped_root), (1, 1));
    }

    #[test]
    fn load_dev_reads_partial_annotations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.conllu");
        let partial = [("_", "_"), ("3", "nsubj"), ("0", "root"), ("_", "_")];
        std::fs::write(&path, conllu(&[&FULL, &partial])).unwrap();
        let dev = load_dev(&path).unwrap();
        assert_eq!(dev.iter().map(DevSentence::annotated).collect::<Vec<_>>(), [4, 2]);
        assert_eq!(dev[0].heads, [Some(2), Some(3), Some(0), Some(3)]);
        let two_roots = [("0", "root"), ("_", "_"), ("0", "root"), ("_", "_")];
        std::fs::write(&path, conllu(&[&FULL, &two_roots])).unwrap();
        let e = load_dev(&path).unwrap_err().to_string();
        assert!(e.ends_with("dev.conllu:8: words 1 and 3 both have HEAD 0: a tree has one root word"), "{e}");
    }
}

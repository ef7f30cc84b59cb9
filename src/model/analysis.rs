//! The whole analysis of tokenized text, stage after stage as UDPipe runs them: the tagger
//! (UPOS and XPOS, [`crate::model::tagger`]), then morphological features
//! ([`crate::model::feats`]), then lemmas ([`crate::model::lemmatizer`]), each stage reading
//! what the stages before it predicted.
//!
//! Training ([`train_analysis`]) gives each later stage the predictions it will be given:
//! with K-fold jackknifing, every training sentence is tagged by a tagger trained on the other
//! folds, its FEATS predicted from those tags by a classifier trained on the other folds, and
//! its lemmas from both; the final FEATS classifier and lemmatizer are trained on all
//! sentences with those predictions as input, and the parser trains on the predicted columns
//! (returned for it). Without jackknifing every stage reads the gold columns.
//!
//! This module owns the order of the stages and their jackknifing; each stage's features and
//! training are its own module's.

use rayon::prelude::*;

use crate::corpus::{Column, Sentence};
use crate::learn::perceptron::Weights;
use crate::learn::scorer::Scorer;
use crate::model::feats::{train_feats, FeatsMode, FeatsModel, FeatsTagger};
use crate::model::lemmatizer::{train_lemmatizer, Lemmatizer, LemmatizerModel};
use crate::model::tagger::{jackknife, train_tagger, TagSentence, TagSet, Tagger, TaggerModel};

/// How to train the analysis.
#[derive(Debug, Clone, Copy)]
pub struct AnalysisOptions {
    /// Epochs of every stage.
    pub epochs: u32,
    /// Folds for jackknifing; below 2 each stage trains on gold input.
    pub folds: usize,
    pub seed: u64,
}

/// The three stages, trained; FEATS and lemmas only where the training data has some (a
/// treebank without them gets no stage that would write `_` or the form everywhere).
#[derive(Debug, Clone)]
pub struct AnalysisModel {
    pub tagger: TaggerModel,
    pub feats: Option<FeatsModel>,
    pub lemmatizer: Option<LemmatizerModel>,
}

/// Whether some word of `sentences` has `col` specified.
fn has_column(sentences: &[Sentence], col: Column) -> bool {
    sentences.iter().any(|s| s.words().any(|w| w.get(col) != "_"))
}

/// Every word checked: training sentences read from a treebank.
fn all_checked(_: usize, _: u32) -> bool {
    true
}

/// The sentences of `of` whose index is (`keep`) or is not in fold `fold` of `k`.
fn fold_of(of: &[Sentence], fold: usize, k: usize, keep: bool) -> Vec<Sentence> {
    of.iter().enumerate().filter(|(i, _)| (i % k == fold) == keep).map(|(_, s)| s.clone()).collect()
}

/// Runs `stage` (trained on the other folds by `train`) over each fold of `input`, in parallel.
fn jackknifed<M: Sync + Send>(
    gold: &[Sentence],
    input: &mut [Sentence],
    k: usize,
    train: impl Fn(&[Sentence], &[Sentence], u64) -> M + Sync,
    stage: impl Fn(&M, &mut Sentence) + Sync,
) {
    let predicted: Vec<(usize, Vec<Sentence>)> = (0..k)
        .into_par_iter()
        .map(|fold| {
            let model = train(&fold_of(gold, fold, k, false), &fold_of(input, fold, k, false), fold as u64);
            let mut held_out = fold_of(input, fold, k, true);
            held_out.iter_mut().for_each(|s| stage(&model, s));
            (fold, held_out)
        })
        .collect();
    for (fold, sentences) in predicted {
        for (i, s) in sentences.into_iter().enumerate() {
            input[fold + i * k] = s;
        }
    }
}

/// Trains the three stages on `gold` (full analyses: every word's UPOS, XPOS, FEATS and
/// LEMMA), and returns them with the training sentences as the parser should see them: with
/// jackknifing, carrying every stage's held-out predictions; without, `None` (gold columns).
pub fn train_analysis(gold: &[Sentence], opts: AnalysisOptions) -> (AnalysisModel, Option<Vec<Sentence>>) {
    let AnalysisOptions { epochs, folds, seed } = opts;
    let mut tags = TagSet::default();
    let tag_sentences: Vec<TagSentence> = gold.iter().map(|s| TagSentence::from_sentence(s, &mut tags)).collect();
    let tagger = train_tagger(&tag_sentences, &tags, epochs, seed);
    let (with_feats, with_lemmas) = (has_column(gold, Column::Feats), has_column(gold, Column::Lemma));
    // Half the epochs: trained on jackknifed tags, FEATS scored best after about five (hu_szeged
    // dev, predicted tags: 89.05 at 5 epochs, 88.60 at 10, 87.53 at 20; el_gdt 90.00 and 90.07).
    let feats_epochs = epochs.div_ceil(2);
    let train_f = |g: &[Sentence], i: &[Sentence], fold: u64| {
        train_feats(g, i, &all_checked, FeatsMode::Whole, feats_epochs, seed.wrapping_add(fold))
    };
    let train_l = |g: &[Sentence], i: &[Sentence], fold: u64| {
        train_lemmatizer(g, i, &all_checked, epochs, seed.wrapping_add(fold))
    };
    if folds < 2 {
        let feats = with_feats.then(|| train_f(gold, gold, 0));
        let lemmatizer = with_lemmas.then(|| train_l(gold, gold, 0));
        return (AnalysisModel { tagger, feats, lemmatizer }, None);
    }
    let mut input = gold.to_vec();
    for (s, predicted) in input.iter_mut().zip(jackknife(&tag_sentences, &tags, folds, epochs, seed)) {
        for (i, &t) in predicted.iter().enumerate() {
            let (upos, xpos) = tags.get(t);
            s.set_tags(i + 1, upos, xpos);
        }
    }
    let mut feats = None;
    if with_feats {
        jackknifed(gold, &mut input, folds, train_f, |m, s| FeatsTagger::from_model(m).tag(s));
        feats = Some(train_f(gold, &input, 0));
    }
    let mut lemmatizer = None;
    if with_lemmas {
        jackknifed(gold, &mut input, folds, train_l, |m, s| Lemmatizer::from_model(m).lemmatize(s));
        lemmatizer = Some(train_l(gold, &input, 0));
    }
    (AnalysisModel { tagger, feats, lemmatizer }, Some(input))
}

impl AnalysisModel {
    /// The analyzer of the model in memory.
    pub fn analyzer(&self) -> Analyzer<'_, &Weights> {
        Analyzer {
            tagger: Tagger::from_model(&self.tagger),
            feats: self.feats.as_ref().map(FeatsTagger::from_model),
            lemmatizer: self.lemmatizer.as_ref().map(Lemmatizer::from_model),
        }
    }
}

/// Accuracy (percent of words) of each column an analysis predicts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AnalysisScores {
    pub upos: f64,
    pub xpos: f64,
    pub ufeats: f64,
    pub lemmas: f64,
}

impl AnalysisScores {
    /// The scores of `system` against `gold`, word by word (the same tokens).
    pub fn of(gold: &[Sentence], system: &[Sentence]) -> AnalysisScores {
        let mut right = [0usize; 4];
        let mut words = 0usize;
        for (g, s) in gold.iter().zip(system) {
            for (gw, sw) in g.words().zip(s.words()) {
                words += 1;
                for (r, col) in right.iter_mut().zip([Column::Upos, Column::Xpos, Column::Feats, Column::Lemma]) {
                    *r += usize::from(gw.get(col) == sw.get(col));
                }
            }
        }
        let pct = |c: usize| if words == 0 { 0.0 } else { 100.0 * c as f64 / words as f64 };
        AnalysisScores { upos: pct(right[0]), xpos: pct(right[1]), ufeats: pct(right[2]), lemmas: pct(right[3]) }
    }
}

/// Copies the predicted UPOS, XPOS, FEATS and LEMMA of `from` into the same words of `to`.
pub fn copy_analysis(from: &Sentence, to: &mut Sentence) {
    for (i, w) in from.words().enumerate() {
        for col in [Column::Lemma, Column::Upos, Column::Xpos, Column::Feats] {
            to.set_column(i + 1, col, w.get(col));
        }
    }
}

/// What an analysis does with the values a sentence already has (not `_`) in the columns it
/// writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Given {
    /// Written over, unrecorded: tokenized text (which has none), and sentences made into
    /// training data as the tagger tags them.
    #[default]
    Replaced,
    /// Kept: the tagger chooses under them ([`crate::model::tagger::Tagger::tag_given`]: a
    /// given UPOS stays and only the XPOS is predicted), and whatever a stage still wrote over
    /// is put back once the sentence is parsed (`crate::parse::given`): only the values the
    /// sentence lacks are the model's.
    Kept,
    /// Written over by the model's whole analysis, each replaced value kept in MISC
    /// (`OrigUPOS=…`, `crate::parse::given`).
    Recorded,
}

/// Which columns an analysis writes into a sentence: UPOS and XPOS (the tagger), FEATS, LEMMA,
/// and what becomes of the values the sentence has in them ([`Given`]). Each later stage reads
/// the columns as they are then, predicted or given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Analyze {
    pub tags: bool,
    pub feats: bool,
    pub lemmas: bool,
    pub given: Given,
}

impl Analyze {
    /// Every column.
    pub const ALL: Analyze = Analyze { tags: true, feats: true, lemmas: true, given: Given::Replaced };
    /// None: the sentence is parsed as given.
    pub const NONE: Analyze = Analyze { tags: false, feats: false, lemmas: false, given: Given::Replaced };

    /// Whether any column is written.
    pub fn any(self) -> bool {
        self.tags || self.feats || self.lemmas
    }
}

/// The stages over borrowed weights, with their reusable buffers: one per thread.
pub struct Analyzer<'m, S: Scorer> {
    pub tagger: Tagger<'m, S>,
    /// Absent in models trained before FEATS and lemmas were predicted.
    pub feats: Option<FeatsTagger<'m, S>>,
    pub lemmatizer: Option<Lemmatizer<'m, S>>,
}

impl<'m, S: Scorer> Analyzer<'m, S> {
    /// Writes the columns `what` asks for into `sent` (those the model predicts): UPOS and
    /// XPOS, then FEATS, then LEMMA.
    pub fn analyze(&mut self, sent: &mut Sentence, what: Analyze) {
        self.analyze_scored(sent, what, None);
    }

    /// [`Analyzer::analyze`], the tags chosen by a neural model's `tag_scores` if given
    /// ([`Tagger::tag_scored`]) rather than by the tagger's passes.
    pub fn analyze_scored(&mut self, sent: &mut Sentence, what: Analyze, tag_scores: Option<&[f32]>) {
        match (what.tags, what.given, tag_scores) {
            (false, _, _) => {}
            (true, given, Some(scores)) => self.tagger.tag_scored(sent, scores, given == Given::Kept),
            (true, Given::Kept, None) => self.tagger.tag_given(sent),
            (true, _, None) => self.tagger.tag(sent),
        }
        if let Some(f) = self.feats.as_mut().filter(|_| what.feats) {
            f.tag(sent);
        }
        if let Some(l) = self.lemmatizer.as_mut().filter(|_| what.lemmas) {
            l.lemmatize(sent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(words: &[(&str, &str, &str, &str)]) -> Sentence {
        Sentence::of_words(&words.iter().map(|&(f, l, u, feats)| [f, l, u, "_", feats]).collect::<Vec<_>>())
    }

    #[test]
    fn jackknifed_training_data_carries_every_stage_s_predictions_for_every_sentence() {
        // Forty nouns, each once: the lemmatizer's classifier learns from rare words.
        let nouns = ["cat", "dog", "bird", "fish", "tree", "car", "hat", "cup"];
        let gold: Vec<Sentence> = (0..40)
            .map(|i| {
                let n = format!("{}{}", nouns[i % 8], ["a", "o", "u", "e", "i"][i / 8]);
                sentence(&[
                    ("the", "the", "DET", "Definite=Def"),
                    (&format!("{n}s"), &n, "NOUN", "Number=Plur"),
                    ("run", "run", "VERB", "_"),
                ])
            })
            .collect();
        let opts = AnalysisOptions { epochs: 3, folds: 4, seed: 1 };
        let (model, jackknifed) = train_analysis(&gold, opts);
        let jackknifed = jackknifed.expect("jackknifed with 4 folds");
        assert_eq!(jackknifed.len(), gold.len());
        for (g, p) in gold.iter().zip(&jackknifed) {
            let forms = |s: &Sentence| s.words().map(|w| w.get(Column::Form).to_string()).collect::<Vec<_>>();
            assert_eq!(forms(g), forms(p), "sentences stay in order");
            // Every column was written: this data is learnable from the other folds.
            assert_eq!(p.word(2).get(Column::Feats), "Number=Plur");
            assert_eq!(p.word(2).get(Column::Lemma), g.word(2).get(Column::Lemma));
        }
        let mut analyzer = model.analyzer();
        let mut s = sentence(&[("the", "_", "_", "_"), ("hats", "_", "_", "_"), ("run", "_", "_", "_")]);
        analyzer.analyze(&mut s, Analyze::ALL);
        let cols = |c| s.words().map(|w| w.get(c).to_string()).collect::<Vec<_>>();
        assert_eq!(cols(Column::Upos), ["DET", "NOUN", "VERB"]);
        assert_eq!(cols(Column::Feats), ["Definite=Def", "Number=Plur", "_"]);
        assert_eq!(cols(Column::Lemma), ["the", "hat", "run"]);
        // With its UPOS given, a word's FEATS and lemma are those of that UPOS: "hats" as a
        // VERB gets the one FEATS value verbs had (`_`), not the noun's Number=Plur.
        let mut s = sentence(&[("the", "_", "DET", "_"), ("hats", "_", "VERB", "_"), ("run", "_", "VERB", "_")]);
        analyzer.analyze(&mut s, Analyze { given: Given::Kept, ..Analyze::ALL });
        let cols = |c| s.words().map(|w| w.get(c).to_string()).collect::<Vec<_>>();
        assert_eq!(cols(Column::Upos), ["DET", "VERB", "VERB"]);
        assert_eq!(cols(Column::Feats), ["Definite=Def", "_", "_"]);
    }
}

//! Training the accurate tier ([`train_neural`]): the training set's sentences (with the tags,
//! FEATS and lemmas the analysis gives them, jackknifed as for the linear parser) become the
//! neural trainer's examples ([`crate::neural::trainer`]); after each epoch the weights parse
//! the dev set through the one parser both kinds share, and the best epoch's are kept; the arc
//! confidence is then calibrated on dev as the linear model's is (isotonic, with its ECE
//! cross-fitted). This module adapts and assembles; the learning is the neural layer's.

use std::collections::HashMap;

use crate::base::label::{universal, LabelSet};
use crate::learn::confidence::Isotonic;
use crate::learn::perceptron::Weights;
use crate::model::features::{attrs_tag_key, form_key, tag_hash};
use crate::model::neural::{NeuralModel, Spec};
use crate::model::tagger::TagSet;
use crate::model::{Model, TrainingInfo};
use crate::neural::grow::grow_labels;
use crate::neural::network::NO_TAG;
use crate::neural::trainer::{self, NeuralEpoch, TrainError};
use crate::neural::{DevScore, Example, FineTuneOptions, NeuralOptions, NeuralScorer};
use crate::parse::parser::Parser;
use crate::transition::{Encoding, Transition};

use super::calibration::{arc_ece, calibrated_ece};
use super::data::{DevSentence, TrainingSet};
use super::dev::{arc_pairs_with, evaluate_with};
use super::domain::Domain;
use super::options::DEFAULT_MIN_FEATURE_COUNT;
use super::training_loop::fallback_label;

/// A parser that scores with `neural` (its linear table `empty`).
fn parser<'m>(
    encoding: Encoding,
    empty: &'m Weights,
    neural: &'m NeuralModel,
    labels: &'m LabelSet,
    model: &Model,
) -> Parser<'m, &'m Weights> {
    Parser::from_parts(encoding, empty, labels, model.fallback)
        .with_morphology(model.morphology)
        .with_neural(Some(NeuralScorer::new(neural.net())))
}

/// The linear table of a neural model: never scored, it holds the model's inventory, a row
/// for each FORM and (UPOS, XPOS) pair seen at least [`DEFAULT_MIN_FEATURE_COUNT`] times in
/// training under the keys a linear parser's table has them ([`form_key`], [`crate::model::features::tag_key`]), so
/// that the check of a file's fit to the model ([`crate::parse::fit`]) reads both kinds alike.
fn inventory(set: &TrainingSet, classes: usize) -> Weights {
    let mut counts: HashMap<u64, u32> = HashMap::new();
    for s in &set.sentences {
        for (form, attrs) in s.forms.iter().zip(&s.attrs[1..]) {
            *counts.entry(form_key(form)).or_default() += s.copies;
            *counts.entry(attrs_tag_key(attrs)).or_default() += s.copies;
        }
    }
    let mut keys: Vec<u64> =
        counts.into_iter().filter(|&(_, n)| n >= DEFAULT_MIN_FEATURE_COUNT).map(|(k, _)| k).collect();
    keys.sort_unstable();
    Weights::from_rows(classes, keys.into_iter().map(|k| (k, vec![(0, 1.0)])))
}

/// The index in a tag set of each (UPOS, XPOS) pair, by the hash a word's attributes hold of
/// it ([`TokenAttrs::tag`]): what a model that tags learns each training word's tag by.
pub struct TagIds(HashMap<u64, u16>);

impl TagIds {
    pub fn of(tags: &TagSet) -> TagIds {
        TagIds((0..tags.len() as u16).map(|t| (tag_hash(tags.get(t).0, tags.get(t).1), t)).collect())
    }

    /// The tag of each of `tags` ([`TokenAttrs::tag`] of each word), [`NO_TAG`] for a pair
    /// the set lacks.
    pub fn of_words(&self, tags: &[u64]) -> Vec<u16> {
        tags.iter().map(|t| self.0.get(t).copied().unwrap_or(NO_TAG)).collect()
    }
}

/// Trains a neural parser of `spec` (the default architecture for the set's labels if
/// `None`) on `set`, choosing the epoch by LAS on `dev`; a spec that tags
/// ([`Spec::tags`]) learns the gold tags of `set`'s words ([`super::data::TrainSentence::gold_tags`]:
/// their columns, not the analysis's) in `tags`, which must then be given. The model returned has an empty linear
/// table and no analysis (the caller adds its own); the neural weights come beside it.
pub fn train_neural(
    set: &TrainingSet,
    dev: Option<&[DevSentence]>,
    spec: Option<Spec>,
    tags: Option<&TagSet>,
    opts: &NeuralOptions,
    mut info: TrainingInfo,
    progress: &mut dyn FnMut(&NeuralEpoch),
) -> Result<(Model, NeuralModel), TrainError> {
    let labels = set.labels.clone().unwrap_or_else(|| LabelSet::new("root"));
    let classes = Transition::count(labels.len());
    let spec = spec.unwrap_or_else(|| Spec::default_for(classes));
    let ids = tags.filter(|_| spec.tags > 0).map(TagIds::of);
    let examples: Vec<Example> = set
        .sentences
        .iter()
        .map(|s| Example {
            attrs: s.attrs.clone(),
            forms: s.forms.clone(),
            gold: s.gold.clone(),
            tags: ids.as_ref().map_or_else(Vec::new, |ids| ids.of_words(&s.gold_tags)),
            copies: s.copies,
        })
        .collect();
    let encoding = Encoding { system: opts.system, projective: set.projective };
    let empty = Weights::from_rows(classes, std::iter::empty());
    let fallback = fallback_label(set, &labels);
    let mut model = set.parser_model(opts.system, labels, fallback, inventory(set, classes), TrainingInfo::default());
    let mut score = |neural: &NeuralModel| {
        dev.map(|d| DevScore {
            las: evaluate_with(&mut parser(encoding, &empty, neural, &model.labels, &model), d, &model.labels).las,
            tags: tags.filter(|_| neural.spec.tags > 0).map(|tags| tag_accuracy(neural, tags, d).tags),
        })
    };
    let trained = trainer::train(spec, &examples, opts, &mut score, progress)?;
    drop(examples);
    info.oracle = "dynamic".to_string();
    info.epochs = opts.epochs;
    info.best_epoch = trained.best_epoch;
    info.explore_k = opts.explore_k;
    info.explore_p = opts.explore_p;
    info.seed = opts.seed;
    set.record_in(&mut info);
    if let (Some(dev), Some(tags), 1..) = (dev, tags, trained.model.spec.tags) {
        let accuracy = tag_accuracy(&trained.model, tags, dev);
        (info.dev_upos, info.dev_xpos) = (accuracy.upos, accuracy.xpos);
    }
    model.info = info;
    if let Some(dev) = dev {
        calibrate_neural(&mut model, &trained.model, dev);
    }
    Ok((model, trained.model))
}

/// How often a model that tags tags `dev`'s words as their gold columns, in percent: UPOS,
/// XPOS and both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TagAccuracy {
    pub upos: f64,
    pub xpos: f64,
    pub tags: f64,
}

/// [`TagAccuracy`] of `neural`'s best tag for each word of `dev` (tags of `tags`).
pub fn tag_accuracy(neural: &NeuralModel, tags: &TagSet, dev: &[DevSentence]) -> TagAccuracy {
    let mut scorer = NeuralScorer::new(neural.net());
    let (mut words, mut upos, mut xpos, mut both) = (0usize, 0usize, 0usize, 0usize);
    for s in dev {
        let scores = scorer.tag(&s.attrs, &s.form_refs());
        for ((word_scores, gold_upos), gold_xpos) in scores.chunks_exact(tags.len()).zip(&s.upos).zip(&s.xpos) {
            let best = (0..word_scores.len()).max_by(|&a, &b| word_scores[a].total_cmp(&word_scores[b])).unwrap_or(0);
            let (u, x) = tags.get(best as u16);
            words += 1;
            upos += usize::from(u == gold_upos);
            xpos += usize::from(x == gold_xpos);
            both += usize::from(u == gold_upos && x == gold_xpos);
        }
    }
    let percent = |n: usize| 100.0 * n as f64 / words.max(1) as f64;
    TagAccuracy { upos: percent(upos), xpos: percent(xpos), tags: percent(both) }
}

/// Fits `model`'s arc calibration (isotonic) for the parse of `neural` on `dev`, and records
/// its dev UAS, LAS and arc ECE (raw and cross-fitted), as a linear model's is calibrated
/// ([`super::calibrate`]; a neural model's temperature stays 1: its softmax is trained).
pub fn calibrate_neural(model: &mut Model, neural: &NeuralModel, dev: &[DevSentence]) {
    let (scores, pairs) = with_confidence(model, neural, |p| {
        (evaluate_with(p, dev, &model.labels), arc_pairs_with(p, dev, &model.labels))
    });
    model.info.dev_uas = scores.uas;
    model.info.dev_las = scores.las;
    let (raw, cross) = arc_ece(&pairs);
    model.info.dev_arc_ece_raw = raw;
    model.info.dev_arc_ece_crossfit = cross;
    model.arc_calibration = Isotonic::fit(&mut pairs.into_iter().flatten().collect::<Vec<_>>());
}

/// Arc ECE of `model`'s calibrated confidences for the parse of `neural` on `dev`'s annotated
/// words ([`super::calibrated_arc_ece`] for a neural model).
pub fn calibrated_arc_ece_neural(model: &Model, neural: &NeuralModel, dev: &[DevSentence]) -> f64 {
    let pairs = with_confidence(model, neural, |p| arc_pairs_with(p, dev, &model.labels));
    calibrated_ece(&pairs, model.arc_calibration.as_ref())
}

/// `f` of a parser that scores with `neural` and computes confidences (temperature 1: the
/// softmax is trained), without `model`'s arc calibration.
fn with_confidence<R>(model: &Model, neural: &NeuralModel, f: impl FnOnce(&mut Parser<&Weights>) -> R) -> R {
    let empty = Weights::from_rows(model.weights.classes(), std::iter::empty());
    f(&mut parser(model.encoding(), &empty, neural, &model.labels, model).with_confidence(1.0))
}

/// What a trained neural model is fine-tuned on ([`fine_tune_neural`]).
pub struct FineTuneData {
    /// The user's sentences (annotations, self-training's).
    pub user: Vec<Example>,
    /// The base treebank's.
    pub base: Vec<Example>,
    /// Labels of the sentences that the model lacks, in the order they are appended to its
    /// own: the model is grown for them before it is fine-tuned ([`grow_labels`]).
    pub new_labels: Vec<NewLabel>,
    /// The model's labels and the new ones, and its label for a word the parse leaves
    /// unlabelled.
    labels: LabelSet,
    fallback: crate::base::label::Label,
}

/// A label of the user's sentences that the model lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLabel {
    pub name: String,
    /// The universal relation it subtypes, where the model has it (`obl` for `obl:tmod`):
    /// the label starts as it.
    pub parent: Option<String>,
}

impl FineTuneData {
    /// The sentences of `set` as examples for a model whose labels are `labels` (and
    /// `fallback` its label for a word the parse leaves unlabelled), each arc's label found by
    /// name there or appended as a new label. With the `tags` of a model that tags, each
    /// word's tag is learned too.
    pub fn of(
        set: &TrainingSet,
        labels: &LabelSet,
        fallback: crate::base::label::Label,
        tags: Option<&TagSet>,
    ) -> FineTuneData {
        let ids = tags.map(TagIds::of);
        let mut grown = labels.clone();
        let mut new_labels = Vec::new();
        let names = set.labels.as_ref();
        for name in names.iter().flat_map(|n| set.sentences.iter().flat_map(|s| s.gold.labels().map(|l| n.name(l)))) {
            if grown.get(name).is_none() {
                grown.intern(name);
                let parent = labels.get(universal(name)).map(|p| labels.name(p).to_string());
                new_labels.push(NewLabel { name: name.to_string(), parent });
            }
        }
        let (mut user, mut base) = (Vec::new(), Vec::new());
        for s in &set.sentences {
            let mut gold = s.gold.clone();
            // Every label is in the grown set (a set without labels has no arcs to label).
            gold.relabel(|l| names.and_then(|n| grown.get(n.name(l))));
            let tags = ids.as_ref().map_or_else(Vec::new, |ids| ids.of_words(&s.gold_tags));
            let example = Example { attrs: s.attrs.clone(), forms: s.forms.clone(), gold, tags, copies: 1 };
            match s.domain {
                Domain::User => user.push(example),
                Domain::Base => base.push(example),
            }
        }
        FineTuneData { user, base, new_labels, labels: grown, fallback }
    }

    /// Each new label's parent in the model's labels.
    fn parents(&self) -> Vec<Option<crate::base::label::Label>> {
        self.new_labels.iter().map(|n| n.parent.as_deref().and_then(|p| self.labels.get(p))).collect()
    }
}

/// Fine-tunes `start`, the trained model `data` was made for, on `data`
/// ([`trainer::fine_tune`]), grown first for the labels it lacks. The model
/// returned has `set`'s inventory (the user's forms among it), no calibration and no analysis
/// (the caller adds them); the neural weights come beside it.
pub fn fine_tune_neural(
    set: &TrainingSet,
    data: &FineTuneData,
    start: &NeuralModel,
    opts: &FineTuneOptions,
    mut info: TrainingInfo,
    progress: &mut dyn FnMut(&NeuralEpoch),
) -> Result<(Model, NeuralModel), TrainError> {
    let classes = Transition::count(data.labels.len());
    let grown;
    let start = match data.new_labels.is_empty() {
        true => start,
        false => {
            grown = grow_labels(start, &data.parents());
            &grown
        }
    };
    let trained = trainer::fine_tune(start, &data.user, &data.base, opts, progress)?;
    info.oracle = "dynamic".to_string();
    info.explore_p = opts.explore_p;
    info.seed = opts.seed;
    set.record_in(&mut info);
    let model = set.parser_model(opts.system, data.labels.clone(), data.fallback, inventory(set, classes), info);
    Ok((model, trained.model))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::file::{self, Extras, ModelFile, WriteOptions};
    use std::path::Path;

    use crate::model::analysis::Analyze;
    use crate::model::neural::{NEUMETA, NEURAL};
    use crate::train::fixtures::{conllu, dev_of, sentences, set_of, FULL};
    use crate::transition::System;

    /// A small neural model trained on copies of [`FULL`] and a tree of other labels over the
    /// same words, so that the parse depends on the model.
    fn trained() -> (Model, NeuralModel, Vec<DevSentence>) {
        let other = [("0", "root"), ("1", "obj"), ("2", "acl"), ("1", "punct")];
        let text = conllu(&[&FULL, &FULL, &FULL, &FULL, &other]);
        let set = set_of(&text).unwrap();
        let dev = dev_of(&conllu(&[&FULL]));
        let spec = Spec::small_for(Transition::count(set.labels.as_ref().unwrap().len()));
        let opts = NeuralOptions {
            system: System::ArcHybrid,
            epochs: 40,
            batch: 2,
            learning_rate: 0.01,
            ..NeuralOptions::default()
        };
        let (model, neural) =
            train_neural(&set, Some(&dev), Some(spec), None, &opts, TrainingInfo::default(), &mut |_| {}).unwrap();
        (model, neural, dev)
    }

    #[test]
    fn a_neural_model_learns_its_trees_and_parses_the_same_from_its_file() {
        let (model, neural, _) = trained();
        assert_eq!(model.info.dev_las, 100.0, "{:?}", model.info);
        assert!(model.arc_calibration.is_some());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.model");
        let sections = neural.sections();
        file::write_with(&model, &path, WriteOptions::default(), Extras { sections: &sections, ..Extras::default() })
            .unwrap();
        let opened = ModelFile::open(&path).unwrap();
        assert_eq!(NeuralModel::of(&opened.neural().unwrap()), neural);
        // The file's parser (through `Parser::new`, as every command builds it) and the
        // in-memory one give the same trees and confidences.
        let empty = Weights::from_rows(model.weights.classes(), std::iter::empty());
        let mut memory = parser(model.encoding(), &empty, &neural, &model.labels, &model).with_confidence(1.0);
        let mut mapped = Parser::new(&opened).with_confidence(1.0);
        assert!(mapped.is_neural());
        let text = conllu(&[&FULL, &[("2", "det"), ("0", "root")]]);
        for (mut sent, d) in sentences(&text).into_iter().zip(dev_of(&text)) {
            memory.parse_words(&d.attrs, &d.form_refs());
            mapped.parse(&mut sent);
            assert_eq!((memory.heads(), memory.labels()), (mapped.heads(), mapped.labels()));
            assert_eq!(memory.arc_confidence(), mapped.arc_confidence());
        }
        // The inventory holds the training forms, so the file's fit check knows them.
        assert!(opened.weights().lookup(form_key("cat")).is_some());
        assert!(opened.weights().lookup(form_key("dog")).is_none());
    }

    /// The UPOS column of `text` with each tag replaced by the next of "The cat sat .", so
    /// that a tagger trained on it tags every word wrongly.
    fn shifted_tags(text: &str) -> String {
        let next = |u: &str| match u {
            "DET" => "NOUN",
            "NOUN" => "VERB",
            "VERB" => "PUNCT",
            _ => "DET",
        };
        text.lines()
            .map(|l| {
                let mut cols: Vec<&str> = l.split('\t').collect();
                if cols.len() == 10 {
                    cols[3] = next(cols[3]);
                }
                cols.join("\t") + "\n"
            })
            .collect()
    }

    /// A model file of the parser trained on `text` with the analysis of a tagger trained on
    /// `tagger_text` (the same words and trees), tagging itself if `tagging` says how (over
    /// the analysis: its words read the tagger's tags in training, as jackknifing gives them).
    fn with_analysis(dir: &Path, text: &str, tagger_text: &str, tagging: Option<bool>) -> ModelFile {
        use crate::model::analysis::{train_analysis, AnalysisOptions};
        let (analysis, _) = train_analysis(&sentences(tagger_text), AnalysisOptions { epochs: 3, folds: 0, seed: 1 });
        let mut set = set_of(text).unwrap();
        for (s, tagged) in set.sentences.iter_mut().zip(set_of(tagger_text).unwrap().sentences) {
            s.attrs = tagged.attrs;
        }
        let classes = Transition::count(set.labels.as_ref().unwrap().len());
        let tags = &analysis.tagger.tags;
        let spec = Spec::small_for(classes);
        let spec = tagging.map_or(spec.clone(), |over_analysis| spec.tagging(tags.len(), over_analysis));
        let opts = NeuralOptions { epochs: 40, batch: 2, learning_rate: 0.01, ..NeuralOptions::default() };
        let (mut model, neural) =
            train_neural(&set, None, Some(spec), Some(tags), &opts, TrainingInfo::default(), &mut |_| {}).unwrap();
        assert_eq!(neural.spec.tags, if tagging.is_some() { 4 } else { 0 });
        model.tagger = Some(analysis.tagger);
        let path = dir.join(format!("{tagging:?}.model"));
        let sections = neural.sections();
        file::write_with(&model, &path, WriteOptions::default(), Extras { sections: &sections, ..Extras::default() })
            .unwrap();
        let opened = ModelFile::open(&path).unwrap();
        assert_eq!(NeuralModel::of(&opened.neural().unwrap()), neural, "the file keeps the spec and its tags");
        opened
    }

    #[test]
    fn a_model_that_tags_writes_its_own_tags_over_the_taggers() {
        use crate::corpus::Column;
        use crate::parse::annotate::{Annotator, Steps};
        let text = conllu(&[&FULL, &FULL, &FULL, &FULL]);
        let wrong = shifted_tags(&text);
        let dir = tempfile::tempdir().unwrap();
        let upos_of = |model: &ModelFile| {
            let mut sent = sentences(&conllu(&[&FULL])).remove(0);
            Annotator::new(model, true)
                .annotate(&mut sent, Steps { analyze: Analyze::ALL, ..Steps::default() })
                .unwrap();
            sent.words().map(|w| w.get(Column::Upos).to_string()).collect::<Vec<_>>()
        };
        // The tagger alone tags as its own training text; a model that tags, from the forms or
        // over the tagger's tags, as the parser's.
        assert_eq!(upos_of(&with_analysis(dir.path(), &text, &wrong, None)), ["NOUN", "VERB", "PUNCT", "DET"]);
        for over_analysis in [false, true] {
            let model = with_analysis(dir.path(), &text, &wrong, Some(over_analysis));
            assert_eq!(upos_of(&model), ["DET", "NOUN", "VERB", "PUNCT"], "over the analysis: {over_analysis}");
        }
    }

    #[test]
    fn specs_of_the_formats_before_tags_and_before_character_encoders_still_decode() {
        use crate::model::neural::{CharEncoder, NeuralSections};
        let (_, neural, _) = trained();
        let sections = neural.sections();
        let (meta, data) = (&sections[0].1, &sections[1].1);
        // Format 4: the spec, the count of tags (0), the character encoder (0: convolution).
        let spec = &meta[4..meta.len() - 5];
        assert!(meta.starts_with(b"NEU4") && meta.ends_with(&[0, 0, 0, 0, 0]));
        assert_eq!(NeuralSections::decode(meta, data).unwrap().spec, neural.spec);
        for format in [&b"NEU2"[..], b"NEU3"] {
            let mut old = format.to_vec();
            old.extend_from_slice(spec);
            if format == b"NEU3" {
                old.extend_from_slice(&0u32.to_le_bytes());
            }
            let decoded = NeuralSections::decode(&old, data).unwrap();
            assert_eq!((&decoded.spec, decoded.spec.chars.encoder), (&neural.spec, CharEncoder::Conv));
        }
        // Format 4 with a character BiLSTM: its own tensors, so the convolution's weights no
        // longer fit.
        let mut bilstm = meta[..meta.len() - 1].to_vec();
        bilstm.push(1);
        let err = NeuralSections::decode(&bilstm, data).unwrap_err();
        assert!(err.to_string().contains("neural weights hold"), "{err}");
        // Format 4 cut short, or with a byte no format has, is refused.
        for (cut, expected) in [
            (meta[..meta.len() - 1].to_vec(), "character encoder is missing"),
            (meta[..meta.len() - 5].to_vec(), "count of tags is missing"),
            ([&meta[..meta.len() - 1], &[7]].concat(), "no format has"),
        ] {
            let err = NeuralSections::decode(&cut, data).unwrap_err();
            assert!(err.to_string().contains(expected), "{err}");
        }
    }

    #[test]
    fn a_cut_mislaid_or_earlier_neural_section_is_refused_when_the_model_is_opened() {
        let (model, neural, _) = trained();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.model");
        let sections = neural.sections();
        let (meta, data) = (&sections[0].1, &sections[1].1);
        let cases = [
            (vec![(NEUMETA, meta.clone()), (NEURAL, data[..data.len() - 4].to_vec())], "neural weights hold"),
            (vec![(NEUMETA, meta.clone())], "section NEURAL is missing"),
            (vec![(NEUMETA, b"NEU2not a spec".to_vec()), (NEURAL, data.clone())], "description does not decode"),
            // An earlier build's: the spec without the format's bytes.
            (vec![(NEUMETA, meta[4..].to_vec()), (NEURAL, data.clone())], "an earlier build's: retrain it"),
        ];
        for (sections, expected) in cases {
            file::write_with(
                &model,
                &path,
                WriteOptions::default(),
                Extras { sections: &sections, ..Extras::default() },
            )
            .unwrap();
            let err = ModelFile::open(&path).err().expect("refused").to_string();
            assert!(err.contains(expected) && err.contains("bad.model"), "{err}");
        }
    }
}

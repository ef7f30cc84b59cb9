//! What a cycle trains its parser on: the base treebank (checked apart from the held-out
//! file), then the annotations that are not held out, each with the tags the parser will be
//! given, then a teacher's confident parses of unlabeled text ([`super::uptraining`]), then
//! self-training's most confident output. Which annotations are held out for
//! the gate is decided here too ([`held_out_annotation`]: the sampled sentences and a share of the
//! others); training and gating are the parent's.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::analysis::unfit_tags;
use super::{checked_tags, held_out_annotation, io_err, reference, store, Report, RetrainError, Settings};
use crate::base::hash::hash_str;
use crate::corpus::{Format, Reader, Sentence};
use crate::learn::scorer::Scorer;
use crate::model::analysis::{Analyze, Analyzer};
use crate::model::file::ModelFile;
use crate::train::{Domain, TrainingSet};

/// A cycle's training set, the held-out annotations (as stored) and whether the tagger is
/// retrained.
pub(super) struct TrainingData<'a> {
    pub set: TrainingSet,
    pub heldout: Vec<&'a Sentence>,
    pub retrain_tagger: bool,
}

/// Of a held-out file, the share of sentences that may also be in `retrain.base`: treebanks
/// repeat a few short sentences ("Thank you ."), but a held-out file mostly in the training
/// data is the same data under another name (`dev.conllu` and `dev.conllu.zst`), and its gate
/// would measure what was trained on.
const MAX_HELDOUT_IN_BASE: f64 = 0.5;

/// A sentence's token lines, hashed: what training reads of it.
fn sentence_hash(sent: &crate::corpus::Sentence) -> u64 {
    sent.token_lines().iter().fold(0, |h, t| crate::base::hash::combine(h, hash_str(t.text())))
}

/// Refuses a held-out file whose sentences are mostly among `base` ([`MAX_HELDOUT_IN_BASE`]).
fn check_heldout_apart(heldout: &Path, base: &HashSet<u64>) -> Result<(), RetrainError> {
    let (mut total, mut shared) = (0usize, 0usize);
    for sent in Reader::open(heldout, Format::from_path(heldout))? {
        total += 1;
        shared += usize::from(base.contains(&sentence_hash(&sent?)));
    }
    if total > 0 && shared as f64 > MAX_HELDOUT_IN_BASE * total as f64 {
        return Err(RetrainError::Settings(format!(
            "retrain.heldout: {shared} of the {total} sentences of {} are also in retrain.base: held-out data must \
             not be trained on (is it a copy of a base file, compressed or renamed?)",
            heldout.display()
        )));
    }
    Ok(())
}

/// Reads `retrain.base`, the annotations of `contents` and self-training's sentences into a
/// training set for a parser like `current`'s. An annotation is trained on as the serving
/// model's analysis (`serving`) would give it to the parser where that differs from what it
/// holds (its tags unknown to the parser, or checked tags without a new tagger); the report's
/// counts are filled in.
#[allow(clippy::too_many_arguments)]
pub(super) fn training_data<'a, S: Scorer>(
    settings: &Settings,
    current: &ModelFile,
    contents: &'a store::Contents,
    store: &store::Store,
    heldout_path: &Path,
    mut serving: Option<&mut Analyzer<'_, S>>,
    report: &mut Report,
    progress: &mut dyn FnMut(&str),
) -> Result<TrainingData<'a>, RetrainError> {
    let morphology = current.meta().morphology;
    let mut set = TrainingSet { morphology, projective: current.encoding().projective, ..TrainingSet::default() };
    let mut base_sentences = HashSet::new();
    for path in &settings.base {
        for sent in Reader::open(path, Format::from_path(path))? {
            let sent = sent?;
            base_sentences.insert(sentence_hash(&sent));
            set.add(&sent, path)?;
        }
    }
    check_heldout_apart(heldout_path, &base_sentences)?;
    let base_count = set.sentences.len();
    let mut heldout = Vec::new();
    // The parser must learn from the tags it will be given: a sentence whose tags a person
    // fixed trains it, without a new tagger, as the serving tagger tags them (on en_atis, 2,033
    // tag fixes trained on as fixed cost 5.4 LAS: 77.63 against 83.04; docs/annotation.md), and
    // one whose tags the parser does not know (XPOS `_`) as the daemon would retag it.
    let retrain_tagger = settings.retrain_tagger.retrains(&contents.annotations, settings, checked_tags);
    for a in &contents.annotations {
        if held_out_annotation(a, settings.annotation_heldout) {
            heldout.push(&a.sentence);
            continue;
        }
        let retag = match checked_tags(&a.sentence) {
            // The new tagger learns them: they are the tags the parser will be given.
            Some(_) if retrain_tagger => None,
            Some(_) => Some(Analyze { tags: true, ..Analyze::NONE }),
            None => unfit_tags(current, &a.sentence),
        };
        match (retag, serving.as_mut()) {
            (Some(what), Some(serving)) => {
                let mut retagged = a.sentence.clone();
                serving.analyze(&mut retagged, what);
                report.annotations_retagged += 1;
                set.add_analyzed(&retagged, &a.sentence, &store.segments)?;
            }
            _ => set.add(&a.sentence, &store.segments)?,
        }
    }
    for s in &mut set.sentences[base_count..] {
        s.copies = settings.annotation_weight;
        s.domain = Domain::User;
    }
    let taught = super::uptraining::teacher_sentences(settings, contents, heldout_path, report, progress)?;
    set.add_all(&taught, settings.teacher_weight, Domain::User)?;
    if let Some(dir) = &settings.self_training {
        let chosen = confident_output(dir, settings.self_training_min_conf, settings.self_training_max, heldout_path)?;
        report.self_training_sentences = chosen.len();
        set.add_all(&chosen, 1, Domain::User)?;
        progress(&format!("self-training on {} sentences of {}", chosen.len(), dir.display()));
    }
    Ok(TrainingData { set, heldout, retrain_tagger })
}

/// The `max` sentences of the `.conllu[.zst]` files of `dir` (the daemon's own parses) with
/// the highest `# confidence`, at least `min`, most confident first, with their files; none
/// whose words are a sentence of the held-out file `heldout` (the gate's data).
fn confident_output(
    dir: &Path,
    min: f64,
    max: usize,
    heldout: &Path,
) -> Result<Vec<(crate::corpus::Sentence, PathBuf)>, RetrainError> {
    let held = forms_of_file(heldout)?;
    let mut names = crate::base::io::visible_files(dir).map_err(io_err(dir))?;
    names.sort();
    let mut chosen = Vec::new();
    for name in names.iter().filter(|n| n.ends_with(".conllu") || n.ends_with(".conllu.zst")) {
        let path = dir.join(name);
        for sent in Reader::open(&path, Format::from_path(&path))? {
            let sent = sent?;
            let confidence = sent.comment("confidence").and_then(|c| c.parse::<f64>().ok());
            match confidence {
                Some(c) if c >= min && !held.contains(&reference::forms_hash(&sent)) => {
                    chosen.push((c, sent, path.clone()))
                }
                _ => {}
            }
        }
    }
    // Most confident first; among equals, in file order (the sort is stable).
    chosen.sort_by(|a, b| b.0.total_cmp(&a.0));
    chosen.truncate(max);
    Ok(chosen.into_iter().map(|(_, s, p)| (s, p)).collect())
}

/// The [`reference::forms_hash`] of every sentence of `path`: what tells a sentence of the
/// held-out file, which nothing may train on, by its words.
pub(super) fn forms_of_file(path: &Path) -> Result<HashSet<u64>, RetrainError> {
    let mut forms = HashSet::new();
    for sent in Reader::open(path, Format::from_path(path))? {
        forms.insert(reference::forms_hash(&sent?));
    }
    Ok(forms)
}

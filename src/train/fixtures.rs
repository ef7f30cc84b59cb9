//! Tiny treebanks for the unit tests of `train`: sentences over the words of "The cat sat ."
//! given as (HEAD, DEPREL) pairs, read into training and dev sets, and a model trained on them.

use std::path::Path;

use crate::corpus::{CorpusError, Format, Reader, Sentence};
use crate::model::features::Morphology;
use crate::model::{Model, TrainingInfo};
use crate::transition::System;

use super::{train, DevSentence, LearnerKind, OracleKind, TrainOptions, TrainingSet};

/// "The cat sat .": word (HEAD, DEPREL) pairs of the full tree.
pub(super) const FULL: [(&str, &str); 4] = [("2", "det"), ("3", "nsubj"), ("0", "root"), ("3", "punct")];

/// CoNLL-U text of sentences over the words of [`FULL`], each given as (HEAD, DEPREL) per word.
pub(super) fn conllu(sentences: &[&[(&str, &str)]]) -> String {
    let forms = [("The", "DET"), ("cat", "NOUN"), ("sat", "VERB"), (".", "PUNCT")];
    let mut text = String::new();
    for words in sentences {
        for (i, (head, deprel)) in words.iter().enumerate() {
            let (form, upos) = forms[i % forms.len()];
            text.push_str(&format!("{}\t{form}\t{form}\t{upos}\t_\t_\t{head}\t{deprel}\t_\t_\n", i + 1));
        }
        text.push('\n');
    }
    text
}

/// The sentences of the CoNLL-U `text`.
pub(super) fn sentences(text: &str) -> Vec<Sentence> {
    Reader::new(text.as_bytes(), Path::new("t.conllu"), Format::Conllu).map(|s| s.expect("well-formed")).collect()
}

/// A training set of the sentences of `text`, added one by one.
pub(super) fn set_of(text: &str) -> Result<TrainingSet, CorpusError> {
    let mut set = TrainingSet::default();
    for s in sentences(text) {
        set.add(&s, Path::new("t.conllu"))?;
    }
    Ok(set)
}

/// A model trained on a few copies of [`FULL`], with `oracle`, on full and partial copies.
pub(super) fn small_model(system: System, oracle: OracleKind, learner: LearnerKind) -> Model {
    let partial = [("_", "_"), ("3", "nsubj"), ("0", "root"), ("_", "_")];
    let open_labels = [("2", "det"), ("3", "_"), ("0", "_"), ("3", "punct")];
    let set = set_of(&conllu(&[&FULL, &partial, &open_labels, &FULL, &partial])).unwrap();
    let opts = TrainOptions { system, oracle, learner, epochs: 3, explore_k: 1, ..TrainOptions::default() };
    train(&set, None, &opts, TrainingInfo::default(), &mut |_| {})
}

/// Dev sentences of the CoNLL-U `text`, with morphology.
pub(super) fn dev_of(text: &str) -> Vec<DevSentence> {
    sentences(text)
        .iter()
        .map(|s| DevSentence::from_sentence(s, Path::new("t.conllu"), Morphology::Columns).unwrap())
        .collect()
}

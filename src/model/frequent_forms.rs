//! The training text's most frequent forms ([`FrequentForms`], the `LANGMETA` section): what
//! tells text of the model's language from another language's, whatever its domain. A
//! language's commonest words (its articles, pronouns, prepositions, auxiliaries) make up a
//! large share of any text in it and almost none of another language's text (Grefenstette 1995
//! compared this with character trigrams for telling languages apart); unknown forms alone
//! cannot tell another language from another domain of the same one. Character trigrams,
//! tried first (a trigram model of the training text, the mean log-probability per character
//! of a file's first 1000 words), could not: through the en_ewt model the English vim tutor
//! scored −3.15 nats, its Italian translation −3.08.
//!
//! The share of the words with a letter of a file's first 1000 that are among the
//! [`FREQUENT_FORMS`] commonest of the training text, as a fraction of their share of the
//! training text itself (`cargo run --release --example input_fit -- MODEL FILES`; models of
//! `train --tagger --tokenizer --jackknife 0 --epochs 2`; files: the shared dev sets' raw text
//! and en_ewt's reviews dev, and the vim tutor's English, French, Spanish, Italian, German,
//! Dutch, Hungarian and Greek, each tokenized by the en_ewt model; 2026-12-01):
//!
//! | model (its own share) | its language | other languages |
//! |---|---|---|
//! | en_ewt (50%) | 0.83–0.91 (en_ewt, en_atis, reviews, tutor) | 0.00–0.12; Hungarian 0.19, 0.25 |
//! | hu_szeged (34%) | 0.92, 0.95 | 0.00–0.16; Spanish, Dutch 0.30, 0.31 |
//! | el_gdt (49%) | 0.74, 0.90 | 0.00 |
//! | en_atis (82%) | 0.91; en_ewt 0.37, tutor 0.41, reviews 0.31 | 0.02–0.14 |
//!
//! [`FOREIGN_BELOW`], 0.28, holds back every other language but the two the Hungarian model
//! leaves above it (whose forms, 79% unknown, hold them back anyway), and no text of the model's
//! language, though a model of a narrow domain (airline queries) leaves it little room.
//!
//! This module counts and decides on counts; the input check ([`crate::parse::fit`]) reads a
//! file's words, and training writes the section.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Forms kept.
pub const FREQUENT_FORMS: usize = 100;
/// Words (with a letter) a training text needs for its commonest forms to be its language's
/// function words rather than most of its vocabulary: hu_szeged's 910 training sentences
/// hold about 17,000.
pub const MIN_TRAINING_WORDS: u64 = 10_000;
/// A text whose words are among the frequent forms less than this share of as often as the
/// training text's are is another language's (the table in the module doc).
pub const FOREIGN_BELOW: f64 = 0.28;

/// The training text's commonest forms, and the share of its words they make up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrequentForms {
    /// Lowercased, commonest first.
    pub forms: Vec<String>,
    /// Share of the training text's words (those with a letter) that are one of them.
    pub coverage: f64,
}

/// The form as it is counted, if it counts: lowercased, and only a word with a letter (not a
/// number or punctuation, which every language shares).
pub fn counted(form: &str) -> Option<String> {
    form.chars().any(char::is_alphabetic).then(|| form.to_lowercase())
}

impl FrequentForms {
    /// The commonest forms of `forms` (a training text's, in order); `None` for a text of
    /// fewer than [`MIN_TRAINING_WORDS`] words.
    pub fn of<'a>(forms: impl IntoIterator<Item = &'a str>) -> Option<FrequentForms> {
        let mut counter = FormCounter::default();
        forms.into_iter().for_each(|form| counter.add(form));
        counter.finish()
    }
}

/// Counts a training text's forms as they are read ([`counted`]), so that no list of its
/// words is ever held; [`FormCounter::finish`] gives its [`FrequentForms`].
#[derive(Debug, Default)]
pub struct FormCounter {
    counts: HashMap<String, u64>,
    words: u64,
}

impl FormCounter {
    /// Counts `form`, if it counts.
    pub fn add(&mut self, form: &str) {
        if let Some(key) = counted(form) {
            self.words += 1;
            *self.counts.entry(key).or_default() += 1;
        }
    }

    /// The commonest forms counted; `None` for fewer than [`MIN_TRAINING_WORDS`] words.
    pub fn finish(self) -> Option<FrequentForms> {
        let mut ranked: Vec<(String, u64)> = self.counts.into_iter().collect();
        // Ties by form, so that the same text gives the same list.
        ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        ranked.truncate(FREQUENT_FORMS);
        let covered: u64 = ranked.iter().map(|(_, c)| c).sum();
        (self.words >= MIN_TRAINING_WORDS).then(|| FrequentForms {
            forms: ranked.into_iter().map(|(f, _)| f).collect(),
            coverage: covered as f64 / self.words as f64,
        })
    }
}

/// Whether a text of which `frequent` of `words` counted words are frequent forms is another
/// language's, for a training text whose words are frequent forms at `expected`.
pub fn is_foreign(expected: f64, words: usize, frequent: usize) -> bool {
    words > 0 && (frequent as f64) < FOREIGN_BELOW * expected * words as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commonest_forms_are_counted_lowercased_and_without_numbers_or_punctuation() {
        let sentence = "The cat saw the dog . The dog ran , 42 cats ran";
        let text: Vec<&str> = std::iter::repeat_n(sentence, 1200).flat_map(|s| s.split(' ')).collect();
        let f = FrequentForms::of(text.iter().copied()).unwrap();
        assert_eq!(&f.forms[..3], ["the", "dog", "ran"]);
        assert!(!f.forms.iter().any(|w| w == "." || w == "42"));
        // All of the 9 words with a letter are among the (fewer than 100) forms.
        assert_eq!(f.coverage, 1.0);
        // Too little text: its commonest forms would be most of its words.
        assert_eq!(FrequentForms::of(sentence.split(' ')), None);
    }

    #[test]
    fn text_is_foreign_when_its_words_are_rarely_the_training_text_s_commonest() {
        assert!(!is_foreign(0.82, 1000, 250), "reviews through the en_atis model: 0.31 of the share");
        assert!(is_foreign(0.50, 1000, 125), "the Hungarian tutor through the en_ewt model: 0.25");
        assert!(!is_foreign(0.45, 0, 0));
    }
}

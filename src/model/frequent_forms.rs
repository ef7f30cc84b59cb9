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
//! **One sentence** ([`SentenceCounts::is_foreign`]) is too short for a share: it is judged by
//! the likelihood ratio of its words under two multinomials (naive Bayes over three kinds of
//! word with a letter: one of the commonest forms, another form the parser knows, a form it
//! does not know; Dunning 1994 judged languages by such ratios, over character n-grams). The
//! model's language: commonest at 0.9 of the training text's share, the rest unknown at
//! [`OWN_UNKNOWN`]; another language: commonest at 0.1 of that share (the table above), the
//! rest unknown at [`OTHER_UNKNOWN`]. A sentence of at least [`MIN_SENTENCE_LETTERED`] such
//! words is another language's below a log ratio of [`FOREIGN_SENTENCE_BELOW`]. Measured on
//! the sentences that reached confidence 0.8 (`cargo run --release --example sentence_language`
//! over the parses of the dev sets' raw text and of the vim tutor in 21 languages, through
//! models of `train --tagger --tokenizer --dev`; 2026-12-07), sentences of two words with a
//! letter or more:
//!
//! | log ratio below | en_ewt, en_atis, English tutor: words lost | other languages' sentences kept (en model) |
//! |---|---|---|
//! | +1 | 1.14% | 22 of 75 |
//! | 0 | 0.64% | 30 of 75 |
//! | **−1** | **0.26%** (hu_szeged model 0.16%, el_gdt 0.08%) | **33 of 75** (hu 2 of 6, el 0 of 0) |
//! | −2 | 0.00% | 75 of 75 |
//!
//! Of the 33 kept, 15 are English (lines the Greek, Hungarian, Slovak and Swedish tutors leave
//! untranslated); the other 18 are of two to five words, whose short ones are English forms
//! too ("i torneu a començar", "of } te gaan") or known to the parser ("(point
//! d'exclamation)."). The English lost are names and
//! two-word fragments ("Rob Bryngelson", "Cool ambience."). A sentence of one word with a
//! letter, or none (a line of `~`, a number), says nothing of its language by its words:
//! 1,133 of the 1,208 sentences of the other languages' tutors that reached 0.8 through the
//! en_ewt model.
//!
//! **Another script** is surer still, and needs no second word: a sentence whose every word
//! with a letter is written in scripts none of the commonest forms uses ([`Scripts`]: Greek
//! through the en_ewt model, Latin through el_gdt's) is another language's, one word or many
//! ("Γράφοντας ?" through the en_ewt model). Both rules together, on the same parses: of the
//! other languages' sentences with a letter that reached 0.8, the en_ewt model keeps 131 of
//! 203 (98 of them of one word), hu_szeged's 59 of 86, el_gdt's 0 of 145; of their own
//! language's words at 0.8 they lose 0.26%, 0.15% and 0.13% (the tutors' English lines
//! counted as their own).
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

/// A sentence is judged by its words only from this many words with a letter.
pub const MIN_SENTENCE_LETTERED: usize = 2;
/// Of the words of the model's language that are not among the commonest forms, the share the
/// parser does not know: en_ewt dev 0.34 through its model, el_gdt 0.69, hu_szeged 0.82.
pub const OWN_UNKNOWN: f64 = 0.7;
/// Of another language's words that are not among the commonest forms, the share the parser
/// does not know (0.94–0.99 through the three models).
pub const OTHER_UNKNOWN: f64 = 0.95;
/// A sentence whose words' log likelihood ratio (the model's language against another) is
/// below this is another language's (the table in the module doc).
pub const FOREIGN_SENTENCE_BELOW: f64 = -1.0;

/// A sentence's words with a letter ([`counted`]), and how many of them are among the
/// training text's commonest forms, how many of the others are forms the parser does not
/// know, and how many have no letter of a script of the training text ([`Scripts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SentenceCounts {
    pub lettered: usize,
    pub frequent: usize,
    pub unknown: usize,
    pub other_script: usize,
}

/// The writing systems of a text's letters, as a set: coarse blocks of Unicode, enough to
/// tell a script no word of the training text's commonest is written in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scripts(u32);

impl Scripts {
    /// The scripts of the letters of `forms`.
    pub fn of<'a>(forms: impl IntoIterator<Item = &'a str>) -> Scripts {
        Scripts(forms.into_iter().flat_map(str::chars).filter(|c| c.is_alphabetic()).fold(0, |s, c| s | script_bit(c)))
    }

    /// Whether Latin is one of them: an ASCII word's letters are Latin.
    pub fn has_latin(&self) -> bool {
        self.0 & script_bit('a') != 0
    }

    /// Whether some letter of `form` is in one of these scripts (false for a form without a
    /// letter).
    pub fn writes(&self, form: &str) -> bool {
        form.chars().any(|c| c.is_alphabetic() && script_bit(c) & self.0 != 0)
    }
}

/// The bit of a letter's script: Latin, Greek, Cyrillic, Armenian, Hebrew, Arabic, the Indic
/// scripts, Thai and Lao, Georgian, Hangul, kana, Han; every other letter shares one bit.
fn script_bit(c: char) -> u32 {
    let index = match u32::from(c) {
        0..=0x024F | 0x1E00..=0x1EFF | 0x2C60..=0x2C7F | 0xA720..=0xA7FF | 0xFF21..=0xFF5A => 0,
        0x0370..=0x03FF | 0x1F00..=0x1FFF => 1,
        0x0400..=0x052F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => 2,
        0x0530..=0x058F => 3,
        0x0590..=0x05FF => 4,
        0x0600..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => 5,
        0x0900..=0x0DFF => 6,
        0x0E00..=0x0EFF => 7,
        0x10A0..=0x10FF => 8,
        0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF => 9,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => 10,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF => 11,
        _ => 12,
    };
    1 << index
}

impl SentenceCounts {
    /// The log likelihood ratio of the words under the model's language against another's,
    /// for a training text whose words are its commonest forms at `expected` (in (0, 1)).
    pub fn log_ratio(&self, expected: f64) -> f64 {
        let (own, other) = (0.9 * expected, 0.1 * expected);
        let unknown = self.unknown.min(self.lettered - self.frequent);
        let known = self.lettered - self.frequent - unknown;
        let ratio = |n: usize, p_own: f64, p_other: f64| n as f64 * (p_own / p_other).ln();
        ratio(self.frequent, own, other)
            + ratio(unknown, (1.0 - own) * OWN_UNKNOWN, (1.0 - other) * OTHER_UNKNOWN)
            + ratio(known, (1.0 - own) * (1.0 - OWN_UNKNOWN), (1.0 - other) * (1.0 - OTHER_UNKNOWN))
    }

    /// Every word with a letter (one at least) is of a script the training text's commonest
    /// forms do not use.
    pub fn of_another_script(&self) -> bool {
        self.lettered > 0 && self.other_script == self.lettered
    }

    /// What a sentence judged another language's says of it (`# other_language`).
    pub fn describe(&self) -> String {
        if self.of_another_script() {
            return format!("its {} words are in scripts the model's training text does not use", self.lettered);
        }
        format!(
            "of its {} words, {} among the {FREQUENT_FORMS} commonest of the model's training text, {} never seen in it",
            self.lettered, self.frequent, self.unknown
        )
    }

    /// Whether the sentence is another language's (see the module doc): of another script,
    /// or by its words' likelihood ratio, never for one of fewer than
    /// [`MIN_SENTENCE_LETTERED`] words with a letter.
    pub fn is_foreign(&self, expected: f64) -> bool {
        let by_words = self.lettered >= MIN_SENTENCE_LETTERED
            && expected > 0.0
            && expected < 1.0
            && self.log_ratio(expected) < FOREIGN_SENTENCE_BELOW;
        self.of_another_script() || by_words
    }
}

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

    #[test]
    fn a_sentence_is_foreign_when_its_words_are_neither_common_nor_known() {
        let counts = |lettered, frequent, unknown| SentenceCounts { lettered, frequent, unknown, other_script: 0 };
        // The en_ewt model's share; sentences from the measurements in the module doc.
        let en = 0.496;
        assert!(counts(4, 0, 4).is_foreign(en), "a French line, all of it unknown");
        assert!(counts(2, 0, 2).is_foreign(en), "two unknown names: the price of the threshold");
        assert!(!counts(2, 0, 1).is_foreign(en), "one known word is as likely English");
        assert!(!counts(3, 1, 2).is_foreign(en), "i pokušajte ponovno: a common form saves it");
        assert!(!counts(12, 5, 1).is_foreign(en));
        assert!(!counts(1, 0, 1).is_foreign(en), "one word says nothing");
        assert!(!counts(0, 0, 0).is_foreign(en));
        assert!(!counts(5, 0, 5).is_foreign(0.0), "a model without the commonest forms");
        // Each kind of word moves the ratio its way.
        let r = |c: SentenceCounts| c.log_ratio(en);
        assert!(r(counts(3, 1, 1)) > r(counts(3, 0, 1)) && r(counts(3, 0, 1)) > r(counts(3, 0, 2)));
        assert!(r(counts(3, 0, 3)) < 0.0 && r(counts(3, 3, 0)) > 0.0);
    }

    #[test]
    fn a_word_in_a_script_the_commonest_forms_do_not_use_is_enough_to_tell_another_language() {
        let latin = Scripts::of(["the", "naïve", "œuvre", "42", "."]);
        assert!(latin.writes("Ångström") && latin.writes("x²") && !latin.writes("42") && latin.has_latin());
        assert!(!latin.writes("Γράφοντας") && !latin.writes("Москва") && !latin.writes("東京"));
        let greek = Scripts::of(["και", "το"]);
        assert!(greek.writes("Γράφοντας") && !greek.writes("the") && !greek.has_latin());
        let one = |other_script| SentenceCounts { lettered: 1, frequent: 0, unknown: 1, other_script };
        assert!(one(1).is_foreign(0.5), "one word of another script");
        assert!(!one(0).is_foreign(0.5), "one unknown word of the model's");
        let mixed = SentenceCounts { lettered: 3, frequent: 2, unknown: 1, other_script: 1 };
        assert!(!mixed.is_foreign(0.5), "a Greek letter in an English sentence");
        assert!(one(1).describe().contains("script"));
    }
}

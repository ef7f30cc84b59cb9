//! Whether a file's tag and FORM columns are what the model was trained on, decided from the
//! file's first words: a file whose tags the parser cannot read (XPOS `_`, as in many UD
//! treebanks and most converted corpora, or another tag set) is tagged by the model's own
//! tagger under the tags it gives (its values kept, [`Given::Kept`]), or, without a tagger,
//! flagged; a file whose words the model mostly never saw (another language) is flagged. This
//! module owns the signal, the thresholds and the decision (which also says what becomes of a
//! file's given values, [`Given`]); what is done with a flag (a log line, a metric, a comment)
//! is the sink's, and putting given values back is [`crate::parse::given`]'s.
//!
//! **The model's inventory is its weight table.** The parser reads a word's tag as the pair
//! (UPOS, XPOS) and hashes features to 64-bit keys; its table holds a row for the unigram
//! feature "the buffer's first word has this tag pair" (template 7) for every pair it was
//! trained on, and likewise for FORMs (template 6). A word's tag (form) is *unknown* when the
//! table has no row for its key ([`crate::model::features::tag_key`], [`form_key`]): one
//! lookup per word, the same probe the parser makes for the first feature of every buffer
//! word. No new metadata: every model file, old ones too, records this; a pair or form seen too
//! rarely to be kept (the perceptron leaves out features seen fewer than 5 times in training,
//! `train --min-feature-count`) or pruned counts as unknown, which is what it is to the parser.
//!
//! **The decision** is made once per file (per shard, for a file parsed in byte ranges) from
//! its first sentences up to [`CHECK_WORDS`] words (the whole file if shorter): the pipeline
//! streams, and the first batch of a file is read whole before it is parsed, so the decision
//! applies to every sentence of the file, the first ones included.
//!
//! **Thresholds**, from the shares of the first 1000 words (whole sentences) of UD dev and
//! train sets through models of the default recipe (`train --tagger --tokenizer --dev`, which
//! leaves out forms seen fewer than 5 times), measured with `cargo run --release --example
//! input_fit -- MODEL ../shared/data/ud/{en_ewt,en_atis,el_gdt,hu_szeged}/{dev,train}.conllu.zst`
//! (unknown forms, dev / train; the tag columns below are the example en_ewt model's):
//!
//! | file \ model | en_ewt | en_atis | el_gdt | hu_szeged |
//! |---|---|---|---|---|
//! | en_ewt | 11.9% / 10.3% | 65.5% / 64.5% | 87.5% / 89.7% | 84.5% / 88.3% |
//! | en_atis | 22.1% / 25.8% | 2.9% / 3.2% | 98.6% / 98.3% | 96.8% / 96.3% |
//! | el_gdt | 92.0% / 91.0% | 100% / 100% | 25.9% / 22.2% | 92.6% / 91.7% |
//! | hu_szeged | 77.1% / 72.6% | 93.5% / 91.0% | 86.3% / 85.3% | 45.3% / 32.5% |
//!
//! | file (dev / train) | XPOS `_` | unknown tag pairs |
//! |---|---|---|
//! | en_ewt | 0% / 0% | 0% / 0% |
//! | en_atis (UPOS only) | 100% / 100% | 100% / 100% |
//! | el_gdt (XPOS = UPOS) | 0% / 0% | 100% / 100% |
//! | hu_szeged (UPOS only) | 100% / 100% | 100% / 100% |
//!
//! Tags: unknown pairs are all or nothing (a tag set is the model's or it is not), so any
//! threshold between the two works; [`UNKNOWN_TAGS_UNFIT`] is ½ ("mostly unknown"). On en_atis
//! dev the example model parses its own tags to LAS 27.63 and its tagger's to 71.10 (`spoolparse
//! parse --retag=never|always`, then `conll18_ud_eval.py`). Tagged under its own UPOS (the
//! default now), en_atis dev through a model of the default recipe keeps all 6,644 of its gold
//! UPOS and parses to LAS 74.53, against 68.62 when its tagger replaced 1,098 of them. Forms: text of the model's language
//! shows up to 45% unknown forms (Hungarian, rich in forms, through a model of 910 sentences)
//! and 66% from a domain far from the model's (en_ewt through the en_atis model), another
//! language 73% and more. [`UNKNOWN_FORMS_UNFIT`], ½, warns ("another language?");
//! [`UNKNOWN_FORMS_FOREIGN`], 0.7, holds the file back ([`FitReport::holds_back`]). Retagging
//! cannot help with another language, so unfit forms are only flagged.
//!
//! **Another language by its commonest words.** Unknown forms cannot tell another language from
//! a far domain of the model's own: through the en_ewt model, French, Spanish and German text
//! (the vim tutor's translations) shows 69–70% unknown forms, en_ewt text through the en_atis
//! model 65%. The share of a file's words that are the training text's 100 commonest forms
//! tells them apart ([`crate::model::frequent_forms`], which holds the figures): a file where
//! it is below 0.28 of the training text's own share is held back too
//! ([`FitCounts::words_foreign`]), for models that keep those forms (trained since).
//!
//! **One sentence of another language** in a file of the model's (a quote, a paragraph of a
//! translation, a crawl's stray page) passes the file's check. Each sentence is judged too
//! ([`SentenceCheck`], by [`SentenceCounts::is_foreign`], whose module holds the figures):
//! one judged another language's goes where low confidence goes, whatever its confidence,
//! and says why in `# other_language` ([`OTHER_LANGUAGE_KEY`]).
//!
//! **Cost**: two table lookups and a lowercased form's set lookup per word for the first 1000
//! words of a file; after them, for each sentence, one table lookup and one set lookup per
//! word with a letter.

use std::collections::HashSet;

use serde::Deserialize;

use crate::base::hash::{hash_str, IdentityBuildHasher};
use crate::corpus::{Column, Format, Sentence};
use crate::model::analysis::{Analyze, Given};
use crate::model::features::{form_key, form_key_of_hash, tag_key};
use crate::model::file::{ModelFile, TableView};
use crate::model::frequent_forms::{is_foreign, Scripts, SentenceCounts, FREQUENT_FORMS};

/// When the model's tagger tags CoNLL-U/CoNLL-X input (text input is always tagged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Retag {
    /// When the tags are unfit for the model ([`FitCounts::tags_unfit`]) and it has a tagger:
    /// it then predicts what the file lacks under what it gives ([`Given::Kept`]: a given
    /// UPOS stays, the XPOS is predicted with it), and no given value is replaced.
    #[default]
    Auto,
    /// Always (the model must have a tagger): the model's whole analysis replaces UPOS, XPOS,
    /// FEATS and LEMMA, each replaced value kept in MISC ([`Given::Recorded`]).
    Always,
    /// Never: the input's tags are parsed as they are, fit or not.
    Never,
}

/// The decision reads a file's first sentences up to this many words.
pub const CHECK_WORDS: usize = 1000;
/// A file's tags are unfit when at least this share of the words checked carry a (UPOS, XPOS)
/// pair the parser was not trained on.
pub const UNKNOWN_TAGS_UNFIT: f64 = 0.5;
/// A file's forms are unfit when at least this share of the words checked are forms the parser
/// was not trained on.
pub const UNKNOWN_FORMS_UNFIT: f64 = 0.5;
/// A file is held back whole ([`FitReport::holds_back`]) when at least this share of the words
/// checked are unknown forms: above what text of the model's own language shows even from
/// another domain, below what another language shows (the table in the module doc).
pub const UNKNOWN_FORMS_FOREIGN: f64 = 0.7;

/// A file is judged by its commonest forms only from this many words with a letter: fewer say
/// little of a language (a list of names, a table of numbers).
pub const MIN_LETTERED: usize = 100;

/// The comment (`# held_back = …`) the daemon writes at the head of the outputs of a file it
/// held back ([`FitReport::holds_back`]: another language): every sentence went to `lowconf/`,
/// and the correction workbench does not offer them, nor does the annotation store take them.
pub const HELD_BACK_KEY: &str = "held_back";

/// The comment (`# other_language = …`) on a sentence judged another language's
/// ([`SentenceCheck`]): it went to `lowconf/` (`--rejected`) whatever its confidence, and the
/// correction workbench does not offer it.
pub const OTHER_LANGUAGE_KEY: &str = "other_language";

/// The training text's commonest forms, looked up as [`crate::model::frequent_forms::counted`] counts a form, without a
/// string per word: by hash, a form in lower case already (most are) hashed once.
struct CommonForms {
    hashes: HashSet<u64, IdentityBuildHasher>,
    lowercased: String,
}

/// A word with a letter, as [`CommonForms::find`] saw it.
struct Lettered {
    common: bool,
    ascii: bool,
    /// The form's [`hash_str`], for its [`form_key_of_hash`].
    hash: u64,
}

impl CommonForms {
    /// `None` for a model that does not keep its training text's commonest forms.
    fn of(model: &ModelFile) -> Option<CommonForms> {
        let forms = model.frequent_forms()?;
        Some(CommonForms { hashes: forms.forms.iter().map(|f| hash_str(f)).collect(), lowercased: String::new() })
    }

    /// `form` if it has a letter (ASCII, most words, read byte by byte), and whether it is one
    /// of the commonest.
    fn find(&mut self, form: &str) -> Option<Lettered> {
        let ascii = form.is_ascii();
        let lettered =
            if ascii { form.bytes().any(|b| b.is_ascii_alphabetic()) } else { form.chars().any(char::is_alphabetic) };
        if !lettered {
            return None;
        }
        let hash = hash_str(form);
        let lower_hash = if ascii && !form.bytes().any(|b| b.is_ascii_uppercase()) {
            hash
        } else {
            self.lowercased.clear();
            if ascii {
                self.lowercased.push_str(form);
                self.lowercased.make_ascii_lowercase();
            } else {
                // `to_lowercase` knows a word's final sigma, which no char-by-char mapping does.
                self.lowercased.push_str(&form.to_lowercase());
            }
            hash_str(&self.lowercased)
        };
        Some(Lettered { common: self.hashes.contains(&lower_hash), ascii, hash })
    }
}

/// Judges sentences one by one: whether each is another language's than the model's training
/// text ([`SentenceCounts::is_foreign`]). One per thread: it reuses a buffer.
pub struct SentenceCheck<'m> {
    weights: TableView<'m>,
    common: CommonForms,
    /// The training text's share of its commonest forms, and their scripts.
    expected: f64,
    scripts: Scripts,
}

impl<'m> SentenceCheck<'m> {
    /// A check against `model`'s parser and training text; `None` for a model that does not
    /// keep the training text's commonest forms.
    pub fn new(model: &'m ModelFile) -> Option<Self> {
        let forms = model.frequent_forms()?;
        Some(SentenceCheck {
            weights: model.weights(),
            common: CommonForms::of(model)?,
            expected: forms.coverage,
            scripts: Scripts::of(forms.forms.iter().map(String::as_str)),
        })
    }

    /// The counts of `sent`'s words with a letter.
    pub fn counts(&mut self, sent: &Sentence) -> SentenceCounts {
        let mut c = SentenceCounts::default();
        for w in sent.words() {
            let form = w.get(Column::Form);
            let Some(word) = self.common.find(form) else { continue };
            c.lettered += 1;
            if word.common {
                c.frequent += 1;
            } else {
                c.unknown += usize::from(self.weights.lookup(form_key_of_hash(word.hash)).is_none());
            }
            let written = if word.ascii { self.scripts.has_latin() } else { self.scripts.writes(form) };
            c.other_script += usize::from(!written);
        }
        c
    }

    /// The counts of `sent` if it is another language's.
    pub fn foreign(&mut self, sent: &Sentence) -> Option<SentenceCounts> {
        let c = self.counts(sent);
        c.is_foreign(self.expected).then_some(c)
    }
}

/// What the first words of a file showed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FitCounts {
    /// Words checked.
    pub words: usize,
    /// Words whose (UPOS, XPOS) pair the parser has no weights for.
    pub unknown_tags: usize,
    /// Words whose UPOS, and words whose XPOS, is `_`.
    pub empty_upos: usize,
    pub empty_xpos: usize,
    /// Words whose FORM the parser has no weights for.
    pub unknown_forms: usize,
    /// Words whose FEATS, and words whose LEMMA, is `_`.
    pub empty_feats: usize,
    pub empty_lemma: usize,
    /// Words with a letter, and those of them among the training text's commonest forms
    /// ([`crate::model::frequent_forms`]; both 0 for a model that does not keep them).
    pub lettered: usize,
    pub frequent: usize,
    /// The share of the training text's words that its commonest forms are, in millionths
    /// (whole, so that the counts stay comparable with `==`); 0 without them.
    pub frequent_expected_ppm: u32,
}

impl FitCounts {
    fn share(&self, n: usize) -> f64 {
        n as f64 / self.words.max(1) as f64
    }

    /// Most tags are unknown to the parser: parsing them as they are loses most of the LAS.
    pub fn tags_unfit(&self) -> bool {
        self.words > 0 && self.share(self.unknown_tags) >= UNKNOWN_TAGS_UNFIT
    }

    /// Most forms are unknown to the parser: another language, or another script.
    pub fn forms_unfit(&self) -> bool {
        self.words > 0 && self.share(self.unknown_forms) >= UNKNOWN_FORMS_UNFIT
    }

    /// So many forms are unknown, or so few words are the training text's commonest, that
    /// the text is surely not of the model's language.
    pub fn forms_foreign(&self) -> bool {
        (self.words > 0 && self.share(self.unknown_forms) >= UNKNOWN_FORMS_FOREIGN) || self.words_foreign()
    }

    /// The training text's commonest forms are so rare in the text that it is another
    /// language's ([`is_foreign`]), judged on at least [`MIN_LETTERED`] words.
    pub fn words_foreign(&self) -> bool {
        let expected = f64::from(self.frequent_expected_ppm) / 1e6;
        self.lettered >= MIN_LETTERED && expected > 0.0 && is_foreign(expected, self.lettered, self.frequent)
    }
}

/// Counts, over a file's first sentences, the words whose tags and forms a model does not know.
pub struct FitCheck<'m> {
    weights: TableView<'m>,
    /// The training text's commonest forms, when the model keeps them.
    common: Option<CommonForms>,
    counts: FitCounts,
}

impl<'m> FitCheck<'m> {
    /// A check against `model`'s parser and training text.
    pub fn new(model: &'m ModelFile) -> Self {
        let forms = model.frequent_forms();
        let counts = FitCounts {
            frequent_expected_ppm: forms.map_or(0, |f| (f.coverage * 1e6).round() as u32),
            ..FitCounts::default()
        };
        FitCheck { weights: model.weights(), common: CommonForms::of(model), counts }
    }

    /// Counts the words of `sent`, unless [`CHECK_WORDS`] were counted already.
    pub fn add(&mut self, sent: &Sentence) {
        if self.done() {
            return;
        }
        let c = &mut self.counts;
        for w in sent.words() {
            let (upos, xpos) = (w.get(Column::Upos), w.get(Column::Xpos));
            c.words += 1;
            c.empty_upos += usize::from(upos == "_");
            c.empty_xpos += usize::from(xpos == "_");
            c.empty_feats += usize::from(w.get(Column::Feats) == "_");
            c.empty_lemma += usize::from(w.get(Column::Lemma) == "_");
            c.unknown_tags += usize::from(self.weights.lookup(tag_key(upos, xpos)).is_none());
            let form = w.get(Column::Form);
            c.unknown_forms += usize::from(self.weights.lookup(form_key(form)).is_none());
            if let Some(word) = self.common.as_mut().and_then(|common| common.find(form)) {
                c.lettered += 1;
                c.frequent += usize::from(word.common);
            }
        }
    }

    /// Enough words were counted to decide.
    pub fn done(&self) -> bool {
        self.counts.words >= CHECK_WORDS
    }

    /// The counts so far.
    pub fn counts(&self) -> FitCounts {
        self.counts
    }
}

/// What became of a file's tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagAction {
    /// They fit the model and were parsed as they are.
    Kept,
    /// The model's tagger tagged the file whatever its tags (text input, or [`Retag::Always`]).
    Tagged,
    /// They were unfit, and the model's tagger predicted the tags the file lacks under those
    /// it gives, which stay ([`Retag::Auto`], [`Given::Kept`]).
    Retagged,
    /// They were unfit and were parsed as they are: the model has no tagger, or
    /// [`Retag::Never`].
    Unfit { has_tagger: bool },
}

/// What became of a file's FEATS or LEMMA column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnAction {
    /// Parsed as given (the model does not predict it, or the file has it).
    Kept,
    /// Written by the model's analysis: text input, [`Retag::Always`], or a file whose first
    /// words all have it `_` (it has no such column).
    Predicted,
}

/// Which stages of an analysis a model has ([`crate::model::analysis`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stages {
    pub tagger: bool,
    pub feats: bool,
    pub lemmatizer: bool,
}

impl Stages {
    /// The stages of `model`.
    pub fn of(model: &ModelFile) -> Stages {
        Stages {
            tagger: model.tagger().is_some(),
            feats: model.feats().is_some(),
            lemmatizer: model.lemmatizer().is_some(),
        }
    }
}

/// What the first words of a file showed, and what was done about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FitReport {
    pub counts: FitCounts,
    pub tags: TagAction,
    pub feats: ColumnAction,
    pub lemmas: ColumnAction,
    /// What becomes of the values the file gives in the columns the analysis writes.
    pub given: Given,
}

impl FitReport {
    /// The decision for a file in `format` whose first words gave `counts`, for a model with
    /// `stages`. UPOS and XPOS: see [`TagAction`]. FEATS and LEMMA, where the model predicts
    /// them: predicted with the tags of text input or under [`Retag::Always`], and in a file
    /// that has none (every word checked has `_`); a file's own are kept otherwise, retagged
    /// or not. Given values: replaced and kept in MISC under [`Retag::Always`], kept
    /// otherwise (only what a file lacks is the model's).
    pub fn decide(counts: FitCounts, format: Format, retag: Retag, stages: Stages) -> FitReport {
        let has_tagger = stages.tagger;
        let text = matches!(format, Format::Text | Format::Raw);
        let analyzed = text || retag == Retag::Always;
        let given = match (text, retag) {
            (true, _) => Given::Replaced,
            (false, Retag::Always) => Given::Recorded,
            (false, _) => Given::Kept,
        };
        let column = |predicts: bool, empty: usize| {
            if predicts && (analyzed || counts.words > 0 && empty == counts.words) {
                ColumnAction::Predicted
            } else {
                ColumnAction::Kept
            }
        };
        let feats = column(stages.feats, counts.empty_feats);
        let lemmas = column(stages.lemmatizer, counts.empty_lemma);
        let tags = if analyzed {
            TagAction::Tagged
        } else if !counts.tags_unfit() {
            TagAction::Kept
        } else if retag == Retag::Auto && has_tagger {
            TagAction::Retagged
        } else {
            TagAction::Unfit { has_tagger }
        };
        FitReport { counts, tags, feats, lemmas, given }
    }

    /// Whether the tagger tags the file.
    pub fn tag(&self) -> bool {
        matches!(self.tags, TagAction::Tagged | TagAction::Retagged)
    }

    /// The columns the model's analysis writes into the file's sentences.
    pub fn analyze(&self) -> Analyze {
        Analyze {
            tags: self.tag(),
            feats: self.feats == ColumnAction::Predicted,
            lemmas: self.lemmas == ColumnAction::Predicted,
            given: self.given,
        }
    }

    /// Whether a file that has tags had FEATS or LEMMA added (it had none).
    pub fn fills_columns(&self) -> bool {
        self.tags != TagAction::Tagged
            && (self.feats == ColumnAction::Predicted || self.lemmas == ColumnAction::Predicted)
    }

    /// Whether the file is parsed on input the model does not fit (a warning).
    pub fn is_unfit(&self) -> bool {
        matches!(self.tags, TagAction::Unfit { .. }) || self.counts.forms_unfit() || self.counts.words_foreign()
    }

    /// Whether none of the file's sentences should count as sure, whatever their confidence:
    /// its forms are so often unknown to the model, or its words so rarely the training text's
    /// commonest, that it is another language ([`FitCounts::forms_foreign`]). Such text is
    /// parsed wrong nearly everywhere (the en_ewt model: Hungarian 8.7 LAS, Greek 2.2), and the
    /// few sentences its confidence still puts high are a lone quote mark or a run of names.
    pub fn holds_back(&self) -> bool {
        self.counts.forms_foreign()
    }

    /// Whether there is anything to say: retagged, columns added, or unfit.
    pub fn is_notable(&self) -> bool {
        self.tags == TagAction::Retagged || self.fills_columns() || self.is_unfit()
    }

    /// One line saying what was found and done, for logs and `# input_check` comments.
    pub fn describe(&self) -> String {
        let c = &self.counts;
        let pct = |n: usize| format!("{:.0}%", 100.0 * c.share(n));
        let mut parts = Vec::new();
        if let TagAction::Retagged | TagAction::Unfit { .. } = self.tags {
            let mut why = format!(
                "{} of the first {} words have a UPOS+XPOS pair the model was not trained on",
                pct(c.unknown_tags),
                c.words
            );
            if c.empty_xpos > 0 || c.empty_upos > 0 {
                why += &format!(" (XPOS _ in {}, UPOS _ in {})", pct(c.empty_xpos), pct(c.empty_upos));
            }
            why += match self.tags {
                TagAction::Retagged => {
                    ": tagged by the model's tagger under the file's own tags (it predicts what is `_`, a given \
                     UPOS choosing among its XPOS); the file's values are kept"
                }
                TagAction::Unfit { has_tagger: false } => {
                    ": parsed on these tags, the model has no tagger; expect a far lower accuracy"
                }
                _ => ": parsed on these tags (retag = never); expect a far lower accuracy",
            };
            parts.push(why);
        }
        if self.fills_columns() {
            let predicted: Vec<&str> = [(self.feats, "FEATS"), (self.lemmas, "LEMMA")]
                .iter()
                .filter(|(a, _)| *a == ColumnAction::Predicted)
                .map(|&(_, name)| name)
                .collect();
            parts.push(format!(
                "{} `_` in all of the first {} words: predicted by the model where `_`",
                predicted.join(" and "),
                c.words
            ));
        }
        if c.words_foreign() {
            parts.push(format!(
                "{:.0}% of its first {} words are among the {FREQUENT_FORMS} commonest of the model's training text \
                 ({:.0}% there): another language",
                100.0 * c.frequent as f64 / c.lettered as f64,
                c.lettered,
                f64::from(c.frequent_expected_ppm) / 1e4
            ));
        }
        if c.forms_unfit() {
            parts.push(format!(
                "{} of the first {} words are forms the model was not trained on: another language? expect a far lower accuracy",
                pct(c.unknown_forms),
                c.words
            ));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(words: usize, unknown_tags: usize, unknown_forms: usize) -> FitCounts {
        FitCounts { words, unknown_tags, unknown_forms, ..FitCounts::default() }
    }

    #[test]
    fn a_file_whose_words_are_rarely_the_training_text_s_commonest_is_held_back_and_said_so() {
        // Italian through the en_ewt model: 5.8% of the words frequent, against 50% there; its
        // forms, 67% unknown, do not tell alone.
        let italian = FitCounts { lettered: 900, frequent: 52, frequent_expected_ppm: 500_000, ..counts(1000, 0, 674) };
        assert!(italian.share(italian.unknown_forms) < UNKNOWN_FORMS_FOREIGN);
        let report = FitReport::decide(italian, Format::Raw, Retag::Auto, ALL);
        assert!(report.holds_back());
        assert!(
            report.describe().contains("6% of its first 900 words are among the 100 commonest"),
            "{}",
            report.describe()
        );
        // Reviews through the en_atis model (25% against 82%) are the same language.
        let english =
            FitCounts { lettered: 900, frequent: 225, frequent_expected_ppm: 820_000, ..counts(1000, 0, 600) };
        assert!(!FitReport::decide(english, Format::Raw, Retag::Auto, ALL).holds_back());
        // Too few words to tell, or a model that does not keep its commonest forms.
        let short = FitCounts { lettered: 60, frequent: 0, ..italian };
        assert!(!FitReport::decide(short, Format::Raw, Retag::Auto, ALL).holds_back());
        let old_model = FitCounts { lettered: 0, frequent: 0, frequent_expected_ppm: 0, ..italian };
        assert!(!FitReport::decide(old_model, Format::Raw, Retag::Auto, ALL).holds_back());
    }

    const TAGGER: Stages = Stages { tagger: true, feats: false, lemmatizer: false };
    const NONE: Stages = Stages { tagger: false, feats: false, lemmatizer: false };
    const ALL: Stages = Stages { tagger: true, feats: true, lemmatizer: true };

    #[test]
    fn unfit_tags_are_retagged_only_in_auto_mode_with_a_tagger() {
        let bad = counts(1000, 1000, 50);
        assert_eq!(FitReport::decide(bad, Format::Conllu, Retag::Auto, TAGGER).tags, TagAction::Retagged);
        assert_eq!(
            FitReport::decide(bad, Format::Conllu, Retag::Auto, NONE).tags,
            TagAction::Unfit { has_tagger: false }
        );
        assert_eq!(
            FitReport::decide(bad, Format::Conllu, Retag::Never, TAGGER).tags,
            TagAction::Unfit { has_tagger: true }
        );
        // Retagged under the file's own tags, which stay; replaced (and kept in MISC) only when
        // asked, never in text.
        assert_eq!(FitReport::decide(bad, Format::Conllu, Retag::Auto, TAGGER).given, Given::Kept);
        assert_eq!(FitReport::decide(bad, Format::Conllu, Retag::Always, TAGGER).given, Given::Recorded);
        assert_eq!(FitReport::decide(bad, Format::Text, Retag::Always, TAGGER).given, Given::Replaced);
        let good = counts(1000, 3, 50);
        assert_eq!(FitReport::decide(good, Format::Conllu, Retag::Auto, TAGGER).tags, TagAction::Kept);
        assert_eq!(FitReport::decide(good, Format::Conllu, Retag::Always, TAGGER).tags, TagAction::Tagged);
        assert_eq!(FitReport::decide(bad, Format::Text, Retag::Never, TAGGER).tags, TagAction::Tagged);
        assert!(!FitReport::decide(good, Format::Conllu, Retag::Auto, TAGGER).is_notable());
    }

    #[test]
    fn mostly_unknown_forms_are_unfit_whatever_the_tags() {
        let foreign = FitReport::decide(counts(200, 0, 150), Format::Conllu, Retag::Auto, TAGGER);
        assert!(foreign.is_unfit());
        assert!(foreign.describe().contains("75% of the first 200 words are forms"), "{}", foreign.describe());
        assert!(!FitReport::decide(counts(0, 0, 0), Format::Conllu, Retag::Auto, TAGGER).is_notable());
    }

    #[test]
    fn feats_and_lemmas_are_predicted_only_where_the_input_has_none_or_the_user_asks() {
        let decide = |c: FitCounts, format, retag| {
            let r = FitReport::decide(c, format, retag, ALL);
            (r.feats, r.lemmas)
        };
        use ColumnAction::{Kept, Predicted};
        let gold = counts(1000, 0, 50);
        let no_columns = FitCounts { empty_feats: 1000, empty_lemma: 1000, ..gold };
        let some_feats = FitCounts { empty_feats: 999, empty_lemma: 1000, ..gold };
        assert_eq!(decide(gold, Format::Conllu, Retag::Auto), (Kept, Kept));
        assert_eq!(decide(no_columns, Format::Conllu, Retag::Auto), (Predicted, Predicted));
        assert_eq!(decide(some_feats, Format::Conllu, Retag::Never), (Kept, Predicted));
        // Retagged for unfit tags, the file's own FEATS and LEMMA stay.
        let unfit = FitCounts { unknown_tags: 1000, ..gold };
        assert_eq!(decide(unfit, Format::Conllu, Retag::Auto), (Kept, Kept));
        assert_eq!(FitReport::decide(unfit, Format::Conllu, Retag::Auto, ALL).tags, TagAction::Retagged);
        assert_eq!(decide(gold, Format::Conllu, Retag::Always), (Predicted, Predicted));
        assert_eq!(decide(no_columns, Format::Text, Retag::Never), (Predicted, Predicted));
        // A model without those stages keeps every column.
        let r = FitReport::decide(no_columns, Format::Conllu, Retag::Auto, TAGGER);
        assert_eq!((r.feats, r.lemmas, r.is_notable()), (Kept, Kept, false));
        let filled = FitReport::decide(no_columns, Format::Conllu, Retag::Auto, ALL);
        assert!(filled.is_notable());
        assert_eq!(
            filled.describe(),
            "FEATS and LEMMA `_` in all of the first 1000 words: predicted by the model where `_`"
        );
        assert_eq!(filled.analyze(), Analyze { tags: false, feats: true, lemmas: true, given: Given::Kept });
    }
}

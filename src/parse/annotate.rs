//! Annotating one sentence as a model file says: its analysis first (UPOS, XPOS, FEATS and
//! LEMMA, [`crate::model::analysis`]) when the input has no tags (or the user asks to retag),
//! then parsing. One [`Annotator`] per thread; it owns the scratch buffers of both, so nothing
//! is allocated per sentence.

use crate::corpus::Sentence;
use crate::learn::confidence_model::ArcSignals;
use crate::model::analysis::{Analyze, Analyzer, Given};
use crate::model::file::{ModelFile, TableView};
use crate::model::frequent_forms::SentenceCounts;
use crate::parse::confidence::{ArcConfidence, Parsed};
use crate::parse::constrained::Constraints;
use crate::parse::fit::{SentenceCheck, OTHER_LANGUAGE_KEY};
use crate::parse::given::{GivenColumns, GivenCounts};
use crate::parse::parser::{mean_confidence, Parser};

/// An analyzer (if the model has a tagger) and a parser over one model file.
pub struct Annotator<'m> {
    parser: Parser<'m, TableView<'m>>,
    analyzer: Option<Analyzer<'m, TableView<'m>>>,
    confidence: bool,
    /// The whole pipeline's arc confidence, when the model has one: it then replaces the
    /// parser's calibrated probability ([`crate::learn::confidence_model`]).
    pipeline: ArcConfidence<'m>,
    /// Read every arc's signals even without a pipeline model (to fit one).
    collect: bool,
    /// Judges each sentence's language, with confidences, for models that can
    /// ([`crate::parse::fit`]); and what it found of the last sentence.
    language: Option<SentenceCheck<'m>>,
    other_language: Option<SentenceCounts>,
    /// Reused buffer for formatting.
    scratch: String,
    /// The last sentence's given values, and what became of them.
    given: GivenColumns,
}

/// What to do with a sentence besides parsing it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Steps {
    /// The columns the model's analysis writes first (tokenized text, retagging, or columns
    /// the input lacks; see [`crate::parse::fit`]).
    pub analyze: Analyze,
    /// Write confidences into it (`Conf=` in MISC, `# confidence`, `# tree_prob`): CoNLL-U only.
    pub write_confidence: bool,
    /// With `write_confidence`, also mark `LowConf=Yes` in MISC on the words whose arc
    /// confidence is below this: the arcs an annotator should look at (partial annotation
    /// leaves the others `_`, see [`crate::transition::GoldTree::partial`]).
    pub mark_below: Option<f32>,
    /// Mark a sentence whose DEPS were kept beside a parsed tree other than the input's
    /// (`# spoolparse_deps = input`, [`crate::parse::given`]): CoNLL-U only (CoNLL-X has no
    /// comments, and its ninth column is PHEAD).
    pub mark_deps: bool,
}

/// Formats a probability with three decimals ("0.973") into `buf`, without allocating:
/// correctly rounded, as Python's `f"{p:.3f}"` rounds the same value. (In f32, `p * 1000`
/// itself rounds: 0.7155 is stored as 0.715499997…, whose product became 715.5 and printed
/// 0.716.) In f64 the product is exact, and no f32 lies on a tie.
fn format_probability(p: f32, buf: &mut [u8; 5]) -> &str {
    let thousandths = (f64::from(p.clamp(0.0, 1.0)) * 1000.0).round() as u32;
    buf[0] = b'0' + (thousandths / 1000) as u8;
    buf[1] = b'.';
    buf[2] = b'0' + (thousandths / 100 % 10) as u8;
    buf[3] = b'0' + (thousandths / 10 % 10) as u8;
    buf[4] = b'0' + (thousandths % 10) as u8;
    std::str::from_utf8(buf).unwrap_or("0.000")
}

/// How the model rates given arcs of a sentence ([`Annotator::plausibility`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plausibility {
    /// The natural logarithm of the probability of the model's own tree, and of its best tree
    /// that holds the given arcs (the transitions that build them forced).
    pub best_log: f64,
    pub given_log: f64,
    /// Per word (index 0 unused), the rank by score of the transition that built its given arc
    /// among the legal ones ([`Parser::ranks`]; 0 for a word without one).
    pub ranks: Vec<u32>,
}

/// A sentence needs tags but the model has no tagger.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the model has no tagger: train it with --tagger to parse tokenized text or to --retag")]
pub struct NoTagger;

impl<'m> Annotator<'m> {
    /// An annotator for `model`; with `confidence`, transition probabilities are computed (at
    /// the model's temperature) and [`Annotator::confidence`] is meaningful.
    pub fn new(model: &'m ModelFile, confidence: bool) -> Self {
        let analyzer = model.analyzer();
        let pipeline =
            ArcConfidence::new(model.confidence().map(|c| &c.model).filter(|_| confidence), &model.meta().labels);
        let parser = if confidence { pipeline.parser(model) } else { Parser::new(model) };
        Annotator {
            parser,
            analyzer,
            confidence,
            pipeline,
            collect: false,
            language: SentenceCheck::new(model).filter(|_| confidence),
            other_language: None,
            scratch: String::new(),
            given: GivenColumns::default(),
        }
    }

    /// The last sentence's confidence (the mean arc confidence: the share of its arcs expected
    /// to be right) and tree probability.
    pub fn confidence(&self) -> (f64, f64) {
        let (mean, tree) = self.parser.sentence_confidence();
        match self.pipeline.has_model() {
            true => (mean_confidence(self.pipeline.confidence()), tree),
            false => (mean, tree),
        }
    }

    /// Whether the last sentence is another language's than the model's, with its counts
    /// ([`SentenceCheck`]); judged only by an annotator that computes confidences.
    pub fn other_language(&self) -> Option<SentenceCounts> {
        self.other_language
    }

    /// The last sentence's arc confidences, by word (index 0 unused); all 0 unless the
    /// annotator computes confidences.
    pub fn arc_confidence(&self) -> &[f32] {
        match self.pipeline.has_model() {
            true => self.pipeline.confidence(),
            false => self.parser.arc_confidence(),
        }
    }

    /// Reads every arc's signals ([`Annotator::signals`]), as a model's confidence is fitted on
    /// them: the parser's probabilities are then left uncalibrated, and are what a model
    /// without a pipeline confidence writes.
    pub fn collecting_signals(mut self) -> Self {
        self.collect = true;
        self.parser = self.parser.with_calibration(None);
        self
    }

    /// What each stage knew of the last sentence's arcs (index 0 unused), when the model has a
    /// pipeline confidence or [`Annotator::collecting_signals`] asked for them.
    pub fn signals(&self) -> &[ArcSignals] {
        self.pipeline.signals()
    }

    /// How the model rates `constraints` (arcs given for `sent`, its tags analyzed first as
    /// `analyze` says): its own tree's probability against that of its best tree holding them,
    /// and each given arc's rank among the transitions it could have taken. Meaningful only for
    /// an annotator that computes confidences.
    pub fn plausibility(
        &mut self,
        sent: &Sentence,
        constraints: &Constraints,
        analyze: Analyze,
    ) -> Result<Plausibility, NoTagger> {
        let mut parsed = sent.clone();
        self.annotate(&mut parsed, Steps { analyze, ..Steps::default() })?;
        let best_log = self.parser.log_tree_probability();
        self.parser.parse_sentence_constrained(&parsed, constraints);
        Ok(Plausibility {
            best_log,
            given_log: self.parser.log_tree_probability(),
            ranks: self.parser.ranks().to_vec(),
        })
    }

    /// What became of the last sentence's given values ([`crate::parse::given`]).
    pub fn given_counts(&self) -> GivenCounts {
        self.given.counts
    }

    /// Analyzes `sent` if asked (writing UPOS and XPOS, and FEATS and LEMMA where the model
    /// predicts them), parses it, puts back or records the given values the analysis wrote
    /// over (as `steps.analyze.given` says), marks DEPS left beside a changed tree, and writes
    /// its confidences if asked (and computed).
    pub fn annotate(&mut self, sent: &mut Sentence, steps: Steps) -> Result<(), NoTagger> {
        let given = steps.analyze.given;
        self.given.take(sent, steps.analyze.any() && given != Given::Replaced, steps.mark_deps);
        // Tags are required of a model asked to tag; FEATS and LEMMA are written where the
        // model predicts them.
        match self.analyzer.as_mut() {
            Some(analyzer) => match self.parser.tags_over_analysis().filter(|_| steps.analyze.tags) {
                // A neural model that tags scores the tags from the encoding its parse reuses:
                // read from forms alone, before the FEATS and lemmas that read its tags…
                Some(false) => {
                    let scores = self.parser.tag_scores(sent);
                    analyzer.analyze_scored(sent, steps.analyze, scores)
                }
                // …or read from the analysis's own tags and FEATS, which it then corrects.
                Some(true) => {
                    analyzer.analyze(sent, Analyze { lemmas: false, ..steps.analyze });
                    let scores = self.parser.tag_scores(sent);
                    analyzer.analyze_scored(sent, steps.analyze, scores)
                }
                None => analyzer.analyze(sent, steps.analyze),
            },
            None if steps.analyze.tags => return Err(NoTagger),
            None => {}
        }
        self.parser.parse(sent);
        self.other_language = self.language.as_mut().and_then(|check| check.foreign(sent));
        if self.collect || self.pipeline.has_model() {
            let parsed = Parsed {
                heads: self.parser.heads(),
                labels: self.parser.labels(),
                probabilities: self.parser.arc_confidence(),
            };
            let tagger = self.analyzer.as_ref().map(|a| &a.tagger);
            self.pipeline.read(sent, parsed, tagger, steps.analyze.tags);
        }
        // After the parse and its confidence, which read what the parser read.
        self.given.restore(sent, given);
        if steps.mark_deps {
            self.given.mark_deps(sent);
        }
        if steps.write_confidence && self.confidence {
            let mut buf = [0u8; 5];
            for w in 1..=sent.len() {
                let p = self.arc_confidence()[w];
                sent.set_misc(w, "Conf", format_probability(p, &mut buf));
                if steps.mark_below.is_some_and(|t| p < t) {
                    sent.set_misc(w, "LowConf", "Yes");
                }
            }
            let (mean, tree) = self.confidence();
            sent.set_comment("confidence", format_probability(mean as f32, &mut buf));
            use std::fmt::Write;
            self.scratch.clear();
            let _ = write!(self.scratch, "{tree:.4e}");
            sent.set_comment("tree_prob", &self.scratch);
            if let Some(counts) = self.other_language {
                sent.set_comment(OTHER_LANGUAGE_KEY, &counts.describe());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::format_probability;

    #[test]
    fn probabilities_are_printed_correctly_rounded() {
        let mut buf = [0u8; 5];
        // Stored as 0.715499997…: below the tie, so 0.715.
        assert_eq!(format_probability(0.7155, &mut buf), "0.715");
        assert_eq!(format_probability(0.97349, &mut buf), "0.973");
        assert_eq!(format_probability(0.9996, &mut buf), "1.000");
        assert_eq!(format_probability(0.0, &mut buf), "0.000");
        assert_eq!(format_probability(1.5, &mut buf), "1.000");
    }
}

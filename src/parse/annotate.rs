//! Annotating one sentence as a model file says: its analysis first (UPOS, XPOS, FEATS and
//! LEMMA, [`crate::model::analysis`]) when the input has no tags (or the user asks to retag),
//! then parsing. One [`Annotator`] per thread; it owns the scratch buffers of both, so nothing
//! is allocated per sentence.

use crate::corpus::{Column, Sentence};
use crate::learn::confidence_model::{ArcSignals, ConfidenceModel};
use crate::model::analysis::{Analyze, Analyzer};
use crate::model::file::{ModelFile, TableView};
use crate::parse::parser::Parser;

/// An analyzer (if the model has a tagger) and a parser over one model file.
pub struct Annotator<'m> {
    parser: Parser<'m, TableView<'m>>,
    analyzer: Option<Analyzer<'m, TableView<'m>>>,
    confidence: bool,
    /// The whole pipeline's arc confidence, when the model has one: it then replaces the
    /// parser's calibrated probability ([`crate::learn::confidence_model`]).
    pipeline: Option<&'m ConfidenceModel>,
    /// Read every arc's signals even without a pipeline model (to fit one).
    collect: bool,
    /// The last sentence's arcs: what each stage knew, and the confidence the pipeline's model
    /// gives them (index 0 unused).
    signals: Vec<ArcSignals>,
    arc_confidence: Vec<f32>,
    /// Reused buffer for formatting.
    scratch: String,
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

/// A sentence needs tags but the model has no tagger.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the model has no tagger: train it with --tagger to parse tokenized text or to --retag")]
pub struct NoTagger;

impl<'m> Annotator<'m> {
    /// An annotator for `model`; with `confidence`, transition probabilities are computed (at
    /// the model's temperature) and [`Annotator::confidence`] is meaningful.
    pub fn new(model: &'m ModelFile, confidence: bool) -> Self {
        let analyzer = model.analyzer();
        let pipeline = model.confidence().map(|c| &c.model).filter(|_| confidence);
        let mut parser = Parser::new(model);
        if confidence {
            parser = parser.with_confidence(model.meta().temperature);
            // The pipeline's model reads the parser's own probability; without it, the
            // parser's calibrator maps that.
            if pipeline.is_none() {
                parser = parser.with_calibration(model.meta().arc_calibration.as_ref());
            }
        }
        Annotator {
            parser,
            analyzer,
            confidence,
            pipeline,
            collect: false,
            signals: Vec::new(),
            arc_confidence: Vec::new(),
            scratch: String::new(),
        }
    }

    /// The last sentence's confidence (the mean arc confidence: the share of its arcs expected
    /// to be right) and tree probability.
    pub fn confidence(&self) -> (f64, f64) {
        let (mean, tree) = self.parser.sentence_confidence();
        if self.pipeline.is_none() {
            return (mean, tree);
        }
        let arcs = &self.arc_confidence[1.min(self.arc_confidence.len())..];
        (arcs.iter().map(|&c| f64::from(c)).sum::<f64>() / arcs.len().max(1) as f64, tree)
    }

    /// The last sentence's arc confidences, by word (index 0 unused); all 0 unless the
    /// annotator computes confidences.
    pub fn arc_confidence(&self) -> &[f32] {
        match self.pipeline {
            Some(_) => &self.arc_confidence,
            None => self.parser.arc_confidence(),
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
        &self.signals
    }

    /// Reads the signals of every arc of `sent` (just annotated, `analyzed` if the tagger ran
    /// on it) off the stages into [`Annotator::signals`].
    fn read_signals(&mut self, sent: &Sentence, analyzed: bool) {
        let n = sent.len();
        let (heads, raw) = (self.parser.heads(), self.parser.arc_confidence());
        let tagger = self.analyzer.as_ref().map(|a| &a.tagger);
        let sure = [f32::INFINITY];
        let margins = match tagger {
            Some(t) if analyzed => t.margins(),
            _ => &sure[..0],
        };
        self.signals.clear();
        self.signals.push(ArcSignals::default());
        // Without a lexicon (a model without a tagger) every form counts as known.
        let mut unknown = 0usize;
        match tagger {
            Some(t) if analyzed => {
                for known in t.known() {
                    unknown += usize::from(!known);
                    self.signals.push(ArcSignals { dependent_unknown: !known, ..ArcSignals::default() });
                }
            }
            Some(t) => {
                for w in sent.words() {
                    let known = t.knows(w.get(Column::Form));
                    unknown += usize::from(!known);
                    self.signals.push(ArcSignals { dependent_unknown: !known, ..ArcSignals::default() });
                }
            }
            None => self.signals.resize(n + 1, ArcSignals::default()),
        }
        let share = unknown as f32 / n.max(1) as f32;
        for w in 1..=n {
            let h = heads[w] as usize;
            let margin =
                |i: usize| if i == 0 { f32::INFINITY } else { margins.get(i - 1).copied().unwrap_or(f32::INFINITY) };
            let s = &mut self.signals[w];
            s.parser = raw[w];
            s.dependent_tag = margin(w);
            s.head_tag = margin(h);
            s.unknown_share = share;
            s.words = n as u32;
            s.distance = if h == 0 { 0 } else { w.abs_diff(h) as u32 };
            // Text that came tokenized has no tokenizer's doubt.
            let tokenized = &sent.tokenization;
            s.token_margin = tokenized.words.get(w - 1).copied().unwrap_or(f32::INFINITY);
            s.sentence_margin = if tokenized.words.is_empty() { f32::INFINITY } else { tokenized.sentence };
        }
    }

    /// Analyzes `sent` if asked (writing UPOS and XPOS, and FEATS and LEMMA where the model
    /// predicts them), parses it, and writes its confidences if asked (and computed).
    pub fn annotate(&mut self, sent: &mut Sentence, steps: Steps) -> Result<(), NoTagger> {
        // Tags are required of a model asked to tag; FEATS and LEMMA are written where the
        // model predicts them.
        match self.analyzer.as_mut() {
            Some(analyzer) => analyzer.analyze(sent, steps.analyze),
            None if steps.analyze.tags => return Err(NoTagger),
            None => {}
        }
        self.parser.parse(sent);
        if self.collect && self.pipeline.is_none() {
            self.read_signals(sent, steps.analyze.tags);
        }
        if let Some(model) = self.pipeline {
            self.read_signals(sent, steps.analyze.tags);
            self.arc_confidence.clear();
            self.arc_confidence.push(0.0);
            self.arc_confidence.extend(self.signals[1..].iter().map(|s| model.apply(s)));
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

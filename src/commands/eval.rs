//! `spoolparse eval`: scores a parsed file against gold, and the calibration of its confidences.
//!
//! Files with the gold's words get the attachment scores of [`spoolparse::train::eval`] (with
//! and without punctuation), and beside them the CoNLL 2018 figures of
//! [`spoolparse::train::align`]; a system that tokenized raw text otherwise gets the latter
//! alone (Tokens, Sentences, Words, UPOS, UAS, LAS as F1 over aligned words), and its
//! calibration judges each system word as those figures do ([`spoolparse::train::align::calibration`]).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args;

use spoolparse::learn::confidence::Reliability;
use spoolparse::model::file::ModelFile;
use spoolparse::train::align::{self, Aligned, Prf};
use spoolparse::train::eval::{evaluate_files_calibrated, Calibration, EvalError, Scores};

/// UAS/LAS of a parsed file against a gold file (CoNLL 2018 shared-task definitions); a system
/// file tokenized otherwise than gold is aligned to it as the shared task's evaluator does.
#[derive(Args)]
pub struct EvalArgs {
    gold: PathBuf,
    system: PathBuf,
    /// Print one JSON document instead of tables (with --calibration, the calibration's
    /// tables under `calibration`).
    #[arg(long)]
    json: bool,
    /// Also report the calibration of the system's confidences (reliability tables, ECE,
    /// coverage); a SYSTEM without any `Conf=` is an error.
    #[arg(long)]
    calibration: bool,
    /// With --calibration: also the calibration of transitions, re-parsing GOLD with this
    /// model.
    #[arg(long, requires = "calibration")]
    model: Option<PathBuf>,
    /// With --calibration: draw the reliability diagram and coverage curve into this SVG.
    #[arg(long, requires = "calibration")]
    plot: Option<PathBuf>,
}

impl EvalArgs {
    /// The plot is never written over an input.
    fn check(&self) -> Result<()> {
        let Some(plot) = &self.plot else { return Ok(()) };
        for input in [&self.gold, &self.system].into_iter().chain(&self.model) {
            if spoolparse::base::io::same_file(plot, input) {
                bail!("--plot {}: the plot cannot be written over an input", input.display());
            }
        }
        Ok(())
    }
}

/// Runs `spoolparse eval`.
pub fn exec(args: EvalArgs) -> Result<()> {
    args.check()?;
    let EvalArgs { gold, system, json, calibration, model, plot } = args;
    let (counts, cal) = match evaluate_files_calibrated(&gold, &system) {
        Ok(scored) => scored,
        // Other words than gold's: only the aligned figures exist (the text must still match),
        // and the calibration of the words as they align.
        Err(EvalError::Mismatch { .. }) => {
            let (gold_doc, system_doc) = (align::Document::read(&gold)?, align::Document::read(&system)?);
            let aligned = align::evaluate(&gold_doc, &system_doc)?;
            let cal = match calibration {
                true => Some(checked_calibration(align::calibration(&gold_doc, &system_doc)?, &system)?),
                false => None,
            };
            if json {
                // The F1 figures stand where accuracies stand for gold-tokenized files.
                let mut doc = serde_json::json!({
                    "words": aligned.words.gold,
                    "uas": aligned.uas.f1,
                    "las": aligned.las.f1,
                    "upos": aligned.upos.f1,
                    "aligned": aligned,
                });
                if let Some(cal) = &cal {
                    doc["calibration"] = calibration_json(cal, None);
                }
                println!("{}", serde_json::to_string_pretty(&doc)?);
            } else {
                print_aligned(&aligned);
                if let Some(cal) = &cal {
                    print_calibration(cal);
                }
            }
            if let (Some(cal), Some(plot)) = (&cal, plot) {
                spoolparse::train::plot::calibration_svg(&plot, cal)?;
            }
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let aligned = align::evaluate_files(&gold, &system)?;
    let s = counts.scores();
    if !calibration {
        if json {
            let mut doc = serde_json::to_value(s)?;
            doc["aligned"] = serde_json::to_value(aligned)?;
            println!("{}", serde_json::to_string_pretty(&doc)?);
        } else {
            print_scores(&s);
            println!();
            print_aligned(&aligned);
        }
        return Ok(());
    }
    let cal = checked_calibration(cal, &system)?;
    let transitions = match model {
        Some(path) => Some(spoolparse::train::transition_calibration(&ModelFile::open(&path)?, &gold)?),
        None => None,
    };
    if json {
        // One JSON document: the scores, and the calibration beside them.
        let mut doc = serde_json::to_value(s)?;
        doc["aligned"] = serde_json::to_value(aligned)?;
        doc["calibration"] = calibration_json(&cal, transitions.as_ref());
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print_scores(&s);
        println!();
        print_aligned(&aligned);
        if let Some(t) = &transitions {
            print_reliability("transitions (zero-cost)", t);
        }
        print_calibration(&cal);
    }
    if let Some(plot) = plot {
        spoolparse::train::plot::calibration_svg(&plot, &cal)?;
    }
    Ok(())
}

/// Tables of nothing would read as perfectly calibrated (ECE 0): refused before any output.
fn checked_calibration(cal: Calibration, system: &Path) -> Result<Calibration> {
    if cal.arcs.total() == 0 {
        bail!(
            "{}: no word has a confidence (Conf= in MISC), so there is no calibration to report: \
             parse without --no-confidence",
            system.display()
        );
    }
    Ok(cal)
}

/// Shares of the words in the coverage–accuracy table.
const WORD_SHARES: [f64; 3] = [0.25, 0.5, 0.8];

/// Confidence thresholds of the coverage table.
const COVERAGE_THRESHOLDS: [f64; 8] = [0.0, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95];

/// Shares of the most confident sentences in the table of what keeping them buys.
const TOP_SHARES: [f64; 5] = [0.5, 0.7, 0.8, 0.9, 0.95];

fn print_scores(s: &Scores) {
    println!("Metric      | Words  | Score");
    println!("UAS         | {:6} | {:6.2}", s.words, s.uas);
    println!("LAS         | {:6} | {:6.2}", s.words, s.las);
    println!("UAS (-punct)| {:6} | {:6.2}", s.words_no_punct, s.uas_no_punct);
    println!("LAS (-punct)| {:6} | {:6.2}", s.words_no_punct, s.las_no_punct);
    println!("UPOS        | {:6} | {:6.2}", s.words, s.upos);
    println!("XPOS        | {:6} | {:6.2}", s.words, s.xpos);
}

/// The shared task's table (`conll18_ud_eval.py -v`, its rows we compute).
fn print_aligned(a: &Aligned) {
    println!("CoNLL 2018    | Precision |    Recall |  F1 Score | (words aligned as conll18_ud_eval.py does)");
    let rows: [(&str, &Prf); 6] = [
        ("Tokens", &a.tokens),
        ("Sentences", &a.sentences),
        ("Words", &a.words),
        ("UPOS", &a.upos),
        ("UAS", &a.uas),
        ("LAS", &a.las),
    ];
    for (name, p) in rows {
        println!("{name:13} | {:9.2} | {:9.2} | {:9.2}", p.precision, p.recall, p.f1);
    }
}

fn print_reliability(name: &str, r: &Reliability) {
    println!(
        "\nCalibration of {name}: ECE {:.4} (exact probabilities would show {:.4} on as many items, by chance)",
        r.ece(),
        r.ece_floor()
    );
    println!("bin       | count  | mean conf | % correct");
    for b in r.bins() {
        println!(
            "{:.1}-{:.1}   | {:6} | {:9.3} | {:9.2}",
            b.lower,
            b.upper,
            b.count,
            b.mean_confidence,
            100.0 * b.accuracy
        );
    }
}

fn print_calibration(cal: &Calibration) {
    print_reliability("arcs (labeled attachment)", &cal.arcs);
    print_reliability("sentences (LAS)", &cal.sentences);
    println!("bin       | % of sentences whose LAS is in the same bin");
    for (b, share) in cal.sentence_bin_agreement().iter().enumerate() {
        println!("{:.1}-{:.1}   | {:6.2}", b as f64 / 10.0, (b + 1) as f64 / 10.0, share);
    }
    println!("\nCoverage: threshold | % sentences kept | LAS of kept");
    for c in cal.coverage(&COVERAGE_THRESHOLDS) {
        println!("{:9.2} | {:16.2} | {:6.2}", c.threshold, c.kept, c.las);
    }
    println!("\nMost confident sentences kept | % of words | LAS of kept");
    for share in TOP_SHARES {
        let (las, words) = cal.top_sentences(share);
        println!("{:29.0}% | {:10.1} | {:6.2}", share * 100.0, words, las);
    }
    println!("\nWords kept (most confident sentences first) | LAS of kept | best ranking (by true LAS)");
    for k in cal.words_kept(&WORD_SHARES) {
        println!("{:42.0}% | {:11.2} | {:6.2}", k.words, k.las, k.best);
    }
}

/// The tables of [`print_calibration`] (and of transitions, with `--model`) as JSON.
fn calibration_json(cal: &Calibration, transitions: Option<&Reliability>) -> serde_json::Value {
    let table = |r: &Reliability| serde_json::json!({ "ece": r.ece(), "ece_floor": r.ece_floor(), "bins": r.bins() });
    let top: Vec<serde_json::Value> = TOP_SHARES
        .iter()
        .map(|&share| {
            let (las, words) = cal.top_sentences(share);
            serde_json::json!({ "share": share, "words": words, "las": las })
        })
        .collect();
    serde_json::json!({
        "transitions": transitions.map(table),
        "arcs": table(&cal.arcs),
        "sentences": table(&cal.sentences),
        "sentence_bin_agreement": cal.sentence_bin_agreement(),
        "coverage": cal.coverage(&COVERAGE_THRESHOLDS),
        "most_confident": top,
        "words_kept": cal.words_kept(&WORD_SHARES),
    })
}

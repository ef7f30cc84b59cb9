//! How `--min-precision` fares on text it did not choose its threshold on
//! (`spoolparse::learn::precision`), from raw text, for P = 0.90, 0.95, 0.98:
//!
//! - **splits**: DEV's sentences (the model's tokenizer's, from DEV's raw text) in 100 random
//!   halves. On one half the confidence is fitted again (on its raw-text arcs alone, so that the
//!   other half's words never taught it) and the threshold chosen on its sentences' cross-fitted
//!   confidences, as `train` does; on the other half, the words kept at that threshold and how
//!   many were right. Prints how often a threshold was found, the mean share kept and
//!   precision on the other half where one was, and in how many splits the other half's
//!   precision fell below P: the promise is that this happens in at most a tenth of them (less
//!   the other half's own sampling noise, which this count includes).
//! - **shift**: for each SHIFTED gold file, the threshold as `parse --min-precision` takes it
//!   (the model's own calibration sentences) and what it keeps of the file's raw text, parsed
//!   and judged as the official evaluator aligns it; then, as a retraining cycle chooses it
//!   once the workbench's uniform sample of the user's text is large enough, the threshold
//!   chosen on a random half of the file's sentences (scored with the model's confidence as
//!   fitted: nothing refitted) and what it keeps of the other half, over 100 halves.
//!
//!     cargo run --release --example precision_splits -- MODEL DEV.conllu|- [SHIFTED.conllu...]
//!
//! `SHIFT_GOLD_TOKENS=1` takes the shifted files' words as given (one query per line, as
//! en_atis is: the tokenizer of a treebank of prose runs unpunctuated lines together).

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use spoolparse::learn::confidence_model::ConfidenceModel;
use spoolparse::learn::precision::{choose, SentenceRow};
use spoolparse::model::file::ModelFile;
use spoolparse::train::pipeline_confidence::{collect_rows, sentence_rows, Input, Row};

const PRECISIONS: [f64; 3] = [0.9, 0.95, 0.98];
const SPLITS: u64 = 100;

/// Words kept at `threshold` and words right among them.
fn kept(rows: &[SentenceRow], threshold: f64) -> (u64, u64) {
    rows.iter()
        .filter(|r| r.confidence >= threshold)
        .fold((0, 0), |(n, k), r| (n + u64::from(r.words), k + u64::from(r.right)))
}

fn words(rows: &[SentenceRow]) -> u64 {
    rows.iter().map(|r| u64::from(r.words)).sum()
}

/// The rows of the input users' text comes as: raw text when the model reads it, or gold
/// tokens where `gold_tokens` says so.
fn user_rows(model: &Arc<ModelFile>, gold: &Path, gold_tokens: bool) -> anyhow::Result<Vec<Row>> {
    let (rows, inputs) = collect_rows(model, gold).with_context(|| gold.display().to_string())?;
    let input = if gold_tokens { Input::GoldTokens } else { inputs[0] };
    if input != Input::RawText {
        eprintln!("{}: from gold tokens", gold.display());
    }
    Ok(rows.into_iter().filter(|r| r.input == input).collect())
}

fn fit(rows: &[&Row]) -> Option<ConfidenceModel> {
    ConfidenceModel::fit(&rows.iter().map(|r| (r.signals, r.right)).collect::<Vec<_>>())
}

/// One random half's calibration sentences (cross-fitted confidences, as `train` gives them)
/// and the other half's (under the calibration half's confidence), or `None` where the
/// confidence cannot be fitted.
fn split(rows: &[Row], sentences: usize, seed: u64) -> Option<(Vec<SentenceRow>, Vec<SentenceRow>)> {
    let mut order: Vec<usize> = (0..sentences).collect();
    order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let mut in_a = vec![false; sentences];
    for &s in &order[..sentences / 2] {
        in_a[s] = true;
    }
    let a: Vec<&Row> = rows.iter().filter(|r| in_a[r.sentence]).collect();
    let b: Vec<&Row> = rows.iter().filter(|r| !in_a[r.sentence]).collect();
    let whole = fit(&a)?;
    let halves = [
        fit(&a.iter().copied().filter(|r| r.sentence % 2 == 1).collect::<Vec<_>>()),
        fit(&a.iter().copied().filter(|r| r.sentence % 2 == 0).collect::<Vec<_>>()),
    ];
    let calibration =
        sentence_rows(a.iter().copied(), |r| halves[r.sentence % 2].as_ref().unwrap_or(&whole).apply(&r.signals));
    let measured = sentence_rows(b.iter().copied(), |r| whole.apply(&r.signals));
    Some((calibration, measured))
}

fn splits(rows: &[Row]) {
    let sentences = rows.iter().map(|r| r.sentence).max().map_or(0, |m| m + 1);
    println!("splits: {sentences} sentences, {SPLITS} random halves; on the other half:");
    let halves: Vec<_> = (0..SPLITS).filter_map(|seed| split(rows, sentences, seed)).collect();
    for p in PRECISIONS {
        println!("  {}", fared(&halves, p));
    }
}

/// How the thresholds chosen for `p` on the first of each pair of `halves` fare on the second:
/// in how many a threshold was found, the mean share of words kept and their precision, and
/// in how many the precision fell below `p`.
fn fared(halves: &[(Vec<SentenceRow>, Vec<SentenceRow>)], p: f64) -> String {
    let (mut found, mut below, mut kept_sum, mut precision_sum) = (0u32, 0u32, 0.0, 0.0);
    for (chosen_on, measured) in halves {
        let Ok(choice) = choose(chosen_on, p) else { continue };
        let (n, k) = kept(measured, choice.threshold);
        let precision = k as f64 / n.max(1) as f64;
        found += 1;
        below += u32::from(precision < p);
        kept_sum += n as f64 / words(measured).max(1) as f64;
        precision_sum += precision;
    }
    let mean = |x: f64| 100.0 * x / f64::from(found.max(1));
    format!(
        "P {p}: a threshold in {found} of {} halves; kept {:.1}% of the words, {:.2}% right; below P in {below}",
        halves.len(),
        mean(kept_sum),
        mean(precision_sum)
    )
}

fn shift(model: &Arc<ModelFile>, path: &Path, gold_tokens: bool) -> anyhow::Result<()> {
    let Some(confidence) = model.confidence() else { bail!("the model has no pipeline confidence") };
    let rows = user_rows(model, path, gold_tokens)?;
    let measured = sentence_rows(&rows, |r| confidence.model.apply(&r.signals));
    println!("shift: {} ({} sentences, {} words)", path.display(), measured.len(), words(&measured));
    let on_user_text = chosen_on_halves(&measured);
    for p in PRECISIONS {
        match choose(&confidence.sentences, p) {
            Err(_) => println!("  P {p}: out of reach on the model's calibration text"),
            Ok(choice) => {
                let (n, k) = kept(&measured, choice.threshold);
                println!(
                    "  P {p}: confidence ≥ {:.2}: kept {:.1}% of the words, {:.2}% right (on the calibration text: {:.1}%, {:.2}%)",
                    choice.threshold,
                    100.0 * n as f64 / words(&measured).max(1) as f64,
                    100.0 * k as f64 / n.max(1) as f64,
                    100.0 * choice.kept,
                    100.0 * choice.precision
                );
            }
        }
    }
    println!("  chosen on a random half of the file instead, {SPLITS} halves; on the other half:");
    for line in on_user_text {
        println!("  {line}");
    }
    Ok(())
}

/// Per precision, how a threshold chosen on one random half of `sentences` (the user's own
/// text, as the workbench samples it) fares on the other half, in words.
fn chosen_on_halves(sentences: &[SentenceRow]) -> Vec<String> {
    let halves: Vec<(Vec<SentenceRow>, Vec<SentenceRow>)> = (0..SPLITS)
        .map(|seed| {
            let mut order: Vec<usize> = (0..sentences.len()).collect();
            order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
            let (a, b) = order.split_at(sentences.len() / 2);
            (a.iter().map(|&i| sentences[i]).collect(), b.iter().map(|&i| sentences[i]).collect())
        })
        .collect();
    PRECISIONS.iter().map(|&p| fared(&halves, p)).collect()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, dev, shifted @ ..] = args.as_slice() else {
        bail!("usage: precision_splits MODEL DEV.conllu [SHIFTED.conllu...]")
    };
    let model = Arc::new(ModelFile::open(Path::new(model))?);
    println!("model {}", model.path().display());
    if dev != "-" {
        splits(&user_rows(&model, Path::new(dev), false)?);
    }
    // One query per line, without the punctuation that ends a sentence: the tokenizer of a
    // treebank of prose would run them together.
    let gold_tokens = std::env::var_os("SHIFT_GOLD_TOKENS").is_some();
    for path in shifted {
        shift(&model, Path::new(path), gold_tokens)?;
    }
    Ok(())
}

//! The figures behind the suspect check of `spoolparse::retrain::reference`: through a model,
//! the share of gold sentences and of valid random trees (random earlier heads, random labels
//! of the model) that the check sets aside, by what judged them: the arcs the model is sure of,
//! or (too few of those) the labeled agreement with its parse.
//!
//!     cargo run --release --example suspect_rates -- MODEL GOLD.conllu[.zst] [SEED]

use std::path::PathBuf;

use anyhow::Context;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use spoolparse::base::label::Label;
use spoolparse::corpus::Column;
use spoolparse::corpus::{Format, Reader, Sentence};
use spoolparse::model::file::ModelFile;
use spoolparse::parse::annotate::{Annotator, Steps};
use spoolparse::retrain::reference::{agreement, MIN_CONFIDENT_ARCS};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, gold, rest @ ..] = args.as_slice() else { anyhow::bail!("usage: suspect_rates MODEL GOLD [SEED]") };
    let seed: u64 = rest.first().map(|s| s.parse()).transpose()?.unwrap_or(1);
    let model = ModelFile::open(&PathBuf::from(model))?;
    let path = PathBuf::from(gold);
    let sents: Vec<Sentence> =
        Reader::open(&path, Format::from_path(&path))?.collect::<Result<_, _>>().context("reading the gold file")?;
    let labels: Vec<String> = (1..model.meta().labels.len())
        .map(|i| model.meta().labels.name(Label::from_index(i)).to_string())
        .filter(|n| !n.contains(['↑', '↓']))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut annotator = Annotator::new(&model, true);
    let mut variants = std::collections::BTreeMap::new();
    // gold: whole gold trees; random: valid random trees; lowconf: the gold arcs of the words the
    // model gave less than 0.8 only, the rest `_` (corrections of its unsure arcs, as a person
    // would write them into annotated/).
    for kind in ["gold", "random", "lowconf"] {
        let (mut n, mut by_confident, mut by_labeled, mut judged_labeled) = (0, 0, 0, 0);
        for s in &sents {
            let mut s = s.clone();
            if kind == "random" {
                for w in 1..=s.len() {
                    let head = if w == 1 { 0 } else { rng.gen_range(1..w) };
                    let label = if head == 0 { "root" } else { &labels[rng.gen_range(0..labels.len())] };
                    s.set_attachment(w, head, label);
                }
            }
            if kind == "lowconf" {
                let mut parsed = s.clone();
                annotator.annotate(&mut parsed, Steps::default())?;
                let conf = annotator.arc_confidence().to_vec();
                for w in 1..=s.len() {
                    if conf.get(w).is_some_and(|&c| c >= 0.8) {
                        s.set_column(w, Column::Head, "_");
                        s.set_column(w, Column::Deprel, "_");
                    }
                }
                if s.words().all(|w| w.get(Column::Head) == "_") {
                    continue;
                }
            }
            let a = agreement(&mut annotator, &s);
            if std::env::var_os("VARIANTS").is_some() {
                // The rule before: head and label on fewer than 2/3 of at least 2 arcs.
                let before =
                    a.confident < MIN_CONFIDENT_ARCS && a.arcs >= 2 && (a.labeled as f64) < 0.67 * a.arcs as f64;
                *variants.entry((kind, 0, 2)).or_insert(0usize) += usize::from(before);
                for z in [1.0, 1.5, 2.0, 2.5, 3.0] {
                    for min in [2usize, 3] {
                        let hit = a.confident < MIN_CONFIDENT_ARCS && a.arcs >= min && a.unexpected() > z;
                        *variants.entry((kind, (z * 10.0) as u32, min)).or_insert(0usize) += usize::from(hit);
                    }
                }
            }
            n += 1;
            if a.confident < MIN_CONFIDENT_ARCS {
                judged_labeled += 1;
            }
            if a.is_suspect() {
                if a.confident >= MIN_CONFIDENT_ARCS {
                    by_confident += 1;
                } else {
                    by_labeled += 1;
                }
            }
        }
        println!(
            "{kind}: {n} sentences, {} set aside ({:.1}%): {by_confident} by the arcs the model is sure of, \
             {by_labeled} of {judged_labeled} by labeled agreement",
            by_confident + by_labeled,
            100.0 * (by_confident + by_labeled) as f64 / n as f64
        );
    }
    for ((kind, z, min), hits) in variants {
        if z == 0 {
            println!("  head and label on fewer than 2/3 of at least 2 arcs (the rule before): {kind} {hits}");
            continue;
        }
        println!(
            "  differing more than {:.1} deviations above expected, at least {min} arcs: {kind} {hits}",
            z as f64 / 10.0
        );
    }
    Ok(())
}

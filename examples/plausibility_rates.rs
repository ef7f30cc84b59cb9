//! The figures behind the plausibility check of `spoolparse::retrain::reference`: through a
//! model, per sentence of a gold file and per kind of tree over it (the gold tree; a uniform
//! random spanning tree; random earlier heads; the gold tree with 30% of its arcs replaced at
//! random; the gold arcs of the words the model gave less than 0.8, as a correction, the
//! model parsing with its own tags or with those of the file), the
//! ranks the model gives the annotated arcs, the log-probability lost per arc, the arcs that
//! cross another, and whether the agreement check sets it aside. One tab-separated line per
//! sentence and kind, for `scripts/experiments/plausibility-table.py`.
//!
//!     cargo run --release --example plausibility_rates -- MODEL GOLD.conllu[.zst] [SEED] > rows.tsv

use std::path::PathBuf;

use anyhow::Context;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use spoolparse::base::label::Label;
use spoolparse::corpus::{Column, Format, Reader, Sentence};
use spoolparse::model::analysis::Analyze;
use spoolparse::model::file::ModelFile;
use spoolparse::parse::annotate::{Annotator, Steps};
use spoolparse::retrain::reference::{agreement, plausibility};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, gold, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: plausibility_rates MODEL GOLD [SEED]")
    };
    let seed: u64 = rest.first().map(|s| s.parse()).transpose()?.unwrap_or(1);
    let model = ModelFile::open(&PathBuf::from(model))?;
    let path = PathBuf::from(gold);
    let sents: Vec<Sentence> =
        Reader::open(&path, Format::from_path(&path))?.collect::<Result<_, _>>().context("reading the gold file")?;
    let meta = model.meta();
    let labels: Vec<String> = (1..meta.labels.len())
        .map(|i| meta.labels.name(Label::from_index(i)).to_string())
        .filter(|n| !n.contains(['↑', '↓']))
        .collect();
    let tagger = model.tagger().is_some();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut annotator = Annotator::new(&model, true);
    println!("kind\tsentence\twords\tarcs\tranks\tdeficit\tcrossing\tagreement_suspect");
    for (i, gold) in sents.iter().enumerate() {
        for kind in ["gold", "spanning", "earlier", "part30", "lowconf", "lowconf_as_given"] {
            let Some(s) = variant(kind, gold, &labels, &mut rng, &mut annotator, tagger)? else { continue };
            let Some(p) = plausibility(&mut annotator, &meta.labels, tagger, &s) else { continue };
            let a = agreement(&mut annotator, &s);
            let ranks: Vec<String> = p.ranks.iter().map(u32::to_string).collect();
            println!(
                "{kind}\t{i}\t{}\t{}\t{}\t{:.3}\t{}\t{}",
                s.len(),
                p.arcs,
                ranks.join(","),
                p.deficit,
                p.crossing,
                u8::from(a.is_suspect())
            );
        }
    }
    Ok(())
}

/// The tree of `kind` over `gold`'s words (`None`: nothing to annotate).
fn variant(
    kind: &str,
    gold: &Sentence,
    labels: &[String],
    rng: &mut ChaCha8Rng,
    annotator: &mut Annotator<'_>,
    tagger: bool,
) -> anyhow::Result<Option<Sentence>> {
    let mut s = gold.clone();
    let n = s.len();
    let label = |rng: &mut ChaCha8Rng| labels[rng.gen_range(0..labels.len())].clone();
    match kind {
        "spanning" => {
            let mut order: Vec<usize> = (1..=n).collect();
            order.shuffle(rng);
            for (k, &w) in order.iter().enumerate() {
                if k == 0 {
                    s.set_attachment(w, 0, "root");
                } else {
                    let head = order[rng.gen_range(0..k)];
                    s.set_attachment(w, head, &label(rng));
                }
            }
        }
        "earlier" => {
            for w in 1..=n {
                let head = if w == 1 { 0 } else { rng.gen_range(1..w) };
                let l = if head == 0 { "root".to_string() } else { label(rng) };
                s.set_attachment(w, head, &l);
            }
        }
        "part30" => {
            let mut heads: Vec<usize> = s.words().map(|w| w.get(Column::Head).parse().unwrap_or(0)).collect();
            for w in 1..=n {
                if heads[w - 1] == 0 || !rng.gen_bool(0.3) {
                    continue;
                }
                // A new head that is not w's descendant keeps a tree.
                let candidates: Vec<usize> =
                    (1..=n).filter(|&h| h != w && h != heads[w - 1] && !descends(&heads, h, w)).collect();
                if let Some(&h) = candidates.choose(rng) {
                    heads[w - 1] = h;
                    s.set_attachment(w, h, &label(rng));
                }
            }
        }
        "lowconf" | "lowconf_as_given" => {
            // As the daemon parses the text (with its own tags where it has a tagger), or on
            // the tags as given.
            let mut parsed = s.clone();
            let analyze = if tagger && kind == "lowconf" { Analyze::ALL } else { Analyze::NONE };
            annotator.annotate(&mut parsed, Steps { analyze, ..Steps::default() })?;
            let conf = annotator.arc_confidence().to_vec();
            for w in 1..=n {
                if conf.get(w).is_some_and(|&c| c >= 0.8) {
                    s.set_column(w, Column::Head, "_");
                    s.set_column(w, Column::Deprel, "_");
                }
            }
            if s.words().all(|w| w.get(Column::Head) == "_") {
                return Ok(None);
            }
        }
        _ => {}
    }
    Ok(Some(s))
}

/// Whether `h` is `w` or hangs below it in `heads` (by word, 1-based values, 0 the root).
fn descends(heads: &[usize], mut h: usize, w: usize) -> bool {
    for _ in 0..=heads.len() {
        if h == w {
            return true;
        }
        if h == 0 {
            return false;
        }
        h = heads[h - 1];
    }
    true
}

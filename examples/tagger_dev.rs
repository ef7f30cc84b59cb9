//! Tagger accuracy on a dev file: trains the tagger alone and prints UPOS/XPOS accuracy and
//! tagging speed (one thread, in memory, best of 5 runs). With SEEDS > 1, trains once per seed
//! (1..=SEEDS) and prints each result and the mean, as single runs differ by about ±0.1.
//!
//!     cargo run --release --example tagger_dev [-- TREEBANK [EPOCHS [SEEDS]]]     (default en_ewt, 10, 1)

use std::path::PathBuf;
use std::time::Instant;

use spoolparse::model::tagger::{accuracy, load_tagging, train_tagger, TagSet, Tagger};

fn main() -> anyhow::Result<()> {
    let arg = |i: usize| std::env::args().nth(i);
    let tb = arg(1).unwrap_or_else(|| "en_ewt".into());
    let epochs = arg(2).map(|e| e.parse()).transpose()?.unwrap_or(10);
    let seeds: u64 = arg(3).map(|e| e.parse()).transpose()?.unwrap_or(1);
    let ud = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ud").join(&tb);
    let mut tags = TagSet::default();
    let train = load_tagging(&[ud.join("train.conllu.zst")], &mut tags)?;
    let mut gold_tags = TagSet::default();
    let dev = load_tagging(&[ud.join("dev.conllu.zst")], &mut gold_tags)?;
    let words: usize = dev.iter().map(|s| s.words.len()).sum();
    let (mut upos_sum, mut xpos_sum) = (0.0, 0.0);
    for seed in 1..=seeds.max(1) {
        let t = Instant::now();
        let model = train_tagger(&train, &tags, epochs, seed);
        let train_secs = t.elapsed().as_secs_f64();
        let mut tagger = Tagger::from_model(&model);
        let (upos, xpos) = accuracy(&mut tagger, &dev, &gold_tags);
        // Speed: the best of 5 runs over dev, as the machine may be shared.
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t = Instant::now();
            for s in &dev {
                std::hint::black_box(tagger.tag_words(&s.words));
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{tb} seed {seed}: {} tags, {} dictionary words; dev UPOS {upos:.2} XPOS {xpos:.2}; trained in {train_secs:.1} s; tagging {:.0} words/s (in-memory weights)",
            tags.len(),
            model.dict.len(),
            words as f64 / best
        );
        (upos_sum, xpos_sum) = (upos_sum + upos, xpos_sum + xpos);
    }
    if seeds > 1 {
        let n = seeds as f64;
        println!("{tb} mean over {seeds} seeds: dev UPOS {:.2} XPOS {:.2}", upos_sum / n, xpos_sum / n);
    }
    Ok(())
}

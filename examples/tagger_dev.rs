//! Tagger accuracy on a dev file: trains the tagger alone and prints UPOS/XPOS accuracy and
//! tagging speed (one thread, in memory).
//!
//!     cargo run --release --example tagger_dev [-- TREEBANK [EPOCHS]]     (default en_ewt, 10)

use std::path::PathBuf;
use std::time::Instant;

use spoolparse::tagger::{accuracy, load_tagging, train_tagger, TagSet, Tagger};

fn main() -> anyhow::Result<()> {
    let tb = std::env::args().nth(1).unwrap_or_else(|| "en_ewt".into());
    let epochs = std::env::args().nth(2).map(|e| e.parse()).transpose()?.unwrap_or(10);
    let ud = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ud").join(&tb);
    let mut tags = TagSet::default();
    let train = load_tagging(&[ud.join("train.conllu.zst")], &mut tags)?;
    let mut gold_tags = TagSet::default();
    let dev = load_tagging(&[ud.join("dev.conllu.zst")], &mut gold_tags)?;
    let t = Instant::now();
    let model = train_tagger(&train, &tags, epochs, 1);
    let train_secs = t.elapsed().as_secs_f64();
    let mut tagger = Tagger::from_model(&model);
    let t = Instant::now();
    let (upos, xpos) = accuracy(&mut tagger, &dev, &gold_tags);
    let words: usize = dev.iter().map(|s| s.words.len()).sum();
    println!(
        "{tb}: {} tags, {} dictionary words; dev UPOS {upos:.2} XPOS {xpos:.2}; trained in {train_secs:.1} s; tagging {:.0} words/s (in-memory weights)",
        tags.len(),
        model.dict.len(),
        words as f64 / t.elapsed().as_secs_f64()
    );
    Ok(())
}

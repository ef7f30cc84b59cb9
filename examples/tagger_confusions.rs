//! The most frequent UPOS confusions of the tagger on a dev file (error analysis).
//!
//!     cargo run --release --example tagger_confusions [-- TREEBANK]     (default en_ewt)

use std::collections::HashMap;
use std::path::PathBuf;

use spoolparse::model::tagger::{load_tagging, train_tagger, TagSet, Tagger};

fn main() -> anyhow::Result<()> {
    let tb = std::env::args().nth(1).unwrap_or_else(|| "en_ewt".into());
    let ud = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ud").join(&tb);
    let mut tags = TagSet::default();
    let train = load_tagging(&[ud.join("train.conllu.zst")], &mut tags)?;
    let mut gold_tags = TagSet::default();
    let dev = load_tagging(&[ud.join("dev.conllu.zst")], &mut gold_tags)?;
    let model = train_tagger(&train, &tags, 10, 1);
    let mut tagger = Tagger::from_model(&model);
    let mut confusions: HashMap<(String, String), usize> = HashMap::new();
    let mut errors = 0;
    for s in &dev {
        let predicted = tagger.tag_words(&s.words).to_vec();
        for (&p, &g) in predicted.iter().zip(&s.tags) {
            let (pu, gu) = (model.tags.get(p).0, gold_tags.get(g).0);
            if pu != gu {
                errors += 1;
                *confusions.entry((gu.to_string(), pu.to_string())).or_default() += 1;
            }
        }
    }
    let mut v: Vec<_> = confusions.into_iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1));
    println!("{errors} UPOS errors; gold -> predicted:");
    for ((g, p), n) in v.into_iter().take(15) {
        println!("{n:5}  {g} -> {p}");
    }
    Ok(())
}

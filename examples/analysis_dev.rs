//! The figures behind the choices of `spoolparse::model::{feats, lemmatizer}`: on gold tokens
//! of a dev file, the accuracy of FEATS (whole strings and feature by feature) and of lemmas
//! (all words, and words whose lowercased form training never saw), given gold tags and given
//! the tags (and FEATS) the pipeline predicts. The tagger is trained as `train --tagger` trains
//! it; FEATS and lemmas are trained on jackknifed predictions (4 folds), FEATS for half the
//! epochs (`FEATS_EPOCHS=N` in the environment for others).
//!
//!     cargo run --release --example analysis_dev -- TRAIN DEV

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use spoolparse::corpus::{Column, Format, Reader, Sentence};
use spoolparse::model::feats::{train_feats, FeatsMode, FeatsTagger};
use spoolparse::model::lemmatizer::{train_lemmatizer, Lemmatizer};
use spoolparse::model::tagger::{jackknife, train_tagger, TagSentence, TagSet, Tagger};

const FOLDS: usize = 4;
const EPOCHS: u32 = 10;

fn read(path: &Path) -> anyhow::Result<Vec<Sentence>> {
    Reader::open(path, Format::from_path(path))?.map(|s| s.with_context(|| path.display().to_string())).collect()
}

/// Share (percent) of the words of `gold` whose `col` the same word of `system` has.
fn accuracy(gold: &[Sentence], system: &[Sentence], cols: &[Column], only: &dyn Fn(&str) -> bool) -> (f64, usize) {
    let (mut n, mut ok) = (0usize, 0usize);
    for (g, s) in gold.iter().zip(system) {
        for (gw, sw) in g.words().zip(s.words()) {
            if !only(gw.get(Column::Form)) {
                continue;
            }
            n += 1;
            ok += usize::from(cols.iter().all(|&c| gw.get(c) == sw.get(c)));
        }
    }
    (100.0 * ok as f64 / n.max(1) as f64, n)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let [train, dev] = args.as_slice() else { anyhow::bail!("usage: analysis_dev TRAIN DEV") };
    let gold = read(train)?;
    let dev_gold = read(dev)?;
    let seen: HashSet<String> =
        gold.iter().flat_map(|s| s.words().map(|w| w.get(Column::Form).to_lowercase())).collect();
    let unseen = |f: &str| !seen.contains(&f.to_lowercase());
    let all = |_: &str| true;

    // Tags: jackknifed for the training data, the final tagger's for dev.
    let mut tags = TagSet::default();
    let tag_sentences: Vec<TagSentence> = gold.iter().map(|s| TagSentence::from_sentence(s, &mut tags)).collect();
    let predicted = jackknife(&tag_sentences, &tags, FOLDS, EPOCHS, 1);
    let mut input = gold.clone();
    for (s, p) in input.iter_mut().zip(&predicted) {
        for (i, &t) in p.iter().enumerate() {
            let (u, x) = tags.get(t);
            s.set_tags(i + 1, u, x);
        }
    }
    let tagger_model = train_tagger(&tag_sentences, &tags, EPOCHS, 1);
    let mut tagger = Tagger::from_model(&tagger_model);
    let mut dev_tagged = dev_gold.clone();
    for s in &mut dev_tagged {
        tagger.tag(s);
    }
    println!("dev UPOS {:.2}", accuracy(&dev_gold, &dev_tagged, &[Column::Upos], &all).0);

    let everything = |_: usize, _: u32| true;
    // As `train --tagger` trains it: half the epochs (FEATS_EPOCHS=N for others).
    let feats_epochs: u32 =
        std::env::var("FEATS_EPOCHS").ok().and_then(|e| e.parse().ok()).unwrap_or(EPOCHS.div_ceil(2));
    for mode in [FeatsMode::Whole, FeatsMode::Factored] {
        let t = std::time::Instant::now();
        let on_gold = train_feats(&gold, &gold, &everything, mode, feats_epochs, 1);
        let on_predicted = train_feats(&gold, &input, &everything, mode, feats_epochs, 1);
        let trained = t.elapsed().as_secs_f64() / 2.0;
        let mut a = dev_gold.clone();
        let mut b = dev_tagged.clone();
        let t = std::time::Instant::now();
        let mut ft = FeatsTagger::from_model(&on_gold);
        a.iter_mut().for_each(|s| ft.tag(s));
        let secs = t.elapsed().as_secs_f64();
        let mut ft = FeatsTagger::from_model(&on_predicted);
        b.iter_mut().for_each(|s| ft.tag(s));
        println!(
            "{mode:?}: {} classes; UFeats gold tags {:.2}, predicted tags {:.2}; UPOS+UFeats {:.2}; unseen forms {:.2} \
             ({:.1} s to train, {:.0} words/s)",
            on_gold.inventory.classes(),
            accuracy(&dev_gold, &a, &[Column::Feats], &all).0,
            accuracy(&dev_gold, &b, &[Column::Feats], &all).0,
            accuracy(&dev_gold, &b, &[Column::Upos, Column::Feats], &all).0,
            accuracy(&dev_gold, &b, &[Column::Feats], &unseen).0,
            trained,
            dev_gold.iter().map(Sentence::len).sum::<usize>() as f64 / secs,
        );
    }

    // FEATS jackknifed (whole strings), so that the lemmatizer trains on predicted FEATS.
    let mode = FeatsMode::Whole;
    for k in 0..FOLDS {
        let (rest_g, rest_i): (Vec<Sentence>, Vec<Sentence>) = gold
            .iter()
            .zip(&input)
            .enumerate()
            .filter(|(i, _)| i % FOLDS != k)
            .map(|(_, (g, i))| (g.clone(), i.clone()))
            .unzip();
        let model = train_feats(&rest_g, &rest_i, &everything, mode, feats_epochs, 1);
        let mut ft = FeatsTagger::from_model(&model);
        for (_, s) in input.iter_mut().enumerate().filter(|(i, _)| i % FOLDS == k) {
            ft.tag(s);
        }
    }
    let feats_model = train_feats(&gold, &input, &everything, mode, feats_epochs, 1);
    let mut ft = FeatsTagger::from_model(&feats_model);
    dev_tagged.iter_mut().for_each(|s| ft.tag(s));

    for (name, train_input) in [("gold", &gold), ("predicted", &input)] {
        let model = train_lemmatizer(&gold, train_input, &everything, EPOCHS, 1);
        let mut lem = Lemmatizer::from_model(&model);
        let mut a = dev_gold.clone();
        a.iter_mut().for_each(|s| lem.lemmatize(s));
        let mut b = dev_tagged.clone();
        let t = std::time::Instant::now();
        b.iter_mut().for_each(|s| lem.lemmatize(s));
        let secs = t.elapsed().as_secs_f64();
        let (all_b, _) = accuracy(&dev_gold, &b, &[Column::Lemma], &all);
        let (unseen_b, n_unseen) = accuracy(&dev_gold, &b, &[Column::Lemma], &unseen);
        println!(
            "lemmatizer trained on {name} tags ({} rules, {} dictionary keys): Lemmas gold tags {:.2} (unseen {:.2}); \
             predicted {all_b:.2} (unseen {unseen_b:.2} of {n_unseen}); {:.0} words/s",
            model.rules.len(),
            model.dict.len(),
            accuracy(&dev_gold, &a, &[Column::Lemma], &all).0,
            accuracy(&dev_gold, &a, &[Column::Lemma], &unseen).0,
            dev_gold.iter().map(Sentence::len).sum::<usize>() as f64 / secs,
        );
    }
    Ok(())
}

//! Weight-table experiments without retraining: trains one en_ewt parser (dynamic oracle,
//! gold tags) and keeps its full-precision in-memory weights in a snapshot file, then writes
//! model files from the snapshot with this build's table layout.
//!
//!     cargo run --release --example snapshot -- train SNAPSHOT [EPOCHS]
//!     cargo run --release --example snapshot -- write SNAPSHOT MODEL [f32|f16|i8] [PRUNE]
//!
//! The snapshot is bincode and belongs to the build (class numbering, feature set) that wrote
//! it; it is a development aid, not a model format.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use spoolparse::base::label::{Label, LabelSet};
use spoolparse::learn::confidence::Isotonic;
use spoolparse::learn::perceptron::Weights;
use spoolparse::model::features::Morphology;
use spoolparse::model::file::{Precision, WriteOptions};
use spoolparse::model::{Model, TrainingInfo};
use spoolparse::train::{load_dev, load_training, train, TrainOptions};

/// Everything of a [`Model`] but the tagger, in serialisable form.
#[derive(Serialize, Deserialize)]
struct Snapshot {
    feature_set: String,
    labels: LabelSet,
    fallback: Label,
    classes: usize,
    rows: Vec<(u64, Vec<(u16, f32)>)>,
    info: TrainingInfo,
    morphology: bool,
    temperature: f32,
    arc_calibration: Option<Isotonic>,
}

fn write(snapshot: &Path, out: &Path, precision: Precision, prune_below: f32) -> anyhow::Result<()> {
    let bytes = std::fs::read(snapshot).with_context(|| snapshot.display().to_string())?;
    let s: Snapshot = bincode::deserialize(&bytes)?;
    let mut labels = s.labels;
    labels.rebuild_index();
    let system = spoolparse::transition::System::ArcEager;
    let morphology = Morphology::of_stored(system, s.morphology, &s.feature_set)
        .with_context(|| format!("{}: feature set {:?} is not this build's", snapshot.display(), s.feature_set))?;
    let model = Model {
        system,
        projective: None,
        feature_set: s.feature_set,
        labels,
        fallback: s.fallback,
        weights: Weights::from_rows(s.classes, s.rows.into_iter()),
        info: s.info,
        morphology,
        tagger: None,
        feats: None,
        lemmatizer: None,
        tokenizer: None,
        temperature: s.temperature,
        arc_calibration: s.arc_calibration,
    };
    let meta =
        spoolparse::model::file::write(&model, out, WriteOptions { precision, prune_below, max_table_bytes: None })?;
    println!("{}: {} weights in {} features", out.display(), meta.weights, meta.features);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ud = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ud/en_ewt");
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["train", snapshot, rest @ ..] => {
            let epochs = rest.first().map(|e| e.parse()).transpose()?.unwrap_or(15);
            let set = load_training(&[ud.join("train.conllu.zst")])?;
            let dev = load_dev(&ud.join("dev.conllu.zst"))?;
            let opts = TrainOptions { epochs, ..TrainOptions::default() };
            let m = train(&set, Some(&dev), &opts, TrainingInfo::default(), &mut |_| {});
            eprintln!("trained: best epoch {}, dev LAS {:.2}", m.info.best_epoch, m.info.dev_las);
            let mut rows: Vec<(u64, Vec<(u16, f32)>)> = m.weights.rows().map(|(f, r)| (f, r.to_vec())).collect();
            rows.sort_unstable_by_key(|r| r.0);
            let s = Snapshot {
                feature_set: m.feature_set,
                labels: m.labels,
                fallback: m.fallback,
                classes: m.weights.classes(),
                rows,
                info: m.info,
                morphology: m.morphology.reads_columns(),
                temperature: m.temperature,
                arc_calibration: m.arc_calibration,
            };
            std::fs::write(snapshot, bincode::serialize(&s)?)?;
            Ok(())
        }
        ["write", snapshot, out, rest @ ..] => {
            let precision = match rest.first().copied().unwrap_or("f32") {
                "f32" => Precision::F32,
                "f16" => Precision::F16,
                "i8" => Precision::I8,
                p => bail!("unknown precision {p}"),
            };
            let prune = rest.get(1).map(|p| p.parse()).transpose()?.unwrap_or(0.0);
            write(Path::new(snapshot), Path::new(out), precision, prune)
        }
        _ => bail!("usage: snapshot train SNAPSHOT [EPOCHS] | snapshot write SNAPSHOT MODEL [f32|f16|i8] [PRUNE]"),
    }
}

//! Model size against accuracy: trains one en_ewt model (dynamic oracle, 15 epochs, gold tags),
//! then writes it with each weight precision and several pruning thresholds, and prints file
//! size, stored weights, dev LAS (read back through the memory-mapped file) and load time.
//!
//!     cargo run --release --example model_variants [-- EPOCHS [KEEP_DIR]]
//!
//! With KEEP_DIR the model files are kept there (for benchmarks), else deleted.

use std::path::PathBuf;
use std::time::Instant;

use spoolparse::model::file::{ModelFile, Precision, WriteOptions};
use spoolparse::model::TrainingInfo;
use spoolparse::train::{evaluate_dev, load_dev, load_training, train, TrainOptions};

fn main() -> anyhow::Result<()> {
    let epochs = std::env::args().nth(1).map(|e| e.parse()).transpose()?.unwrap_or(15);
    let ud = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ud/en_ewt");
    let set = load_training(&[ud.join("train.conllu.zst")])?;
    let dev = load_dev(&ud.join("dev.conllu.zst"))?;
    let opts = TrainOptions { epochs, ..TrainOptions::default() };
    let model = train(&set, Some(&dev), &opts, TrainingInfo::default(), &mut |_| {});
    eprintln!("trained: best epoch {}, dev LAS {:.2} (in-memory weights)", model.info.best_epoch, model.info.dev_las);
    let tmp = tempfile::tempdir()?;
    let dir = std::env::args().nth(2).map(PathBuf::from).unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir)?;
    println!("| precision | prune below | file MB | features | weights | dev UAS | dev LAS | open ms | dev words/s |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for precision in [Precision::F32, Precision::F16, Precision::I8] {
        for prune in [0.0f32, 0.5, 0.75, 1.0, 1.25] {
            let path = dir.join(format!("{precision:?}-{prune}.model"));
            spoolparse::model::file::write(
                &model,
                &path,
                WriteOptions { precision, prune_below: prune, max_table_bytes: None },
            )?;
            let t = Instant::now();
            let file = ModelFile::open(&path)?;
            let open_ms = t.elapsed().as_secs_f64() * 1000.0;
            let meta = file.meta();
            evaluate_dev(file.encoding(), &dev, file.weights(), &meta.labels, meta.fallback); // page the model in
            let t = Instant::now();
            let s = evaluate_dev(file.encoding(), &dev, file.weights(), &meta.labels, meta.fallback);
            let speed = s.words as f64 / t.elapsed().as_secs_f64();
            println!(
                "| {precision:?} | {prune} | {:.2} | {} | {} | {:.2} | {:.2} | {open_ms:.2} | {speed:.0} |",
                file.file_len() as f64 / 1e6,
                meta.features,
                meta.weights,
                s.uas,
                s.las
            );
        }
    }
    Ok(())
}

//! The parallel pipeline keeps input order and reports bad input like the sequential path.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use spoolparse::model::TrainingInfo;
use spoolparse::model_file::{ModelFile, WriteOptions};
use spoolparse::pipeline::{parse_files, PipelineOptions};
use spoolparse::train::{load_training, train, TrainOptions};

fn model(dir: &std::path::Path) -> Arc<ModelFile> {
    let set = load_training(&[common::fixture("special.conllu")]).unwrap();
    let m =
        train(&set, None, &TrainOptions { epochs: 2, ..TrainOptions::default() }, TrainingInfo::default(), &mut |_| {});
    let path = dir.join("m.model");
    m.save(&path, WriteOptions::default()).unwrap();
    Arc::new(ModelFile::open(&path).unwrap())
}

fn run(model: &Arc<ModelFile>, inputs: &[PathBuf], threads: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let opts = PipelineOptions { threads, batch_words: 37, ..PipelineOptions::default() };
    parse_files(model, inputs, &mut out, opts).map_err(|e| e.to_string())?;
    Ok(out)
}

#[test]
fn threads_keep_input_order_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let mut inputs = vec![common::fixture("special.conllu")];
    if let Some(ud) = common::ud_dir() {
        inputs.push(ud.join("en_ewt/dev.conllu.zst"));
        inputs.push(ud.join("hu_szeged/dev.conllu.zst"));
    }
    inputs.push(common::fixture("special.conllu"));
    let one = run(&model, &inputs, 1).unwrap();
    assert!(one.len() > 1000);
    for threads in [2, 3] {
        assert!(run(&model, &inputs, threads).unwrap() == one, "{threads} threads changed the output");
    }
}

#[test]
fn a_bad_line_stops_every_mode_with_its_location() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let good = std::fs::read_to_string(common::fixture("special.conllu")).unwrap();
    let bad = dir.path().join("bad.conllu");
    std::fs::write(&bad, format!("{}{}1\tx\t_\n\n{}", good.repeat(20), good, good)).unwrap();
    let line = good.lines().count() * 21 + 1;
    for threads in [1, 2] {
        let err = run(&model, std::slice::from_ref(&bad), threads).unwrap_err();
        assert!(err.contains(&format!("bad.conllu:{line}: expected 10 tab-separated columns")), "{threads}: {err}");
    }
}

//! Criterion benchmarks of the parsing hot path on en_ewt dev (gold tags): feature extraction,
//! scoring one configuration, parsing a whole sentence, opening (mapping and validating) the
//! model file, and tagging (with a tagger trained here for 3 epochs).
//!
//! The model is `$SPOOLPARSE_BENCH_MODEL` if set (e.g. the 15-epoch model of
//! `scripts/en_ewt.sh`), otherwise one trained here for 2 epochs.
//!
//!     cargo bench --bench parse
//!     SPOOLPARSE_BENCH_MODEL=runs/en_ewt/en_ewt.model cargo bench --bench parse

use std::path::PathBuf;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use spoolparse::corpus::{Format, Reader, Sentence};
use spoolparse::model::features::{encode_sentence, Extractor, Morphology};
use spoolparse::model::file::{ModelFile, WriteOptions};
use spoolparse::model::tagger::{load_tagging, train_tagger, TagSet, Tagger};
use spoolparse::model::TrainingInfo;
use spoolparse::parse::parser::Parser;
use spoolparse::train::{load_training, train, TrainOptions};
use spoolparse::transition::{ArcEager, Configuration, System, Transition, TransitionSystem};

fn data() -> Option<(PathBuf, Vec<Sentence>, tempfile::TempDir)> {
    let ud = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ud/en_ewt");
    if !ud.is_dir() {
        eprintln!("SKIPPED: {} not found", ud.display());
        return None;
    }
    let dir = tempfile::tempdir().ok()?;
    let model = match std::env::var_os("SPOOLPARSE_BENCH_MODEL") {
        Some(p) => PathBuf::from(p),
        None => {
            let set = load_training(&[ud.join("train.conllu.zst")]).ok()?;
            let m = train(
                &set,
                None,
                &TrainOptions { epochs: 2, ..TrainOptions::default() },
                TrainingInfo::default(),
                &mut |_| {},
            );
            let path = dir.path().join("bench.model");
            spoolparse::model::file::write(&m, &path, WriteOptions::default()).ok()?;
            path
        }
    };
    let dev = ud.join("dev.conllu.zst");
    let sentences = Reader::open(&dev, Format::Conllu).ok()?.collect::<Result<Vec<_>, _>>().ok()?;
    Some((model, sentences, dir))
}

fn benches(c: &mut Criterion) {
    let Some((model_path, mut sentences, _dir)) = data() else { return };
    let model = ModelFile::open(&model_path).expect("model opens");
    let words: usize = sentences.iter().map(Sentence::len).sum();

    c.bench_function("open model (mmap + validate)", |b| {
        b.iter(|| ModelFile::open(black_box(&model_path)).map(|m| m.file_len()))
    });

    // Configurations met while parsing the first 200 sentences, to extract and score.
    let mut parser = Parser::new(&model);
    let mut attrs = Vec::new();
    let mut configs = Vec::new();
    for s in sentences.iter_mut().take(200) {
        parser.parse(s);
        encode_sentence(s, Morphology::Columns, &mut attrs);
        let mut c = Configuration::new(s.len());
        let mut steps = 0;
        while !ArcEager.is_terminal(&c) {
            configs.push((c.clone(), attrs.clone()));
            // Any legal path will do for sampling configurations.
            let legal = ArcEager.legal(&c);
            ArcEager.apply(&mut c, if legal.reduce { Transition::Reduce } else { Transition::Shift });
            steps += 1;
            if steps > 3 * s.len() {
                break;
            }
        }
    }
    let mut group = c.benchmark_group("hot path");
    group.throughput(Throughput::Elements(configs.len() as u64));
    let mut x = Extractor::new(System::ArcEager);
    group.bench_function("extract features (per configuration)", |b| {
        b.iter(|| configs.iter().map(|(c, a)| x.extract(c, a).len()).sum::<usize>())
    });
    let feats: Vec<Vec<u64>> = configs.iter().map(|(c, a)| x.extract(c, a).to_vec()).collect();
    let view = model.weights();
    let mut scores = vec![0.0f32; view.layout().classes as usize];
    group.bench_function("score (per configuration)", |b| {
        b.iter(|| {
            for f in &feats {
                view.score(f, &mut scores);
            }
            scores[0]
        })
    });
    group.finish();

    let mut group = c.benchmark_group("whole sentences");
    group.throughput(Throughput::Elements(words as u64));
    group.sample_size(10);
    group.bench_function("parse en_ewt dev (words)", |b| {
        b.iter(|| {
            for s in sentences.iter_mut() {
                parser.parse(s);
            }
        })
    });
    let ud = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ud/en_ewt");
    let mut tags = TagSet::default();
    if let Ok(train) = load_tagging(&[ud.join("train.conllu.zst")], &mut tags) {
        let model = train_tagger(&train, &tags, 3, 1);
        let mut tagger = Tagger::from_model(&model);
        group.bench_function("tag en_ewt dev (words)", |b| {
            b.iter(|| {
                for s in sentences.iter_mut() {
                    tagger.tag(s);
                }
            })
        });
    }
    group.finish();
}

criterion_group!(parse, benches);
criterion_main!(parse);

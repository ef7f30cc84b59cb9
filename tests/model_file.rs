//! The model file: round trip through the memory map, and robustness of opening against
//! truncated, corrupted and foreign bytes (a property test in the spirit of the cargo-fuzz
//! target in `fuzz/`).

mod common;

use proptest::prelude::*;
use spoolparse::model::file::{parse_header, ModelFile, Precision, WriteOptions};
use spoolparse::model::TrainingInfo;
use spoolparse::parse::parser::Parser;
use spoolparse::train::{load_training, train, TrainOptions};

/// A model trained on the fixture for `epochs`, and its training set.
fn fixture_trained(epochs: u32) -> (spoolparse::train::TrainingSet, spoolparse::model::Model) {
    let set = load_training(&[common::fixture("special.conllu")]).unwrap();
    let model =
        train(&set, None, &TrainOptions { epochs, ..TrainOptions::default() }, TrainingInfo::default(), &mut |_| {});
    (set, model)
}

fn fixture_model_bytes(precision: Precision) -> Vec<u8> {
    let (_, model) = fixture_trained(2);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.model");
    spoolparse::model::file::write(&model, &path, WriteOptions { precision, prune_below: 0.0, max_table_bytes: None })
        .unwrap();
    std::fs::read(path).unwrap()
}

#[test]
fn a_written_model_opens_verifies_and_parses_like_the_in_memory_one() {
    let (set, model) = fixture_trained(3);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.model");
    let meta = spoolparse::model::file::write(&model, &path, WriteOptions::default()).unwrap();
    assert_eq!(meta.weights as usize, model.weights.nonzero());
    let file = ModelFile::open(&path).unwrap();
    file.verify().unwrap();
    assert_eq!(file.meta().labels, model.labels);
    let mut from_file = Parser::new(&file);
    let mut in_memory = Parser::from_parts(model.encoding(), &model.weights, &model.labels, model.fallback);
    for s in &set.sentences {
        from_file.parse_attrs(&s.attrs);
        in_memory.parse_attrs(&s.attrs);
        assert_eq!(from_file.heads(), in_memory.heads());
        assert_eq!(from_file.labels(), in_memory.labels());
    }
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_directory_is_said_to_be_one_not_a_missing_device() {
    let dir = tempfile::tempdir().unwrap();
    let e = ModelFile::open(dir.path()).err().expect("a directory is not a model").to_string();
    assert!(e.contains("is a directory, not a model file"), "{e}");
}

#[test]
fn verify_catches_a_flipped_weight_byte() {
    let mut bytes = fixture_model_bytes(Precision::F32);
    let last = bytes.len() - 3;
    bytes[last] ^= 0x40;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flipped.model");
    std::fs::write(&path, &bytes).unwrap();
    let file = ModelFile::open(&path).expect("opening does not read the weights");
    let err = file.verify().unwrap_err().to_string();
    assert!(err.contains("section ROWS checksum mismatch"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn corrupt_or_truncated_models_never_panic(cut in 0usize..4096, flips in proptest::collection::vec((0usize..4096, any::<u8>()), 0..8), i8 in any::<bool>()) {
        let mut bytes = fixture_model_bytes(if i8 { Precision::I8 } else { Precision::F32 });
        for (at, x) in flips {
            let n = bytes.len();
            bytes[at % n] ^= x;
        }
        bytes.truncate(bytes.len().saturating_sub(cut));
        let _ = parse_header(&bytes);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.model");
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(file) = ModelFile::open(&path) {
            let _ = file.verify();
            // Whatever survived the checks must still parse without panicking.
            let attrs = vec![spoolparse::model::features::ROOT_ATTRS, spoolparse::model::features::token_attrs("a", "_", "X", "_", "_")];
            Parser::new(&file).parse_attrs(&attrs);
            let mut sent = spoolparse::corpus::Reader::new(&b"1\ta\t_\tX\t_\t_\t_\t_\t_\t_\n\n"[..], std::path::Path::new("m"), spoolparse::corpus::Format::Conllu).next().unwrap().unwrap();
            Parser::new(&file).parse(&mut sent);
        }
    }

    #[test]
    fn random_bytes_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        prop_assert!(parse_header(&bytes).is_err());
    }
}

/// The bytes of a model file's parser weight table (its SLOTS and ROWS sections).
fn table_bytes(file: &ModelFile) -> u64 {
    file.sections().iter().filter(|s| [*b"SLOTS\0\0\0", *b"ROWS\0\0\0\0"].contains(&s.tag)).map(|s| s.len).sum()
}

/// `max_table_bytes` prunes by the smallest threshold that fits: the table fits, and pruning
/// at the next smaller weight magnitude would not.
#[test]
fn a_size_bound_prunes_by_the_smallest_threshold_that_fits() {
    let (_, model) = fixture_trained(2);
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, opts: WriteOptions| {
        let path = dir.path().join(name);
        spoolparse::model::file::write(&model, &path, opts).unwrap();
        ModelFile::open(&path).unwrap()
    };
    let opts = WriteOptions { precision: Precision::I8, prune_below: 0.0, max_table_bytes: None };
    let full = table_bytes(&write("full.model", opts));
    let bound = full / 2;
    let bounded = write("bounded.model", WriteOptions { max_table_bytes: Some(bound), ..opts });
    let threshold = bounded.meta().pruned_below;
    assert!(
        table_bytes(&bounded) <= bound && threshold > 0.0,
        "{} bytes, threshold {threshold}",
        table_bytes(&bounded)
    );
    let below = model
        .weights
        .rows()
        .flat_map(|(_, row)| row.iter().map(|&(_, w)| w.abs()))
        .filter(|&a| a < threshold)
        .fold(0.0f32, f32::max);
    let looser = write("looser.model", WriteOptions { prune_below: below, ..opts });
    assert!(table_bytes(&looser) > bound, "pruning at {below} would fit too: {threshold} is not the smallest");
}

/// The tokenizer is stored in the file, tokenizes from the map as in memory, and a model
/// written without one keeps that of the file it replaces (as retraining writes it).
#[test]
fn a_tokenizer_round_trips_through_the_file_and_is_kept_by_a_retrained_parser() {
    use spoolparse::model::tokenizer::{load_raw, train_tokenizer, Tokenizer, Workspace};
    let mut corpus = load_raw(&[common::fixture("special.conllu")]).unwrap();
    let mwt = corpus.mwt_dict();
    let tokenizer = train_tokenizer(&corpus.paragraphs, mwt, 3, 1);
    let (_, mut model) = fixture_trained(2);
    model.tokenizer = Some((tokenizer.clone(), None));
    let dir = tempfile::tempdir().unwrap();
    let (with, without) = (dir.path().join("with.model"), dir.path().join("without.model"));
    spoolparse::model::file::write(&model, &with, WriteOptions::default()).unwrap();
    let file = ModelFile::open(&with).unwrap();
    file.verify().unwrap();
    let (meta, weights) = file.tokenizer().expect("a tokenizer");
    assert_eq!(meta.mwt, tokenizer.mwt);
    let chars: Vec<char> = "Vámonos al mar. Sue likes coffee and Bill tea.".chars().collect();
    let (mut from_file, mut in_memory) = (Vec::new(), Vec::new());
    Workspace::default().classify(&weights, &chars, &mut from_file);
    Tokenizer::from_model(&tokenizer).classify(&chars, &mut in_memory);
    assert_eq!(from_file, in_memory);
    model.tokenizer = None;
    let extras = spoolparse::model::file::Extras { recipe: None, tagger_from: Some(&file), sections: &[] };
    spoolparse::model::file::write_with(&model, &without, WriteOptions::default(), extras).unwrap();
    let kept = ModelFile::open(&without).unwrap();
    assert_eq!(kept.tokenizer().expect("kept").0.mwt, tokenizer.mwt);
    spoolparse::model::file::write(&model, &without, WriteOptions::default()).unwrap();
    assert!(ModelFile::open(&without).unwrap().tokenizer().is_none());
}

/// The training text's commonest forms (`LANGMETA`) are kept by a parser written without them
/// (as retraining writes it), and replaced by those it is given.
#[test]
fn the_commonest_forms_are_kept_by_a_retrained_parser() {
    use spoolparse::model::file::{write_with, Extras, LANGMETA};
    use spoolparse::model::frequent_forms::FrequentForms;
    let (_, model) = fixture_trained(1);
    let dir = tempfile::tempdir().unwrap();
    let words = |text: &'static str| std::iter::repeat_n(text, 5000).flat_map(|s| s.split(' '));
    let first = FrequentForms::of(words("the cat saw a dog")).unwrap();
    let section = |f: &FrequentForms| vec![(LANGMETA, serde_json::to_vec(f).unwrap())];
    let (a, b, c) = (dir.path().join("a.model"), dir.path().join("b.model"), dir.path().join("c.model"));
    let given = section(&first);
    write_with(&model, &a, WriteOptions::default(), Extras { sections: &given, ..Extras::default() }).unwrap();
    let file = ModelFile::open(&a).unwrap();
    assert_eq!(file.frequent_forms(), Some(&first));
    let retrained = Extras { tagger_from: Some(&file), ..Extras::default() };
    write_with(&model, &b, WriteOptions::default(), retrained).unwrap();
    assert_eq!(ModelFile::open(&b).unwrap().frequent_forms(), Some(&first));
    let other = FrequentForms::of(words("le chat a vu un chien")).unwrap();
    let given = section(&other);
    write_with(&model, &c, WriteOptions::default(), Extras { sections: &given, ..retrained }).unwrap();
    assert_eq!(ModelFile::open(&c).unwrap().frequent_forms(), Some(&other));
}

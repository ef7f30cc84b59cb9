//! Pseudo-projective lifting and lowering on the shared treebanks: lifted trees are
//! projective, projective trees are left alone, and lowering the lifted trees (as a perfect
//! parser would output them) restores the gold trees, nearly always exactly.
//!
//! Run with `--nocapture` to see the statistics table (it is quoted in `src/transition/projective.rs`).

mod common;

use std::path::{Path, PathBuf};

use spoolparse::corpus::tree::{find_cycle, gold_heads, root_count};
use spoolparse::corpus::{Column, Format, Reader};
use spoolparse::transition::projective::{lift, lower, non_projective_arcs, parse_mark, Scheme};

/// Gold heads (`heads[i]` of word `i + 1`) and DEPRELs of one sentence.
struct Gold {
    heads: Vec<usize>,
    deprels: Vec<String>,
}

fn read(path: &Path) -> Vec<Gold> {
    let reader = Reader::open(path, Format::Conllu).unwrap_or_else(|e| panic!("{e}"));
    reader
        .map(|s| {
            let s = s.unwrap_or_else(|e| panic!("{e}"));
            let heads = gold_heads(&s, path).unwrap_or_else(|e| panic!("{e}"));
            let deprels = s.words().map(|w| w.get(Column::Deprel).to_string()).collect();
            Gold { heads, deprels }
        })
        .collect()
}

/// The shared treebank files that exist, as (treebank, split, path); none (and a visible
/// message) without the shared data.
fn files() -> Vec<(&'static str, &'static str, PathBuf)> {
    let Some(dir) = common::ud_dir() else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for tb in common::TREEBANKS {
        for split in ["train", "dev"] {
            let path = dir.join(tb).join(format!("{split}.conllu.zst"));
            if path.is_file() {
                files.push((tb, split, path));
            } else {
                common::skip(&format!("{} missing", path.display()));
            }
        }
    }
    files
}

/// Lowers a lifted tree by its label names, as the parser will (index 0 unused).
fn lowered(heads: &[usize], deprels: &[String], scheme: Scheme) -> (Vec<usize>, Vec<String>) {
    let mut h: Vec<u32> = std::iter::once(0).chain(heads.iter().map(|&h| h as u32)).collect();
    let mut l: Vec<&str> = std::iter::once("").chain(deprels.iter().map(String::as_str)).collect();
    lower(&mut h, &mut l, parse_mark, scheme);
    (h[1..].iter().map(|&h| h as usize).collect(), l[1..].iter().map(|l| l.to_string()).collect())
}

#[test]
fn lifting_projectivizes_and_leaves_projective_trees_alone() {
    for (tb, split, path) in files() {
        for (i, gold) in read(&path).iter().enumerate() {
            let projective = non_projective_arcs(&gold.heads) == Ok(0);
            for scheme in Scheme::ALL {
                let (mut heads, mut deprels) = (gold.heads.clone(), gold.deprels.clone());
                let lifts = lift(&mut heads, &mut deprels, scheme).unwrap_or_else(|e| panic!("{tb} {split} {i}: {e}"));
                assert_eq!(non_projective_arcs(&heads), Ok(0), "{tb} {split} sentence {i}, {scheme}");
                assert_eq!(root_count(&heads), 1, "{tb} {split} sentence {i}, {scheme}");
                if projective {
                    assert_eq!((lifts, &heads, &deprels), (0, &gold.heads, &gold.deprels), "{tb} {split} {i}");
                } else {
                    assert!(lifts > 0, "{tb} {split} sentence {i}");
                }
            }
        }
    }
}

/// Lowest share of non-projective trees that lifting then lowering must restore exactly (heads
/// and labels), per scheme, on every file; projective trees always are. Set a little below the
/// lowest share measured on the six files (table in `src/projective.rs`): Head 72.9% (hu_szeged
/// train: Hungarian names are flat:name siblings, and a det lifted off the last one is lowered
/// onto the first), Head+Path 99.2% (hu_szeged dev), Path 97.5% (hu_szeged dev). The margin
/// is about one sentence of the smallest non-projective set (31 trees): the data is fixed, so
/// a larger drop means the algorithm changed.
const MIN_RESTORED: [(Scheme, f64); 3] = [(Scheme::Head, 0.70), (Scheme::HeadPath, 0.99), (Scheme::Path, 0.97)];

#[test]
fn lifting_then_lowering_restores_gold_trees() {
    let mut rows = Vec::new();
    for (tb, split, path) in files() {
        let golds = read(&path);
        let mut non_projective = 0;
        let mut arcs = 0;
        let mut lifts = 0;
        let mut restored = [0usize; 3];
        for (i, gold) in golds.iter().enumerate() {
            let np = non_projective_arcs(&gold.heads).unwrap_or_else(|e| panic!("{tb} {split} {i}: {e}"));
            arcs += np;
            non_projective += usize::from(np > 0);
            let mut first_lifts = 0;
            for (k, scheme) in Scheme::ALL.into_iter().enumerate() {
                let (mut heads, mut deprels) = (gold.heads.clone(), gold.deprels.clone());
                let n = lift(&mut heads, &mut deprels, scheme).unwrap_or_else(|e| panic!("{tb} {split} {i}: {e}"));
                if k == 0 {
                    lifts += n;
                    first_lifts = n;
                }
                assert_eq!(n, first_lifts, "{tb} {split} sentence {i}: lifts differ between schemes");
                let (h, l) = lowered(&heads, &deprels, scheme);
                assert_eq!(find_cycle(&h), None, "{tb} {split} sentence {i}, {scheme}");
                assert_eq!(root_count(&h), 1, "{tb} {split} sentence {i}, {scheme}");
                assert_eq!(l, gold.deprels, "{tb} {split} sentence {i}, {scheme}: labels are the base labels");
                if h == gold.heads {
                    restored[k] += 1;
                } else {
                    assert!(np > 0, "{tb} {split} sentence {i}, {scheme}: a projective tree changed");
                }
            }
        }
        rows.push((tb, split, golds.len(), non_projective, arcs, lifts, restored));
    }
    if rows.is_empty() {
        return;
    }
    eprintln!(concat!(
        "| treebank | split | sentences | non-proj. sentences | non-proj. arcs | lifts ",
        "| exact: head | head+path | path |"
    ));
    eprintln!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (tb, split, sentences, np, arcs, lifts, restored) in &rows {
        let exact = |k: usize| {
            let pct = |x: usize, of: usize| 100.0 * x as f64 / of.max(1) as f64;
            // Restored non-projective trees (share of them), and share of all trees.
            let r = restored[k] - (sentences - np);
            format!("{r}/{np} ({:.1}%; all {:.2}%)", pct(r, *np), pct(restored[k], *sentences))
        };
        eprintln!(
            "| {tb} | {split} | {sentences} | {np} | {arcs} | {lifts} | {} | {} | {} |",
            exact(0),
            exact(1),
            exact(2)
        );
    }
    for (tb, split, sentences, np, _, _, restored) in &rows {
        for (k, (scheme, min)) in MIN_RESTORED.iter().enumerate() {
            let share = (restored[k] - (sentences - np)) as f64 / (*np).max(1) as f64;
            assert!(share >= *min, "{tb} {split}, {scheme}: {share:.4} of non-projective trees restored, below {min}");
        }
    }
}

/// Both systems, trained with pseudo-projective lifting on hu_szeged (the shared treebank with
/// most non-projective trees), parse dev into trees with one root word each and no encoded
/// label left, with some non-projective trees among them (lowering happened); the model file
/// records the encoding.
#[test]
fn pseudo_projective_models_of_both_systems_output_plain_non_projective_trees() {
    use spoolparse::model::file::{write, ModelFile, WriteOptions};
    use spoolparse::parse::parser::Parser;
    use spoolparse::train::{load_training_with, train, Lifting, TrainOptions};
    use spoolparse::transition::{Encoding, System};

    let Some(ud) = common::ud_dir() else { return };
    let (train_path, dev_path) = (ud.join("hu_szeged/train.conllu.zst"), ud.join("hu_szeged/dev.conllu.zst"));
    let dir = tempfile::tempdir().unwrap();
    for system in System::ALL {
        let set = load_training_with(
            std::slice::from_ref(&train_path),
            spoolparse::model::features::Morphology::Columns,
            Some(Lifting::new(Scheme::HeadPath)),
            &mut |_, _| {},
        )
        .unwrap();
        assert!(set.lifted_sentences > 100 && set.skipped_nonprojective == 0, "{system}: {}", set.lifted_sentences);
        let opts = TrainOptions { system, epochs: 2, ..TrainOptions::default() };
        let model = train(&set, None, &opts, Default::default(), &mut |_| {});
        let path = dir.path().join(format!("{system}.model"));
        write(&model, &path, WriteOptions::default()).unwrap();
        let file = ModelFile::open(&path).unwrap();
        assert_eq!(file.encoding(), Encoding { system, projective: Some(Scheme::HeadPath) });
        let mut parser = Parser::new(&file);
        let (mut sentences, mut non_projective) = (0, 0);
        for sent in Reader::open(&dev_path, Format::Conllu).unwrap() {
            let mut sent = sent.unwrap();
            parser.parse(&mut sent);
            let heads = gold_heads(&sent, &dev_path).unwrap_or_else(|e| panic!("{system}: {e}"));
            assert_eq!(root_count(&heads), 1, "{system}: sentence {sentences}");
            assert!(find_cycle(&heads).is_none(), "{system}: sentence {sentences}");
            for w in sent.words() {
                let label = w.get(Column::Deprel);
                assert!(!label.contains(['↑', '↓']), "{system}: label {label:?} left encoded");
            }
            non_projective += usize::from(non_projective_arcs(&heads).unwrap() > 0);
            sentences += 1;
        }
        eprintln!("{system}: {non_projective} of {sentences} dev parses are non-projective");
        assert!(non_projective > 0, "{system}: lowering never made a non-projective tree");
    }
}

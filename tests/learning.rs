//! Proof that the parser learns: a real training run on a shared treebank must reach a dev
//! LAS floor, and training is deterministic for a given seed.

mod common;

use spoolparse::model::TrainingInfo;
use spoolparse::train::{load_dev, load_training, train, OracleKind, TrainOptions};

#[test]
fn dynamic_oracle_training_on_en_ewt_reaches_the_las_floor() {
    let Some(ud) = common::ud_dir() else { return };
    let set = load_training(&[ud.join("en_ewt/train.conllu.zst")]).unwrap();
    let dev = load_dev(&ud.join("en_ewt/dev.conllu.zst")).unwrap();
    // Three epochs, the third one exploring: measured 86.2 LAS here; a broken learner,
    // oracle or feature set falls far below the floor.
    let opts = TrainOptions { epochs: 3, ..TrainOptions::default() };
    let model = train(&set, Some(&dev), &opts, TrainingInfo::default(), &mut |_| {});
    eprintln!("en_ewt dev after 3 epochs: UAS {:.2} LAS {:.2}", model.info.dev_uas, model.info.dev_las);
    assert!(model.info.dev_las > 84.0, "dev LAS {:.2} below the floor of 84", model.info.dev_las);
    assert!(model.info.dev_uas > model.info.dev_las);
}

#[test]
fn training_is_deterministic_for_a_seed() {
    let Some(ud) = common::ud_dir() else { return };
    let set = load_training(&[ud.join("hu_szeged/train.conllu.zst")]).unwrap();
    let dev = load_dev(&ud.join("hu_szeged/dev.conllu.zst")).unwrap();
    let run = |seed| {
        let opts =
            TrainOptions { epochs: 3, explore_k: 1, seed, oracle: OracleKind::Dynamic, ..TrainOptions::default() };
        let m = train(&set, Some(&dev), &opts, TrainingInfo::default(), &mut |_| {});
        (m.info.dev_las, m.weights.nonzero())
    };
    let a = run(7);
    assert_eq!(a, run(7));
    assert_ne!(a, run(8), "a different seed explores differently");
}

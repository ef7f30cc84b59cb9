//! Proof that the parser learns: a real training run on a shared treebank must reach a dev
//! LAS floor, and training is deterministic for a given seed.

mod common;

use spoolparse::model::TrainingInfo;
use spoolparse::train::{load_dev, load_training, train, LearnerKind, OracleKind, TrainOptions};

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

#[test]
fn logistic_learner_learns_and_is_sparser_than_the_perceptron() {
    let Some(ud) = common::ud_dir() else { return };
    let set = load_training(&[ud.join("hu_szeged/train.conllu.zst")]).unwrap();
    let dev = load_dev(&ud.join("hu_szeged/dev.conllu.zst")).unwrap();
    let run = |learner, explore_k| {
        let opts = TrainOptions { learner, explore_k, epochs: 10, ..TrainOptions::default() };
        train(&set, Some(&dev), &opts, TrainingInfo::default(), &mut |_| {})
    };
    let logistic = run(LearnerKind::Logistic, 1);
    let perceptron = run(LearnerKind::Perceptron, 2);
    eprintln!(
        "hu_szeged, 10 epochs: logistic LAS {:.2} with {} weights, perceptron LAS {:.2} with {} weights",
        logistic.info.dev_las,
        logistic.weights.nonzero(),
        perceptron.info.dev_las,
        perceptron.weights.nonzero()
    );
    // Measured here: LAS 75.03 (logistic) and 75.48 (perceptron), 311k and 632k weights. The
    // L1 threshold grows with the number of updates: 15 epochs give 4.9x fewer weights.
    assert!(logistic.info.dev_las > 70.0, "logistic LAS {:.2}", logistic.info.dev_las);
    assert!(logistic.weights.nonzero() * 3 < perceptron.weights.nonzero() * 2, "L1 must make the model sparser");
    // A temperature was fitted on dev, and it is sane.
    assert!(logistic.temperature > 0.1 && logistic.temperature < 10.0, "T = {}", logistic.temperature);
    // The post-hoc calibrator helps on dev sentences it was not fitted on (2-fold cross-fitting).
    let (raw, calibrated) = (logistic.info.dev_arc_ece_raw, logistic.info.dev_arc_ece_crossfit);
    eprintln!("hu_szeged arc ECE: raw {raw:.4}, isotonic (cross-fitted) {calibrated:.4}");
    assert!(calibrated < raw && calibrated < 0.03, "ECE raw {raw:.4}, calibrated {calibrated:.4}");
}

#[test]
fn confidence_weighted_and_cost_sensitive_learners_learn_and_are_calibrated() {
    let Some(ud) = common::ud_dir() else { return };
    let set = load_training(&[ud.join("hu_szeged/train.conllu.zst")]).unwrap();
    let dev = load_dev(&ud.join("hu_szeged/dev.conllu.zst")).unwrap();
    for learner in [LearnerKind::ConfidenceWeighted, LearnerKind::CostSensitive, LearnerKind::PassiveAggressive] {
        let opts = TrainOptions { learner, epochs: 5, ..TrainOptions::default() };
        let model = train(&set, Some(&dev), &opts, TrainingInfo::default(), &mut |_| {});
        let (raw, calibrated) = (model.info.dev_arc_ece_raw, model.info.dev_arc_ece_crossfit);
        eprintln!(
            "hu_szeged, 5 epochs, {}: LAS {:.2}, {} weights, arc ECE raw {raw:.4}, calibrated {calibrated:.4}",
            learner.name(),
            model.info.dev_las,
            model.weights.nonzero()
        );
        // Measured here: LAS 75.21 (cw), 74.54 (cost-sensitive), 74.34 (pa); calibrated arc
        // ECE 0.011, 0.009, 0.010 against raw 0.10. A learner that does not learn falls far
        // below the floor.
        assert!(model.info.dev_las > 73.0, "{}: dev LAS {:.2}", learner.name(), model.info.dev_las);
        assert!(model.temperature > 0.01 && model.temperature < 100.0, "T = {}", model.temperature);
        assert!(
            calibrated < raw && calibrated < 0.03,
            "{}: ECE raw {raw:.4}, calibrated {calibrated:.4}",
            learner.name()
        );
    }
}

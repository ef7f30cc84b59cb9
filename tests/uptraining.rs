//! `train --teacher MODEL --unlabeled TEXT`: a fast model trained on an accurate model's
//! confident parses of unlabeled text (uptraining, Petrov et al. 2010) learns that text's
//! domain, and the run refuses what it cannot do in words that name the file.

mod common;

use std::fs;
use std::path::Path;

/// Share of the words whose head `parsed` gives as `gold` does.
fn heads_right(gold: &Path, parsed: &Path) -> f64 {
    let (gold, parsed) = (common::heads(gold), common::heads(parsed));
    assert_eq!(gold.len(), parsed.len());
    gold.iter().zip(&parsed).filter(|(g, p)| g == p).count() as f64 / gold.len() as f64
}

/// The `# confidence` of each sentence of CoNLL-U `text`.
fn confidences(text: &str) -> Vec<f64> {
    text.lines().filter_map(|l| l.strip_prefix("# confidence = ")).map(|c| c.parse().unwrap()).collect()
}

#[test]
fn a_fast_model_trained_on_a_teachers_confident_parses_learns_the_teachers_domain() {
    let dir = tempfile::tempdir().unwrap();
    let (base, teacher) = common::teacher_setup(dir.path());
    // Unlabeled text of the domain, and of the base, which the teacher parses as it was taught.
    let unlabeled = dir.path().join("unlabeled.conllu");
    let text =
        common::without_trees(&common::head_final_from(150, 300)) + &common::without_trees(&common::tagged_corpus(40));
    fs::write(&unlabeled, &text).unwrap();
    let unseen = dir.path().join("unseen.conllu");
    fs::write(&unseen, common::head_final_from(300, 330)).unwrap();

    let mut right = Vec::new();
    for (name, args) in [
        ("teacher", None),
        ("fast", Some(vec![])),
        ("uptrained", Some(vec!["--teacher", teacher.to_str().unwrap(), "--unlabeled", unlabeled.to_str().unwrap()])),
    ] {
        let model = match args {
            None => teacher.clone(),
            Some(args) => {
                let model = dir.path().join(format!("{name}.model"));
                let out = common::train(&base, &model, &args);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(out.status.success(), "{stderr}");
                if name == "uptrained" {
                    assert!(
                        stderr.contains("teacher.model: kept ") && stderr.contains(" of 190 sentences"),
                        "{stderr}"
                    );
                }
                model
            }
        };
        let parsed = dir.path().join(format!("{name}.out.conllu"));
        let out = common::parse(&model, &unseen, &parsed, &[]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        right.push(heads_right(&unseen, &parsed));
    }
    let [teacher, fast, uptrained] = right[..] else { unreachable!() };
    // The fast model trained on the base alone parses the domain as the base; trained on the
    // teacher's parses too, as the teacher does.
    assert!(teacher > 0.9 && fast < 0.5 && uptrained > 0.9, "teacher {teacher}, fast {fast}, uptrained {uptrained}");
}

#[test]
fn the_parses_kept_are_those_whose_confidence_reaches_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let (base, teacher) = common::teacher_setup(dir.path());
    // Words the teacher never saw make it unsure of some sentences.
    let text =
        common::without_trees(&common::head_final_from(150, 200)) + &common::without_trees(&common::foreign_tags(3));
    let unlabeled = dir.path().join("unlabeled.conllu");
    fs::write(&unlabeled, &text).unwrap();
    let parsed = dir.path().join("parsed.conllu");
    let out = common::parse(&teacher, &unlabeled, &parsed, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut levels = confidences(&fs::read_to_string(&parsed).unwrap());
    let sentences = levels.len();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    assert!(levels.len() >= 3, "the teacher must be unsure of some sentences: {levels:?}");
    // Between two levels of the printed (rounded) confidences, so that rounding cannot move a
    // sentence across it.
    let threshold = (levels[levels.len() / 2 - 1] + levels[levels.len() / 2]) / 2.0;
    let expected = confidences(&fs::read_to_string(&parsed).unwrap()).iter().filter(|&&c| c >= threshold).count();
    assert!(0 < expected && expected < sentences);

    for (threshold, kept) in [(threshold, expected), (0.0, sentences)] {
        let model = dir.path().join("uptrained.model");
        let min = threshold.to_string();
        let args = [
            "--teacher",
            teacher.to_str().unwrap(),
            "--unlabeled",
            unlabeled.to_str().unwrap(),
            "--teacher-min-confidence",
            &min,
            "--overwrite",
        ];
        let out = common::train(&base, &model, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains(&format!("kept {kept} of {sentences} sentences")), "{threshold}: {stderr}");
    }
}

#[test]
fn a_teacher_run_refuses_what_it_cannot_do_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.conllu");
    fs::write(&base, common::tagged_corpus(60)).unwrap();
    // A teacher without a tokenizer: it parses no raw text.
    let teacher = dir.path().join("teacher.model");
    assert!(common::train(&base, &teacher, &["--epochs", "2", "--tagger"]).status.success());
    let raw = dir.path().join("notes.raw");
    fs::write(&raw, "The dog barks at cats.\n").unwrap();
    let missing = dir.path().join("missing.conllu");
    let model = dir.path().join("out.model");
    let (teacher, base_path) = (teacher.to_str().unwrap(), base.to_str().unwrap());
    let cases: [(Vec<&str>, String); 5] = [
        (vec!["--teacher", teacher], "--unlabeled".to_string()),
        (vec!["--unlabeled", base_path], "--teacher".to_string()),
        (vec!["--teacher", teacher, "--unlabeled", raw.to_str().unwrap()], format!("{}: ", raw.display())),
        (
            vec!["--teacher", teacher, "--unlabeled", missing.to_str().unwrap(), "--tagger", "--tokenizer"],
            format!("{}", missing.display()),
        ),
        (
            vec!["--teacher", teacher, "--unlabeled", base_path, "--teacher-min-confidence", "1.5"],
            "--teacher-min-confidence must be between 0 and 1".to_string(),
        ),
    ];
    for (args, says) in cases {
        let out = common::train(&base, &model, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(&says), "{args:?}: {stderr}");
        // Refused before any training (the tokenizer's is the first): the teacher parses first.
        assert!(!model.exists() && !stderr.contains("tokenizer: "), "{args:?}: {stderr}");
    }
    // Raw text needs the teacher's tokenizer, and the error says so.
    let out = common::train(&base, &model, &["--teacher", teacher, "--unlabeled", raw.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("parsing it with the teacher: the model has no tokenizer"), "{stderr}");
    // The model is never written over the teacher or the unlabeled text.
    let unlabeled = dir.path().join("unlabeled.conllu");
    fs::copy(&base, &unlabeled).unwrap();
    let unlabeled = unlabeled.to_str().unwrap();
    for over in [teacher, unlabeled] {
        let out =
            common::train(&base, Path::new(over), &["--teacher", teacher, "--unlabeled", unlabeled, "--overwrite"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains("cannot be written over the input"), "{stderr}");
    }
}

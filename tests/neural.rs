//! The accurate tier from the command line: `train --neural` with an analysis and a
//! tokenizer, then `parse` of CoNLL-U and of raw text through the model file, `inspect`, and
//! `eval`'s calibration of its transitions, `calibrate` and `bench`.

mod common;

use std::path::Path;

/// Trains a small neural model of contextual `encoder` with tagger and tokenizer on `n`
/// sentences of the word fixture, which is its dev file too; `extra` are more options.
fn train_small(dir: &Path, n: usize, encoder: &str, extra: &[&str]) -> (std::path::PathBuf, std::path::PathBuf) {
    let corpus = dir.join("train.conllu");
    std::fs::write(&corpus, common::tagged_corpus(n)).unwrap();
    let model = dir.join("n.model");
    let args = [
        "--neural",
        "--neural-size",
        "small",
        "--neural-encoder",
        encoder,
        "--tagger",
        "--jackknife",
        "0",
        "--tagger-epochs",
        "2",
        "--tokenizer",
        "--tokenizer-epochs",
        "2",
        "--dev",
        corpus.to_str().unwrap(),
    ];
    // 8 epochs unless `extra` says otherwise.
    let epochs: &[&str] = if extra.contains(&"--neural-epochs") { &[] } else { &["--neural-epochs", "8"] };
    let args: Vec<&str> = args.iter().chain(epochs).chain(extra).copied().collect();
    let out = common::train(&corpus, &model, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("neural parser: ") && stderr.contains("epoch  8: dev"), "{stderr}");
    (corpus, model)
}

#[test]
fn a_neural_model_trains_and_parses_conllu_and_raw_text_through_its_file() {
    for (encoder, shown_as) in [("conv", "convolution layers"), ("bilstm", "BiLSTM layers")] {
        trains_and_parses_through_its_file(encoder, shown_as);
    }
}

fn trains_and_parses_through_its_file(encoder: &str, shown_as: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, model) = train_small(dir.path(), 300, encoder, &[]);
    let out = common::spoolparse(&["inspect", "--verify", model.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && shown.contains("neural parser   ") && shown.contains("section NEURAL"), "{shown}");
    assert!(shown.contains(shown_as), "{encoder}: {shown}");

    // Gold tokens: the trees of its training data, with no warning that its forms or tags
    // are unknown (the inventory in its table).
    let parsed = dir.path().join("out.conllu");
    let out = common::parse(&model, &corpus, &parsed, &["--threads", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("not trained on"), "{stderr}");
    let (gold, system) = (common::heads(&corpus), common::heads(&parsed));
    let right = gold.iter().zip(&system).filter(|(g, s)| g == s).count();
    assert!(right as f64 >= 0.95 * gold.len() as f64, "{encoder}: {right} of {} heads right", gold.len());
    common::validate(&parsed, "en");

    // Raw text: tokenized, tagged and parsed by the model's own stages.
    let texts: Vec<String> =
        common::tagged_corpus(40).lines().filter_map(|l| l.strip_prefix("# text = ")).map(str::to_string).collect();
    let text: String = texts.iter().map(|t| format!("{t}\n\n")).collect();
    let raw = dir.path().join("in.txt");
    std::fs::write(&raw, text).unwrap();
    let parsed_raw = dir.path().join("raw.conllu");
    let out = common::parse(&model, &raw, &parsed_raw, &["--threads", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let words: usize = texts.iter().map(|t| t.split(' ').count()).sum();
    assert_eq!(common::heads(&parsed_raw).len(), words, "every word of the text, once");
    common::validate(&parsed_raw, "en");
}

#[test]
fn a_neural_model_that_tags_tags_raw_text_itself_through_its_file() {
    use spoolparse::corpus::Column;
    let dir = tempfile::tempdir().unwrap();
    let (corpus, model) =
        train_small(dir.path(), 300, "bilstm", &["--neural-tagger", "forms", "--neural-epochs", "30"]);
    let shown = String::from_utf8_lossy(&common::spoolparse(&["inspect", model.to_str().unwrap()]).stdout).into_owned();
    assert!(shown.contains("tags words itself"), "{shown}");
    // Its words read no tag: the inputs are the form's, its suffix's and its shape's.
    assert!(!shown.contains("Upos ") && shown.contains("Suffix "), "{shown}");
    let text: String = common::tagged_corpus(300)
        .lines()
        .filter_map(|l| l.strip_prefix("# text = "))
        .map(|t| format!("{t}\n\n"))
        .collect();
    let raw = dir.path().join("in.txt");
    std::fs::write(&raw, text).unwrap();
    let parsed = dir.path().join("raw.conllu");
    let out = common::parse(&model, &raw, &parsed, &["--threads", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (gold, system) = (common::column(&corpus, Column::Upos), common::column(&parsed, Column::Upos));
    assert_eq!(gold.len(), system.len(), "the text's words, tokenized as the corpus");
    let right = gold.iter().zip(&system).filter(|(g, s)| g == s).count();
    assert!(right as f64 >= 0.95 * gold.len() as f64, "{right} of {} UPOS right", gold.len());
    common::validate(&parsed, "en");
    // Without --tagger there is no tag set to learn.
    let out = common::train(&corpus, &dir.path().join("x.model"), &["--neural", "--neural-tagger", "forms"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--tagger"));
}

#[test]
fn eval_bins_a_neural_models_transitions_against_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, model) = train_small(dir.path(), 300, "conv", &[]);
    let parsed = dir.path().join("out.conllu");
    assert!(common::parse(&model, &corpus, &parsed, &[]).status.success());
    let out = common::spoolparse(&[
        "eval",
        corpus.to_str().unwrap(),
        parsed.to_str().unwrap(),
        "--calibration",
        "--model",
        model.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bins = doc["calibration"]["transitions"]["bins"].as_array().expect("a table of transitions").clone();
    let (mut count, mut right, mut confidence) = (0.0, 0.0, 0.0);
    for b in &bins {
        let n = b["count"].as_f64().unwrap();
        count += n;
        right += n * b["accuracy"].as_f64().unwrap();
        confidence += n * b["mean_confidence"].as_f64().unwrap();
    }
    // Every word is attached by one decision at least, and a model that gets 95% of its
    // training heads right decides with confidence, and mostly as the oracle would: scored by
    // anything but its network (the empty weights of its table), every legal transition would
    // be equally likely.
    let words = common::heads(&corpus).len() as f64;
    assert!(count >= words, "{count} decisions for {words} words");
    let (accuracy, confidence) = (right / count, confidence / count);
    assert!(accuracy >= 0.9 && confidence >= 0.8, "zero-cost {accuracy:.3}, mean confidence {confidence:.3}");
    assert!((accuracy - confidence).abs() < 0.1, "zero-cost {accuracy:.3}, mean confidence {confidence:.3}");
}

#[test]
fn calibrate_keeps_a_neural_models_network_and_bench_times_it() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, model) = train_small(dir.path(), 300, "conv", &[]);
    // Text with `# text` lines: calibrate fits on the raw text, the words and unknown forms.
    let calibrated = dir.path().join("calibrated.model");
    let out = common::spoolparse(&[
        "calibrate",
        "--model",
        model.to_str().unwrap(),
        "--dev",
        corpus.to_str().unwrap(),
        "--output",
        calibrated.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shown =
        String::from_utf8_lossy(&common::spoolparse(&["inspect", calibrated.to_str().unwrap()]).stdout).into_owned();
    assert!(shown.contains("neural parser   "), "{shown}");
    // The same network: the same trees, however the confidences moved.
    let (before, after) = (dir.path().join("before.conllu"), dir.path().join("after.conllu"));
    assert!(common::parse(&model, &corpus, &before, &[]).status.success());
    assert!(common::parse(&calibrated, &corpus, &after, &[]).status.success());
    assert_eq!(common::heads(&before), common::heads(&after));

    let out = common::spoolparse(&[
        "bench",
        "--model",
        calibrated.to_str().unwrap(),
        corpus.to_str().unwrap(),
        "--seconds",
        "0.2",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.starts_with("parsing "), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
}

//! The whole pipeline's confidence: fitted by `train --dev` (and `calibrate`) on dev parsed from
//! raw text, written by `parse` from raw text without a floor of equal values, lowered for text
//! of another language, and scored from raw text by `eval --calibration` with the
//! coverage–accuracy figures beside the best possible ranking.

mod common;

use std::path::Path;

use spoolparse::corpus::{Format, Reader, Sentence};
use spoolparse::model::file::ModelFile;

/// `parse --format raw` of `input`: the sentences written.
fn parse_raw(model: &Path, input: &Path, output: &Path) -> Vec<Sentence> {
    let out = common::parse(model, input, output, &["--format", "raw", "--threads", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Reader::open(output, Format::Conllu).unwrap().map(|s| s.unwrap()).collect()
}

fn confidences(sents: &[Sentence]) -> (Vec<f64>, Vec<f64>) {
    let arcs = sents
        .iter()
        .flat_map(|s| s.words().map(|w| w.get(spoolparse::corpus::Column::Misc).to_string()).collect::<Vec<_>>())
        .filter_map(|m| m.split('|').find_map(|e| e.strip_prefix("Conf=")?.parse().ok()))
        .collect();
    let sentences = sents
        .iter()
        .filter_map(|s| s.comments.iter().find_map(|c| c.strip_prefix("# confidence = ")?.parse().ok()))
        .collect();
    (arcs, sentences)
}

#[test]
fn raw_text_gets_the_pipeline_s_confidence_without_a_floor_and_eval_scores_it_from_raw_text() {
    let dir = tempfile::tempdir().unwrap();
    let Some((model, dev)) = common::hungarian_model(dir.path()) else { return };
    let file = ModelFile::open(&model).unwrap();
    let confidence = file.confidence().expect("train --dev fits the pipeline's confidence");
    assert_eq!(confidence.inputs, ["raw text", "gold tokens", "unknown forms"]);
    let raw = common::raw_text(&dev, &dir.path().join("dev.txt"));
    let system = dir.path().join("dev.conllu");
    let sents = parse_raw(&model, &raw, &system);
    let (arcs, _) = confidences(&sents);
    // No floor: no one value holds more than a fortieth of the unsure arcs (the parser's isotonic map gave 6% of hu_szeged dev's one value, 12% of en_ewt's).
    let unsure: Vec<String> = arcs.iter().filter(|&&c| c < 0.5).map(|c| format!("{c:.3}")).collect();
    assert!(unsure.len() > 100, "{} unsure arcs", unsure.len());
    let most = unsure.iter().map(|v| unsure.iter().filter(|u| *u == v).count()).max().unwrap_or(0);
    assert!(most * 40 < unsure.len(), "{most} of {} unsure arcs share one value", unsure.len());

    let gold = dir.path().join("gold.conllu");
    std::fs::write(&gold, zstd::decode_all(std::fs::File::open(&dev).unwrap()).unwrap()).unwrap();
    let plot = dir.path().join("c.svg");
    let args = ["eval", gold.to_str().unwrap(), system.to_str().unwrap(), "--calibration"];
    let out = common::spoolparse(&[&args[..], &["--json", "--plot", plot.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ece = doc["calibration"]["arcs"]["ece"].as_f64().unwrap();
    assert!(ece > 0.0 && ece < 0.05, "arc ECE from raw text {ece}");
    // What exact probabilities would show on hu_szeged dev's 24,000 arcs by chance.
    let floor = doc["calibration"]["arcs"]["ece_floor"].as_f64().unwrap();
    assert!(floor > 0.002 && floor < 0.01, "ECE floor {floor}");
    let kept = doc["calibration"]["words_kept"].as_array().unwrap();
    assert_eq!(kept.len(), 3);
    for k in kept {
        let (las, best) = (k["las"].as_f64().unwrap(), k["best"].as_f64().unwrap());
        assert!(
            las <= best + 1e-9 && las > doc["las"].as_f64().unwrap(),
            "{k}: the kept words beat all, the best beats them"
        );
    }
    assert!(std::fs::read_to_string(&plot).unwrap().contains("best ranking"), "the chart draws the best ranking");
}

#[test]
fn text_of_another_language_gets_low_confidence_and_almost_never_reaches_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let Some((model, dev)) = common::hungarian_model(dir.path()) else { return };
    let greek = common::ud_dir().unwrap().join("el_gdt/dev.conllu.zst");
    let own = parse_raw(&model, &common::raw_text(&dev, &dir.path().join("hu.txt")), &dir.path().join("hu.conllu"));
    let other = parse_raw(&model, &common::raw_text(&greek, &dir.path().join("el.txt")), &dir.path().join("el.conllu"));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let ((_, own), (_, other)) = (confidences(&own), confidences(&other));
    assert!(mean(&other) < mean(&own) - 0.2, "Greek {:.3}, Hungarian {:.3}", mean(&other), mean(&own));
    let accepted = other.iter().filter(|&&c| c >= 0.8).count();
    assert!(accepted * 50 < other.len(), "{accepted} of {} Greek sentences reach 0.8", other.len());
    // And with a threshold, none is kept: the file is another language's.
    let (kept, rejected) = (dir.path().join("kept.conllu"), dir.path().join("rejected.conllu"));
    let el = dir.path().join("el.txt");
    let args = ["--format", "raw", "--min-confidence", "0", "--rejected", rejected.to_str().unwrap()];
    let out = common::parse(&model, &el, &kept, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = |p: &Path| Reader::open(p, Format::Conllu).unwrap().count();
    assert_eq!((read(&kept), read(&rejected)), (0, other.len()));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("another language?") && log.contains("every sentence went to"), "{log}");
}

/// A file of the model's language passes the file's check, and a sentence of another language
/// in it goes to the rejected output on its own, whatever its confidence, saying why: at
/// `--min-confidence 0`, none with a Greek letter is accepted through the Hungarian model,
/// and few Hungarian sentences are judged Greek.
#[test]
fn a_sentence_of_another_language_in_a_file_of_the_model_s_never_reaches_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let Some((model, dev)) = common::hungarian_model(dir.path()) else { return };
    let mixed = dir.path().join("mixed.txt");
    let greek = common::hungarian_with_greek(&dev, &mixed);
    assert!(greek.len() > 50, "{} Greek sentences", greek.len());
    let (kept, rejected) = (dir.path().join("kept.conllu"), dir.path().join("rejected.conllu"));
    let args = ["--format", "raw", "--min-confidence", "0", "--rejected", rejected.to_str().unwrap()];
    let out = common::parse(&model, &mixed, &kept, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!log.contains("every sentence went to"), "the file is the model's language: {log}");
    assert!(log.contains("judged another language's, `# other_language`"), "{log}");
    let read = |p: &Path| Reader::open(p, Format::Conllu).unwrap().map(|s| s.unwrap()).collect::<Vec<_>>();
    let is_greek = |s: &Sentence| s.words().any(|w| common::has_greek(w.get(spoolparse::corpus::Column::Form)));
    let (kept, rejected) = (read(&kept), read(&rejected));
    assert!(kept.len() > 300, "{} kept", kept.len());
    assert!(!kept.iter().any(is_greek), "a Greek sentence was accepted");
    // At 0, nothing else is rejected: each says why it was.
    assert!(rejected.iter().all(|s| s.comment("other_language").is_some()));
    let greek_rejected = rejected.iter().filter(|s| is_greek(s)).count();
    assert!(greek_rejected > 20, "{greek_rejected} Greek sentences rejected");
    // Names and short fragments, mostly (1.4% of the sentences, 0.7% of the words through a
    // model of the default recipe).
    let words = |s: &[&Sentence]| s.iter().map(|s| s.len()).sum::<usize>();
    let hungarian_rejected: Vec<&Sentence> = rejected.iter().filter(|s| !is_greek(s)).collect();
    let hungarian = words(&hungarian_rejected) + words(&kept.iter().collect::<Vec<_>>());
    assert!(
        words(&hungarian_rejected) * 50 < hungarian,
        "{} of {hungarian} Hungarian words judged another language's",
        words(&hungarian_rejected)
    );
    common::validate(&dir.path().join("rejected.conllu"), "hu");
}

#[test]
fn calibrate_refits_a_model_s_confidence_into_a_new_file_and_never_over_one_silently() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("t.model");
    let args = ["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "1"];
    let fixture = common::fixture("special.conllu");
    assert!(common::train(&fixture, &model, &args).status.success());
    assert!(ModelFile::open(&model).unwrap().confidence().is_none(), "no dev, nothing fitted");
    let output = dir.path().join("c.model");
    let run = |extra: &[&str]| {
        let args = ["calibrate", "--model", model.to_str().unwrap(), "--dev", fixture.to_str().unwrap()];
        common::spoolparse(&[&args[..], &["--output", output.to_str().unwrap()], extra].concat())
    };
    let out = run(&[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let fitted = ModelFile::open(&output).unwrap();
    assert_eq!(fitted.confidence().expect("fitted").inputs, ["gold tokens", "unknown forms"]);
    assert!(ModelFile::open(&model).unwrap().confidence().is_none(), "the model calibrated is left as it was");
    fitted.verify().unwrap();
    let again = run(&[]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists; --overwrite replaces it"));
    assert!(run(&["--overwrite"]).status.success());
}

#[test]
fn the_workbench_shows_the_confidences_parse_writes_and_a_constrained_word_is_sure() {
    use spoolparse::parse::constrained::{Arc, Constraints};
    use spoolparse::workbench::error_model::ErrorModel;
    use spoolparse::workbench::task::Reparser;
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("t.model");
    let fixture = common::fixture("special.conllu");
    let args = ["--epochs", "2", "--tagger", "--jackknife", "0", "--tagger-epochs", "2", "--dev"];
    let out = common::train(&fixture, &model, &[&args[..], &[fixture.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let output = dir.path().join("parsed.conllu");
    // Tags given, as the workbench reads them.
    assert!(common::parse(&model, &fixture, &output, &["--threads", "1", "--retag=never"]).status.success());
    let parsed: Vec<Sentence> = Reader::open(&output, Format::Conllu).unwrap().map(|s| s.unwrap()).collect();
    let file = ModelFile::open(&model).unwrap();
    assert!(file.confidence().is_some());
    let mut reparser = Reparser::new(&file);
    let mut compared = 0;
    for sent in parsed.iter().filter(|s| s.len() > 1) {
        let words = reparser.view(sent, &Constraints::none(sent.len()), &[], &ErrorModel::default());
        for (view, word) in words.iter().zip(sent.words()) {
            let misc = word.get(spoolparse::corpus::Column::Misc);
            let written = misc.split('|').find_map(|e| e.strip_prefix("Conf=")).expect("parse writes Conf=");
            assert_eq!(format!("{:.3}", view.conf), written, "word {} of {:?}", view.id, sent.comments);
            compared += 1;
        }
        let arc = Arc { word: 1, head: words[0].head, label: None };
        let constrained =
            reparser.view(sent, &Constraints::new(sent.len(), [arc]).unwrap(), &[], &ErrorModel::default());
        assert_eq!(constrained[0].conf, 1.0, "an annotated arc is sure");
    }
    assert!(compared >= 10, "{compared} words compared");
}

#[test]
fn inspect_says_what_the_confidence_was_fitted_on() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("t.model");
    let fixture = common::fixture("special.conllu");
    let args = ["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "1"];
    assert!(common::train(&fixture, &model, &args).status.success());
    let line = |model: &Path| {
        let out = common::spoolparse(&["inspect", model.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.lines().find(|l| l.starts_with("confidence ")).map(str::to_string).unwrap_or_else(|| panic!("{text}"))
    };
    assert!(line(&model).contains("isotonic map"), "{}", line(&model));
    let fitted = dir.path().join("c.model");
    let args = ["calibrate", "--model", model.to_str().unwrap(), "--dev", fixture.to_str().unwrap()];
    assert!(common::spoolparse(&[&args[..], &["--output", fitted.to_str().unwrap()]].concat()).status.success());
    let said = line(&fitted);
    assert!(said.contains("fitted on") && said.contains("special.conllu (gold tokens, unknown forms)"), "{said}");
    // Too little training text to tell its language by.
    let out = common::spoolparse(&["inspect", fitted.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("language        not kept"));
}

/// `# confidence` of each sentence of a CoNLL-U file.
fn sentence_confidences(path: &Path) -> Vec<f64> {
    let sents: Vec<Sentence> = Reader::open(path, Format::Conllu).unwrap().map(|s| s.unwrap()).collect();
    confidences(&sents).1
}

#[test]
fn min_precision_takes_the_threshold_the_calibration_sentences_give_and_refuses_what_they_cannot_promise() {
    use spoolparse::learn::precision::choose;
    let dir = tempfile::tempdir().unwrap();
    let Some((model, dev)) = common::hungarian_model(dir.path()) else { return };
    let file = ModelFile::open(&model).unwrap();
    let rows = &file.confidence().unwrap().sentences;
    assert!(rows.len() > 300, "{} calibration sentences (hu_szeged dev has 444)", rows.len());
    let reachable = [0.9, 0.8, 0.7, 0.6, 0.5].into_iter().find_map(|p| choose(rows, p).ok()).expect("some precision");
    let (p, t) = (reachable.target, reachable.threshold);
    let raw = common::raw_text(&dev, &dir.path().join("dev.txt"));
    let (kept, rejected) = (dir.path().join("kept.conllu"), dir.path().join("rejected.conllu"));
    let run = |extra: &[&str]| {
        let args =
            [&["--format", "raw", "--threads", "1", "--overwrite", "--rejected", rejected.to_str().unwrap()], extra];
        common::parse(&model, &raw, &kept, &args.concat())
    };

    let p_arg = p.to_string();
    let out = run(&["--min-precision", &p_arg]);
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{log}");
    assert!(log.contains(&format!("a precision of {p} is sentences of confidence ≥ {t:.2}")), "{log}");
    // `# confidence` has three decimals.
    let (accepted, below) = (sentence_confidences(&kept), sentence_confidences(&rejected));
    assert!(!accepted.is_empty() && !below.is_empty(), "{} accepted, {} rejected", accepted.len(), below.len());
    assert!(accepted.iter().all(|&c| c >= t - 5e-4) && below.iter().all(|&c| c < t + 5e-4), "threshold {t}");

    // Given both, the higher threshold is used, and said.
    let out = run(&["--min-precision", &p_arg, "--min-confidence", "0.99"]);
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success() && log.contains("the minimum confidence given, 0.99, is higher and is used"), "{log}");
    assert!(sentence_confidences(&kept).iter().all(|&c| c >= 0.99 - 5e-4));

    // What the calibration text cannot promise is refused before anything is written.
    assert!(choose(rows, 0.999).is_err());
    let (fresh, fresh_rejected) = (dir.path().join("never.conllu"), dir.path().join("never-rejected.conllu"));
    let args = ["--format", "raw", "--min-precision", "0.999", "--rejected", fresh_rejected.to_str().unwrap()];
    let out = common::parse(&model, &raw, &fresh, &args);
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success() && log.contains("no threshold gives a precision of 0.999"), "{log}");
    assert!(!fresh.exists() && !fresh_rejected.exists());

    let out = common::spoolparse(&["inspect", model.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text.lines().find(|l| l.starts_with("min precision")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("0.95: ") && line.contains("444 sentences"), "{line}");
    // The training text's commonest forms, which tell its language, are kept; Hungarian's
    // article leads them.
    let language = text.lines().find(|l| l.starts_with("language ")).unwrap_or_else(|| panic!("{text}"));
    assert!(language.contains("100 commonest forms of the training text") && language.contains(" a "), "{language}");
}

#[test]
fn min_precision_on_a_model_without_calibration_text_says_how_to_get_it() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("t.model");
    let fixture = common::fixture("special.conllu");
    let args = ["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "1"];
    assert!(common::train(&fixture, &model, &args).status.success());
    let (kept, rejected) = (dir.path().join("kept.conllu"), dir.path().join("rejected.conllu"));
    let out =
        common::parse(&model, &fixture, &kept, &["--min-precision", "0.9", "--rejected", rejected.to_str().unwrap()]);
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success() && log.contains("spoolparse calibrate --model"), "{log}");
    assert!(!kept.exists() && !rejected.exists());
    let out =
        common::parse(&model, &fixture, &kept, &["--min-precision", "1.5", "--rejected", rejected.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be within 0..1 (got 1.5)"));
}

//! The command line end to end: train → parse → eval, byte preservation, single roots, errors.

mod common;

use common::spoolparse;

use std::path::{Path, PathBuf};
use std::process::Output;

use spoolparse::corpus::tree::{find_cycle, root_count};
use spoolparse::corpus::{Column, Format, Reader, Sentence};

fn ok(out: Output) -> Output {
    assert!(out.status.success(), "failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Asserts that a command failed saying `expected`; returns what it said.
fn fails(out: Output, expected: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success() && stderr.contains(expected), "should fail with {expected:?}: {stderr}");
    stderr
}

fn read(path: &Path) -> Vec<Sentence> {
    Reader::open(path, Format::from_path(path)).unwrap().map(|s| s.unwrap()).collect()
}

/// Writes `sents` with HEAD and DEPREL blanked to `_`, as parse input arrives.
fn blank(sents: &[Sentence], path: &Path) {
    let mut text = Vec::new();
    for s in sents {
        let mut s = s.clone();
        for w in 1..=s.len() {
            s.set_attachment(w, 0, "_");
        }
        s.write_to(&mut text).unwrap();
    }
    let text = String::from_utf8(text).unwrap().replace("\t0\t_\t", "\t_\t_\t");
    std::fs::write(path, text).unwrap();
}

/// A model trained on the fixtures: enough to exercise parsing, not to be accurate.
/// A model of the fixture that keeps every feature: trained on a few sentences, the default
/// (features seen 5 times or more) would leave out most of its forms, and a file of them would
/// be taken for another language (`parse::fit`).
fn fixture_model(dir: &Path) -> PathBuf {
    let model = dir.join("m.model");
    let train = common::fixture("special.conllu");
    ok(common::train(&train, &model, &["--epochs", "2", "--min-feature-count", "1"]));
    model
}

fn assert_single_rooted_trees(sents: &[Sentence]) {
    for s in sents {
        let heads = s.heads().unwrap().expect("every word parsed");
        assert_eq!(root_count(&heads), 1, "sentence at line {}", s.first_line);
        assert_eq!(find_cycle(&heads), None);
        for (i, w) in s.words().enumerate() {
            assert_eq!(heads[i] == 0, w.get(Column::Deprel) == "root");
        }
    }
}

#[test]
fn parse_fills_head_and_deprel_and_keeps_every_other_byte() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let gold = read(&common::fixture("special.conllu"));
    let input = dir.path().join("in.conllu");
    blank(&gold, &input);
    let output = dir.path().join("out.conllu.zst");
    let run = ok(common::parse(&model, &input, &output, &["--no-confidence"]));
    // Without `--threads`, every CPU the process may use.
    let cpus = std::thread::available_parallelism().unwrap().get();
    let summary = String::from_utf8_lossy(&run.stderr);
    assert!(summary.contains(&format!(", {cpus} thread(s)")), "{summary}");
    let parsed = read(&output);
    assert_eq!(parsed.len(), gold.len());
    assert_single_rooted_trees(&parsed);
    for (k, (p, g)) in parsed.iter().zip(&gold).enumerate() {
        // Comments are kept; a sentence without a `# sent_id` gets one, first: NAME-N.
        let mut comments = g.comments.clone();
        if !comments.iter().any(|c| spoolparse::corpus::conllu::is_sent_id(c)) {
            comments.insert(0, format!("# sent_id = in.conllu-{}", k + 1));
        }
        // DEPS, made for a tree the input no longer has, are kept and marked so.
        if g.words().any(|w| w.get(Column::Deps) != "_") {
            comments.push("# spoolparse_deps = input".to_string());
        }
        assert_eq!(p.comments, comments);
        assert_eq!(p.token_lines().len(), g.token_lines().len());
        for (pl, gl) in p.token_lines().iter().zip(g.token_lines()) {
            for col in [
                Column::Id,
                Column::Form,
                Column::Lemma,
                Column::Upos,
                Column::Xpos,
                Column::Feats,
                Column::Deps,
                Column::Misc,
            ] {
                assert_eq!(pl.get(col), gl.get(col));
            }
            if pl.kind() != spoolparse::corpus::TokenKind::Word {
                assert_eq!(pl.text(), gl.text(), "ranges and empty nodes pass through");
            }
        }
    }
}

#[test]
fn one_word_and_very_long_sentences_get_one_root() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let mut text = String::from("1\tHello\t_\tINTJ\tUH\t_\t_\t_\t_\t_\n\n");
    for i in 1..=400 {
        let (form, upos) = if i % 7 == 0 { (",", "PUNCT") } else { ("word", "NOUN") };
        text.push_str(&format!("{i}\t{form}\t_\t{upos}\t_\t_\t_\t_\t_\t_\n"));
    }
    text.push('\n');
    let input = dir.path().join("long.conllu");
    std::fs::write(&input, text).unwrap();
    let out = ok(spoolparse(&["parse", "--model", model.to_str().unwrap(), input.to_str().unwrap()]));
    let parsed: Vec<Sentence> =
        Reader::new(&out.stdout[..], Path::new("stdout"), Format::Conllu).map(|s| s.unwrap()).collect();
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[1].len(), 400);
    assert_single_rooted_trees(&parsed);
}

#[test]
fn conllx_in_conllx_out() {
    let dir = tempfile::tempdir().unwrap();
    let train = common::fixture("small.conllx");
    let model = dir.path().join("x.model");
    ok(common::train(&train, &model, &["--epochs", "3"]));
    let out = ok(spoolparse(&["parse", "--model", model.to_str().unwrap(), train.to_str().unwrap()]));
    let text = String::from_utf8(out.stdout).unwrap();
    let original = std::fs::read_to_string(&train).unwrap();
    let strip = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| {
                l.split('\t')
                    .enumerate()
                    .filter(|(i, _)| *i != 6 && *i != 7)
                    .map(|(_, c)| c)
                    .collect::<Vec<_>>()
                    .join("\t")
            })
            .collect()
    };
    assert_eq!(strip(&text), strip(&original));
    assert!(text.contains("\tROOT\t"), "root label of the CoNLL-X treebank is kept: {text}");
}

#[test]
fn eval_counts_as_the_shared_task_does() {
    let dir = tempfile::tempdir().unwrap();
    let gold_path = common::fixture("special.conllu");
    let mut sys = read(&gold_path);
    // Sentence 1: a subtype-only difference (still correct), one wrong head.
    sys[0].set_attachment(5, 1, "obl:arg");
    sys[0].set_attachment(6, 5, "punct");
    // Sentence 2: a wrong label.
    sys[1].set_attachment(3, 2, "iobj");
    let sys_path = dir.path().join("sys.conllu");
    let mut bytes = Vec::new();
    for s in &sys {
        s.write_to(&mut bytes).unwrap();
    }
    std::fs::write(&sys_path, bytes).unwrap();
    let out = ok(spoolparse(&["eval", gold_path.to_str().unwrap(), sys_path.to_str().unwrap(), "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // 13 words: 12 heads right, 11 labeled right; without the 1 punctuation word: 12, 12, 11.
    assert_eq!(v["words"], 13);
    assert!((v["uas"].as_f64().unwrap() - 1200.0 / 13.0).abs() < 1e-9);
    assert!((v["las"].as_f64().unwrap() - 1100.0 / 13.0).abs() < 1e-9);
    assert_eq!(v["words_no_punct"], 12);
    assert!((v["uas_no_punct"].as_f64().unwrap() - 100.0).abs() < 1e-9);
    assert!((v["las_no_punct"].as_f64().unwrap() - 1100.0 / 12.0).abs() < 1e-9);
    // The same words: the CoNLL 2018 figures over aligned words are these accuracies.
    let aligned = &v["aligned"];
    for metric in ["tokens", "sentences", "words"] {
        assert_eq!(aligned[metric]["f1"], 100.0, "{metric}");
    }
    assert_eq!(aligned["uas"]["f1"], v["uas"]);
    assert_eq!(aligned["las"]["f1"], v["las"]);
    assert_eq!(aligned["upos"]["f1"], v["upos"]);
}

#[test]
fn bad_input_and_foreign_models_fail_with_a_location() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let bad = dir.path().join("bad.conllu");
    std::fs::write(&bad, "1\ta\t_\tX\t_\t_\t_\t_\t_\t_\n2\tb\t_\tX\n\n").unwrap();
    let out = spoolparse(&["parse", "--model", model.to_str().unwrap(), bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.conllu:2: expected 10 tab-separated columns, found 4"), "{err}");

    let foreign = dir.path().join("foreign.model");
    std::fs::write(&foreign, b"definitely not a model").unwrap();
    let out = spoolparse(&["parse", "--model", foreign.to_str().unwrap(), bad.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a spoolparse model"));

    let truncated = dir.path().join("truncated.model");
    let bytes = std::fs::read(&model).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let out = spoolparse(&["parse", "--model", truncated.to_str().unwrap(), bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("truncated.model: section") && err.contains("truncated?"), "{err}");
    assert_eq!(err.matches("truncated?").count(), 1, "the cause is printed once: {err}");
}

/// The fixture sentences over and over, each made unique by a comment `# n = N`, while
/// `more(sentences, bytes)` says so.
fn numbered_fixtures(more: impl Fn(usize, usize) -> bool) -> Vec<u8> {
    let gold = read(&common::fixture("special.conllu"));
    let mut text = Vec::new();
    let mut n = 0;
    while more(n, text.len()) {
        let mut s = gold[n % gold.len()].clone();
        s.comments.push(format!("# n = {n}"));
        s.write_to(&mut text).unwrap();
        n += 1;
    }
    text
}

#[test]
fn confidence_is_written_and_filtering_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let input = dir.path().join("in.conllu");
    // Many sentences, so that both outputs get some.
    std::fs::write(&input, numbered_fixtures(|n, _| n < 60)).unwrap();
    let all = dir.path().join("all.conllu");
    ok(common::parse(&model, &input, &all, &[]));
    let all = read(&all);
    let confidence = |s: &Sentence| -> f64 {
        s.comments.iter().find_map(|c| c.strip_prefix("# confidence = ")?.parse().ok()).expect("confidence comment")
    };
    for s in &all {
        assert!(s.comments.iter().any(|c| c.starts_with("# tree_prob = ")));
        for w in s.words() {
            let conf: f64 =
                w.get(Column::Misc).split('|').find_map(|e| e.strip_prefix("Conf=")?.parse().ok()).expect("Conf");
            assert!((0.0..=1.0).contains(&conf));
        }
    }
    assert!(all[0].word(5).get(Column::Misc).starts_with("SpaceAfter=No|Conf="), "existing MISC kept");
    // A threshold halfway between two printed confidences near the median splits the
    // sentences into two non-empty parts. Not a printed value itself: `# confidence` is
    // rounded to 3 decimals, and a sentence at 0.8496 is rightly rejected at 0.850 although
    // it prints 0.850; halfway between adjacent printed values, rounding cannot cross it.
    let mut confs: Vec<f64> = all.iter().map(confidence).collect();
    confs.sort_by(f64::total_cmp);
    confs.dedup();
    assert!(confs.len() >= 2, "all sentences have the same confidence");
    let threshold = (confs[confs.len() / 2 - 1] + confs[confs.len() / 2]) / 2.0;
    for threads in ["1", "2"] {
        let (kept, rejected) = (dir.path().join("kept.conllu"), dir.path().join("rejected.conllu.zst"));
        ok(common::parse(
            &model,
            &input,
            &kept,
            &[
                "--min-confidence",
                &threshold.to_string(),
                "--rejected",
                rejected.to_str().unwrap(),
                "--threads",
                threads,
                "--overwrite",
            ],
        ));
        let (kept, rejected) = (read(&kept), read(&rejected));
        assert!(!kept.is_empty() && !rejected.is_empty());
        assert!(kept.iter().all(|s| confidence(s) >= threshold) && rejected.iter().all(|s| confidence(s) < threshold));
        // Every input sentence exactly once, each stream in input order.
        let number = |s: &Sentence| -> usize {
            s.comments.iter().find_map(|c| c.strip_prefix("# n = ")?.parse().ok()).expect("numbered")
        };
        let (k, r): (Vec<usize>, Vec<usize>) =
            (kept.iter().map(number).collect(), rejected.iter().map(number).collect());
        assert!(k.windows(2).all(|w| w[0] < w[1]) && r.windows(2).all(|w| w[0] < w[1]));
        let mut both: Vec<usize> = k.into_iter().chain(r).collect();
        both.sort_unstable();
        assert_eq!(both, (0..60).collect::<Vec<_>>());
    }
}

#[test]
fn calibration_report_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let gold = common::fixture("special.conllu");
    let parsed = dir.path().join("parsed.conllu");
    ok(common::parse(&model, &gold, &parsed, &[]));
    let svg = dir.path().join("cal.svg");
    let out = ok(spoolparse(&[
        "eval",
        gold.to_str().unwrap(),
        parsed.to_str().unwrap(),
        "--calibration",
        "--model",
        model.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]));
    let report = String::from_utf8(out.stdout).unwrap();
    for section in
        ["Calibration of transitions", "Calibration of arcs", "Calibration of sentences", "Coverage", "Most confident"]
    {
        assert!(report.contains(section), "{section} missing from:\n{report}");
    }
    // 13 arcs in the fixture: the arc table's counts add up to them.
    let arcs = report.split("Calibration of arcs").nth(1).unwrap().split("Calibration of sentences").next().unwrap();
    let counted: u64 = arcs.lines().filter_map(|l| l.split('|').nth(1)?.trim().parse::<u64>().ok()).sum();
    assert_eq!(counted, 13);
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Reliability") && svg.contains("Coverage"));
    // With --json, one JSON document holding the same tables (text after the JSON broke it).
    let (g, p) = (gold.to_str().unwrap(), parsed.to_str().unwrap());
    let out = ok(spoolparse(&["eval", g, p, "--json", "--calibration", "--model", model.to_str().unwrap()]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let bins = v["calibration"]["arcs"]["bins"].as_array().expect("arc bins");
    assert_eq!(bins.iter().map(|b| b["count"].as_u64().unwrap()).sum::<u64>(), 13);
    assert!(v["las"].is_number() && v["calibration"]["transitions"]["ece"].is_number(), "{v}");
    assert_eq!(v["calibration"]["coverage"].as_array().map(Vec::len), Some(8));
    // A system file without confidences has no calibration: an error, not tables of zeros
    // that read as ECE 0.
    let out = spoolparse(&["eval", g, g, "--calibration"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    fails(out, "no word has a confidence (Conf= in MISC)");
    assert!(stdout.is_empty(), "{stdout}");
    // A plot named like an input would replace it: refused, the input untouched.
    let before = std::fs::read(&parsed).unwrap();
    fails(spoolparse(&["eval", g, p, "--calibration", "--plot", p]), "the plot cannot be written over an input");
    assert_eq!(std::fs::read(&parsed).unwrap(), before);
}

#[test]
fn training_a_quantised_pruned_model_reports_the_dev_scores_of_what_it_stored() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("q.model");
    let gold = common::fixture("special.conllu");
    let out = ok(common::train(
        &gold,
        &model,
        &["--epochs", "2", "--dev", gold.to_str().unwrap(), "--quantize", "i8", "--prune", "0.5"],
    ));
    let log = String::from_utf8_lossy(&out.stderr);
    let stored = log.lines().find(|l| l.starts_with("as stored (I8, pruned below 0.5)")).expect(&log);
    let stored_las = stored.split(" LAS ").nth(1).and_then(|t| t.split_whitespace().next()).expect(stored);
    // The stored model parsed and scored by the commands a user runs gives the same LAS.
    let system = dir.path().join("sys.conllu");
    ok(common::parse(&model, &gold, &system, &[]));
    let eval = ok(common::spoolparse(&["eval", gold.to_str().unwrap(), system.to_str().unwrap()]));
    let eval = String::from_utf8_lossy(&eval.stdout);
    let table = eval.lines().find(|l| l.starts_with("LAS  ")).unwrap();
    assert_eq!(stored_las, table.rsplit('|').next().unwrap().trim(), "{log}\n{eval}");
}

/// `parse` stops at a malformed sentence, whatever it is and wherever it stands, with one or two
/// threads, and names its line: the good sentence after it is not mistaken for it.
#[test]
fn parse_names_the_line_of_any_malformed_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let good = "1\ta\t_\tX\t_\t_\t_\t_\t_\t_\n\n";
    let bad = [
        ("1\ta\t_\tX\t_\t_\tone\t_\t_\t_\n", "invalid HEAD \"one\""),
        ("1\ta\t_\tX\t_\t_\t7\t_\t_\t_\n", "HEAD 7 out of range"),
        ("1\ta\t_\tX\n", "expected 10 tab-separated columns"),
        ("# only a comment\n", "sentence without any word"),
    ];
    for (text, problem) in bad {
        for place in 0..3 {
            let input = dir.path().join("in.conllu");
            let body = good.repeat(place) + text + "\n" + &good.repeat(2 - place);
            std::fs::write(&input, &body).unwrap();
            let line = 2 * place + 1;
            for threads in ["1", "2"] {
                let out = common::parse(&model, &input, &dir.path().join("out.conllu"), &["--threads", threads]);
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(!out.status.success(), "{text:?}: parsed");
                assert!(err.contains(&format!("in.conllu:{line}: {problem}")), "{text:?} at {place}: {err}");
            }
        }
    }
}

/// With `--malformed lowconf` a malformed sentence, whatever it is and wherever it stands, with
/// one or two threads, goes to `--rejected` unparsed (the placeholder naming its line, and its
/// raw lines) and the good ones to the output: it used to stop the run.
#[test]
fn parse_passes_any_malformed_sentence_to_rejected_unparsed_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let good = "1\ta\t_\tX\t_\t_\t_\t_\t_\t_\n\n";
    let bad = [
        ("1\ta\t_\tX\t_\t_\tone\t_\t_\t_\n", "invalid HEAD \"one\""),
        ("1\ta\t_\tX\n", "expected 10 tab-separated columns"),
        ("# only a comment\n", "sentence without any word"),
    ];
    let (input, out, low) =
        (dir.path().join("in.conllu"), dir.path().join("out.conllu"), dir.path().join("low.conllu"));
    for (text, problem) in bad {
        for place in 0..3 {
            let body = good.repeat(place) + text + "\n" + &good.repeat(2 - place);
            std::fs::write(&input, &body).unwrap();
            let line = 2 * place + 1;
            for threads in ["1", "2"] {
                let args = ["--threads", threads, "--malformed", "lowconf", "--rejected", low.to_str().unwrap()];
                let run = ok(common::parse(&model, &input, &out, &[&args[..], &["--overwrite"]].concat()));
                let stderr = String::from_utf8_lossy(&run.stderr);
                assert!(stderr.contains(&format!("1 malformed sentences went to {}", low.display())), "{stderr}");
                let rejected = std::fs::read_to_string(&low).unwrap();
                // The placeholder keeps the sentence's place as its id (it has none of its own).
                let id = format!("# sent_id = in.conllu-{}\n# text = _\n", place + 1);
                let error = format!("# spoolparse_error = {}:{line}: {problem}", input.display());
                assert!(rejected.starts_with(&format!("{id}{error}")), "{text:?} at {place}: {rejected}");
                assert!(rejected.ends_with("\t0\troot\t_\tSpoolparseUnparsed=Yes\n\n"), "{rejected}");
                assert_eq!(read(&out).len(), 2, "{text:?} at {place}");
            }
        }
    }
}

#[test]
fn a_truncated_zst_input_fails_the_run_whatever_malformed_says_and_publishes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    // Many times the reader's chunk and the pipeline's blocks, cut in its last compressed
    // block: the cut is met after whole blocks were read (where it once passed for the end).
    let text = numbered_fixtures(|_, bytes| bytes < 4 << 20);
    let whole = zstd::encode_all(&text[..], 3).unwrap();
    let (input, out) = (dir.path().join("cut.conllu.zst"), dir.path().join("out.conllu"));
    std::fs::write(&input, &whole[..whole.len() - 64]).unwrap();
    for threads in ["1", "2"] {
        for malformed in ["fail", "lowconf"] {
            let args = ["--threads", threads, "--malformed", malformed];
            let stderr = fails(common::parse(&model, &input, &out, &args), "the zstd stream is truncated");
            assert!(stderr.contains("cut.conllu.zst"), "the file is named: {stderr}");
            assert!(!out.exists(), "an output of a cut file was published ({threads} threads, {malformed})");
        }
    }
}

#[test]
fn train_replaces_an_existing_model_only_when_asked_and_never_its_own_input() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.conllu");
    std::fs::copy(common::fixture("special.conllu"), &train).unwrap();
    let treebank = std::fs::read(&train).unwrap();
    let model = dir.path().join("m.model");
    std::fs::write(&model, "yesterday's model").unwrap();
    let refused = |out: Output, expected: &str| {
        let stderr = fails(out, expected);
        assert!(!stderr.contains("epoch"), "refused before training: {stderr}");
    };
    refused(common::train(&train, &model, &["--epochs", "1"]), "m.model exists; --overwrite replaces it");
    assert_eq!(std::fs::read_to_string(&model).unwrap(), "yesterday's model");
    refused(common::train(&train, &train, &["--epochs", "1", "--overwrite"]), "cannot be written over the input");
    assert_eq!(std::fs::read(&train).unwrap(), treebank);
    refused(common::train(&train, &dir.path().join("no/m.model"), &["--epochs", "1"]), "no directory");
    // No epoch at all would write a model without a weight.
    fails(common::train(&train, &model, &["--epochs", "0", "--overwrite"]), "'0' for '--epochs <EPOCHS>'");
    assert_eq!(std::fs::read_to_string(&model).unwrap(), "yesterday's model");
    let out = ok(common::train(&train, &model, &["--epochs", "1", "--overwrite"]));
    // Without --dev there is no dev LAS to report (it said "dev LAS 0.00").
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("kept epoch 1 (the last; no --dev to choose by)"), "{stderr}");
    assert!(spoolparse::model::file::ModelFile::open(&model).is_ok());
}

/// An existing output is never replaced silently: refused before parsing without
/// `--overwrite`; with it, replaced only by a complete parse, so that a run that fails on bad
/// input leaves yesterday's file whole. Stdout and devices are written as before.
#[test]
fn parse_replaces_an_existing_output_only_when_asked_and_only_by_a_complete_one() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let good = common::fixture("special.conllu");
    let bad = dir.path().join("bad.conllu");
    std::fs::write(&bad, format!("{}1\tx\n\n", std::fs::read_to_string(&good).unwrap())).unwrap();
    let output = dir.path().join("out.conllu");
    std::fs::write(&output, "yesterday\n").unwrap();
    let stderr = fails(common::parse(&model, &good, &output, &[]), "out.conllu exists; --overwrite replaces it");
    assert!(!stderr.contains("parsed"), "refused before parsing: {stderr}");
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "yesterday\n");
    // The bad sentence comes last: everything before it was parsed, none of it published.
    fails(common::parse(&model, &bad, &output, &["--overwrite"]), "bad.conllu:");
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "yesterday\n");
    ok(common::parse(&model, &good, &output, &["--overwrite"]));
    assert_eq!(read(&output).len(), read(&good).len());
    let mut left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    left.sort();
    assert_eq!(left, ["bad.conllu", "m.model", "out.conllu"], "no temporary is left");
    // Through a link to a file, the file is replaced and the link stays.
    let link = dir.path().join("link.conllu");
    std::os::unix::fs::symlink(&output, &link).unwrap();
    std::fs::write(&output, "yesterday\n").unwrap();
    ok(common::parse(&model, &good, &link, &["--overwrite"]));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(read(&output).len(), read(&good).len());
    std::fs::remove_file(&link).unwrap();
    // Devices and stdout are written in place, existing or not.
    ok(common::parse(&model, &good, Path::new("/dev/null"), &[]));
    let out = ok(common::parse(&model, &good, Path::new("-"), &[]));
    assert_eq!(out.stdout.len(), std::fs::metadata(&output).unwrap().len() as usize);
}

#[test]
fn a_missing_or_directory_input_fails_before_an_existing_output_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let output = dir.path().join("yesterday.conllu");
    std::fs::write(&output, "keep me\n").unwrap();
    let missing = dir.path().join("typo.conllu");
    for input in [&missing, &dir.path().to_path_buf()] {
        let refused = common::parse(&model, input, &output, &["--overwrite"]);
        fails(refused, &format!("{}: cannot open", input.display()));
        assert_eq!(std::fs::read_to_string(&output).unwrap(), "keep me\n");
    }
}

#[test]
fn an_output_that_is_an_input_or_the_other_output_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let input = dir.path().join("in.conllu");
    blank(&read(&common::fixture("special.conllu")), &input);
    let before = std::fs::read(&input).unwrap();
    let link = dir.path().join("link.conllu");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    // The input as its own output, directly or through a link: it would be truncated unread.
    for (output, named) in [(&input, &input), (&link, &input), (&input, &link)] {
        let expected = format!("{}: an output cannot be the same file as the input", output.display());
        fails(common::parse(&model, named, output, &["--overwrite"]), &expected);
        assert_eq!(std::fs::read(&input).unwrap(), before, "the input is untouched");
    }
    // Both outputs one file, named two ways (through `.`, `..`, a link to the directory):
    // neither is created.
    let accepted = dir.path().join("out.conllu");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("here")).unwrap();
    for rejected in [
        dir.path().join(".").join("out.conllu"),
        dir.path().join("sub").join("..").join("out.conllu"),
        dir.path().join("here").join("out.conllu"),
    ] {
        let args = ["--min-confidence", "0.5", "--rejected", rejected.to_str().unwrap()];
        fails(common::parse(&model, &input, &accepted, &args), "an output cannot be the same file as the output");
        assert!(!accepted.exists(), "{}", rejected.display());
    }
    // Both on stdout: the split would be lost in one stream.
    let args = ["--min-confidence", "0.5", "--rejected", "-"];
    fails(
        common::parse(&model, &input, Path::new("-"), &args),
        "-: an output cannot be the same file as the output: both are stdout",
    );
}

#[test]
fn a_minimum_confidence_that_is_not_a_probability_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let input = dir.path().join("in.conllu");
    blank(&read(&common::fixture("special.conllu")), &input);
    let (accepted, rejected) = (dir.path().join("a.conllu"), dir.path().join("r.conllu"));
    // NaN compared below nothing (all accepted), 85 meant 0.85 (all rejected).
    for t in ["NaN", "85", "-0.1"] {
        let threshold = format!("--min-confidence={t}");
        let args = [threshold.as_str(), "--rejected", rejected.to_str().unwrap()];
        fails(common::parse(&model, &input, &accepted, &args), "the minimum confidence must be within 0..1");
        assert!(!accepted.exists() && !rejected.exists(), "{t}");
    }
    let args = ["--min-confidence", "1", "--rejected", rejected.to_str().unwrap()];
    assert!(common::parse(&model, &input, &accepted, &args).status.success());
}

/// A model whose bytes were damaged (same size, so the header still fits) is refused before
/// parsing; `--no-verify` parses with it anyway.
#[test]
fn parse_refuses_a_model_that_fails_its_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let damaged = dir.path().join("damaged.model");
    let mut bytes = std::fs::read(&model).unwrap();
    // A byte of the parser's weights: damage that only a full check finds (metadata sections
    // are checked whenever a model is opened).
    let file = spoolparse::model::file::ModelFile::open(&model).unwrap();
    let rows = file.sections().iter().find(|s| s.name() == "ROWS").expect("a ROWS section");
    let at = (rows.offset + rows.len / 2) as usize;
    bytes[at] ^= 0x55;
    std::fs::write(&damaged, &bytes).unwrap();
    let input = common::fixture("special.conllu");
    let out = common::parse(&damaged, &input, &dir.path().join("out.conllu"), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("damaged.model") && err.contains("checksum"), "{err}");
    let out = common::parse(&damaged, &input, &dir.path().join("out.conllu"), &["--no-verify"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `spoolparse eval … | head -1` used to panic on the closed pipe ("failed printing to
/// stdout"); the command-line tools now end as other Unix filters do, killed by SIGPIPE,
/// with nothing on stderr.
#[test]
fn a_closed_stdout_ends_a_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let gold = common::fixture("special.conllu");
    let gold = gold.to_str().unwrap();
    // The reading end is closed before the child starts, so its first write always meets a
    // closed pipe (closing it after the spawn raced a child that wrote everything first).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_spoolparse"))
        .args(["eval", gold, gold])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE));
}

/// A plain file of at least 1 MiB parsed with two threads is split into two sentence-aligned
/// ranges, each parsed by its own pipeline (the second spilled to a temporary file): the
/// outputs must be the bytes one thread writes, with and without a rejected stream, and a bad
/// sentence in the second half must be reported at its line in the whole file.
#[test]
fn two_threads_on_a_large_file_write_what_one_thread_writes() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let input = dir.path().join("big.conllu");
    let text = numbered_fixtures(|_, bytes| bytes < 1_300_000);
    std::fs::write(&input, &text).unwrap();
    let run = |threads: &str, rejected: bool| -> (Vec<u8>, Vec<u8>) {
        let (out, rej) =
            (dir.path().join(format!("o{threads}{rejected}")), dir.path().join(format!("r{threads}{rejected}")));
        let mut args = vec!["--threads", threads];
        if rejected {
            args.extend(["--min-confidence", "0.9", "--rejected", rej.to_str().unwrap()]);
        }
        ok(common::parse(&model, &input, &out, &args));
        (std::fs::read(&out).unwrap(), std::fs::read(&rej).unwrap_or_default())
    };
    for rejected in [false, true] {
        let one = run("1", rejected);
        let two = run("2", rejected);
        assert!(one.0.len() > 1_000_000 || rejected, "output of {} bytes", one.0.len());
        assert!(
            !rejected || (!one.1.is_empty() && !one.0.is_empty()),
            "{} accepted, {} rejected bytes",
            one.0.len(),
            one.1.len()
        );
        assert!(one == two, "two threads wrote other bytes (rejected stream: {rejected})");
    }
    // A bad HEAD three quarters in: the error names its line in the whole file.
    let lines: Vec<&str> = std::str::from_utf8(&text).unwrap().lines().collect();
    let bad = (lines.len() * 3 / 4..lines.len()).find(|&l| lines[l].starts_with("1\t")).unwrap();
    let mut broken: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut cols: Vec<&str> = lines[bad].split('\t').collect();
    cols[6] = "x";
    broken[bad] = cols.join("\t");
    std::fs::write(&input, broken.join("\n") + "\n").unwrap();
    let out = common::parse(&model, &input, &dir.path().join("bad.conllu"), &["--threads", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(&format!("big.conllu:{}:", bad + 1)), "{stderr}");
}

/// A TOML error spans lines (an excerpt of the file with a caret under the fault): the commands
/// that read the daemon's configuration print it as lines, each with the `spoolparse:` prefix,
/// not as one line with literal `\n`s (that is the daemon's log format, one event per line).
#[test]
fn a_configuration_syntax_error_is_printed_as_lines_each_with_the_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "[paths]\nspool = \"s\"\noutput = \"o\nmodel = \"m\"\n").unwrap();
    for command in [&["retrain", "--config"][..], &["models", "list", "--config"], &["models", "rollback", "--config"]]
    {
        let mut args = command.to_vec();
        args.push(config.to_str().unwrap());
        let err = fails(spoolparse(&args), "c.toml: TOML parse error at line 3");
        assert!(!err.contains("\\n") && err.lines().count() > 2, "{command:?}: {err}");
        assert!(err.lines().all(|l| l.starts_with("spoolparse: ")), "{command:?}: {err}");
        assert!(err.starts_with("spoolparse: error: "), "{command:?}: {err}");
        assert!(err.lines().any(|l| l.trim_end().ends_with('^')), "{command:?}: no caret line: {err}");
    }
}

/// `bench` times something, for a while that ends: an empty file, an endless or NaN time and
/// no thread are refused (they spun for five seconds, forever, once, and "0 thread(s)").
#[test]
fn bench_refuses_what_it_cannot_time() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let (m, empty) = (model.to_str().unwrap(), dir.path().join("empty.conllu"));
    std::fs::write(&empty, "").unwrap();
    let fixture = common::fixture("special.conllu");
    let f = fixture.to_str().unwrap();
    fails(spoolparse(&["bench", "--model", m, empty.to_str().unwrap()]), "empty.conllu: no words to time");
    for seconds in ["inf", "NaN"] {
        fails(spoolparse(&["bench", "--model", m, f, "--seconds", seconds]), "must be a finite number of seconds");
    }
    fails(spoolparse(&["bench", "--model", m, f, "--threads", "0"]), "'0' for '--threads <THREADS>'");
    fails(spoolparse(&["parse", "--model", m, f, "--threads", "0"]), "'0' for '--threads <THREADS>'");
    let out = ok(spoolparse(&["bench", "--model", m, f, "--seconds", "0"]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 thread(s)"));
}

/// Ctrl-C stops `parse` with 128 + SIGINT and publishes nothing: the temporary output is
/// removed (killed outright, it stayed as a hidden file beside the output). Input from a pipe
/// held open, so that the signal comes while parsing is known to be under way; after it, more
/// input (seen by the sink) or none (the end of the input is reached, then the signal seen).
#[test]
fn an_interrupted_parse_leaves_no_output_and_no_temporary() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let sentence = std::fs::read(common::fixture("special.conllu")).unwrap();
    for more_input in [true, false] {
        let out_dir = dir.path().join(format!("out-{more_input}"));
        std::fs::create_dir(&out_dir).unwrap();
        let output = out_dir.join("parsed.conllu");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_spoolparse"))
            .args(["parse", "--model", model.to_str().unwrap(), "-", "--output", output.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&sentence).unwrap();
        let started = std::time::Instant::now();
        while std::fs::read_dir(&out_dir).unwrap().next().is_none() {
            assert!(started.elapsed().as_secs() < 30, "no temporary output appeared");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let kill = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
        assert!(kill.success());
        std::thread::sleep(std::time::Duration::from_millis(100));
        if more_input {
            stdin.write_all(&sentence).unwrap();
        }
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "more input {more_input}: {stderr}");
        assert!(stderr.contains("interrupted; no output was written"), "{stderr}");
        let left: Vec<_> = std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "more input {more_input}: left behind: {left:?}");
    }
}

/// `spoolparse retrain` with a configuration that has no `[retrain]` base and held-out file:
/// refused, naming the file, before anything is created (it served the configured model first,
/// making the models directory, and then failed).
#[test]
fn retrain_without_base_and_heldout_is_refused_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture_model(dir.path());
    let config = dir.path().join("c.toml");
    let root = dir.path().display();
    let text = format!("[paths]\nspool = \"{root}/spool\"\noutput = \"{root}/out\"\nmodel = \"{}\"\n", model.display());
    std::fs::write(&config, text).unwrap();
    let stderr = fails(
        spoolparse(&["retrain", "--config", config.to_str().unwrap()]),
        "c.toml: a retraining cycle needs [retrain] base (gold training files) and heldout",
    );
    assert!(!dir.path().join("spool").exists(), "{stderr}");
}

/// With a tagger, dev is parsed on the tagger's tags and scores lower than the same file parsed
/// on its gold tags: every dev figure of the training log says which tags it used (the example
/// model's log said "dev LAS 81.77" where its configuration said 87.09, both of en_ewt dev).
#[test]
fn training_log_says_which_tags_each_dev_figure_used() {
    let dir = tempfile::tempdir().unwrap();
    let gold = common::fixture("special.conllu");
    let dev = gold.to_str().unwrap();
    for (extra, tags) in [(&[][..], "gold tags"), (&["--tagger", "--tagger-epochs", "1"][..], "predicted tags")] {
        let model = dir.path().join(format!("{}.model", extra.len()));
        let mut args = vec!["--epochs", "1", "--dev", dev, "--quantize", "f32"];
        args.extend_from_slice(extra);
        let out = ok(common::train(&gold, &model, &args));
        let log = String::from_utf8_lossy(&out.stderr);
        let epoch = log.lines().find(|l| l.starts_with("epoch  1:")).expect(&log);
        assert!(epoch.contains(&format!("dev ({tags}) UAS")), "{log}");
        let kept = log.lines().find(|l| l.starts_with("kept epoch")).expect(&log);
        assert!(kept.contains(&format!(", {tags})")), "{log}");
    }
}

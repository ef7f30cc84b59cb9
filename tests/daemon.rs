//! The daemon end to end, as a user runs it: the real binary on a real spool directory.
//! Every sentence of every readable file comes out exactly once, in order; unreadable files
//! are failed with a reason; `kill -9` at any moment loses and duplicates nothing; SIGTERM
//! exits cleanly; two daemons on one spool never parse the same file twice.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use spoolparse::corpus::unparsed::raw_text;
use spoolparse::corpus::{Column, Format, Reader, Sentence};

const WORDS: [(&str, &str, &str); 10] = [
    ("the", "DET", "DT"),
    ("dog", "NOUN", "NN"),
    ("barks", "VERB", "VBZ"),
    ("at", "ADP", "IN"),
    ("cats", "NOUN", "NNS"),
    ("quickly", "ADV", "RB"),
    ("big", "ADJ", "JJ"),
    ("and", "CCONJ", "CC"),
    ("sees", "VERB", "VBZ"),
    (".", "PUNCT", "."),
];

/// A model with a tagger (for tokenized text), trained on the fixtures and on sentences of
/// [`WORDS`], the words the inputs are made of: enough to parse, and the inputs are then of
/// the model's language (a file of forms it never saw is held back whole, `parse::fit`).
fn model(dir: &Path) -> PathBuf {
    let model = dir.join("m.model");
    let train = dir.join("train.conllu");
    let mut text = fs::read_to_string(common::fixture("special.conllu")).unwrap();
    for s in 0..WORDS.len() {
        // Each word in turn first, the others chained after it.
        for i in 0..WORDS.len() {
            let (form, upos, xpos) = WORDS[(s + i) % WORDS.len()];
            let (head, deprel) = if i == 0 { (0, "root") } else { (i, "dep") };
            text.push_str(&format!("{}\t{form}\t_\t{upos}\t{xpos}\t_\t{head}\t{deprel}\t_\t_\n", i + 1));
        }
        text.push('\n');
    }
    fs::write(&train, text).unwrap();
    let out = common::train(&train, &model, &["--epochs", "2", "--tagger", "--jackknife", "0", "--tagger-epochs", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    model
}

/// A model without a tagger that keeps every feature: the fixture's tags and forms are then
/// the model's.
fn plain_model(dir: &Path) -> PathBuf {
    let model = dir.join("plain.model");
    let out = common::train(&common::fixture("special.conllu"), &model, &["--epochs", "2", "--min-feature-count", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    model
}

/// One input file: its name, its sentences' ids in order, and its bytes.
struct Input {
    name: String,
    ids: Vec<String>,
    bytes: Vec<u8>,
}

/// A file of `n` sentences in the format its name says; each sentence's first word is its
/// unique id. With `malformed`, sentence 2 has a line with three columns.
fn input(name: &str, n: usize, rng: &mut ChaCha8Rng, malformed: bool) -> Input {
    let stem = name.split('.').next().unwrap();
    let text = name.contains(".txt");
    let conllu = name.contains(".conllu");
    let mut out = String::new();
    let mut ids = Vec::new();
    for s in 0..n {
        let id = format!("{stem}s{s}");
        let len = rng.gen_range(1..12);
        let words: Vec<(&str, &str, &str)> = std::iter::once((id.as_str(), "PROPN", "NNP"))
            .chain((0..len).map(|_| WORDS[rng.gen_range(0..WORDS.len())]))
            .collect();
        if text {
            out.push_str(&words.iter().map(|w| w.0).collect::<Vec<_>>().join(" "));
            out.push('\n');
        } else {
            if conllu {
                out.push_str(&format!("# sent_id = {id}\n"));
            }
            for (i, (form, upos, xpos)) in words.iter().enumerate() {
                if malformed && s == 2 && i == 1 {
                    out.push_str(&format!("{}\t{form}\t_\n", i + 1));
                } else {
                    out.push_str(&format!("{}\t{form}\t_\t{upos}\t{xpos}\t_\t_\t_\t_\t_\n", i + 1));
                }
            }
            out.push('\n');
        }
        ids.push(id);
    }
    let bytes = if name.ends_with(".zst") { zstd::encode_all(out.as_bytes(), 3).unwrap() } else { out.into_bytes() };
    Input { name: name.to_string(), ids, bytes }
}

/// The readable inputs of a mixed spool: CoNLL-U, CoNLL-X and text, compressed and not, one
/// with a malformed sentence; `n` sentences each.
fn mixed_inputs(n: usize, seed: u64) -> Vec<Input> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut inputs = Vec::new();
    let kinds = ["conllu", "conllu", "conllu.zst", "conllx", "conllx.zst", "txt", "txt.zst"];
    for i in 0..21 {
        let name = format!("f{i:02}.{}", kinds[i % kinds.len()]);
        inputs.push(input(&name, n, &mut rng, false));
    }
    inputs.push(input("malformed.conllu", n, &mut rng, true));
    inputs
}

/// A spool and its daemon's configuration, in a temporary directory.
struct Setup {
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Setup {
    fn new(model: &Path, threads: usize) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("spoolparse.toml");
        let root = dir.path().display();
        fs::write(
            &config,
            format!(
                "[paths]\nspool = \"{root}/spool\"\noutput = \"{root}/out\"\nmodel = \"{}\"\n\
                 [parse]\nthreads = {threads}\nmin_confidence = 0.9\n\
                 [queues]\nreaders = 2\nbatch_words = 500\n\
                 [watch]\nrescan_seconds = 0.2\n\
                 [metrics]\nfile = \"{root}/metrics.prom\"\ninterval_seconds = 0.2\n",
                model.display()
            ),
        )
        .unwrap();
        for d in ["incoming", "processing", "done", "failed"] {
            fs::create_dir_all(dir.path().join("spool").join(d)).unwrap();
        }
        Setup { dir, config }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Drops files into incoming/ as producers do: written elsewhere, renamed in.
    fn drop_files(&self, inputs: &[Input]) {
        for i in inputs {
            let tmp = self.path(&format!("spool/incoming/.{}", i.name));
            fs::write(&tmp, &i.bytes).unwrap();
            fs::rename(&tmp, self.path(&format!("spool/incoming/{}", i.name))).unwrap();
        }
    }

    fn start(&self, log: &str) -> Child {
        Command::new(env!("CARGO_BIN_EXE_spoolparse"))
            .args(["daemon", "--config", self.config.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(fs::File::create(self.path(log)).unwrap())
            .spawn()
            .unwrap()
    }

    fn names(&self, rel: &str) -> BTreeSet<String> {
        fs::read_dir(self.path(rel))
            .map_or_else(|_| BTreeSet::new(), |d| d.map(|e| e.unwrap().file_name().into_string().unwrap()).collect())
    }

    /// Waits until `expected` files are in done/ or failed/ and nothing is being processed.
    fn wait_until_finished(&self, expected: usize, child: &mut Child) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let finished = self.names("spool/done").len()
                + self.names("spool/failed").iter().filter(|n| !n.ends_with(".error")).count();
            if finished == expected && self.names("spool/processing").is_empty() {
                return;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the daemon exited early ({status}): {}", self.log("daemon.log"));
            }
            assert!(Instant::now() < deadline, "not finished in time; {finished} of {expected} files");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn log(&self, name: &str) -> String {
        fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// Decompressed text of an output, if it exists.
    fn output(&self, dir: &str, name: &str) -> Option<String> {
        let base = name.strip_suffix(".zst").unwrap_or(name);
        let base = base.strip_suffix(".conllu").unwrap_or(base);
        let bytes = fs::read(self.path(&format!("out/{dir}/{base}.conllu.zst"))).ok()?;
        Some(
            String::from_utf8(zstd::decode_all(&bytes[..]).expect("a published output is a complete zstd stream"))
                .unwrap(),
        )
    }

    /// Every published output, decompressed, by path.
    fn all_outputs(&self) -> BTreeMap<String, String> {
        let mut all = BTreeMap::new();
        for dir in ["accepted", "lowconf"] {
            for name in self.names(&format!("out/{dir}")) {
                if name.starts_with('.') {
                    continue;
                }
                let bytes = fs::read(self.path(&format!("out/{dir}/{name}"))).unwrap();
                let text = zstd::decode_all(&bytes[..]).unwrap_or_else(|e| panic!("{dir}/{name} truncated: {e}"));
                all.insert(format!("{dir}/{name}"), String::from_utf8(text).unwrap());
            }
        }
        all
    }
}

/// A daemon that is killed if the test fails before stopping it: it would otherwise live on,
/// and hold the test harness's output open.
struct Daemon(Child);

impl std::ops::Deref for Daemon {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Daemon {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Sends `-SIGNAL` (`-TERM`, `-HUP`) to `child` with kill(1).
fn signal(child: &Child, signal: &str) {
    let ok = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(ok.success());
}

/// Sends SIGTERM and waits for the exit, at most `limit`.
fn terminate(child: &mut Child, limit: Duration) -> (ExitStatus, Duration) {
    stop(child, 1, Duration::ZERO, limit)
}

/// Sends SIGTERM `count` times, `apart`, and waits for the exit (a panic after `limit`).
fn stop(child: &mut Child, count: usize, apart: Duration, limit: Duration) -> (ExitStatus, Duration) {
    let started = Instant::now();
    for i in 0..count {
        if i > 0 {
            std::thread::sleep(apart);
        }
        signal(child, "-TERM");
    }
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, started.elapsed());
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("no exit within {limit:?} of the first SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Ids (first word) of the sentences of an output, in order; an unparsed (malformed)
/// sentence's from the raw lines it carries.
fn ids(output: &str) -> Vec<String> {
    output
        .split("\n\n")
        .filter_map(|block| {
            let raw = block.lines().find_map(|l| l.strip_prefix("# spoolparse_raw = 1\\t"));
            if let Some(raw) = raw {
                return Some(raw.split("\\t").next().unwrap().to_string());
            }
            block.lines().find(|l| l.starts_with("1\t")).map(|l| l.split('\t').nth(1).unwrap().to_string())
        })
        .collect()
}

/// Every sentence of `input` is in exactly one of its two outputs, each in input order.
fn assert_split_losslessly(setup: &Setup, input: &Input) {
    let accepted = ids(&setup.output("accepted", &input.name).unwrap_or_else(|| panic!("no accepted {}", input.name)));
    let lowconf = ids(&setup.output("lowconf", &input.name).unwrap_or_else(|| panic!("no lowconf {}", input.name)));
    let position: BTreeMap<&str, usize> = input.ids.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
    for (what, part) in [("accepted", &accepted), ("lowconf", &lowconf)] {
        let places: Vec<usize> =
            part.iter().map(|id| *position.get(id.as_str()).unwrap_or_else(|| panic!("{what}: stray {id}"))).collect();
        assert!(places.windows(2).all(|w| w[0] < w[1]), "{}: {what} is not in input order", input.name);
    }
    let mut all: Vec<&String> = accepted.iter().chain(&lowconf).collect();
    all.sort();
    let mut expected: Vec<&String> = input.ids.iter().collect();
    expected.sort();
    assert_eq!(all, expected, "{}: sentences lost or duplicated", input.name);
}

#[test]
fn a_mixed_spool_comes_out_whole_in_order_and_split() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 2);
    let inputs = mixed_inputs(40, 1);
    setup.drop_files(&inputs);
    fs::write(setup.path("spool/incoming/corrupt.conllu.zst"), b"\x28\xb5\x2f\xfd garbage, not a zstd frame").unwrap();
    fs::write(setup.path("spool/incoming/notes.json"), b"{}").unwrap();
    // Invalid UTF-8 and an empty FORM make their sentences malformed; the others are parsed.
    let mut latin1 = b"1\tcaf\xe9\t_\tNOUN\tNN\t_\t_\t_\t_\t_\n\n".to_vec();
    latin1.extend_from_slice(b"1\tlatin1ok\t_\tNOUN\tNN\t_\t_\t_\t_\t_\n\n1\t\t_\tNOUN\tNN\t_\t_\t_\t_\t_\n\n");
    fs::write(setup.path("spool/incoming/latin1.conllu"), latin1).unwrap();
    fs::write(setup.path("spool/incoming/.being-written.conllu"), b"1\tx").unwrap();
    let mut daemon = setup.start("daemon.log");
    setup.wait_until_finished(inputs.len() + 3, &mut daemon);
    let (status, _) = terminate(&mut daemon, Duration::from_secs(10));
    let latin1_out =
        setup.output("accepted", "latin1.conllu").unwrap() + &setup.output("lowconf", "latin1.conllu").unwrap();
    for error in ["latin1.conllu:1: invalid UTF-8: input must be UTF-8", "latin1.conllu:5: empty FORM"] {
        assert!(latin1_out.contains(&format!("# spoolparse_error = {error}")), "{latin1_out}");
    }
    assert_eq!(ids(&latin1_out).iter().filter(|id| *id == "latin1ok").count(), 1, "{latin1_out}");
    assert!(status.success(), "{status}");

    for input in &inputs {
        assert!(setup.path(&format!("spool/done/{}", input.name)).exists(), "{} not done", input.name);
        assert_split_losslessly(&setup, input);
    }
    let why = fs::read_to_string(setup.path("spool/failed/corrupt.conllu.zst.error")).unwrap();
    assert!(why.starts_with("corrupt.conllu.zst: corrupt zstd data after 0 bytes of decompressed text"), "{why}");
    let why = fs::read_to_string(setup.path("spool/failed/notes.json.error")).unwrap();
    assert!(why.contains("unknown extension"), "{why}");
    assert!(setup.path("spool/failed/corrupt.conllu.zst").exists() && setup.path("spool/failed/notes.json").exists());
    assert_eq!(setup.names("spool/incoming"), BTreeSet::from([".being-written.conllu".to_string()]));

    let lowconf = setup.output("lowconf", "malformed.conllu").unwrap();
    assert!(
        lowconf.contains("# spoolparse_error = malformed.conllu:")
            && lowconf.contains("expected 10 tab-separated columns"),
        "{lowconf}"
    );
    let outputs = setup.all_outputs();
    for (path, text) in &outputs {
        assert!(text.is_empty() || text.starts_with("# model = m-"), "{path} does not name its model copy");
    }
    assert!(setup.names("out/accepted").iter().chain(&setup.names("out/lowconf")).all(|n| !n.starts_with('.')));
    // With latin1.conllu's three.
    let sentences: usize = inputs.iter().map(|i| i.ids.len()).sum::<usize>() + 3;
    let metrics = fs::read_to_string(setup.path("metrics.prom")).unwrap();
    let accepted_count: usize =
        outputs.iter().filter(|(p, _)| p.starts_with("accepted")).map(|(_, t)| ids(t).len()).sum();
    for line in [
        format!("spoolparse_published_sentences_total{{output=\"accepted\"}} {accepted_count}"),
        format!("spoolparse_published_sentences_total{{output=\"lowconf\"}} {}", sentences - accepted_count),
        format!("spoolparse_files_total{{outcome=\"done\"}} {}", inputs.len() + 1),
        "spoolparse_files_total{outcome=\"failed\"} 2".to_string(),
        "spoolparse_published_malformed_sentences_total 3".to_string(),
    ] {
        assert!(metrics.contains(&line), "metrics lack {line:?}:\n{metrics}");
    }
    // Both outputs are used: the threshold splits the fixture model's parses.
    let accepted: usize = outputs.iter().filter(|(p, _)| p.starts_with("accepted")).map(|(_, t)| ids(t).len()).sum();
    assert!(accepted > 0 && accepted < sentences, "{accepted} of {sentences} accepted");
}

#[test]
fn kill_9_at_random_moments_loses_and_duplicates_nothing() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let inputs = mixed_inputs(1500, 2);

    // The reference: one uninterrupted run.
    let reference = Setup::new(&model, 2);
    reference.drop_files(&inputs);
    let started = Instant::now();
    let mut daemon = reference.start("daemon.log");
    reference.wait_until_finished(inputs.len(), &mut daemon);
    let run_time = started.elapsed();
    terminate(&mut daemon, Duration::from_secs(10));
    let expected = reference.all_outputs();
    assert_eq!(expected.len(), 2 * inputs.len());

    let setup = Setup::new(&model, 2);
    setup.drop_files(&inputs);
    let all_names: BTreeSet<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut trials = 0;
    while trials < 20 {
        let mut daemon = setup.start(&format!("daemon-{trials}.log"));
        std::thread::sleep(run_time.mul_f64(rng.gen_range(0.05..0.5)));
        daemon.kill().unwrap(); // SIGKILL
        daemon.wait().unwrap();
        trials += 1;
        // Every input is in exactly one place.
        let mut seen = BTreeSet::new();
        for dir in ["incoming", "processing", "done"] {
            for name in setup.names(&format!("spool/{dir}")) {
                assert!(seen.insert(name.clone()), "trial {trials}: {name} is in two places");
            }
        }
        assert_eq!(seen, all_names, "trial {trials}: inputs lost");
        // Whatever was published is complete and final, and every input in done/ has its outputs.
        let published = setup.all_outputs();
        for (path, text) in &published {
            assert!(expected.get(path) == Some(text), "trial {trials}: {path} differs from the uninterrupted run");
        }
        for name in setup.names("spool/done") {
            for dir in ["accepted", "lowconf"] {
                assert!(setup.output(dir, &name).is_some(), "trial {trials}: {name} is done without its {dir} output");
            }
        }
        if setup.names("spool/done").len() == inputs.len() {
            // Finished before the kills ran out: start over with the same files (and no outputs,
            // or they would be new deliveries of names already used, and get new names).
            for name in setup.names("spool/done") {
                fs::rename(setup.path(&format!("spool/done/{name}")), setup.path(&format!("spool/incoming/{name}")))
                    .unwrap();
            }
            for dir in ["out/accepted", "out/lowconf"] {
                fs::remove_dir_all(setup.path(dir)).unwrap();
            }
        }
    }
    let mut daemon = setup.start("daemon-final.log");
    setup.wait_until_finished(inputs.len(), &mut daemon);
    let (status, _) = terminate(&mut daemon, Duration::from_secs(10));
    assert!(status.success());
    assert!(setup.all_outputs() == expected, "final outputs differ from the uninterrupted run");
    for dir in ["out/accepted", "out/lowconf"] {
        assert!(setup.names(dir).iter().all(|n| !n.starts_with('.')), "temporary files left in {dir}");
    }
    let requeued: usize = (0..trials).map(|t| setup.log(&format!("daemon-{t}.log")).matches("re-queued").count()).sum();
    eprintln!("{trials} kills; {requeued} files re-queued from processing/ on restarts");
    assert!(requeued > 0, "no kill hit a file in flight: the trials did not test anything");
}

#[test]
fn sigterm_while_busy_exits_cleanly_and_a_restart_completes_the_work() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 1);
    let inputs = mixed_inputs(4000, 3);
    setup.drop_files(&inputs);
    let mut daemon = setup.start("daemon.log");
    let deadline = Instant::now() + Duration::from_secs(60);
    while setup.names("spool/done").len() < 2 {
        assert!(Instant::now() < deadline && daemon.try_wait().unwrap().is_none(), "{}", setup.log("daemon.log"));
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(setup.names("spool/done").len() < inputs.len(), "finished before SIGTERM: make the spool bigger");
    let (status, took) = terminate(&mut daemon, Duration::from_secs(10));
    assert!(status.success(), "{status}: {}", setup.log("daemon.log"));
    eprintln!("exited {took:?} after SIGTERM");
    let mut daemon = setup.start("daemon-2.log");
    setup.wait_until_finished(inputs.len(), &mut daemon);
    terminate(&mut daemon, Duration::from_secs(10));
    for input in &inputs {
        assert_split_losslessly(&setup, input);
    }
}

/// A stop ends within the grace period (or at once on a second signal), whatever the size of
/// the file in flight, and what it leaves is taken up whole at the next start: a large file
/// read in blocks used to be finished first (35 s for 640 MB, past systemd's stop timeout).
#[test]
fn a_stop_ends_within_the_grace_period_with_a_large_file_in_flight_and_loses_nothing() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 1);
    // About a million words: seconds of parsing on one thread, far past the grace period.
    let big = input("big.conllu", 150_000, &mut ChaCha8Rng::seed_from_u64(5), false);
    setup.drop_files(std::slice::from_ref(&big));
    let config = fs::read_to_string(&setup.config).unwrap();
    let in_flight =
        || setup.names("spool/processing").contains("big.conllu") && setup.metric("spoolparse_parsed_words_total") > 0;
    for (grace, signals) in [(60.0, 2), (0.5, 1)] {
        fs::write(&setup.config, format!("{config}[shutdown]\ngrace_seconds = {grace}\n")).unwrap();
        let _ = fs::remove_file(setup.path("metrics.prom"));
        let mut daemon = Daemon(setup.start("daemon.log"));
        setup.wait_for(in_flight, &mut daemon, "the file to be parsed");
        let (status, took) = stop(&mut daemon, signals, Duration::from_millis(300), Duration::from_secs(30));
        let log = setup.log("daemon.log");
        assert!(status.success(), "{status}: {log}");
        eprintln!("grace {grace} s, {signals} SIGTERM: exited {took:?} after the first");
        assert!(
            setup.names("spool/done").is_empty() && setup.names("spool/processing").contains("big.conllu"),
            "the file was finished, not given up (make it bigger if the machine is that fast): {log}"
        );
        assert!(setup.output("accepted", "big.conllu").is_none(), "a given-up file was published: {log}");
        let bound = if signals > 1 { 0.3 } else { grace } + 5.0;
        assert!(took.as_secs_f64() < bound, "{took:?} after SIGTERM, past {bound} s: {log}");
    }
    let mut daemon = Daemon(setup.start("daemon-2.log"));
    setup.wait_until_finished(1, &mut daemon);
    terminate(&mut daemon, Duration::from_secs(10));
    assert_split_losslessly(&setup, &big);
}

/// A `.zst` input cut short is an error of the file: it goes to `failed/` saying so, and
/// nothing of it is published; the first part used to be published as the whole file.
#[test]
fn a_truncated_zst_input_fails_and_publishes_nothing() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 2);
    let mut whole = input("cut.conllu.zst", 20_000, &mut ChaCha8Rng::seed_from_u64(6), false);
    whole.bytes.truncate(whole.bytes.len() * 3 / 5);
    setup.drop_files(&[whole]);
    let mut daemon = Daemon(setup.start("daemon.log"));
    setup.wait_until_finished(1, &mut daemon);
    terminate(&mut daemon, Duration::from_secs(10));
    let log = setup.log("daemon.log");
    assert!(setup.names("spool/failed").contains("cut.conllu.zst"), "not failed: {log}");
    let reason = fs::read_to_string(setup.path("spool/failed/cut.conllu.zst.error")).unwrap();
    assert!(reason.contains("the zstd stream is truncated"), "{reason}");
    assert!(setup.all_outputs().is_empty(), "published: {:?}", setup.all_outputs().keys().collect::<Vec<_>>());
}

#[test]
fn two_daemons_on_one_spool_never_parse_a_file_twice() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 1);
    let inputs = mixed_inputs(300, 4);
    let mut first = setup.start("a.log");
    let mut second = setup.start("b.log");
    std::thread::sleep(Duration::from_millis(300));
    setup.drop_files(&inputs);
    setup.wait_until_finished(inputs.len(), &mut first);
    for d in [&mut first, &mut second] {
        assert!(terminate(d, Duration::from_secs(10)).0.success());
    }
    let (a, b) = (setup.log("a.log"), setup.log("b.log"));
    for input in &inputs {
        let line = format!("done {}:", input.name);
        let times = a.matches(&line).count() + b.matches(&line).count();
        assert_eq!(times, 1, "{} parsed {times} times", input.name);
        assert_split_losslessly(&setup, input);
    }
    eprintln!("daemon a parsed {} files, b {}", a.matches("done ").count(), b.matches("done ").count());
}

#[test]
fn a_bad_configuration_is_refused_with_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    fs::write(&config, "[paths]\nspool = \"s\"\noutput = \"o\"\nmodel = \"m\"\n[parse]\nthreds = 2\n").unwrap();
    let out = common::spoolparse(&["daemon", "--config", config.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("c.toml") && err.contains("unknown field `threds`"), "{err}");
    // TOML errors span lines (an excerpt with a caret): still one line, with its prefix.
    assert!(err.lines().count() == 1 && err.contains(" ERROR spoolparse: error: ") && err.contains("\\n"), "{err}");
    fs::write(&config, "[paths]\nspool = \"s\"\noutput = \"o\"\nmodel = \"m\"\n[queues]\nreaders = 0\n").unwrap();
    let out = common::spoolparse(&["daemon", "--config", config.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("queues.readers: must be at least 1"), "{err}");
    let retrain = "[paths]\nspool = \"s\"\noutput = \"o\"\nmodel = \"m\"\n[retrain]\nretrain_tagger = \"often\"\n";
    fs::write(&config, retrain).unwrap();
    let out = common::spoolparse(&["daemon", "--config", config.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("line 6")
            && err.contains("retrain_tagger is \"auto\", true or false, not \"often\""),
        "{err}"
    );
    // The example configuration parses (its model may not exist yet).
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/spoolparse.toml");
    spoolparse::daemon::config::Config::load(&example).unwrap();
}

/// Reads systemd notifications from the daemon until one contains `what`.
fn expect_notification(socket: &std::os::unix::net::UnixDatagram, what: &str, seen: &mut Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        if let Ok(n) = socket.recv(&mut buf) {
            let message = String::from_utf8_lossy(&buf[..n]).into_owned();
            seen.push(message.clone());
            if message.lines().any(|l| l == what) {
                return;
            }
        }
    }
    panic!("no {what} from the daemon; got {seen:?}");
}

#[test]
fn systemd_is_told_ready_watchdog_reloading_stopping_and_sighup_swaps_the_model() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 1);
    let socket_path = setup.path("notify.sock");
    let socket = std::os::unix::net::UnixDatagram::bind(&socket_path).unwrap();
    socket.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    // systemd names the watched process: `exec` keeps the shell's pid.
    let mut daemon = Daemon(
        Command::new("sh")
            .args(["-c", "WATCHDOG_PID=$$ exec \"$0\" daemon --config \"$1\""])
            .args([env!("CARGO_BIN_EXE_spoolparse"), setup.config.to_str().unwrap()])
            .env("NOTIFY_SOCKET", &socket_path)
            .env("WATCHDOG_USEC", "400000")
            .stderr(fs::File::create(setup.path("daemon.log")).unwrap())
            .spawn()
            .unwrap(),
    );
    let mut seen = Vec::new();
    expect_notification(&socket, "READY=1", &mut seen);
    expect_notification(&socket, "WATCHDOG=1", &mut seen);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let first = input("first.conllu", 5, &mut rng, false);
    setup.drop_files(std::slice::from_ref(&first));
    setup.wait_until_finished(1, &mut daemon);
    let label = |name: &str| {
        let text = setup.output("accepted", name).unwrap() + &setup.output("lowconf", name).unwrap();
        text.lines().next().unwrap().to_string()
    };
    let before = label("first.conllu");

    // A different model replaces the file atomically, then SIGHUP.
    let other = work.path().join("other.model");
    let out = common::train(
        &common::fixture("special.conllu"),
        &other,
        &["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "1"],
    );
    assert!(out.status.success());
    fs::rename(&other, &model).unwrap();
    let before_sighup = monotonic_usec();
    signal(&daemon, "-HUP");
    expect_notification(&socket, "RELOADING=1", &mut seen);
    // RELOADING=1 carries the daemon's CLOCK_MONOTONIC (µs, one clock for the whole machine).
    let received_by = monotonic_usec();
    let reloading = seen.last().unwrap();
    let usec: i128 = reloading
        .lines()
        .find_map(|l| l.strip_prefix("MONOTONIC_USEC="))
        .unwrap_or_else(|| panic!("no MONOTONIC_USEC with RELOADING=1: {reloading:?}"))
        .parse()
        .unwrap();
    assert!(
        before_sighup <= usec && usec <= received_by,
        "MONOTONIC_USEC={usec} not in [{before_sighup}, {received_by}]"
    );
    expect_notification(&socket, "READY=1", &mut seen);
    let second = input("second.conllu", 5, &mut rng, false);
    setup.drop_files(std::slice::from_ref(&second));
    setup.wait_until_finished(2, &mut daemon);
    let after = label("second.conllu");
    assert!(before.starts_with("# model = m-") && after.starts_with("# model = m-"));
    assert_ne!(before, after, "the output does not record the new model");
    assert_eq!(label("first.conllu"), before, "an earlier output changed");

    signal(&daemon, "-TERM");
    expect_notification(&socket, "STOPPING=1", &mut seen);
    assert!(daemon.wait().unwrap().success());
    assert!(seen.iter().any(|m| m.lines().any(|l| l.starts_with("STATUS="))), "{seen:?}");
}

impl Setup {
    /// Replaces `from` by `to` in the configuration file.
    fn edit_config(&self, from: &str, to: &str) {
        let text = fs::read_to_string(&self.config).unwrap();
        assert!(text.contains(from), "{from:?} not in the configuration");
        fs::write(&self.config, text.replace(from, to)).unwrap();
    }

    /// The value of a metric line (`name{labels}` exactly), once the metrics file has it.
    fn metric(&self, name: &str) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let text = fs::read_to_string(self.path("metrics.prom")).unwrap_or_default();
            if let Some(v) = text.lines().find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' '))) {
                return v.parse().unwrap();
            }
            assert!(Instant::now() < deadline, "no {name} in the metrics:\n{text}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until `path` exists (the daemon's log line, a file) or the daemon exits.
    fn wait_for(&self, what: impl Fn() -> bool, child: &mut Child, describe: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !what() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the daemon exited ({status}) waiting for {describe}: {}", self.log("daemon.log"));
            }
            assert!(Instant::now() < deadline, "timed out waiting for {describe}: {}", self.log("daemon.log"));
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// An idle daemon sleeps: with inotify it scans `incoming/` once at start and then only when
/// woken by an arrival (the rescan interval is an hour here), and without inotify once per
/// rescan interval; a file dropped in is still picked up either way. Counted, not timed: the
/// scan counter of the metrics. It used to scan thousands of times a second.
#[test]
fn an_idle_daemon_sleeps_and_still_notices_new_files() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for (inotify, rescan, most_scans) in [("true", "3600", 1), ("false", "0.5", 8)] {
        let setup = Setup::new(&model, 1);
        setup.edit_config(
            "[watch]\nrescan_seconds = 0.2\n",
            &format!("[watch]\ninotify = {inotify}\nrescan_seconds = {rescan}\n"),
        );
        // A FIFO left in incoming/ is named in the log once, however often it is scanned.
        let fifo = setup.path("spool/incoming/pipe.conllu");
        let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(status.success());
        let mut daemon = setup.start("daemon.log");
        let before = setup.metric("spoolparse_scans_total");
        std::thread::sleep(Duration::from_secs(3));
        let idle = setup.metric("spoolparse_scans_total") - before;
        assert!(idle <= most_scans, "inotify = {inotify}: {idle} scans of an empty spool in 3 s");
        let log = setup.log("daemon.log");
        let named = log.lines().filter(|l| l.contains("incoming/pipe.conllu is a FIFO, not a regular file")).count();
        assert_eq!(named, 1, "inotify = {inotify}:\n{log}");
        let file = input("late.conllu", 3, &mut rng, false);
        setup.drop_files(std::slice::from_ref(&file));
        setup.wait_until_finished(1, &mut daemon);
        assert_split_losslessly(&setup, &file);
        terminate(&mut daemon, Duration::from_secs(10));
    }
}

/// An idle daemon leaves the serving model and `retrain.heldout` alone: with retraining off and
/// nothing in `annotated/`, its annotation thread only looks at that directory, so a held-out
/// file that does not open is no error at all (it used to map the model and log an error every
/// 5 s); once a file waits there, the problem is said, once however long it lasts.
#[test]
fn an_idle_daemon_reads_nothing_for_annotations_and_says_a_lasting_problem_once() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 1);
    let annotated = setup.path("spool/annotated");
    let missing = setup.path("nowhere/heldout.conllu");
    let text = fs::read_to_string(&setup.config).unwrap();
    fs::write(&setup.config, format!("{text}[retrain]\nenabled = false\nheldout = \"{}\"\n", missing.display()))
        .unwrap();
    let mut daemon = setup.start("daemon.log");
    // Two looks at annotated/ (every 5 s) with nothing there.
    std::thread::sleep(Duration::from_secs(11));
    let said = |log: &str| log.lines().filter(|l| l.contains("heldout.conllu")).count();
    assert_eq!(said(&setup.log("daemon.log")), 0, "{}", setup.log("daemon.log"));
    fs::create_dir_all(&annotated).unwrap();
    fs::write(annotated.join("a.conllu"), "1\tYes\t_\tINTJ\t_\t_\t0\troot\t_\t_\n\n").unwrap();
    std::thread::sleep(Duration::from_secs(11));
    let log = setup.log("daemon.log");
    assert_eq!(said(&log), 1, "{log}");
    assert!(annotated.join("a.conllu").exists(), "the annotation waits, untouched");
    terminate(&mut daemon, Duration::from_secs(10));
}

/// `cp new.model current.model` rewrites the mapped file in place: the daemon maps only its
/// own copy in models/, so parsing goes on, and a reload of the garbage is refused with a
/// clear message while the old model keeps serving. It used to die of SIGBUS.
#[test]
fn a_model_overwritten_in_place_neither_kills_nor_changes_the_daemon() {
    let work = tempfile::tempdir().unwrap();
    let trained = model(work.path());
    let configured = work.path().join("configured.model");
    fs::copy(&trained, &configured).unwrap();
    let setup = Setup::new(&configured, 1);
    setup.edit_config("batch_words = 500", "batch_words = 50");
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let big = input("big.conllu", 20_000, &mut rng, false);
    setup.drop_files(std::slice::from_ref(&big));
    let mut daemon = setup.start("daemon.log");
    setup.wait_for(|| !setup.names("spool/processing").is_empty(), &mut daemon, "the big file to be claimed");
    // In place, as cp does: same inode, truncated, then garbage.
    let mut f = fs::OpenOptions::new().write(true).truncate(true).open(&configured).unwrap();
    std::io::Write::write_all(&mut f, b"garbage, not a model").unwrap();
    drop(f);
    setup.wait_until_finished(1, &mut daemon);
    assert_split_losslessly(&setup, &big);
    signal(&daemon, "-HUP");
    setup.wait_for(|| setup.log("daemon.log").contains("reload failed"), &mut daemon, "the failed reload");
    let log = setup.log("daemon.log");
    assert!(log.contains("configured.model: not a usable model"), "{log}");
    setup.wait_for(|| setup.metric("spoolparse_reload_failures_total") == 1, &mut daemon, "the reload failure metric");
    let after = input("after.conllu", 5, &mut rng, false);
    setup.drop_files(std::slice::from_ref(&after));
    setup.wait_until_finished(2, &mut daemon);
    assert_split_losslessly(&setup, &after);
    let first_line = |name: &str| {
        let both = setup.output("accepted", name).unwrap() + &setup.output("lowconf", name).unwrap();
        both.lines().next().unwrap().to_string()
    };
    assert_eq!(first_line("after.conllu"), first_line("big.conllu"), "the model changed");
    assert!(first_line("big.conllu").starts_with("# model = configured-"), "{}", first_line("big.conllu"));
    let (status, _) = terminate(&mut daemon, Duration::from_secs(10));
    assert!(status.success());
}

/// After a failed reload the serve loop starts again, and the first files it claims are parsed
/// with the model `models/current` names (here one rolled back to), not with the model of the
/// last successful load. Rescans are off (inotify off, an hour apart), so that the files
/// dropped before the SIGHUP are claimed by the restarted loop's first scan, before its first
/// tick: they used to be parsed with the model the operator had rolled back from.
#[test]
fn after_a_failed_reload_new_files_are_parsed_with_the_model_current_names() {
    let work = tempfile::tempdir().unwrap();
    let first = model(work.path());
    let configured = work.path().join("configured.model");
    fs::copy(&first, &configured).unwrap();
    let setup = Setup::new(&configured, 1);
    setup.edit_config("[watch]\nrescan_seconds = 0.2\n", "[watch]\ninotify = false\nrescan_seconds = 3600\n");
    let mut daemon = setup.start("daemon.log");
    setup.wait_for(|| setup.log("daemon.log").contains("watching"), &mut daemon, "the daemon to start");
    let registry = spoolparse::model::registry::Registry::new(setup.path("spool/models"));
    let rolled_back_to = registry.current_name().unwrap().expect("a serving model");

    // A second model is configured and loaded ...
    let second = work.path().join("second.model");
    let out = common::train(
        &common::fixture("special.conllu"),
        &second,
        &["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "1"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    fs::rename(&second, &configured).unwrap();
    signal(&daemon, "-HUP");
    setup.wait_for(|| setup.log("daemon.log").contains("reloaded"), &mut daemon, "the reload");
    let rolled_back_from = registry.current_name().unwrap().expect("a serving model");
    assert_ne!(rolled_back_from, rolled_back_to, "the second model does not serve");
    // ... and rolled back from; the daemon follows.
    let out = common::spoolparse(&["models", "rollback", "--config", setup.config.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    setup.wait_for(|| setup.log("daemon.log").contains("now serving model"), &mut daemon, "the rollback");

    // Files wait in incoming/ (no rescan sees them) while a garbage model fails the reload.
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let after = input("after.conllu", 5, &mut rng, false);
    setup.drop_files(std::slice::from_ref(&after));
    fs::write(&configured, b"garbage, not a model").unwrap();
    signal(&daemon, "-HUP");
    setup.wait_until_finished(1, &mut daemon);
    let log = setup.log("daemon.log");
    assert!(log.contains("reload failed"), "{log}");
    let both = setup.output("accepted", "after.conllu").unwrap() + &setup.output("lowconf", "after.conllu").unwrap();
    let label = both.lines().next().unwrap().to_string();
    assert!(label.starts_with(&format!("# model = {rolled_back_to} ")), "{label}, not {rolled_back_to}: {log}");
    assert!(terminate(&mut daemon, Duration::from_secs(10)).0.success());
}

/// The word lines of each sentence of `text`, by its `# sent_id`: a daemon's two outputs and
/// the command line's one compare as sets of trees, whichever side of the threshold each is.
fn trees_by_id(text: &str) -> BTreeMap<String, Vec<String>> {
    text.split("\n\n")
        .filter_map(|block| {
            let id = block.lines().find_map(|l| l.strip_prefix("# sent_id = "))?;
            let words = block.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())).map(str::to_string);
            Some((id.to_string(), words.collect()))
        })
        .collect()
}

/// SIGHUP with a model of `train --neural` in the configured path: the daemon serves it and
/// gives the command line's trees for it (not the linear model's), then swaps back to the
/// linear model the same way, under its first name again.
#[test]
fn sighup_swaps_in_a_neural_model_and_back_with_the_command_lines_trees() {
    let work = tempfile::tempdir().unwrap();
    let linear = model(work.path());
    let neural = work.path().join("neural.model");
    let neural_args = ["--neural", "--neural-size", "small", "--neural-epochs", "4", "--tagger", "--jackknife", "0"];
    let out = common::train(&work.path().join("train.conllu"), &neural, &neural_args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let configured = work.path().join("configured.model");
    fs::copy(&linear, &configured).unwrap();
    let setup = Setup::new(&configured, 2);
    let mut daemon = Daemon(setup.start("daemon.log"));
    setup.wait_for(|| setup.log("daemon.log").contains("watching"), &mut daemon, "the daemon to start");
    let registry = spoolparse::model::registry::Registry::new(setup.path("spool/models"));
    let first = registry.current_name().unwrap().expect("a serving model");

    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for (round, (name, model)) in [("neural.conllu", &neural), ("linear.conllu", &linear)].into_iter().enumerate() {
        let reloads = setup.log("daemon.log").matches("reloaded").count();
        fs::copy(model, work.path().join("next.model")).unwrap();
        fs::rename(work.path().join("next.model"), &configured).unwrap();
        signal(&daemon, "-HUP");
        setup.wait_for(|| setup.log("daemon.log").matches("reloaded").count() > reloads, &mut daemon, "the reload");
        let input = input(name, 30, &mut rng, false);
        setup.drop_files(std::slice::from_ref(&input));
        setup.wait_until_finished(round + 1, &mut daemon);
        let published = setup.output("accepted", name).unwrap() + "\n" + &setup.output("lowconf", name).unwrap();
        let served = published.lines().find(|l| l.starts_with("# model = ")).unwrap_or_default();
        let now = registry.current_name().unwrap().expect("a serving model");
        assert!(served.starts_with(&format!("# model = {now} ")), "{name}: {served:?}, not {now}");
        assert_eq!(now == first, model == &linear, "{name}: served by {now}, first {first}");

        let path = work.path().join(name);
        fs::write(&path, &input.bytes).unwrap();
        // The daemon's threshold (Setup's min_confidence 0.9), so that LowConf= is the same.
        let cli_trees = |model: &Path| {
            let (cli, rejected) = (work.path().join("cli.conllu"), work.path().join("rejected.conllu"));
            let args = ["--overwrite", "--min-confidence", "0.9", "--rejected", rejected.to_str().unwrap()];
            let out = common::parse(model, &path, &cli, &args);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            trees_by_id(&(fs::read_to_string(&cli).unwrap() + "\n" + &fs::read_to_string(&rejected).unwrap()))
        };
        let daemon_trees = trees_by_id(&published);
        assert_eq!(daemon_trees.len(), 30, "{name}: every sentence once");
        let (of_neural, of_linear) = (cli_trees(&neural), cli_trees(&linear));
        assert_ne!(of_neural, of_linear, "the two models parse {name} alike: the test tells nothing");
        let cli = if model == &neural { &of_neural } else { &of_linear };
        let differ = daemon_trees.iter().find(|(id, tree)| cli.get(*id) != Some(tree));
        assert!(
            differ.is_none(),
            "{name}: the daemon's tree {differ:?}, the command line's {:?}",
            cli.get(differ.unwrap().0)
        );
    }
    assert!(terminate(&mut daemon, Duration::from_secs(10)).0.success());
}

/// Every kind of malformed sentence, first, in the middle and last, with one and two threads:
/// it goes to lowconf as valid CoNLL-U that carries its raw lines, and every good sentence
/// around it is parsed (before the fix, the next good sentence went along unparsed).
#[test]
fn malformed_sentences_leave_their_neighbours_parsed_and_lowconf_valid() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let bad = [
        "1\tthe\t_\tDET\tDT\t_\tone\tdet\t_\t_\n",
        "1\tthe\t_\tDET\tDT\t_\t7\tdet\t_\t_\n",
        "1\tthe\t_\tDET\n",
        "x\tthe\t_\tDET\tDT\t_\t_\t_\t_\t_\n",
        "2\tthe\t_\tDET\tDT\t_\t_\t_\t_\t_\n",
        "# sent_id = only-a-comment\n",
        "1\tthe\t_\tDET\tDT\t_\t_\t_\t_\t_\n# late comment\n",
    ];
    let good = |i: usize| {
        format!("# sent_id = g{i}\n1\tg{i}\t_\tPROPN\tNNP\t_\t_\t_\t_\t_\n2\tbarks\t_\tVERB\tVBZ\t_\t_\t_\t_\t_\n\n")
    };
    for threads in [1, 2] {
        let setup = Setup::new(&model, threads);
        let mut files = Vec::new();
        for (k, b) in bad.iter().enumerate() {
            for place in 0..3 {
                let mut text = String::new();
                (0..place).for_each(|i| text.push_str(&good(i)));
                text.push_str(b);
                text.push('\n');
                (place..2).for_each(|i| text.push_str(&good(i)));
                let name = format!("b{k}p{place}.conllu");
                fs::write(setup.path(&format!("spool/incoming/{name}")), &text).unwrap();
                files.push((name, text, *b, place));
            }
        }
        let mut daemon = setup.start("daemon.log");
        setup.wait_until_finished(files.len(), &mut daemon);
        terminate(&mut daemon, Duration::from_secs(10));
        for (name, _, b, place) in &files {
            let lowconf = setup.output("lowconf", name).unwrap();
            let all = setup.output("accepted", name).unwrap() + &lowconf;
            // Read strictly: every output is valid CoNLL-U.
            let sents: Vec<Sentence> = Reader::new(all.as_bytes(), Path::new(name), Format::Conllu)
                .collect::<Result<_, _>>()
                .unwrap_or_else(|e| panic!("{name}: output not valid CoNLL-U: {e}\n{all}"));
            let (unparsed, parsed): (Vec<_>, Vec<_>) = sents.iter().partition(|s| raw_text(s).is_some());
            assert_eq!(unparsed.len(), 1, "{name} ({threads} threads):\n{all}");
            assert_eq!(raw_text(unparsed[0]).unwrap(), *b, "{name}: raw text not kept");
            // Its id as a real comment, for joins by id: the input's, else its place's.
            let id = if b.contains("only-a-comment") {
                "only-a-comment".to_string()
            } else {
                format!("{name}-{}", place + 1)
            };
            assert!(unparsed[0].comments.contains(&format!("# sent_id = {id}")), "{name}: no sent_id {id}:\n{all}");
            assert_eq!(parsed.len(), 2, "{name} ({threads} threads): good sentences lost:\n{all}");
            for s in parsed {
                assert!(
                    s.words().all(|w| w.get(Column::Head) != "_" && w.get(Column::Misc).contains("Conf=")),
                    "{name}: unparsed:\n{all}"
                );
            }
        }
    }
}

/// Writes `bytes` to `path` as `cp` into incoming/ would, straight to its final name, in
/// `pieces` writes with `pause` after each but the last, through one open file.
fn write_slowly(path: &Path, bytes: &[u8], pieces: usize, pause: Duration) {
    use std::io::Write;
    let mut file = fs::File::create(path).unwrap();
    let size = bytes.len().div_ceil(pieces);
    for (i, piece) in bytes.chunks(size).enumerate() {
        if i > 0 {
            std::thread::sleep(pause);
        }
        file.write_all(piece).unwrap();
    }
}

/// Files written straight into incoming/ (no rename): one in many pieces with short pauses,
/// one with a long pause halfway. Each is parsed only once complete, every sentence reaches
/// the outputs exactly once, and the wait is logged once per file.
#[test]
fn files_written_straight_into_incoming_are_parsed_only_once_complete() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 2);
    let mut rng = ChaCha8Rng::seed_from_u64(28);
    let slow = input("slow.conllu", 400, &mut rng, false);
    let paused = input("paused.txt", 300, &mut rng, false);
    let mut daemon = setup.start("daemon.log");
    std::thread::scope(|s| {
        s.spawn(|| {
            write_slowly(&setup.path("spool/incoming/slow.conllu"), &slow.bytes, 20, Duration::from_millis(150))
        });
        s.spawn(|| write_slowly(&setup.path("spool/incoming/paused.txt"), &paused.bytes, 2, Duration::from_secs(3)));
    });
    setup.wait_until_finished(2, &mut daemon);
    terminate(&mut daemon, Duration::from_secs(10));
    let log = setup.log("daemon.log");
    for file in [&slow, &paused] {
        assert!(setup.path(&format!("spool/done/{}", file.name)).exists(), "{}: {log}", file.name);
        assert_split_losslessly(&setup, file);
        let waits = log.matches(&format!("waiting for incoming/{}: it is still being written", file.name)).count();
        assert_eq!(waits, 1, "{}: the wait is logged once:\n{log}", file.name);
    }
}

/// A file whose name is not valid UTF-8 stays in incoming/ and is named in the log, once, with
/// its other bytes escaped and what to do; the files beside it are parsed.
#[test]
fn a_name_that_is_not_utf8_is_logged_once_with_what_to_do() {
    use std::os::unix::ffi::OsStrExt;
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 1);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let good = input("good.conllu", 3, &mut rng, false);
    let bad = setup.path("spool/incoming").join(std::ffi::OsStr::from_bytes(b"caf\xe9.conllu"));
    fs::write(&bad, &good.bytes).unwrap();
    setup.drop_files(std::slice::from_ref(&good));
    let mut daemon = setup.start("daemon.log");
    setup.wait_until_finished(1, &mut daemon);
    // Several rescans (every 0.2 s): still one line.
    std::thread::sleep(Duration::from_secs(1));
    terminate(&mut daemon, Duration::from_secs(10));
    let log = setup.log("daemon.log");
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("not valid UTF-8")).collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("incoming/caf\\xe9.conllu") && lines[0].contains("rename it"), "{}", lines[0]);
    assert!(bad.exists(), "left in incoming/");
}

/// `x.conllu`, then `x.conllu.zst`, then `x.conllu` again: three inputs, three sets of
/// outputs and three done/ entries; nothing is overwritten (the rule: a `~N` suffix).
#[test]
fn inputs_with_the_same_output_names_get_unique_ones() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 2);
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let mut daemon = setup.start("daemon.log");
    let names = ["x.conllu", "x.conllu.zst", "x.conllu"];
    let expected = ["x.conllu", "x~2.conllu.zst", "x~3.conllu"];
    for (n, (name, unique)) in names.iter().zip(expected).enumerate() {
        let mut file = input(name, 4, &mut rng, false);
        file.ids.iter_mut().for_each(|id| *id = format!("{id}-{n}"));
        let text = String::from_utf8(if name.ends_with(".zst") {
            zstd::decode_all(&file.bytes[..]).unwrap()
        } else {
            file.bytes.clone()
        })
        .unwrap();
        let text = text
            .lines()
            .map(|l| if l.starts_with("1\t") { l.replacen("\tx", &format!("\tx-{n}-"), 1) } else { l.to_string() })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
        file.ids = ids(&text);
        file.bytes =
            if name.ends_with(".zst") { zstd::encode_all(text.as_bytes(), 3).unwrap() } else { text.into_bytes() };
        setup.drop_files(std::slice::from_ref(&file));
        setup.wait_until_finished(n + 1, &mut daemon);
        assert!(
            setup.path(&format!("spool/done/{unique}")).exists(),
            "{unique} not in done/: {:?}",
            setup.names("spool/done")
        );
        file.name = unique.to_string();
        assert_split_losslessly(&setup, &file);
    }
    terminate(&mut daemon, Duration::from_secs(10));
    assert_eq!(setup.names("out/accepted").len(), 3);
    assert!(setup.log("daemon.log").contains("x.conllu: an input of that name was seen before: taken as x~3.conllu"));
}

/// Published counts match what out/ holds, even when a file fails after some sentences were
/// parsed; work done is counted apart.
#[test]
fn published_metrics_match_the_outputs() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 2);
    let inputs = mixed_inputs(30, 3);
    setup.drop_files(&inputs);
    // 30 good sentences, then binary data: parsed, then failed and its outputs removed.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut failing = input("failing.conllu", 30, &mut rng, false).bytes;
    failing.extend_from_slice(b"1\tcaf\x00\t_\tNOUN\tNN\t_\t_\t_\t_\t_\n\n");
    fs::write(setup.path("spool/incoming/failing.conllu"), failing).unwrap();
    let mut daemon = setup.start("daemon.log");
    setup.wait_until_finished(inputs.len() + 1, &mut daemon);
    std::thread::sleep(Duration::from_millis(500));
    let accepted: usize =
        setup.all_outputs().iter().filter(|(p, _)| p.starts_with("accepted")).map(|(_, t)| ids(t).len()).sum();
    let lowconf: usize =
        setup.all_outputs().iter().filter(|(p, _)| p.starts_with("lowconf")).map(|(_, t)| ids(t).len()).sum();
    assert_eq!(setup.metric("spoolparse_published_sentences_total{output=\"accepted\"}"), accepted as u64);
    assert_eq!(setup.metric("spoolparse_published_sentences_total{output=\"lowconf\"}"), lowconf as u64);
    assert_eq!(accepted + lowconf, inputs.iter().map(|i| i.ids.len()).sum::<usize>());
    assert!(setup.metric("spoolparse_parsed_sentences_total") >= (accepted + lowconf) as u64);
    assert_eq!(setup.metric("spoolparse_files_total{outcome=\"failed\"}"), 1);
    let text = fs::read_to_string(setup.path("metrics.prom")).unwrap();
    assert!(text.contains("spoolparse_model_info{file=\"m-") && text.contains(",fingerprint=\""), "{text}");
    terminate(&mut daemon, Duration::from_secs(10));
}

/// A file whose tags the model never saw, through a model without a tagger: parsed as it is,
/// and said so in the log, the metrics and the outputs; a file with the model's tags is not.
#[test]
fn unfit_tags_without_a_tagger_are_flagged_in_log_metrics_and_outputs() {
    let work = tempfile::tempdir().unwrap();
    let setup = Setup::new(&plain_model(work.path()), 2);
    let fixture = fs::read_to_string(common::fixture("special.conllu")).unwrap();
    fs::write(setup.path("spool/incoming/zz.conllu"), common::foreign_tags(1)).unwrap();
    fs::write(setup.path("spool/incoming/known.conllu"), &fixture).unwrap();
    let mut daemon = setup.start("daemon.log");
    setup.wait_until_finished(2, &mut daemon);
    let flagged = setup.output("accepted", "zz.conllu").unwrap() + &setup.output("lowconf", "zz.conllu").unwrap();
    assert!(flagged.contains("\n# input_check = 100% of the first 1"), "{flagged}");
    assert!(flagged.contains("the model has no tagger"), "{flagged}");
    let known = setup.output("accepted", "known.conllu").unwrap() + &setup.output("lowconf", "known.conllu").unwrap();
    assert!(!known.contains("# input_check"), "{known}");
    assert_eq!(setup.metric("spoolparse_input_files_total{check=\"unfit\"}"), 1);
    assert_eq!(setup.metric("spoolparse_input_files_total{check=\"retagged\"}"), 0);
    terminate(&mut daemon, Duration::from_secs(10));
    let log = setup.log("daemon.log");
    assert_eq!(log.matches("zz.conllu: 100% of the first").count(), 1, "warned once: {log}");
    assert!(log.lines().any(|l| l.contains(" WARN ") && l.contains("zz.conllu: 100% of the first")), "{log}");
}

/// A file with gold UPOS, LEMMA and FEATS but no XPOS (as en_atis): the model's tagger gives
/// it XPOS under its UPOS, and every given value comes out as it went in, said in the log.
#[test]
fn a_file_with_upos_and_no_xpos_keeps_every_given_value_through_the_daemon() {
    let work = tempfile::tempdir().unwrap();
    let setup = Setup::new(&model(work.path()), 2);
    let input = common::upos_only(30);
    fs::write(setup.path("spool/incoming/atis.conllu"), &input).unwrap();
    let mut daemon = setup.start("daemon.log");
    setup.wait_until_finished(1, &mut daemon);
    let output = setup.output("accepted", "atis.conllu").unwrap() + &setup.output("lowconf", "atis.conllu").unwrap();
    let by_id = |text: &str| -> BTreeMap<String, Vec<[String; 5]>> {
        Reader::new(text.as_bytes(), Path::new("t"), Format::Conllu)
            .map(|s| s.unwrap())
            .map(|s| {
                let mut one = Vec::new();
                s.write_to(&mut one).unwrap();
                (s.comment("sent_id").unwrap().to_string(), common::word_columns(&one))
            })
            .collect()
    };
    let (given, parsed) = (by_id(&input), by_id(&output));
    assert_eq!(given.len(), 30);
    assert_eq!(given.keys().collect::<Vec<_>>(), parsed.keys().collect::<Vec<_>>());
    for (id, words) in &given {
        for (g, p) in words.iter().zip(&parsed[id]) {
            assert_eq!((&g[0], &g[1], &g[3]), (&p[0], &p[1], &p[3]), "{id}: {g:?} became {p:?}");
        }
    }
    // The XPOS the file lacks are the tagger's (whose tag set has `_` too, from the fixture).
    assert!(parsed.values().flatten().any(|p| p[2] == "VBZ" || p[2] == "NNS"), "{parsed:?}");
    assert!(output.contains("\n# input_check = 100% of the first") && output.contains("under the file's own tags"));
    terminate(&mut daemon, Duration::from_secs(10));
    let log = setup.log("daemon.log");
    assert!(log.contains("atis.conllu: 100% of the first") && log.contains("the file's values are kept"), "{log}");
}

/// A file whose forms the model mostly never saw (another language) sends every sentence to
/// lowconf/, however sure its parses look: at `min_confidence = 0` the model's own text is all
/// accepted, the foreign file's is all held back, the log says why, and so does a
/// `# held_back` comment at the head of its lowconf output.
#[test]
fn a_file_of_another_language_never_reaches_accepted_and_its_lowconf_output_says_so() {
    let work = tempfile::tempdir().unwrap();
    let setup = Setup::new(&plain_model(work.path()), 2);
    setup.edit_config("min_confidence = 0.9", "min_confidence = 0");
    let fixture = fs::read_to_string(common::fixture("special.conllu")).unwrap();
    // The same sentences, every form replaced by one the model never saw.
    let foreign: String = fixture
        .lines()
        .map(|l| {
            let mut cols: Vec<String> = l.split('\t').map(str::to_string).collect();
            if cols.len() == 10 && cols[0].parse::<u32>().is_ok() {
                cols[1] = format!("qx{}zv", cols[1].len() * 7 + cols[0].len());
            }
            cols.join("\t") + "\n"
        })
        .collect();
    fs::write(setup.path("spool/incoming/foreign.conllu"), &foreign).unwrap();
    fs::write(setup.path("spool/incoming/known.conllu"), &fixture).unwrap();
    let mut daemon = setup.start("daemon.log");
    setup.wait_until_finished(2, &mut daemon);
    terminate(&mut daemon, Duration::from_secs(10));
    let sentences = |s: Option<String>| s.map_or(0, |s| s.matches("# sent_id").count());
    let known_accepted = sentences(setup.output("accepted", "known.conllu"));
    assert!(known_accepted > 0 && sentences(setup.output("lowconf", "known.conllu")) == 0);
    assert_eq!(sentences(setup.output("accepted", "foreign.conllu")), 0);
    assert_eq!(sentences(setup.output("lowconf", "foreign.conllu")), known_accepted, "every sentence kept");
    // Its lowconf output says so at its head, for the workbench's queue and the annotation store.
    let held = setup.output("lowconf", "foreign.conllu").unwrap_or_default();
    assert!(held.lines().take(3).any(|l| l.starts_with("# held_back = another language")), "{held}");
    assert!(!setup.output("accepted", "known.conllu").unwrap_or_default().contains("# held_back"));
    let log = setup.log("daemon.log");
    assert!(
        log.lines().any(|l| l.contains("foreign.conllu: ") && l.ends_with("every sentence goes to lowconf/")),
        "{log}"
    );
}

/// A sentence of another language in a file of the model's goes to lowconf/ on its own,
/// whatever its confidence, with `# other_language` saying why; the log line of the file and
/// the metrics count it, and the rest of the file is accepted.
#[test]
fn a_sentence_of_another_language_goes_to_lowconf_on_its_own_and_is_counted() {
    let work = tempfile::tempdir().unwrap();
    let Some((model, dev)) = common::hungarian_model(work.path()) else { return };
    let setup = Setup::new(&model, 2);
    setup.edit_config("min_confidence = 0.9", "min_confidence = 0");
    let greek = common::hungarian_with_greek(&dev, &setup.path("mixed.raw"));
    fs::rename(setup.path("mixed.raw"), setup.path("spool/incoming/mixed.raw")).unwrap();
    let mut daemon = setup.start("daemon.log");
    setup.wait_until_finished(1, &mut daemon);
    let judged = setup.metric("spoolparse_published_other_language_sentences_total");
    terminate(&mut daemon, Duration::from_secs(10));
    let lowconf = setup.output("lowconf", "mixed.raw").unwrap_or_default();
    let accepted = setup.output("accepted", "mixed.raw").unwrap_or_default();
    let in_lowconf = lowconf.matches("# sent_id").count();
    assert_eq!(lowconf.matches("# other_language = ").count(), in_lowconf, "each says why");
    assert!(in_lowconf as u64 == judged && in_lowconf > greek.len() / 2, "{in_lowconf} in lowconf, {judged} counted");
    assert!(!common::has_greek(&accepted), "Greek accepted");
    assert!(accepted.matches("# sent_id").count() > 300);
    let log = setup.log("daemon.log");
    assert!(log.contains(&format!("{judged} judged another language's)")), "{log}");
}

/// A sentence beyond the limits (a 5 MB line here) goes to lowconf with an error and without
/// its full text; the next sentence is parsed. A file in another format fails as a whole.
#[test]
fn huge_sentences_and_foreign_files_are_handled_without_holding_them() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 2);
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let mut text = format!("1\t{}\t_\tX\t_\t_\t_\t_\t_\t_\n\n", "y".repeat(5 << 20)).into_bytes();
    let good = input("huge.conllu", 2, &mut rng, false);
    text.extend_from_slice(&good.bytes);
    fs::write(setup.path("spool/incoming/huge.conllu"), text).unwrap();
    let json: String = (0..100).map(|i| format!("{{\"sentence\": {i}}}\n")).collect();
    fs::write(setup.path("spool/incoming/records.conllu"), json).unwrap();
    let mut daemon = setup.start("daemon.log");
    setup.wait_until_finished(2, &mut daemon);
    terminate(&mut daemon, Duration::from_secs(10));
    let lowconf = setup.output("lowconf", "huge.conllu").unwrap();
    assert!(
        lowconf.contains("# spoolparse_error = huge.conllu:1: line longer than 1048576 bytes"),
        "{}",
        &lowconf[..lowconf.len().min(500)]
    );
    assert!(lowconf.contains("# spoolparse_raw_truncated = yes") && lowconf.len() < 10_000);
    let all = setup.output("accepted", "huge.conllu").unwrap() + &lowconf;
    assert_eq!(ids(&all).iter().filter(|id| id.starts_with("huges")).count(), 2, "{all}");
    let why = fs::read_to_string(setup.path("spool/failed/records.conllu.error")).unwrap();
    assert!(
        why.starts_with("records.conllu: not CoNLL-U: no token line has 10 tab-separated columns (100 read; line 1:"),
        "{why}"
    );
}

/// Temporaries that a killed daemon left (an output of a file no longer in processing/, a
/// metrics file and a failed/ sidecar of dead processes) are removed at start.
#[test]
fn temporaries_of_a_dead_daemon_are_swept_at_start() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 1);
    for d in ["out/accepted", "out/lowconf"] {
        fs::create_dir_all(setup.path(d)).unwrap();
    }
    // A pid that cannot be alive: above the kernel's pid_max limit.
    let stale = [
        "out/accepted/.tmp.gone.conllu.zst",
        "out/lowconf/.tmp.gone.conllu.zst",
        "metrics.prom.tmp4999999",
        "spool/failed/gone.conllu.error.tmp4999999",
    ];
    for s in stale {
        fs::write(setup.path(s), b"x").unwrap();
    }
    let mut daemon = setup.start("daemon.log");
    setup.wait_for(|| setup.log("daemon.log").contains("watching"), &mut daemon, "the daemon to start");
    for s in stale {
        assert!(!setup.path(s).exists(), "{s} was left");
    }
    terminate(&mut daemon, Duration::from_secs(10));
}

/// A tmpfs mounted over a directory for the length of a test (root only), unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (mount(8) syntax) at `dir`; `None`, with a visible message, where
    /// that is not allowed.
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", dir.to_str().unwrap()])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            common::skip("cannot mount a tmpfs here (needs root): the full-disk test is skipped");
            return None;
        }
        Some(Tmpfs(dir.to_path_buf()))
    }

    fn remount(&self, options: &str) {
        let ok = Command::new("mount").args(["-o", &format!("remount,{options}"), self.0.to_str().unwrap()]).status();
        assert!(ok.unwrap().success(), "remount {options}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// With out/ on a full file system, and then read-only, publishing fails: the input stays
/// in processing/ (claimed), nothing half-written is left in out/, the daemon goes on, tries
/// again with a growing wait, and finishes once there is space (or the file system is
/// writable again).
#[test]
fn a_full_or_read_only_output_disk_delays_files_without_losing_them() {
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 2);
    let Some(out) = Tmpfs::mount(&setup.path("out"), "48k") else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let big = input("big.conllu", 3000, &mut rng, false);
    setup.drop_files(std::slice::from_ref(&big));
    let mut daemon = setup.start("daemon.log");
    let setup = &setup;
    let tried = |n: usize| move || setup.log("daemon.log").matches("could not publish").count() >= n;
    setup.wait_for(tried(2), &mut daemon, "two failed publications");
    let log = setup.log("daemon.log");
    assert!(log.contains("No space left on device") && log.contains("trying again in 2 s"), "{log}");
    assert_eq!(setup.names("spool/processing"), BTreeSet::from(["big.conllu".to_string()]));
    for dir in ["out/accepted", "out/lowconf"] {
        assert!(setup.names(dir).is_empty(), "{dir} holds {:?}", setup.names(dir));
    }
    out.remount("size=64m");
    setup.wait_until_finished(1, &mut daemon);
    assert_split_losslessly(setup, &big);

    out.remount("ro");
    let small = input("small.conllu", 5, &mut rng, false);
    setup.drop_files(std::slice::from_ref(&small));
    let failures = setup.log("daemon.log").matches("could not publish").count();
    setup.wait_for(tried(failures + 1), &mut daemon, "a failed publication to a read-only disk");
    assert!(setup.log("daemon.log").contains("Read-only file system"));
    out.remount("rw");
    setup.wait_until_finished(2, &mut daemon);
    assert_split_losslessly(setup, &small);
    let (status, _) = terminate(&mut daemon, Duration::from_secs(10));
    assert!(status.success());
    assert!(setup.metric("spoolparse_files_total{outcome=\"retried\"}") >= 3);
}

/// CLOCK_MONOTONIC in µs, as systemd's `MONOTONIC_USEC` counts it.
fn monotonic_usec() -> i128 {
    match sd_notify::NotifyState::monotonic_usec_now().unwrap() {
        sd_notify::NotifyState::MonotonicUsec(usec) => usec,
        _ => unreachable!(),
    }
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ` (RFC 3339, UTC), the start of a plain log line.
fn starts_with_rfc3339_utc(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() > 27
        && b[..27].iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'.',
            26 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// Starts the daemon with stderr into `log`; `journal_stream` is JOURNAL_STREAM's value (unset
/// if `None`).
fn start_logging(setup: &Setup, log: &Path, journal_stream: Option<String>) -> Daemon {
    let mut command = Command::new(env!("CARGO_BIN_EXE_spoolparse"));
    command
        .args(["daemon", "--config", setup.config.to_str().unwrap()])
        .env_remove("SPOOLPARSE_LOG")
        .env_remove("JOURNAL_STREAM")
        .stdout(Stdio::null())
        .stderr(fs::OpenOptions::new().append(true).open(log).unwrap());
    if let Some(value) = journal_stream {
        command.env("JOURNAL_STREAM", value);
    }
    Daemon(command.spawn().unwrap())
}

#[test]
fn log_lines_carry_a_timestamp_or_under_journald_a_priority() {
    use std::os::unix::fs::MetadataExt;
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 1);
    let mut rng = ChaCha8Rng::seed_from_u64(11);

    // Outside journald: every line starts with an RFC 3339 time, the level and the name.
    let plain = setup.path("plain.log");
    fs::write(&plain, "").unwrap();
    setup.drop_files(&[input("a.conllu", 3, &mut rng, false)]);
    fs::write(setup.path("spool/incoming/notes.json"), b"{}").unwrap();
    let mut daemon = start_logging(&setup, &plain, None);
    setup.wait_until_finished(2, &mut daemon);
    // A reload refused for a configuration error, whose TOML message spans several lines.
    let config = fs::read_to_string(&setup.config).unwrap();
    fs::write(&setup.config, format!("{config}threds = 2\n")).unwrap();
    signal(&daemon, "-HUP");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !setup.log("plain.log").contains("reload failed") {
        assert!(Instant::now() < deadline, "no reload failure logged: {}", setup.log("plain.log"));
        std::thread::sleep(Duration::from_millis(20));
    }
    fs::write(&setup.config, &config).unwrap();
    assert!(terminate(&mut daemon, Duration::from_secs(10)).0.success());
    let log = setup.log("plain.log");
    let levels = [" ERROR spoolparse: ", "  WARN spoolparse: ", "  INFO spoolparse: "];
    for line in log.lines() {
        let rest = line.get(27..).unwrap_or_default();
        assert!(
            starts_with_rfc3339_utc(line) && levels.iter().any(|level| rest.starts_with(level)),
            "a line without time, level and name: {line:?} in\n{log}"
        );
    }
    let has = |level: &str, text: &str| log.lines().any(|l| l[27..].starts_with(level) && l.contains(text));
    assert!(has("  INFO spoolparse: ", "done a.conllu"), "{log}");
    assert!(has("  WARN spoolparse: ", "failed notes.json"), "{log}");
    assert!(has(" ERROR spoolparse: ", "reload failed") && log.contains("unknown field `threds`"), "{log}");

    // Under journald (JOURNAL_STREAM names stderr's device and inode): the syslog priority, and
    // no time (the journal adds it).
    let journal = setup.path("journal.log");
    fs::write(&journal, "").unwrap();
    let meta = fs::metadata(&journal).unwrap();
    setup.drop_files(&[input("b.conllu", 3, &mut rng, false)]);
    let mut daemon = start_logging(&setup, &journal, Some(format!("{}:{}", meta.dev(), meta.ino())));
    setup.wait_until_finished(3, &mut daemon);
    assert!(terminate(&mut daemon, Duration::from_secs(10)).0.success());
    let log = setup.log("journal.log");
    assert!(log.lines().any(|l| l.starts_with("<6>done b.conllu")), "{log}");
    assert!(log.lines().all(|l| ["<3>", "<4>", "<6>", "<7>"].iter().any(|p| l.starts_with(p))), "{log}");
    assert!(!log.lines().any(starts_with_rfc3339_utc) && !log.contains(" INFO "), "{log}");

    // JOURNAL_STREAM inherited by a process whose stderr went elsewhere: plain lines.
    let elsewhere = setup.path("elsewhere.log");
    fs::write(&elsewhere, "").unwrap();
    let mut daemon = start_logging(&setup, &elsewhere, Some(format!("{}:{}", meta.dev(), meta.ino())));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !setup.log("elsewhere.log").contains("watching") {
        assert!(Instant::now() < deadline, "no start logged: {}", setup.log("elsewhere.log"));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(terminate(&mut daemon, Duration::from_secs(10)).0.success());
    let log = setup.log("elsewhere.log");
    assert!(!log.is_empty() && log.lines().all(starts_with_rfc3339_utc), "{log}");
}

#[test]
fn spool_create_makes_incoming_group_writable_and_setgid_without_clobbering() {
    use spoolparse::daemon::spool::Spool;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |rel: &str| fs::metadata(dir.path().join(rel)).unwrap().permissions().mode() & 0o7777;
    let spool = Spool::new(&dir.path().join("spool"), &dir.path().join("out"));
    spool.create().unwrap();
    assert_eq!(mode("spool/incoming") & 0o2070, 0o2070, "{:o}", mode("spool/incoming"));
    assert_eq!(mode("spool/processing") & 0o2020, 0, "only incoming/ is opened to the group");
    // An existing incoming/ gets the group bits added; other bits stay as the admin set them.
    fs::set_permissions(&spool.incoming, fs::Permissions::from_mode(0o700)).unwrap();
    spool.create().unwrap();
    assert_eq!(mode("spool/incoming"), 0o2770);
    fs::set_permissions(&spool.incoming, fs::Permissions::from_mode(0o2775)).unwrap();
    spool.create().unwrap();
    assert_eq!(mode("spool/incoming"), 0o2775);
}

/// With the unit's UMask=0027, what the group needs: incoming/ 2770, outputs and metrics 0640.
#[test]
fn under_the_units_umask_the_group_writes_incoming_and_reads_outputs_and_metrics() {
    use std::os::unix::fs::PermissionsExt;
    let work = tempfile::tempdir().unwrap();
    let model = model(work.path());
    let setup = Setup::new(&model, 1);
    fs::remove_dir_all(setup.path("spool")).unwrap();
    let mut daemon = Daemon(
        Command::new("sh")
            .args(["-c", "umask 0027 && exec \"$0\" daemon --config \"$1\""])
            .args([env!("CARGO_BIN_EXE_spoolparse"), setup.config.to_str().unwrap()])
            .stderr(fs::File::create(setup.path("daemon.log")).unwrap())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !setup.log("daemon.log").contains("watching") {
        assert!(Instant::now() < deadline, "the daemon did not start: {}", setup.log("daemon.log"));
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    setup.drop_files(&[input("a.conllu", 3, &mut rng, false)]);
    setup.wait_until_finished(1, &mut daemon);
    while !setup.path("metrics.prom").exists() {
        assert!(Instant::now() < deadline, "no metrics");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(terminate(&mut daemon, Duration::from_secs(10)).0.success());
    let mode = |rel: &str| fs::metadata(setup.path(rel)).unwrap().permissions().mode() & 0o7777;
    let modes: Vec<(&str, u32)> = [
        "spool/incoming",
        "spool/processing",
        "spool/done",
        "out/accepted",
        "out/accepted/a.conllu.zst",
        "out/lowconf/a.conllu.zst",
        "metrics.prom",
    ]
    .into_iter()
    .map(|rel| (rel, mode(rel)))
    .collect();
    let expected = [0o2770, 0o750, 0o750, 0o750, 0o640, 0o640, 0o640];
    for ((rel, got), want) in modes.iter().zip(expected) {
        assert_eq!(*got, want, "{rel}: {got:o}, want {want:o}");
    }
}

/// Raw text (`.raw`, `.raw.zst`) is tokenized by the model's tokenizer, and its text comes back
/// from the outputs; in raw text with invalid UTF-8 only the sentence holding it is passed on
/// unparsed (to lowconf, naming its line and byte offset, valid for the UD validator) and the
/// others are parsed: a bad byte used to send the whole file to failed/.
#[test]
fn raw_text_is_tokenized_and_comes_back_whole_and_a_bad_byte_costs_only_its_sentence() {
    let work = tempfile::tempdir().unwrap();
    let model = work.path().join("tok.model");
    let args = ["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "1", "--tokenizer"];
    let out = common::train(&common::fixture("special.conllu"), &model, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let setup = Setup::new(&model, 2);
    let text = "Sue likes coffee. Vámonos al mar!\n\nYes  yes.\n";
    fs::write(setup.path("spool/incoming/a.raw"), text).unwrap();
    fs::write(setup.path("spool/incoming/b.raw.zst"), zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
    fs::write(setup.path("spool/incoming/bad.raw"), b"Yes.\n\nno \xff\n\nSue likes tea.\n").unwrap();
    let mut daemon = setup.start("daemon.log");
    setup.wait_until_finished(3, &mut daemon);
    terminate(&mut daemon, Duration::from_secs(10));
    for name in ["a.raw", "b.raw.zst"] {
        // Accepted and lowconf share the sentences: in the order of their ids.
        let all =
            setup.output("accepted", name).unwrap_or_default() + &setup.output("lowconf", name).unwrap_or_default();
        let mut sents: Vec<Sentence> =
            Reader::new(all.as_bytes(), Path::new(name), Format::Conllu).map(|s| s.unwrap()).collect();
        let place = |s: &Sentence| {
            let id = s.comments.iter().find_map(|c| c.strip_prefix("# sent_id = ")).unwrap().to_string();
            id.rsplit('-').next().unwrap().parse::<usize>().unwrap()
        };
        sents.sort_by_key(place);
        assert_eq!(spoolparse::parse::raw::recover_text(&sents), text, "{name}");
    }
    assert!(setup.names("spool/failed").is_empty(), "{:?}", setup.names("spool/failed"));
    let lowconf = setup.output("lowconf", "bad.raw").unwrap();
    assert!(lowconf.contains("# spoolparse_error = bad.raw:3: invalid UTF-8 at byte offset 9"), "{lowconf}");
    assert!(lowconf.contains("# spoolparse_raw = no \\ufffd") && !lowconf.contains('\u{fffd}'), "{lowconf}");
    let all = setup.output("accepted", "bad.raw").unwrap_or_default() + &lowconf;
    let texts: Vec<&str> = all.lines().filter_map(|l| l.strip_prefix("# text = ")).collect();
    assert!(texts.contains(&"Yes.") && texts.iter().any(|t| t.starts_with("Sue likes tea")), "{all}");
    let plain = setup.path("lowconf-bad.conllu");
    fs::write(&plain, &lowconf).unwrap();
    common::validate(&plain, "en");
}

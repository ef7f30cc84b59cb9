//! The correction workbench (`spoolparse annotate`) through its HTTP API, as a script or the
//! page uses it: tasks, re-parses, answers that are durable and never asked again (across a
//! restart and a kill -9), requests that cannot be right refused with nothing written, and who
//! may do what.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A corpus of `n` distinct sentences of five words: a small model is unsure of all of them.
fn corpus(n: usize) -> String {
    let tags = ["DET", "NOUN", "VERB", "DET", "NOUN"];
    let arcs = [(2, "det"), (3, "nsubj"), (0, "root"), (5, "det"), (3, "obj")];
    let mut text = String::new();
    for s in 0..n {
        let forms: Vec<String> = (0..tags.len()).map(|i| format!("w{}x{}", s % 7 + i, s)).collect();
        text.push_str(&format!("# sent_id = s{s}\n# text = {}\n", forms.join(" ")));
        for (i, (tag, (head, rel))) in tags.iter().zip(arcs).enumerate() {
            let form = &forms[i];
            text.push_str(&format!("{}\t{form}\t{form}\t{tag}\t{tag}\t_\t{head}\t{rel}\t_\t_\n", i + 1));
        }
        text.push('\n');
    }
    text
}

/// A spool with a model and a lowconf file of `n` flagged sentences, and its configuration.
struct Spool {
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Spool {
    fn new(n: usize, extra_config: &str) -> Spool {
        let dir = tempfile::tempdir().unwrap();
        let gold = dir.path().join("gold.conllu");
        std::fs::write(&gold, corpus(n)).unwrap();
        let model = dir.path().join("m.model");
        let out = common::train(&gold, &model, &["--epochs", "1"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::create_dir_all(dir.path().join("out/lowconf")).unwrap();
        let low = dir.path().join("out/lowconf/night.conllu.zst");
        let accepted = dir.path().join("accepted.conllu");
        let args = ["--min-confidence", "1", "--rejected", low.to_str().unwrap()];
        let out = common::parse(&model, &gold, &accepted, &args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let config = dir.path().join("cfg.toml");
        let p = dir.path().display();
        std::fs::write(
            &config,
            format!("[paths]\nspool = \"{p}/spool\"\noutput = \"{p}/out\"\nmodel = \"{p}/m.model\"\n{extra_config}"),
        )
        .unwrap();
        Spool { dir, config }
    }

    /// Turns the daemon's retraining cycles on in the configuration (on the spool's gold file,
    /// gated on a sentence the queue does not hold).
    fn run_retraining(&self) {
        let heldout = self.dir.path().join("heldout.conllu");
        std::fs::write(&heldout, "1\theld\t_\tNOUN\tNOUN\t_\t0\troot\t_\t_\n\n").unwrap();
        let text = std::fs::read_to_string(&self.config).unwrap();
        let gold = self.dir.path().join("gold.conllu");
        let retrain = format!(
            "[retrain]\nenabled = true\nevery = \"100d\"\nbase = [\"{}\"]\nheldout = \"{}\"\n",
            gold.display(),
            heldout.display()
        );
        std::fs::write(&self.config, format!("{text}\n{retrain}")).unwrap();
    }

    fn annotated(&self) -> PathBuf {
        self.dir.path().join("spool/annotated")
    }

    /// The correction files written so far.
    fn corrections(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.annotated())
            .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "conllu")).collect())
            .unwrap_or_default();
        files.sort();
        files
    }
}

/// SHA-256 of a token, hex, as the tokens file stores it.
fn token_hash(token: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Names annotators (`(name, admin)`, each with the token `tok-NAME`) in a tokens file that
/// the spool's configuration points to.
fn with_tokens(spool: &Spool, annotators: &[(&str, bool)]) {
    let tokens = spool.dir.path().join("tokens.toml");
    let entries: Vec<String> = annotators
        .iter()
        .map(|(name, admin)| {
            format!(
                "[[annotator]]\nname = \"{name}\"\nsha256 = \"{}\"\nadmin = {admin}\n",
                token_hash(&format!("tok-{name}"))
            )
        })
        .collect();
    std::fs::write(&tokens, entries.join("\n")).unwrap();
    let text = std::fs::read_to_string(&spool.config).unwrap();
    std::fs::write(&spool.config, format!("{text}\n[annotate]\ntokens_file = \"{}\"\n", tokens.display())).unwrap();
}

/// A running `spoolparse annotate`.
struct Server {
    child: Child,
    addr: SocketAddr,
    /// Sent with `get` and `post`.
    token: Option<String>,
}

impl Server {
    fn start(spool: &Spool, extra: &[&str]) -> Server {
        Server::start_as(spool, extra, None)
    }

    /// Starts it with tokens configured ([`with_tokens`]); `get` and `post` send `token`.
    fn start_as(spool: &Spool, extra: &[&str], token: Option<&str>) -> Server {
        Server::start_on(spool, "127.0.0.1:0", extra, token)
    }

    /// Starts it listening on `listen`.
    fn start_on(spool: &Spool, listen: &str, extra: &[&str], token: Option<&str>) -> Server {
        // Tasks in the order the queue ranks them, unless a test asks for the sample.
        let sampling = if extra.contains(&"--sample-every") { &[][..] } else { &["--sample-every", "0"][..] };
        let mut child = Command::new(env!("CARGO_BIN_EXE_spoolparse"))
            .args(["annotate", "--config", spool.config.to_str().unwrap(), "--listen", listen])
            .args(extra)
            .args(sampling)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = loop {
            let line = lines.next().expect("the workbench says where it listens").unwrap();
            if let Some(rest) = line.split("workbench on http://").nth(1) {
                break rest.trim_end_matches('/').parse::<SocketAddr>().unwrap();
            }
        };
        // On every address: reached, and named, through loopback.
        let addr = if addr.ip().is_unspecified() { SocketAddr::from(([127, 0, 0, 1], addr.port())) } else { addr };
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let server = Server { child, addr, token: token.map(str::to_string) };
        let deadline = Instant::now() + Duration::from_secs(20);
        while server.get("/api/stats").1["queued"].as_u64().unwrap_or(0) == 0 {
            assert!(Instant::now() < deadline, "nothing queued");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn request(&self, method: &str, path: &str, body: &[u8], token: Option<&str>) -> (u16, Value) {
        let json = if method == "POST" { "Content-Type: application/json\r\n" } else { "" };
        self.raw(method, path, &format!("Host: {}\r\n{json}", self.addr), body, token)
    }

    /// A request with the header lines `headers` (each ending in CRLF) and no others but
    /// `Authorization` and `Content-Length`.
    fn raw(&self, method: &str, path: &str, headers: &str, body: &[u8], token: Option<&str>) -> (u16, Value) {
        let mut stream = TcpStream::connect(self.addr).unwrap();
        let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
        let head = format!("{method} {path} HTTP/1.1\r\n{headers}{auth}Content-Length: {}\r\n\r\n", body.len());
        stream.write_all(head.as_bytes()).unwrap();
        let _ = stream.write_all(body);
        let mut response = Vec::new();
        stream.read_to_end(&mut response).unwrap();
        let text = String::from_utf8_lossy(&response);
        let status = text.split(' ').nth(1).unwrap().parse().unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }

    fn get(&self, path: &str) -> (u16, Value) {
        self.request("GET", path, b"", self.token.as_deref())
    }

    fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.request("POST", path, body.to_string().as_bytes(), self.token.as_deref())
    }

    /// Every task still to give, leased to the caller.
    fn drain(&self) -> Vec<Value> {
        let mut tasks = Vec::new();
        loop {
            let (status, task) = self.get("/api/next");
            if status == 204 {
                return tasks;
            }
            assert_eq!(status, 200, "{task}");
            tasks.push(task);
        }
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// HEAD and DEPREL of every word of the correction file `path`.
fn arcs_of(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.split('\t').count() == 10)
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols[6].to_string(), cols[7].to_string())
        })
        .collect()
}

#[test]
fn a_task_shows_the_sentence_with_words_to_check_and_their_alternatives() {
    let spool = Spool::new(12, "");
    let server = Server::start(&spool, &[]);
    let (status, task) = server.get("/api/next");
    assert_eq!(status, 200, "{task}");
    let words = task["words"].as_array().unwrap();
    assert_eq!(words.len(), 5);
    assert!(task["sent_id"].as_str().unwrap().starts_with('s'), "{task}");
    let checked: Vec<&Value> = words.iter().filter(|w| w["check"] == true).collect();
    assert!(!checked.is_empty() && checked.len() <= 3, "{task}");
    for w in &checked {
        let alternatives = w["alternatives"].as_array().unwrap();
        assert!(!alternatives.is_empty(), "{w}");
        assert!(alternatives.iter().all(|a| a["head"] != w["head"] && a["head"] != w["id"]), "{w}");
    }
    // A re-parse holds the arc given, and says it is fixed.
    let (status, parsed) =
        server.post("/api/reparse", json!({ "task": task["task"], "arcs": [{ "id": 1, "head": 5, "deprel": "det" }] }));
    assert_eq!(status, 200, "{parsed}");
    let first = &parsed["words"][0];
    assert_eq!(
        (first["head"].as_u64(), first["deprel"].as_str(), &first["fixed"]),
        (Some(5), Some("det"), &json!(true))
    );
    assert_eq!(server.get("/api/labels").1["labels"].as_array().unwrap().iter().filter(|l| *l == "nsubj").count(), 1);
}

#[test]
fn an_answer_is_stored_as_a_partial_tree_and_never_asked_again_even_after_a_restart() {
    let spool = Spool::new(12, "");
    let server = Server::start(&spool, &[]);
    let (_, task) = server.get("/api/next");
    let arcs = json!([{ "id": 2, "head": 3, "deprel": "nsubj" }, { "id": 1, "head": 2, "deprel": null }]);
    let (status, answer) = server.post("/api/answer", json!({ "task": task["task"], "arcs": arcs, "whole": false }));
    assert_eq!((status, &answer["stored"]), (200, &json!(2)), "{answer}");
    let files = spool.corrections();
    assert_eq!(files.len(), 1);
    let stored = arcs_of(&files[0]);
    assert_eq!(stored[1], ("3".to_string(), "nsubj".to_string()));
    assert_eq!(stored[0].0, "2", "an arc given without a label is stored with the model's");
    assert!(stored[0].1 != "_");
    assert!(stored[2..].iter().all(|a| a == &("_".to_string(), "_".to_string())), "{stored:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains(&format!("# sent_id = {}", task["sent_id"].as_str().unwrap())));
    assert!(!text.contains("# reviewed = all"));
    // The same task cannot be answered twice.
    let (status, _) = server.post("/api/answer", json!({ "task": task["task"], "arcs": arcs }));
    assert_eq!(status, 410);
    // After a restart, every other sentence is asked, this one not.
    server.kill();
    let server = Server::start(&spool, &[]);
    let ids: Vec<Value> = server.drain().iter().map(|t| t["sent_id"].clone()).collect();
    assert_eq!(ids.len(), 11, "{ids:?}");
    assert!(!ids.contains(&task["sent_id"]));
    let stats = server.get("/api/stats").1;
    assert_eq!((stats["queued"].as_u64(), stats["queue_left"].as_u64()), (Some(12), Some(11)), "{stats}");
}

/// Every arc of a task as shown, for a whole answer.
fn as_shown(task: &Value) -> Vec<Value> {
    task["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| json!({ "id": w["id"], "head": w["head"], "deprel": w["deprel"] }))
        .collect()
}

/// A whole sentence confirmed as parsed faster than it can be read (a rubber stamp, 0.17 s a
/// sentence in the trial that found it) is held back in annotated/suspect/, not stored as
/// reviewed gold; read for 250 ms a word, it is stored. A bad one is set aside with its reason.
#[test]
fn a_whole_sentence_is_stored_as_reviewed_a_rubber_stamp_held_back_and_a_bad_one_set_aside() {
    let spool = Spool::new(12, "");
    let server = Server::start(&spool, &[]);
    let (_, stamped) = server.get("/api/next");
    let body = json!({ "task": stamped["task"], "arcs": as_shown(&stamped), "whole": true });
    let (status, answer) = server.post("/api/answer", body);
    assert_eq!((status, &answer["stored"]), (200, &json!(0)), "{answer}");
    assert!(answer["held_back"].as_str().unwrap_or("").contains("faster than it can be read"), "{answer}");
    assert!(spool.corrections().is_empty(), "a rubber stamp is no correction");
    let suspect = spool.annotated().join("suspect");
    let names: Vec<String> =
        std::fs::read_dir(&suspect).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".conllu.error")), "{names:?}");
    assert_eq!(server.get("/api/stats").1["answered_today"], json!(0), "not counted as answered");
    let (_, task) = server.get("/api/next");
    let words = task["words"].as_array().unwrap().len() as u64;
    std::thread::sleep(Duration::from_millis(spoolparse::workbench::review::MIN_MS_PER_WORD * words + 100));
    let (status, _) =
        server.post("/api/answer", json!({ "task": task["task"], "arcs": as_shown(&task), "whole": true }));
    assert_eq!(status, 200);
    let text = std::fs::read_to_string(&spool.corrections()[0]).unwrap();
    assert!(text.contains("# reviewed = all"), "{text}");
    assert!(arcs_of(&spool.corrections()[0]).iter().all(|(h, d)| h != "_" && d != "_"));
    let (_, bad) = server.get("/api/next");
    let (status, _) = server.post("/api/bad", json!({ "task": bad["task"] }));
    assert_eq!(status, 422, "a bad sentence needs a reason");
    let (status, _) = server.post("/api/bad", json!({ "task": bad["task"], "reason": "two sentences in one" }));
    assert_eq!(status, 200);
    assert_eq!(spool.corrections().len(), 1, "nothing bad is put where it would be trained on");
    let rejected: Vec<PathBuf> =
        std::fs::read_dir(spool.annotated().join("rejected")).unwrap().flatten().map(|e| e.path()).collect();
    let error = rejected.iter().find(|p| p.to_string_lossy().ends_with(".error")).expect("a reason beside it");
    assert!(std::fs::read_to_string(error).unwrap().contains("two sentences in one"));
    let audit = std::fs::read_to_string(spool.annotated().join("workbench/audit.jsonl")).unwrap();
    let kinds: Vec<String> =
        audit.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["decision"].as_str().unwrap().into()).collect();
    assert_eq!(kinds, ["held", "whole", "bad"]);
}

/// With `--sample-every 1` every task is a sentence of the uniform sample of what was
/// published (`accepted/` and `lowconf/`), marked as such; answered whole, its correction says
/// so, and its audit line holds its published confidence and how many of its published words
/// were right, which `/api/models` sums into the precision on the user's text. A partial
/// answer to one measures nothing.
#[test]
fn a_sampled_sentence_answered_whole_measures_the_published_precision_and_a_partial_answer_does_not() {
    let spool = Spool::new(6, "");
    // Both outputs headed as the daemon heads them, with the model that parsed them; the
    // accepted one holds the night's sentences (a model this small accepts none).
    let model = spoolparse::model::file::ModelFile::open(&spool.dir.path().join("m.model")).unwrap();
    let head = format!("# model = {}\n", spoolparse::daemon::sink::model_label(&model));
    let low = spool.dir.path().join("out/lowconf/night.conllu.zst");
    let night = [head.as_bytes(), &zstd::decode_all(std::fs::File::open(&low).unwrap()).unwrap()].concat();
    std::fs::write(&low, zstd::encode_all(&night[..], 3).unwrap()).unwrap();
    std::fs::create_dir_all(spool.dir.path().join("out/accepted")).unwrap();
    std::fs::write(spool.dir.path().join("out/accepted/day.conllu"), &night).unwrap();
    let server = Server::start(&spool, &["--sample-every", "1"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.get("/api/stats").1["sample_population"] != json!(12) {
        assert!(Instant::now() < deadline, "{}", server.get("/api/stats").1);
        std::thread::sleep(Duration::from_millis(50));
    }
    let (_, task) = server.get("/api/next");
    assert_eq!(task["sample"], json!(true), "{task}");
    // One label changed: that word is published wrong, the four others right (the task shows
    // the parse the file has: the same model, the same tags).
    let mut arcs = as_shown(&task);
    let relabel = if arcs[0]["deprel"] == json!("dep") { "vocative" } else { "dep" };
    arcs[0]["deprel"] = json!(relabel);
    answer_at_reading_pace(&server, &task, arcs);
    let text = std::fs::read_to_string(&spool.corrections()[0]).unwrap();
    assert!(text.contains("# workbench_sample = uniform\n") && text.contains("# reviewed = all\n"), "{text}");
    let (_, partial) = server.get("/api/next");
    assert_eq!(partial["sample"], json!(true), "{partial}");
    let one = vec![as_shown(&partial)[0].clone()];
    let (status, _) = server.post("/api/answer", json!({ "task": partial["task"], "arcs": one }));
    assert_eq!(status, 200);
    let audit = std::fs::read_to_string(spool.annotated().join("workbench/audit.jsonl")).unwrap();
    let lines: Vec<Value> = audit.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{audit}");
    let measured = &lines[0]["sample"];
    assert_eq!((&measured["words"], &measured["right"]), (&json!(5), &json!(4)), "{audit}");
    assert!(measured["confidence"].as_f64().is_some_and(|c| (0.0..=1.0).contains(&c)), "{audit}");
    assert!(lines[1].get("sample").is_none(), "a partial answer measures nothing: {audit}");
    let (_, models) = server.get("/api/models");
    let precision = &models["precision"];
    assert_eq!((&precision["sentences"], &precision["words"]), (&json!(1), &json!(5)), "{precision}");
    assert_eq!((&precision["answered"], &precision["of_serving_model"]), (&json!(1), &json!(true)), "{precision}");
    assert_eq!(lines[0]["published_by"], json!(head["# model = ".len()..].trim_end()), "{audit}");
    assert_eq!(precision["threshold"], json!(0.8), "the default threshold: {precision}");
    assert_eq!(precision["targets"].as_array().map(Vec::len), Some(3), "{precision}");
}

/// `n` sentences (stems of seed `seed`) of one tag, whose words ending in `o` hang from the
/// first word and the others from the word before: only a word's characters tell them apart.
/// Written into `dir`; returns the file.
fn suffix_corpus(dir: &Path, n: usize, seed: u64) -> PathBuf {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = |m: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % m
    };
    let syllables = ["ka", "ri", "mu", "te", "lo", "sa", "ni", "pe", "du", "gi"];
    let mut text = String::new();
    for s in 0..n {
        text.push_str(&format!("# sent_id = u{seed}-{s}\n"));
        for i in 1..=(4 + next(4)) {
            let stem: String = (0..2 + next(2)).map(|_| syllables[next(10) as usize]).collect();
            let form = format!("{stem}{}", if next(2) == 0 { "o" } else { "a" });
            let head = if i == 1 {
                0
            } else if form.ends_with('o') {
                1
            } else {
                i - 1
            };
            let deprel = if i == 1 { "root" } else { "dep" };
            text.push_str(&format!("{i}\t{form}\t_\tX\tX\t_\t{head}\t{deprel}\t_\t_\n"));
        }
        text.push('\n');
    }
    let path = dir.join(format!("suffix-{seed}.conllu"));
    std::fs::write(&path, text).unwrap();
    path
}

/// With a neural model serving, a task shows the parse the daemon published: the re-parse
/// reads the words' forms, as the neural parser does everywhere (it read none: every word's
/// characters, suffix and shape were an empty word's).
#[test]
fn with_a_neural_model_a_task_shows_the_published_parse() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    let out = common::train(
        &suffix_corpus(dir.path(), 300, 0),
        &model,
        &["--neural", "--neural-size", "small", "--neural-epochs", "6"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Words it never saw, of the same two endings: parsed by their characters and suffixes.
    std::fs::create_dir_all(dir.path().join("out/lowconf")).unwrap();
    let low = dir.path().join("out/lowconf/night.conllu");
    let args = ["--min-confidence", "1", "--rejected", low.to_str().unwrap()];
    let out = common::parse(&model, &suffix_corpus(dir.path(), 40, 1), &dir.path().join("accepted.conllu"), &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let p = dir.path().display();
    let config = dir.path().join("cfg.toml");
    std::fs::write(&config, format!("[paths]\nspool = \"{p}/spool\"\noutput = \"{p}/out\"\nmodel = \"{p}/m.model\"\n"))
        .unwrap();
    let published: std::collections::HashMap<String, Vec<(String, String)>> = std::fs::read_to_string(&low)
        .unwrap()
        .split("\n\n")
        .filter_map(|block| {
            let id = block.lines().find_map(|l| l.strip_prefix("# sent_id = "))?.to_string();
            let arcs = block
                .lines()
                .filter(|l| l.split('\t').count() == 10)
                .map(|l| {
                    let cols: Vec<&str> = l.split('\t').collect();
                    (cols[6].to_string(), cols[7].to_string())
                })
                .collect();
            Some((id, arcs))
        })
        .collect();
    let spool = Spool { dir, config };
    let server = Server::start(&spool, &[]);
    let tasks: Vec<Value> = (0..20).map(|_| server.get("/api/next").1).collect();
    for task in &tasks {
        let shown: Vec<(String, String)> = task["words"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| (w["head"].to_string(), w["deprel"].as_str().unwrap().to_string()))
            .collect();
        let id = task["sent_id"].as_str().unwrap();
        assert_eq!(shown, published[id], "{id}");
    }
}

#[test]
fn requests_that_cannot_be_right_are_refused_and_write_nothing() {
    let spool = Spool::new(8, "");
    let server = Server::start(&spool, &[]);
    let (_, task) = server.get("/api/next");
    let t = &task["task"];
    let answer =
        |arcs: Value, whole: bool| server.post("/api/answer", json!({ "task": t, "arcs": arcs, "whole": whole }));
    let refused = [
        (
            server.post("/api/answer", json!({ "task": "nope", "arcs": [{ "id": 1, "head": 2, "deprel": "det" }] })),
            410,
            "not yours",
        ),
        (
            answer(json!([{ "id": 1, "head": 2, "deprel": "foobarlabel" }]), false),
            422,
            "DEPREL foobarlabel is neither a UD relation nor a label",
        ),
        (
            answer(json!([{ "id": 1, "head": 2, "deprel": "det" }, { "id": 2, "head": 1, "deprel": "det" }]), false),
            422,
            "cycle",
        ),
        (answer(json!([{ "id": 1, "head": 9, "deprel": "det" }]), false), 422, "head 9 is not a word"),
        (answer(json!([{ "id": 7, "head": 1, "deprel": "det" }]), false), 422, "word 7 is not a word"),
        (answer(json!([{ "id": 1, "head": 1, "deprel": "det" }]), false), 422, "its own head"),
        (
            answer(json!([{ "id": 1, "head": 0, "deprel": "root" }, { "id": 2, "head": 0, "deprel": "root" }]), false),
            422,
            "one root",
        ),
        (answer(json!([{ "id": 1, "head": 2, "deprel": "det" }]), true), 422, "every word's arc"),
        (answer(json!([]), false), 422, "no arc"),
        (
            answer(json!([{ "id": 1, "head": 2, "upos": "NOUN" }, { "id": 2, "upos": "FOO" }]), false),
            422,
            "\"FOO\" is not a UD UPOS",
        ),
        (answer(json!([{ "id": 1, "head": 2, "upos": "noun" }]), false), 422, "not a UD UPOS"),
        (answer(json!([{ "id": 1, "head": 2, "xpos": "NN" }]), false), 422, "an XPOS goes with its UPOS"),
        (answer(json!([{ "id": 1, "head": 2, "upos": "NOUN", "xpos": "N N" }]), false), 422, "cannot be an XPOS"),
        (answer(json!([{ "id": 1, "head": 2 }, { "id": 9, "upos": "NOUN" }]), false), 422, "word 9: no such word"),
        (answer(json!([{ "id": 2, "upos": "NOUN" }]), false), 422, "a tag or lemma goes with an arc"),
        (answer(json!([{ "id": 2, "lemma": "dog" }]), false), 422, "a tag or lemma goes with an arc"),
        (answer(json!([{ "id": 1, "head": 2, "lemma": "_" }]), false), 422, "cannot be a lemma"),
        (answer(json!([{ "id": 1, "head": 2, "lemma": " " }]), false), 422, "cannot be a lemma"),
        (answer(json!([{ "id": 1, "head": 2, "lemma": "a\tb" }]), false), 422, "cannot be a lemma"),
        (answer(json!([{ "id": 1, "head": 2 }, { "id": 9, "lemma": "x" }]), false), 422, "word 9: no such word"),
        (
            answer(json!([{ "id": 1, "head": 2, "lemma": "a" }, { "id": 1, "lemma": "b" }]), false),
            422,
            "two different lemmas",
        ),
        (answer(json!([{ "id": 1, "head": 2, "tag": "NOUN" }]), false), 400, "unknown field `tag`"),
        (server.request("POST", "/api/answer", b"{not json", None), 400, "malformed JSON"),
        (server.request("POST", "/api/answer", &vec![b' '; (1 << 20) + 1], None), 413, "at most"),
        (server.get("/api/answer"), 405, "takes POST"),
        (server.get("/api/nothing"), 404, "no API"),
    ];
    for ((status, body), expected, says) in refused {
        assert_eq!(status, expected, "{body}");
        assert!(body["error"].as_str().unwrap_or("").contains(says), "{body} should say {says:?}");
    }
    assert!(spool.corrections().is_empty());
    // The task is still the annotator's, and can still be answered.
    assert_eq!(answer(json!([{ "id": 1, "head": 2, "deprel": "det" }]), false).0, 200);
}

/// The token lines of the correction file `path`, split into columns.
fn words_of(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.split('\t').count() == 10)
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

#[test]
fn a_tag_fixed_or_confirmed_with_an_answer_is_stored_marked_checked_and_audited() {
    let spool = Spool::new(12, "");
    let server = Server::start(&spool, &[]);
    let (_, task) = server.get("/api/next");
    let words = task["words"].as_array().unwrap();
    // The task shows each word's tags, as the corpus has them.
    assert_eq!((words[1]["upos"].as_str(), words[1]["xpos"].as_str()), (Some("NOUN"), Some("NOUN")), "{task}");
    // Word 2's UPOS fixed (no XPOS: the one shown was the old UPOS's, and this model has no
    // tagger to take one from), word 3's UPOS confirmed, word 5's UPOS and XPOS fixed, word 4's
    // arc alone answered.
    let arcs = json!([
        { "id": 2, "head": 3, "deprel": "nsubj", "upos": "PROPN" },
        { "id": 3, "head": null, "upos": "VERB" },
        { "id": 4, "head": 5, "deprel": "det" },
        { "id": 5, "upos": "X", "xpos": "FW" },
    ]);
    let (status, answer) = server.post("/api/answer", json!({ "task": task["task"], "arcs": arcs }));
    assert_eq!((status, &answer["stored"], &answer["tags"]), (200, &json!(2), &json!(3)), "{answer}");
    let file = &spool.corrections()[0];
    let stored: Vec<(String, String)> = words_of(file).iter().map(|w| (w[3].clone(), w[4].clone())).collect();
    let pair = |u: &str, x: &str| (u.to_string(), x.to_string());
    assert_eq!(
        stored,
        [pair("DET", "DET"), pair("PROPN", "_"), pair("VERB", "VERB"), pair("DET", "DET"), pair("X", "FW")]
    );
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains("# tags_checked = 5\n") && text.contains("# upos_checked = 2 3\n"), "{text}");
    assert!(!text.contains("# tags = reviewed"), "{text}");
    assert_eq!(arcs_of(file)[2], ("_".to_string(), "_".to_string()), "a tag alone answers no arc");
    // (A partial tree's `_` HEADs are not UD at level 2; the whole sentence below is validated.)
    // The audit log has every checked tag, before and after, and the arcs as before.
    let audit = std::fs::read_to_string(spool.annotated().join("workbench/audit.jsonl")).unwrap();
    let decision: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    let by_id = |id: u64| decision["arcs"].as_array().unwrap().iter().find(|a| a["id"] == id).cloned();
    assert_eq!(
        by_id(2).unwrap()["tag"],
        json!({ "old_upos": "NOUN", "old_xpos": "NOUN", "upos": "PROPN", "xpos": "_" })
    );
    assert_eq!(
        (by_id(3).unwrap()["head"].clone(), by_id(3).unwrap()["tag"]["upos"].clone()),
        (Value::Null, json!("VERB"))
    );
    assert!(by_id(4).unwrap().get("tag").is_none());
    assert!(by_id(1).is_none());
    assert_eq!(server.get("/api/stats").1["arcs_today"], json!(2), "tags are not counted as arcs");

    // Every word's UPOS and XPOS checked, with every arc: the sentence's tags are reviewed.
    let (_, task) = server.get("/api/next");
    let arcs: Vec<Value> = task["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| json!({ "id": w["id"], "head": w["head"], "deprel": w["deprel"], "upos": w["upos"], "xpos": w["xpos"] }))
        .collect();
    // Read, not rubber-stamped (see spoolparse::workbench::review).
    std::thread::sleep(Duration::from_millis(spoolparse::workbench::review::MIN_MS_PER_WORD * arcs.len() as u64 + 100));
    let (status, _) = server.post("/api/answer", json!({ "task": task["task"], "arcs": arcs, "whole": true }));
    assert_eq!(status, 200);
    let file = spool
        .corrections()
        .into_iter()
        .find(|f| std::fs::read_to_string(f).unwrap().contains("# reviewed = all"))
        .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("# tags = reviewed\n") && !text.contains("tags_checked"), "{text}");
    common::validate(&file, "en");
}

#[test]
fn a_lemma_fixed_or_confirmed_with_an_answer_is_stored_marked_checked_and_audited() {
    let spool = Spool::new(12, "");
    let server = Server::start(&spool, &[]);
    let (_, task) = server.get("/api/next");
    let words = task["words"].as_array().unwrap();
    // The task shows each word's lemma, as the corpus has it.
    let shown = words[1]["lemma"].as_str().unwrap().to_string();
    assert_eq!(Some(shown.as_str()), words[1]["form"].as_str(), "{task}");
    // Word 2's lemma fixed with its arc, word 4's confirmed alone with word 3's arc.
    let arcs = json!([
        { "id": 2, "head": 3, "deprel": "nsubj", "lemma": "dog" },
        { "id": 3, "head": 0, "deprel": "root" },
        { "id": 4, "lemma": words[3]["lemma"] },
    ]);
    let (status, answer) = server.post("/api/answer", json!({ "task": task["task"], "arcs": arcs }));
    assert_eq!((status, &answer["stored"], &answer["lemmas"]), (200, &json!(2), &json!(2)), "{answer}");
    let file = &spool.corrections()[0];
    let lemmas: Vec<String> = words_of(file).iter().map(|w| w[2].clone()).collect();
    let forms: Vec<String> = words.iter().map(|w| w["form"].as_str().unwrap().to_string()).collect();
    assert_eq!(lemmas, [forms[0].as_str(), "dog", forms[2].as_str(), forms[3].as_str(), forms[4].as_str()]);
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains("# lemmas_checked = 2 4\n"), "{text}");
    let audit = std::fs::read_to_string(spool.annotated().join("workbench/audit.jsonl")).unwrap();
    let decision: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    let by_id = |id: u64| decision["arcs"].as_array().unwrap().iter().find(|a| a["id"] == id).cloned();
    assert_eq!(by_id(2).unwrap()["lemma"], json!({ "old": shown, "new": "dog" }));
    assert_eq!(by_id(4).unwrap()["lemma"]["new"], json!(forms[3]));
    assert!(by_id(3).unwrap().get("lemma").is_none());
}

#[test]
fn a_task_is_resumed_as_it_was_given_while_it_is_the_annotators_and_not_after() {
    let spool = Spool::new(6, "");
    let server = Server::start(&spool, &[]);
    let (_, task) = server.get("/api/next");
    let (status, again) = server.post("/api/resume", json!({ "task": task["task"] }));
    assert_eq!((status, &again), (200, &task));
    let answer = json!({ "task": task["task"], "arcs": [{ "id": 1, "head": 2, "deprel": "det" }] });
    assert_eq!(server.post("/api/answer", answer).0, 200);
    let (status, body) = server.post("/api/resume", json!({ "task": task["task"] }));
    assert_eq!(status, 410, "{body}");
    assert_eq!(server.post("/api/resume", json!({ "task": "nope" })).0, 410);
}

/// A UD relation the model has not seen (`obl:tmod`) is a right answer: stored with its label,
/// the arc's head held in the re-parse. It used to be refused (422) as a label the model lacks.
#[test]
fn a_ud_relation_the_model_has_not_seen_is_stored_as_given() {
    let spool = Spool::new(6, "");
    let server = Server::start(&spool, &[]);
    let (_, labels) = server.get("/api/labels");
    assert!(!labels["labels"].as_array().unwrap().contains(&json!("obl:tmod")), "{labels}");
    assert!(labels["relations"].as_array().unwrap().contains(&json!("obl")), "{labels}");
    let (_, task) = server.get("/api/next");
    let arcs = json!([{ "id": 5, "head": 3, "deprel": "obl:tmod" }]);
    let (status, parsed) = server.post("/api/reparse", json!({ "task": task["task"], "arcs": arcs }));
    assert_eq!(status, 200, "{parsed}");
    assert_eq!((&parsed["words"][4]["head"], &parsed["words"][4]["deprel"]), (&json!(3), &json!("obl:tmod")));
    let (status, answer) = server.post("/api/answer", json!({ "task": task["task"], "arcs": arcs }));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(arcs_of(&spool.corrections()[0])[4], ("3".to_string(), "obl:tmod".to_string()));
}

/// A DEPREL whose subtype neither the model nor UD knows (`obl:tmodx`, `dislocated:foo`) is
/// refused with a 422 naming it and the labels close to it, and nothing is written: it was
/// stored as a new class.
#[test]
fn a_subtype_typo_is_refused_naming_the_label_and_nothing_is_written() {
    let spool = Spool::new(6, "");
    let server = Server::start(&spool, &[]);
    let (_, task) = server.get("/api/next");
    for label in ["obl:tmodx", "dislocated:foo"] {
        let arcs = json!([{ "id": 5, "head": 3, "deprel": label }]);
        for route in ["/api/reparse", "/api/answer"] {
            let (status, body) = server.post(route, json!({ "task": task["task"], "arcs": arcs }));
            assert_eq!(status, 422, "{route} {label}: {body}");
            let error = body["error"].as_str().unwrap_or_default();
            assert!(error.contains(&format!("DEPREL {label} is a subtype")) && error.contains("close to it"), "{body}");
        }
    }
    assert!(spool.corrections().is_empty());
}

/// A lemma with a control or separator character (U+2028, U+0085) or of 100,000 characters is
/// refused with a 422 saying why (not repeating it), and nothing is written: it was stored.
#[test]
fn a_lemma_with_a_separator_or_of_runaway_length_is_refused() {
    let spool = Spool::new(6, "");
    let server = Server::start(&spool, &[]);
    let (_, task) = server.get("/api/next");
    let long = "x".repeat(100_000);
    for (lemma, why) in [
        ("dog\u{2028}cat", "U+2028"),
        ("dog\u{85}cat", "U+0085"),
        (long.as_str(), "100000 characters long (at most 256)"),
    ] {
        let arcs = json!([{ "id": 2, "head": 3, "deprel": "nsubj", "lemma": lemma }]);
        let (status, body) = server.post("/api/answer", json!({ "task": task["task"], "arcs": arcs }));
        assert_eq!(status, 422, "{why}: {body}");
        let error = body["error"].as_str().unwrap_or_default();
        assert!(error.contains(why) && error.len() < 1000, "{error}");
    }
    assert!(spool.corrections().is_empty());
}

/// The sentences of a file the daemon held back as another language (its lowconf output
/// begins `# held_back = …`) are never queued: answered, they were stored or refused by their
/// length (the store judges a file's language from 50 words on).
#[test]
fn sentences_of_a_file_held_back_as_another_language_are_never_queued() {
    let spool = Spool::new(6, "");
    let lowconf = spool.dir.path().join("out/lowconf");
    let night = zstd::decode_all(std::fs::File::open(lowconf.join("night.conllu.zst")).unwrap()).unwrap();
    // Other words (not duplicates of night's), the mark at the head of the file.
    let foreign = String::from_utf8(night).unwrap().replace("\tw", "\tq");
    let foreign = format!("# held_back = another language: every sentence is in lowconf/\n{foreign}");
    std::fs::write(lowconf.join(".foreign.conllu"), foreign).unwrap();
    std::fs::rename(lowconf.join(".foreign.conllu"), lowconf.join("foreign.conllu")).unwrap();
    let server = Server::start(&spool, &[]);
    // Until the scan has been through both files (12 queued where the mark is not read).
    let deadline = Instant::now() + Duration::from_secs(20);
    let stats = loop {
        let (_, stats) = server.get("/api/stats");
        if stats["held_back_files"] == json!(1) || stats["queued"] == json!(12) || Instant::now() > deadline {
            break stats;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!((&stats["queued"], &stats["held_back_files"]), (&json!(6), &json!(1)), "{stats}");
    let asked = server.drain();
    assert_eq!(asked.len(), 6);
    let forms: Vec<&str> =
        asked.iter().flat_map(|t| t["words"].as_array().unwrap()).filter_map(|w| w["form"].as_str()).collect();
    assert!(forms.iter().all(|f| f.starts_with('w')), "{forms:?}");
}

/// A sentence of the gate's held-out file (`retrain.heldout`) is never asked about: the store
/// refuses an answer to one, which the page had acknowledged and counted, then lost.
#[test]
fn sentences_of_the_held_out_file_are_never_queued() {
    let probe = Spool::new(8, "");
    let heldout = probe.dir.path().join("heldout.conllu");
    // Three of the eight sentences, as the held-out file has them (gold, unparsed).
    let three: String = corpus(8).split("\n\n").take(3).map(|s| format!("{s}\n\n")).collect();
    std::fs::write(&heldout, three).unwrap();
    // No known-answer checks (drawn from the held-out file): only the queue's sentences are asked.
    let config = format!("[retrain]\nheldout = \"{}\"\n[annotate]\ncheck_every = 0\n", heldout.display());
    let spool = Spool::new(8, &config);
    let server = Server::start(&spool, &[]);
    let (_, stats) = server.get("/api/stats");
    assert_eq!((&stats["queued"], &stats["held_out"]), (&json!(5), &json!(3)), "{stats}");
    let asked: Vec<String> = server.drain().iter().map(|t| t["sent_id"].as_str().unwrap().to_string()).collect();
    assert_eq!(asked.len(), 5);
    assert!(asked.iter().all(|id| !["s0", "s1", "s2"].contains(&id.as_str())), "{asked:?}");
}

#[test]
fn a_reparse_parses_with_the_tags_given() {
    let spool = Spool::new(12, "");
    let server = Server::start(&spool, &[]);
    let (_, task) = server.get("/api/next");
    let (status, parsed) =
        server.post("/api/reparse", json!({ "task": task["task"], "arcs": [{ "id": 3, "upos": "ADP" }] }));
    assert_eq!(status, 200, "{parsed}");
    assert_eq!((parsed["words"][2]["upos"].as_str(), parsed["words"][2]["xpos"].as_str()), (Some("ADP"), Some("_")));
}

#[test]
fn without_tokens_it_listens_on_loopback_only_and_with_them_every_request_needs_one() {
    let spool = Spool::new(6, "");
    spool.run_retraining();
    let out = common::spoolparse(&["annotate", "--config", spool.config.to_str().unwrap(), "--listen", "0.0.0.0:0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("not a loopback address"), "{stderr}");
    with_tokens(&spool, &[("ana", false), ("root", true)]);
    let with_tokens = spool;
    let mut server = Server::start_as(&with_tokens, &[], Some("tok-ana"));
    server.token = None;
    assert_eq!(server.get("/api/stats").0, 401);
    assert_eq!(server.request("GET", "/api/stats", b"", Some("wrong")).0, 401);
    assert_eq!(server.get("/").0, 200, "the page itself asks for the token");
    assert_eq!(server.request("GET", "/api/stats", b"", Some("tok-ana")).0, 200);
    let (status, body) = server.request("POST", "/api/retrain", b"", Some("tok-ana"));
    assert_eq!(status, 403, "{body}");
    assert!(!with_tokens.annotated().join(".retrain-requested").exists());
    assert_eq!(server.request("POST", "/api/retrain", b"", Some("tok-root")).0, 202);
    assert!(with_tokens.annotated().join(".retrain-requested").exists());
    // An answer records its annotator.
    let deadline = Instant::now() + Duration::from_secs(20);
    let task = loop {
        let (status, task) = server.request("GET", "/api/next", b"", Some("tok-ana"));
        if status == 200 {
            break task;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(50));
    };
    // Another annotator cannot answer ana's task.
    let body = json!({ "task": task["task"], "arcs": [{ "id": 1, "head": 2, "deprel": "det" }] }).to_string();
    assert_eq!(server.request("POST", "/api/answer", body.as_bytes(), Some("tok-root")).0, 410);
    assert_eq!(server.request("POST", "/api/answer", body.as_bytes(), Some("tok-ana")).0, 200);
    let text = std::fs::read_to_string(&with_tokens.corrections()[0]).unwrap();
    assert!(text.contains("# annotator = ana"), "{text}");
}

/// "Retrain now" on a daemon whose configuration runs no cycle is refused saying so, and asks
/// for nothing (it used to answer that the cycle runs now).
#[test]
fn asking_for_a_retraining_the_configuration_does_not_run_is_refused_saying_why() {
    let spool = Spool::new(6, "");
    let server = Server::start(&spool, &[]);
    let (status, body) = server.post("/api/retrain", json!({}));
    assert_eq!(status, 409, "{body}");
    assert!(body["error"].as_str().unwrap_or("").contains("[retrain] enabled = false"), "{body}");
    assert!(!spool.annotated().join(".retrain-requested").exists());
}

/// Listening on every address with tokens, a request that names the machine by its loopback
/// address, `localhost` or its host name with the port is served (every request, the page
/// included, used to be a 403 unless `hosts` listed the name with its port); a name is taken
/// by `--listen` (`localhost:PORT` used to be refused as no address); a foreign name is still
/// refused.
#[test]
fn on_every_address_with_tokens_the_machines_own_names_are_served_and_a_name_can_be_listened_on() {
    let spool = Spool::new(6, "");
    with_tokens(&spool, &[("ana", false)]);
    let server = Server::start_on(&spool, "0.0.0.0:0", &[], Some("tok-ana"));
    let port = server.addr.port();
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|n| n.trim().to_string()).unwrap_or_default();
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("{name}:{port}")] {
        for path in ["/", "/api/stats"] {
            let (status, body) = server.raw("GET", path, &format!("Host: {host}\r\n"), b"", Some("tok-ana"));
            assert_eq!(status, 200, "GET {path} for {host}: {body}");
        }
    }
    let (status, _) = server.raw("GET", "/api/stats", "Host: evil.example\r\n", b"", Some("tok-ana"));
    assert_eq!(status, 403, "a foreign name");
    drop(server);
    let server = Server::start_on(&Spool::new(6, ""), "localhost:0", &[], None);
    assert!(server.addr.ip().is_loopback(), "{}", server.addr);
    let (status, body) =
        server.raw("GET", "/api/stats", &format!("Host: localhost:{}\r\n", server.addr.port()), b"", None);
    assert_eq!(status, 200, "{body}");
}

/// A web page on another site cannot act on the workbench, tokens or not: a `text/plain` POST
/// (a "simple" request, sent without asking), a request from a foreign `Origin` and one for a
/// foreign `Host` (DNS rebinding) are refused on every route that changes state or leases
/// work, and write nothing. They used to be obeyed (202 for `/api/retrain`, 200 for an answer).
#[test]
fn cross_origin_and_foreign_host_requests_are_refused_with_and_without_tokens() {
    for tokens in [false, true] {
        let spool = Spool::new(6, "");
        if tokens {
            with_tokens(&spool, &[("root", true)]);
        }
        let token = tokens.then_some("tok-root");
        let server = Server::start_as(&spool, &[], token);
        let (_, task) = server.get("/api/next");
        let answer = json!({ "task": task["task"], "arcs": [{ "id": 1, "head": 2, "deprel": "det" }] }).to_string();
        let host = format!("Host: {}\r\n", server.addr);
        let evil = "Origin: http://evil.example\r\nContent-Type: text/plain\r\n";
        let routes: [(&str, &str, &[u8]); 6] = [
            ("POST", "/api/retrain", b"{}"),
            ("POST", "/api/answer", answer.as_bytes()),
            ("POST", "/api/reparse", answer.as_bytes()),
            ("POST", "/api/skip", answer.as_bytes()),
            ("POST", "/api/bad", answer.as_bytes()),
            ("GET", "/api/next", b""),
        ];
        for (method, path, body) in routes {
            let tries = [
                (format!("{host}{evil}"), "from"),
                (format!("{host}Origin: http://evil.example\r\nContent-Type: application/json\r\n"), "from"),
                ("Host: evil.example\r\nContent-Type: application/json\r\n".to_string(), "Host"),
                (format!("Host: evil.example:{}\r\nContent-Type: application/json\r\n", server.addr.port()), "Host"),
                (format!("{host}Sec-Fetch-Site: cross-site\r\nContent-Type: application/json\r\n"), "another site"),
            ];
            for (headers, says) in tries {
                let (status, body) = server.raw(method, path, &headers, body, token);
                assert_eq!(status, 403, "tokens {tokens}: {method} {path} with {headers:?}: {body}");
                assert!(body["error"].as_str().unwrap_or("").contains(says), "{body}");
            }
            if method == "POST" {
                let (status, _) = server.raw(method, path, &format!("{host}Content-Type: text/plain\r\n"), body, token);
                assert_eq!(status, 403, "tokens {tokens}: a text/plain {path}");
            }
        }
        assert!(spool.corrections().is_empty(), "tokens {tokens}: an answer was stored");
        assert!(!spool.annotated().join(".retrain-requested").exists(), "tokens {tokens}");
        // The workbench's own page (same origin, JSON) is obeyed.
        let same = format!("{host}Origin: http://{}\r\nContent-Type: application/json\r\n", server.addr);
        assert_eq!(server.raw("POST", "/api/answer", &same, answer.as_bytes(), token).0, 200);
    }
}

/// Sockets that send half a request line and wait take a connection each, but never lock out
/// another client: at the limit (64) a new connection takes the place of the oldest one still
/// sending its head. They used to get every other request a 503 for 10 s.
#[test]
fn half_open_connections_never_lock_out_another_client() {
    let spool = Spool::new(6, "");
    let server = Server::start(&spool, &[]);
    let held: Vec<TcpStream> = (0..80)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).unwrap();
            s.write_all(b"GET /api/stats HT").unwrap();
            s
        })
        .collect();
    for _ in 0..5 {
        let (status, body) = server.get("/api/stats");
        assert_eq!(status, 200, "{body}");
    }
    drop(held);
}

#[test]
fn every_acknowledged_answer_survives_kill_9_and_is_stored_exactly_once() {
    let spool = Spool::new(10, "");
    let mut acknowledged = Vec::new();
    for _ in 0..5 {
        let server = Server::start(&spool, &[]);
        let (status, task) = server.get("/api/next");
        assert_eq!(status, 200, "{task}");
        let (status, _) = server
            .post("/api/answer", json!({ "task": task["task"], "arcs": [{ "id": 2, "head": 3, "deprel": "nsubj" }] }));
        assert_eq!(status, 200);
        acknowledged.push(task["sent_id"].as_str().unwrap().to_string());
        // SIGKILL at once: no chance to flush anything the answer had not made durable.
        server.kill();
    }
    let mut stored: Vec<String> = spool
        .corrections()
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.lines().find_map(|l| l.strip_prefix("# sent_id = ")).unwrap().to_string()
        })
        .collect();
    stored.sort();
    acknowledged.sort();
    assert_eq!(stored, acknowledged, "each acknowledged answer once, nothing else");
    let leftovers: Vec<_> = std::fs::read_dir(spool.annotated())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "no temporary left where the daemon reads: {leftovers:?}");
}

#[test]
fn several_annotators_at_once_never_share_a_task_and_a_kill_9_among_them_loses_no_answer() {
    let spool = Spool::new(60, "");
    let names = ["ana", "bo", "cy"];
    with_tokens(&spool, &names.map(|n| (n, false)));
    let mut acknowledged: Vec<(String, String)> = Vec::new(); // (annotator, sent_id)
    for round in 0..2 {
        let server = Server::start_as(&spool, &[], Some("tok-ana"));
        let answered = std::sync::Mutex::new(Vec::new());
        let held = std::sync::Mutex::new(std::collections::HashMap::<String, String>::new());
        std::thread::scope(|scope| {
            for name in names {
                let (server, answered, held) = (&server, &answered, &held);
                scope.spawn(move || {
                    let token = format!("tok-{name}");
                    for _ in 0..6 {
                        let (status, task) = server.request("GET", "/api/next", b"", Some(&token));
                        assert_eq!(status, 200, "{task}");
                        let sid = task["sent_id"].as_str().unwrap().to_string();
                        let other = held.lock().unwrap().insert(sid.clone(), name.to_string());
                        assert!(other.is_none(), "{sid} handed to {name} while {other:?} holds it");
                        let body = json!({ "task": task["task"], "arcs": [{ "id": 2, "head": 3, "deprel": "nsubj" }] });
                        let (status, reply) =
                            server.request("POST", "/api/answer", body.to_string().as_bytes(), Some(&token));
                        assert_eq!(status, 200, "{reply}");
                        answered.lock().unwrap().push((name.to_string(), sid.clone()));
                        held.lock().unwrap().remove(&sid);
                    }
                });
            }
        });
        acknowledged.extend(answered.into_inner().unwrap());
        // One more task leased and left unanswered, then SIGKILL: it must come back, and no
        // acknowledged answer may be lost or doubled.
        let (status, _) = server.get("/api/next");
        assert_eq!(status, 200, "round {round}");
        server.kill();
    }
    let mut stored: Vec<(String, String)> = spool
        .corrections()
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let get = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)).unwrap().to_string();
            (get("# annotator = "), get("# sent_id = "))
        })
        .collect();
    stored.sort();
    acknowledged.sort();
    assert_eq!(stored.len(), 36);
    assert_eq!(stored, acknowledged, "each acknowledged answer once, under its annotator");
    let mut sentences: Vec<&String> = stored.iter().map(|(_, s)| s).collect();
    sentences.dedup();
    assert_eq!(sentences.len(), 36, "no sentence asked twice, across the restart");
    // The audit log says what the queue knew of every checked arc it learned from.
    let audit = std::fs::read_to_string(spool.annotated().join("workbench/audit.jsonl")).unwrap();
    assert!(audit.lines().any(|l| l.contains("\"checked\"")), "{audit}");
}

/// Gold sentences of the queue's shape whose trees the fixture's model never parses: a chain
/// (each word the dependent of the one before), where the model learned DET NOUN VERB DET NOUN
/// as det nsubj root det obj. `# sent_id = kN`.
fn known_gold(n: usize) -> String {
    let tags = ["DET", "NOUN", "VERB", "DET", "NOUN"];
    let arcs = [(0, "root"), (1, "obj"), (2, "nsubj"), (3, "det"), (4, "obj")];
    let mut text = String::new();
    for s in 0..n {
        let forms: Vec<String> = (0..tags.len()).map(|i| format!("k{s}y{i}")).collect();
        text.push_str(&format!("# sent_id = k{s}\n# text = {}\n", forms.join(" ")));
        for (i, (tag, (head, rel))) in tags.iter().zip(arcs).enumerate() {
            let form = &forms[i];
            text.push_str(&format!("{}\t{form}\t{form}\t{tag}\t{tag}\t_\t{head}\t{rel}\t_\t_\n", i + 1));
        }
        text.push('\n');
    }
    text
}

/// A spool of `n` queued sentences whose retraining names a held-out file of `known` gold
/// sentences the model gets wrong ([`known_gold`]), with a check every `every` tasks.
fn spool_with_checks(n: usize, known: usize, every: u32) -> Spool {
    let spool = Spool::new(n, "");
    let heldout = spool.dir.path().join("heldout.conllu");
    std::fs::write(&heldout, known_gold(known)).unwrap();
    let config = std::fs::read_to_string(&spool.config).unwrap();
    let checks = format!("[retrain]\nheldout = \"{}\"\n[annotate]\ncheck_every = {every}\n", heldout.display());
    std::fs::write(&spool.config, format!("{config}\n{checks}")).unwrap();
    spool
}

/// The gold arcs of the sentence `sent_id` (`sN` of [`corpus`], `kN` of [`known_gold`]).
fn gold_of(sent_id: &str) -> Vec<Value> {
    let tree: &[(u32, &str)] = if sent_id.starts_with('k') {
        &[(0, "root"), (1, "obj"), (2, "nsubj"), (3, "det"), (4, "obj")]
    } else {
        &[(2, "det"), (3, "nsubj"), (0, "root"), (5, "det"), (3, "obj")]
    };
    tree.iter().enumerate().map(|(i, (h, d))| json!({ "id": i + 1, "head": h, "deprel": d })).collect()
}

/// How long a reader at the tester's pace takes before answering `arcs` to `task`: 0.26 s a
/// word for a whole sentence confirmed as shown, 1.05 s for each word flagged likely wrong
/// confirmed as shown (just over the speed limits of `review`, which such a pace passes).
fn reading_pace(task: &Value, arcs: &[Value]) -> Duration {
    let words = task["words"].as_array().unwrap();
    let unchanged =
        |w: &Value| arcs.iter().any(|a| a["id"] == w["id"] && a["head"] == w["head"] && a["deprel"] == w["deprel"]);
    let all = if words.iter().all(unchanged) { 260 * words.len() as u64 } else { 0 };
    let likely_wrong =
        words.iter().filter(|w| w["check"] == true && 1.0 - w["conf"].as_f64().unwrap() >= 0.5 && unchanged(w)).count()
            as u64;
    Duration::from_millis(all.max(1050 * likely_wrong))
}

/// Answers `task` whole with `arcs` at the tester's reading pace.
fn answer_at_reading_pace(server: &Server, task: &Value, arcs: Vec<Value>) -> Value {
    answer_as(server, server.token.as_deref(), task, arcs)
}

/// [`answer_at_reading_pace`] as the annotator of `token`.
fn answer_as(server: &Server, token: Option<&str>, task: &Value, arcs: Vec<Value>) -> Value {
    std::thread::sleep(reading_pace(task, &arcs));
    let body = json!({ "task": task["task"], "arcs": arcs, "whole": true });
    let (status, answer) = server.request("POST", "/api/answer", body.to_string().as_bytes(), token);
    assert_eq!(status, 200, "{answer}");
    answer
}

/// Every file under annotated/ but the workbench's own (audit log, check results).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() && entry.file_name() != "workbench" {
            out.extend(files_under(&path));
        } else if path.is_file() {
            out.push(path);
        }
    }
    out
}

/// The tester's trial: confirming the parser's tree whole at 0.26 s a word and 1.05 s a
/// flagged word passes every speed limit, and stored 6 of 6 such answers as reviewed gold. The
/// known-answer checks hold such an annotator back: their first check fails, and from then on
/// nothing they answer is stored as a correction; /api/models says so. Checks come at random
/// (one task in two), so the trial goes on past six tasks until a queued sentence has been
/// answered: the six known sentences run out by the twelfth task at the latest.
#[test]
fn a_rubber_stamp_at_reading_pace_fails_the_known_answer_checks_and_is_held_back() {
    let spool = spool_with_checks(12, 6, 2);
    let server = Server::start(&spool, &[]);
    let mut answers = Vec::new();
    let (mut checks, mut queued) = (0, 0);
    while answers.len() < 6 || queued == 0 {
        assert!(answers.len() < 12, "no queued sentence among 12 tasks with 6 known-answer checks");
        let (status, task) = server.get("/api/next");
        assert_eq!(status, 200, "{task}");
        if task["sent_id"].as_str().unwrap().starts_with('k') {
            checks += 1;
        } else {
            queued += 1;
        }
        answers.push(answer_at_reading_pace(&server, &task, as_shown(&task)));
    }
    assert!(spool.corrections().is_empty(), "a rubber stamp's answers are no corrections: {:?}", spool.corrections());
    assert!(
        answers
            .iter()
            .all(|a| a["stored"] == json!(0)
                && a["held_back"].as_str().is_some_and(|w| w.contains("known-answer check"))),
        "{answers:?}"
    );
    assert!(checks >= 1, "no known-answer check among the tasks at one in two");
    let held = files_under(&spool.annotated().join("suspect"));
    assert!(!held.is_empty(), "the queue's sentences answered are set aside for review");
    for file in &held {
        assert!(!std::fs::read_to_string(file).unwrap().contains("sent_id = k"), "a check set aside: {file:?}");
    }
    let (_, models) = server.get("/api/models");
    let me = &models["annotators"][0];
    assert_eq!(me["name"], "local", "{models}");
    assert_eq!((me["passed"].as_u64(), me["failed"].as_u64()), (Some(0), Some(checks as u64)), "{models}");
    assert!(me["held_back"].as_str().is_some(), "{models}");
}

/// An annotator who answers gold (correcting the model where it is wrong) passes every check,
/// is never held back, and every answer they give to the queue's sentences is stored; the
/// checks' answers are not.
#[test]
fn an_honest_annotator_passes_the_checks_and_every_answer_to_the_queue_is_stored() {
    let spool = spool_with_checks(6, 6, 2);
    let server = Server::start(&spool, &[]);
    let (mut queued, mut checks) = (0, 0);
    loop {
        let (status, task) = server.get("/api/next");
        if status == 204 {
            break;
        }
        let sent_id = task["sent_id"].as_str().unwrap().to_string();
        let answer = answer_at_reading_pace(&server, &task, gold_of(&sent_id));
        assert!(answer["held_back"].is_null(), "{sent_id}: {answer}");
        assert_eq!(answer["stored"], json!(5), "{sent_id}: {answer}");
        if sent_id.starts_with('k') {
            checks += 1;
        } else {
            queued += 1;
        }
    }
    assert_eq!(queued, 6);
    assert!(checks >= 1, "the first task of an annotator without a result is a check");
    assert_eq!(spool.corrections().len(), queued, "every answer to a queued sentence is stored");
    let (_, models) = server.get("/api/models");
    let me = &models["annotators"][0];
    assert_eq!((me["passed"].as_u64(), me["failed"].as_u64()), (Some(checks as u64), Some(0)), "{models}");
    assert!(me["held_back"].is_null(), "{models}");
}

/// A check is shown as any task is (the same fields, the words to check flagged), and its
/// answer, gold as it is, is written nowhere the daemon takes training data from: not in
/// annotated/, nor set aside; only the audit log has it, as a `check`.
#[test]
fn a_known_answer_task_looks_like_any_task_and_its_answer_never_lands_in_the_training_store() {
    let spool = spool_with_checks(6, 3, 2);
    let server = Server::start(&spool, &[]);
    let (_, check) = server.get("/api/next");
    assert!(check["sent_id"].as_str().unwrap().starts_with('k'), "an annotator's first task is a check: {check}");
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<String>>();
    let (status, answer) =
        server.post("/api/answer", json!({ "task": check["task"], "arcs": gold_of("k0"), "whole": true }));
    assert_eq!(status, 200, "{answer}");
    let task = (0..10).map(|_| server.get("/api/next").1).find(|t| t["sent_id"].as_str().unwrap().starts_with('s'));
    let task = task.expect("a queued sentence within 10 tasks");
    assert_eq!(keys(&check), keys(&task));
    assert_eq!(keys(&check["words"][0]), keys(&task["words"][0]));
    assert_eq!(check["words"].as_array().unwrap().iter().filter(|w| w["check"] == true).count(), 3, "{check}");
    let stored = answer_at_reading_pace(&server, &task, gold_of("s0"));
    assert_eq!(keys(&answer), keys(&stored), "{answer} {stored}");
    let form = check["words"][0]["form"].as_str().unwrap();
    for file in files_under(&spool.annotated()) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(form) && !text.contains("sent_id = k"), "{file:?}:\n{text}");
    }
    let audit = std::fs::read_to_string(spool.annotated().join("workbench/audit.jsonl")).unwrap();
    let first: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!((&first["decision"], &first["reason"]), (&json!("check"), &json!("passed")), "{first}");
}

/// One slip costs an honest annotator nothing: after a single failed check their answers wait,
/// set aside, and once their next check passes every one of them is stored. The check after a
/// failure comes at random (one task in two), so that which task it is cannot be known: each
/// annotator tries until a queued task comes between the failed check and the next one (20
/// annotators: all 20 see a check at once with a chance of one in a million).
#[test]
fn after_one_failed_check_the_answers_wait_and_are_all_stored_when_the_next_check_passes() {
    let spool = Spool::new(40, "");
    let names: Vec<String> = (0..20).map(|i| format!("a{i}")).collect();
    with_tokens(&spool, &names.iter().map(|n| (n.as_str(), false)).collect::<Vec<_>>());
    let heldout = spool.dir.path().join("heldout.conllu");
    std::fs::write(&heldout, known_gold(6)).unwrap();
    let config = std::fs::read_to_string(&spool.config).unwrap();
    let checks = format!("check_every = 2\n[retrain]\nheldout = \"{}\"\n", heldout.display());
    std::fs::write(&spool.config, format!("{config}{checks}")).unwrap();
    let server = Server::start_as(&spool, &[], Some("tok-a0"));
    let is_check = |task: &Value| task["sent_id"].as_str().unwrap().starts_with('k');
    let mut waited = Vec::new();
    for name in &names {
        let token = format!("tok-{name}");
        let next = || server.request("GET", "/api/next", b"", Some(&token)).1;
        let first = next();
        assert!(is_check(&first), "a new annotator's first task is a check: {first}");
        let slip = answer_as(&server, Some(&token), &first, as_shown(&first));
        assert!(slip["held_back"].as_str().is_some_and(|w| w.contains("wait")), "{slip}");
        let mut task = next();
        while !is_check(&task) {
            let sent_id = task["sent_id"].as_str().unwrap().to_string();
            let answer = answer_as(&server, Some(&token), &task, gold_of(&sent_id));
            assert!(answer["held_back"].as_str().is_some_and(|w| w.contains("wait")), "{answer}");
            assert!(spool.corrections().is_empty(), "an answer stored while it waits for a check");
            waited.push(sent_id);
            task = next();
        }
        let passed = answer_as(&server, Some(&token), &task, gold_of("k"));
        assert!(passed["held_back"].is_null(), "{passed}");
        if !waited.is_empty() {
            break;
        }
    }
    assert!(!waited.is_empty(), "every annotator's check came right after the failed one");
    let stored: Vec<String> = spool
        .corrections()
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .map(|t| t.lines().find_map(|l| l.strip_prefix("# sent_id = ")).unwrap().to_string())
        .collect();
    assert_eq!(stored.len(), waited.len(), "{stored:?} {waited:?}");
    assert!(waited.iter().all(|id| stored.contains(id)), "{stored:?} {waited:?}");
    assert!(files_under(&spool.annotated().join("suspect")).is_empty(), "nothing left set aside");
}

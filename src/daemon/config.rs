//! The daemon's TOML configuration: what it reads, how it is checked, and its defaults. Unknown
//! keys and out-of-range values are errors that name the key. This module must not act on the
//! configuration (no directories created, no model opened).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The whole configuration file. Relative paths are relative to the working directory.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub paths: Paths,
    #[serde(default)]
    pub parse: Parse,
    #[serde(default)]
    pub queues: Queues,
    #[serde(default)]
    pub watch: Watch,
    #[serde(default)]
    pub metrics: Metrics,
    #[serde(default)]
    pub shutdown: Shutdown,
    #[serde(default)]
    pub limits: Limits,
    #[serde(default)]
    pub retrain: crate::retrain::Settings,
    #[serde(default)]
    pub annotate: Annotate,
}

/// `[annotate]`: the correction workbench (`spoolparse annotate`), a process of its own.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Annotate {
    /// Where it listens: loopback unless `tokens_file` is set.
    pub listen: String,
    /// Annotators, with the SHA-256 of their tokens; without it, loopback only, one annotator.
    pub tokens_file: Option<PathBuf>,
    /// Names the workbench is reached by besides its listen address (`localhost` too for a
    /// loopback one), as browsers send them in `Host`: a reverse proxy's (`wb.example.org`,
    /// `wb.example.org:8443`). Requests for any other are refused (DNS rebinding).
    pub hosts: Vec<String>,
    /// One task in this many (drawn at random) is a known-answer check: a sentence of the
    /// retraining's gold data the serving model gets wrong (`crate::workbench::known`); 0: none.
    pub check_every: u32,
    /// One task in this many (drawn at random), and every task once the low-confidence queue is
    /// done, is a sentence of a uniform sample of everything published, reviewed whole: what the
    /// precision of `accepted/` is measured on (`crate::workbench::sample`); 0: none.
    pub sample_every: u32,
}

impl Default for Annotate {
    fn default() -> Self {
        Annotate {
            listen: "127.0.0.1:8040".to_string(),
            tokens_file: None,
            hosts: Vec::new(),
            check_every: 10,
            sample_every: 10,
        }
    }
}

/// `[paths]`: where everything is.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paths {
    /// Holds `incoming/`, `processing/`, `done/` and `failed/` (created if missing).
    pub spool: PathBuf,
    /// Holds `accepted/` and `lowconf/` (created if missing).
    pub output: PathBuf,
    /// The model file (see `spoolparse train`); re-read on SIGHUP. The daemon never maps it:
    /// it copies it into `models` first, so that it may be overwritten in place at any time.
    pub model: PathBuf,
    /// The daemon's own model files, immutable and named by content, `current` (the serving
    /// one) and the history of promotions (default `SPOOL/models`).
    pub models: Option<PathBuf>,
    /// Where people drop corrected sentences for retraining (default `SPOOL/annotated`).
    pub annotated: Option<PathBuf>,
}

impl Paths {
    /// The directory of the daemon's own model files.
    pub fn models(&self) -> PathBuf {
        self.models.clone().unwrap_or_else(|| self.spool.join("models"))
    }

    /// The annotation store's directory.
    pub fn annotated(&self) -> PathBuf {
        self.annotated.clone().unwrap_or_else(|| self.spool.join("annotated"))
    }
}

/// `[parse]`: how sentences are parsed and split.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Parse {
    /// Parsing threads (default: one per CPU the daemon may use, [`crate::base::available_cpus`]).
    pub threads: usize,
    /// Sentences whose confidence (mean calibrated arc confidence) is below this go to
    /// `lowconf/`; the others to `accepted/` ([`DEFAULT_MIN_CONFIDENCE`] when neither this nor
    /// `min_precision` is given).
    pub min_confidence: Option<f64>,
    /// The share of the words in `accepted/` that must be right: the threshold that gives it on
    /// the model's calibration text ([`crate::parse::precision`]), chosen at each model load.
    /// With `min_confidence` too, the higher threshold is used.
    pub min_precision: Option<f64>,
    /// Write confidences into the output (`Conf=` in MISC, `# confidence`, `# tree_prob`).
    pub write_confidence: bool,
    /// When the model's tagger replaces the input's UPOS and XPOS: `auto` (when most of a
    /// file's first words have tags the model was not trained on, see [`crate::parse::fit`]),
    /// `always` (FEATS and LEMMA too) or `never`. FEATS and LEMMA are otherwise the file's own,
    /// or predicted where it has none.
    pub retag: crate::parse::fit::Retag,
    /// Where the sentences of `*.raw` files end: `model` (the tokenizer's sentence ends) or
    /// `lines` (one sentence per line).
    pub raw_sentences: crate::parse::raw::RawSentences,
}

/// The threshold of a configuration that gives neither `parse.min_confidence` nor
/// `parse.min_precision`.
pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.8;

impl Parse {
    /// The minimum confidence given, or the default one when no precision is asked for either.
    pub fn given_min_confidence(&self) -> Option<f64> {
        match (self.min_confidence, self.min_precision) {
            (None, None) => Some(DEFAULT_MIN_CONFIDENCE),
            (given, _) => given,
        }
    }
}

impl Default for Parse {
    fn default() -> Self {
        Parse {
            threads: crate::base::available_cpus(),
            min_confidence: None,
            min_precision: None,
            write_confidence: true,
            retag: crate::parse::fit::Retag::Auto,
            raw_sentences: crate::parse::raw::RawSentences::Model,
        }
    }
}

/// `[queues]`: what bounds memory.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Queues {
    /// Files open at the same time, read in turns, a batch each. Files overlap in the pipeline
    /// anyway: the next file is read while the last batches of the previous one are parsed
    /// and written.
    pub readers: usize,
    /// A batch of sentences is closed once it holds this many words.
    pub batch_words: usize,
    /// Batches in circulation per parsing thread.
    pub batches_per_thread: usize,
}

impl Default for Queues {
    fn default() -> Self {
        Queues { readers: 1, batch_words: 4096, batches_per_thread: 4 }
    }
}

/// `[watch]`: how new files in `incoming/` are noticed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Watch {
    /// Be woken by inotify when files arrive.
    pub inotify: bool,
    /// Rescan `incoming/` (and `processing/`, for files of dead daemons) this often in any
    /// case: events can be missed.
    pub rescan_seconds: f64,
}

impl Default for Watch {
    fn default() -> Self {
        Watch { inotify: true, rescan_seconds: 5.0 }
    }
}

/// `[metrics]`: the Prometheus text file for node_exporter's textfile collector.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Metrics {
    /// Where to write the metrics (atomically); none if absent.
    pub file: Option<PathBuf>,
    /// How often to rewrite it.
    pub interval_seconds: f64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics { file: None, interval_seconds: 10.0 }
    }
}

/// `[shutdown]`: SIGTERM and SIGINT.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Shutdown {
    /// Files being parsed may finish for this long; then they are left in `processing/`, to
    /// be parsed again from the start by the next daemon.
    pub grace_seconds: f64,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown { grace_seconds: 5.0 }
    }
}

/// `[limits]`: the largest sentence taken; larger ones go to `lowconf/` unparsed, with a
/// `# spoolparse_error`, without ever being held whole in memory.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Syntactic words per sentence.
    pub max_sentence_words: usize,
    /// Bytes per sentence (and so per line).
    pub max_sentence_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        let d = crate::corpus::Limits::default();
        Limits { max_sentence_words: d.max_words, max_sentence_bytes: d.max_bytes }
    }
}

impl Limits {
    /// The reader's limits.
    pub fn reader(&self) -> crate::corpus::Limits {
        crate::corpus::Limits { max_words: self.max_sentence_words, max_bytes: self.max_sentence_bytes }
    }
}

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    #[error("{}: {message}", path.display())]
    Syntax { path: PathBuf, message: String },
    #[error("{}: {key}: {problem}", path.display())]
    Value { path: PathBuf, key: &'static str, problem: String },
}

impl Config {
    /// Reads and checks the configuration at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|error| ConfigError::Read { path: path.to_path_buf(), error })?;
        Config::parse(&text, path)
    }

    /// Parses and checks configuration `text`, naming `path` in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let mut config: Config = toml::from_str(text)
            .map_err(|e| ConfigError::Syntax { path: path.to_path_buf(), message: e.to_string().trim_end().into() })?;
        config.retrain.default_unlabeled(&config.paths.output);
        config.check().map_err(|(key, problem)| ConfigError::Value { path: path.to_path_buf(), key, problem })?;
        Ok(config)
    }

    fn check(&self) -> Result<(), (&'static str, String)> {
        // Eleven days: longer waits are typos, and `Duration` arithmetic must not overflow.
        const MAX_SECONDS: f64 = 1e6;
        let at_least_one = |key: &'static str, v: usize| {
            if v == 0 {
                Err((key, "must be at least 1 (got 0)".to_string()))
            } else {
                Ok(())
            }
        };
        let positive_seconds = |key: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 && v < MAX_SECONDS {
                Ok(())
            } else {
                // A huge value is written out in full by `{}`: three hundred digits.
                let got = if v.abs() < MAX_SECONDS { v.to_string() } else { format!("{v:e}") };
                Err((key, format!("must be a number of seconds above 0 and below {MAX_SECONDS:e} (got {got})")))
            }
        };
        at_least_one("parse.threads", self.parse.threads)?;
        at_least_one("queues.readers", self.queues.readers)?;
        at_least_one("queues.batch_words", self.queues.batch_words)?;
        at_least_one("queues.batches_per_thread", self.queues.batches_per_thread)?;
        at_least_one("limits.max_sentence_words", self.limits.max_sentence_words)?;
        if self.limits.max_sentence_bytes < 1024 {
            return Err((
                "limits.max_sentence_bytes",
                format!("must be 1024 or more (got {})", self.limits.max_sentence_bytes),
            ));
        }
        for (key, value) in
            [("parse.min_confidence", self.parse.min_confidence), ("parse.min_precision", self.parse.min_precision)]
        {
            if let Some(v) = value.filter(|v| !(0.0..=1.0).contains(v)) {
                return Err((key, format!("must be within 0..1 (got {v})")));
            }
        }
        positive_seconds("watch.rescan_seconds", self.watch.rescan_seconds)?;
        positive_seconds("metrics.interval_seconds", self.metrics.interval_seconds)?;
        if !(self.shutdown.grace_seconds.is_finite() && (0.0..1e6).contains(&self.shutdown.grace_seconds)) {
            return Err(("shutdown.grace_seconds", format!("must be 0 or more (got {})", self.shutdown.grace_seconds)));
        }
        let metrics_file = self.metrics.file.as_deref().unwrap_or(Path::new("metrics.prom"));
        let models = self.paths.models.as_deref().unwrap_or(Path::new("models"));
        let annotated = self.paths.annotated.as_deref().unwrap_or(Path::new("annotated"));
        for (key, p) in [
            ("paths.spool", self.paths.spool.as_path()),
            ("paths.output", self.paths.output.as_path()),
            ("paths.model", self.paths.model.as_path()),
            ("paths.models", models),
            ("paths.annotated", annotated),
            ("metrics.file", metrics_file),
        ] {
            if p.as_os_str().is_empty() {
                return Err((key, "must not be empty".to_string()));
            }
        }
        self.retrain.check()?;
        Ok(())
    }

    /// How often `incoming/` is rescanned.
    pub fn rescan(&self) -> Duration {
        Duration::from_secs_f64(self.watch.rescan_seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const MINIMAL: &str = "[paths]\nspool = \"s\"\noutput = \"o\"\nmodel = \"m\"\n";

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, Path::new("x.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_fill_what_is_left_out() {
        let c = parse(MINIMAL).unwrap();
        assert_eq!(c.parse.threads, std::thread::available_parallelism().unwrap().get());
        assert_eq!(c.queues.readers, 1);
        assert!(c.metrics.file.is_none());
    }

    #[test]
    fn retag_is_auto_unless_the_config_says_always_or_never() {
        use crate::parse::fit::Retag;
        assert_eq!(parse(MINIMAL).unwrap().parse.retag, Retag::Auto);
        assert_eq!(parse(&format!("{MINIMAL}[parse]\nretag = \"never\"\n")).unwrap().parse.retag, Retag::Never);
        let e = parse(&format!("{MINIMAL}[parse]\nretag = \"yes\"\n")).unwrap_err();
        assert!(e.contains("auto") && e.contains("never"), "{e}");
    }

    #[test]
    fn the_default_minimum_confidence_applies_only_when_no_precision_is_asked_for() {
        let given = |extra: &str| parse(&format!("{MINIMAL}[parse]\n{extra}")).unwrap().parse.given_min_confidence();
        assert_eq!(given(""), Some(DEFAULT_MIN_CONFIDENCE));
        assert_eq!(given("min_precision = 0.95\n"), None);
        assert_eq!(given("min_precision = 0.95\nmin_confidence = 0.5\n"), Some(0.5));
        assert_eq!(given("min_confidence = 0.7\n"), Some(0.7));
        let e = parse(&format!("{MINIMAL}[parse]\nmin_precision = 95\n")).unwrap_err();
        assert!(e.contains("parse.min_precision: must be within 0..1 (got 95)"), "{e}");
    }

    #[test]
    fn raw_text_sentences_end_where_the_model_says_unless_the_config_says_lines() {
        use crate::parse::raw::RawSentences;
        assert_eq!(parse(MINIMAL).unwrap().parse.raw_sentences, RawSentences::Model);
        let lines = parse(&format!("{MINIMAL}[parse]\nraw_sentences = \"lines\"\n")).unwrap();
        assert_eq!(lines.parse.raw_sentences, RawSentences::Lines);
        let e = parse(&format!("{MINIMAL}[parse]\nraw_sentences = \"line\"\n")).unwrap_err();
        assert!(e.contains("model") && e.contains("lines"), "{e}");
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key() {
        let e = parse(&format!("{MINIMAL}[parse]\nthread = 3\n")).unwrap_err();
        assert!(e.contains("x.toml") && e.contains("unknown field `thread`"), "{e}");
        let e = parse(&format!("{MINIMAL}[parse]\nthreads = 0\n")).unwrap_err();
        assert!(e.contains("parse.threads: must be at least 1"), "{e}");
        let e = parse(&format!("{MINIMAL}[parse]\nmin_confidence = 1.5\n")).unwrap_err();
        assert!(e.contains("parse.min_confidence"), "{e}");
        let e = parse(&format!("{MINIMAL}[parse]\nthreads = \"two\"\n")).unwrap_err();
        assert!(e.contains("threads") && e.contains("invalid type"), "{e}");
        let e = parse(&format!("{MINIMAL}[watch]\nrescan_seconds = 0\n")).unwrap_err();
        assert!(e.contains("watch.rescan_seconds: must be a number of seconds above 0 and below 1e6 (got 0)"), "{e}");
        // Too long a wait: said, in a few digits (it was three hundred).
        let e = parse(&format!("{MINIMAL}[watch]\nrescan_seconds = 1e300\n")).unwrap_err();
        assert!(e.ends_with("below 1e6 (got 1e300)"), "{e}");
        let e = parse("[paths]\nspool = \"s\"\n").unwrap_err();
        assert!(e.contains("missing field `output`"), "{e}");
        let e = parse("[paths]\nspool = \"s\"\noutput = \"o\"\nmodel = \"\"\n").unwrap_err();
        assert!(e.contains("paths.model: must not be empty"), "{e}");
        let e = parse(&format!("{MINIMAL}[metrics]\nfile = \"\"\n")).unwrap_err();
        assert!(e.contains("metrics.file: must not be empty"), "{e}");
        let e = parse(&format!("{MINIMAL}[retrain]\nenabled = true\n")).unwrap_err();
        assert!(e.contains("retrain.enabled: needs `every`"), "{e}");
        let e = parse(&format!("{MINIMAL}[retrain]\nevery = \"6 weeks\"\n")).unwrap_err();
        assert!(e.contains("retrain.every") && e.contains("6 weeks"), "{e}");
        let e = parse(&format!("{MINIMAL}[retrain]\nat = \"25:00\"\n")).unwrap_err();
        assert!(e.contains("retrain.at"), "{e}");
        let c = parse(&format!("{MINIMAL}[retrain]\nevery = \"6h\"\nbase = [\"t.conllu\"]\nheldout = \"d.conllu\"\n"))
            .unwrap();
        assert_eq!(c.retrain.keep_models, 5);
        let e = parse(&format!("{MINIMAL}[extra]\n")).unwrap_err();
        assert!(e.contains("unknown field `extra`"), "{e}");
    }

    #[test]
    fn a_retrain_interval_too_long_to_count_is_refused_not_wrapped() {
        // 213503982334602 days is 2^64 + 61,184 seconds: it used to wrap around to 17 hours.
        for every in ["213503982334602d", "99999999999999999999s", "36501d"] {
            let e = parse(&format!("{MINIMAL}[retrain]\nevery = \"{every}\"\n")).unwrap_err();
            assert!(e.starts_with(&format!("x.toml: retrain.every: \"{every}\" is longer than 36500d")), "{e}");
        }
        let c = parse(&format!("{MINIMAL}[retrain]\nevery = \"36500d\"\n")).unwrap();
        let every = crate::retrain::parse_interval(c.retrain.every.as_deref().unwrap()).unwrap();
        assert_eq!(every, Duration::from_secs(36_500 * 86_400));
        assert_eq!(c.retrain.next_due(Some(u64::from(u32::MAX))), Some(u64::from(u32::MAX) + 36_500 * 86_400));
    }

    #[test]
    fn a_heldout_file_also_listed_in_retrain_base_is_refused_naming_both_keys() {
        let dir = tempfile::tempdir().unwrap();
        let (train, dev) = (dir.path().join("train.conllu"), dir.path().join("dev.conllu"));
        fs::write(&train, "").unwrap();
        fs::write(&dev, "").unwrap();
        std::os::unix::fs::symlink(&train, dir.path().join("link.conllu")).unwrap();
        let config = |heldout: &str| {
            let base = format!("[\"{}\", \"{}\"]", dev.display(), train.display());
            format!("{MINIMAL}[retrain]\nbase = {base}\nheldout = \"{heldout}\"\n")
        };
        let root = dir.path().display();
        // The same file by another name: through `.`, a symbolic link; and a file not there
        // yet, by its absolute path.
        for heldout in [format!("{root}/./train.conllu"), format!("{root}/link.conllu"), format!("{root}/dev.conllu")] {
            let e = parse(&config(&heldout)).unwrap_err();
            assert!(e.starts_with("x.toml: retrain.heldout: ") && e.contains("also in retrain.base"), "{e}");
        }
        let absent = format!("{MINIMAL}[retrain]\nbase = [\"{root}/a.conllu\"]\nheldout = \"{root}/./a.conllu\"\n");
        assert!(parse(&absent).unwrap_err().contains("retrain.heldout: "));
        fs::remove_file(&dev).unwrap();
        let separate =
            format!("{MINIMAL}[retrain]\nbase = [\"{}\"]\nheldout = \"{root}/dev.conllu\"\n", train.display());
        parse(&separate).unwrap();
    }

    #[test]
    fn empty_retrain_paths_are_refused_at_load_naming_the_key() {
        let e = parse(&format!("{MINIMAL}[retrain]\nheldout = \"\"\n")).unwrap_err();
        assert_eq!(e, "x.toml: retrain.heldout: must not be empty");
        let e = parse(&format!("{MINIMAL}[retrain]\nbase = [\"t.conllu\", \"\"]\n")).unwrap_err();
        assert_eq!(e, "x.toml: retrain.base: must not list an empty path");
    }

    #[test]
    fn retrain_value_errors_name_their_key_once() {
        for (line, expected) in [
            ("every = \"6 weeks\"", "x.toml: retrain.every: \"6 weeks\" is not an interval"),
            ("at = \"25:00\"", "x.toml: retrain.at: \"25:00\" is not a time of day"),
            ("every = \"1h\"\nat = \"03:30\"", "x.toml: retrain.at: cannot be given with retrain.every"),
            ("enabled = true", "x.toml: retrain.enabled: needs `every`"),
            ("annotation_heldout = 1.0", "x.toml: retrain.annotation_heldout: must be in [0, 1) (got 1)"),
            ("max_las_drop = -1.0", "x.toml: retrain.max_las_drop: must be at least 0 (got -1)"),
            ("keep_models = 0", "x.toml: retrain.keep_models: must be at least 1"),
            ("epochs = 0", "x.toml: retrain.epochs: must be at least 1"),
            ("completion_min_conf = 1.5", "x.toml: retrain.completion_min_conf: must be in [0, 1] (got 1.5)"),
            ("annotation_weight = 0", "x.toml: retrain.annotation_weight: must be at least 1"),
            ("bootstrap_samples = 0", "x.toml: retrain.bootstrap_samples: must be at least 1"),
            ("fine_tune_steps = 0", "x.toml: retrain.fine_tune_steps: must be at least 1"),
            ("fine_tune_base_share = 1.0", "x.toml: retrain.fine_tune_base_share: must be in [0, 1) (got 1)"),
            ("fine_tune_learning_rate = 0.0", "x.toml: retrain.fine_tune_learning_rate: must be above 0 (got 0)"),
            ("neural_from = \"random\"", "x.toml: TOML parse error at line 6"),
        ] {
            let e = parse(&format!("{MINIMAL}[retrain]\n{line}\n")).unwrap_err();
            assert!(e.starts_with(expected), "{line}: {e}");
            assert_eq!(e.matches("retrain").count(), expected.matches("retrain").count(), "{line}: {e}");
        }
    }
}

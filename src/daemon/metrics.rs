//! The daemon's counters, shared between threads as atomics, and their rendering in the
//! Prometheus text format for node_exporter's textfile collector (written atomically, so the
//! collector never reads half a file). This module must not decide when to write.

use std::fmt::Write as _;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::parse::pipeline::BusyTime;

/// Counters since the daemon started. Work done (`parsed_*`) counts every sentence parsed,
/// also in files that later fail or are parsed again; what is in `out/` is counted only once
/// published, so that accepted + lowconf equals what the outputs hold.
#[derive(Debug)]
pub struct Metrics {
    pub files_done: AtomicU64,
    pub files_failed: AtomicU64,
    /// Files whose outputs could not be written or published, to be tried again.
    pub files_retried: AtomicU64,
    /// Sentences and words parsed (work done).
    pub parsed_sentences: AtomicU64,
    pub parsed_words: AtomicU64,
    /// Published sentences and words, by output.
    pub accepted: AtomicU64,
    pub lowconf: AtomicU64,
    pub published_words: AtomicU64,
    /// Malformed sentences published unparsed (into lowconf; counted there too).
    pub malformed: AtomicU64,
    /// Sentences published into lowconf as another language's, judged one by one
    /// ([`crate::parse::fit::SentenceCheck`]; counted there too).
    pub other_language: AtomicU64,
    /// Files whose tags were replaced by the model's tagger, and files parsed on tags or
    /// forms the model does not fit (see [`crate::parse::fit`]); counted when parsing starts.
    pub files_retagged: AtomicU64,
    pub files_unfit: AtomicU64,
    /// Reloads (SIGHUP) that failed and kept the previous configuration and model.
    pub reload_failures: AtomicU64,
    /// Scans of `incoming/`: an idle daemon makes one per rescan interval.
    pub scans: AtomicU64,
    /// Annotated sentences stored, refused (to `annotated/rejected/`), and set aside until
    /// confirmed (to `annotated/suspect/`).
    pub annotations_stored: AtomicU64,
    pub annotations_rejected: AtomicU64,
    pub annotations_suspect: AtomicU64,
    /// Retraining cycles by decision, and cycles that failed to run.
    pub retrain_promoted: AtomicU64,
    pub retrain_rejected: AtomicU64,
    pub retrain_skipped: AtomicU64,
    pub retrain_failed: AtomicU64,
    /// The parsing pipeline's busy time by stage (see [`crate::parse::pipeline::Busy`]).
    pub busy: BusyTime,
    /// Model file name and fingerprint, for the `spoolparse_model_info` gauge.
    model: Mutex<(String, String)>,
    started: Instant,
    /// Words and time at the last rate computation.
    last_rate: Mutex<(u64, Instant, f64)>,
}

impl Default for Metrics {
    fn default() -> Self {
        let now = Instant::now();
        Metrics {
            files_done: AtomicU64::new(0),
            files_failed: AtomicU64::new(0),
            files_retried: AtomicU64::new(0),
            parsed_sentences: AtomicU64::new(0),
            parsed_words: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            lowconf: AtomicU64::new(0),
            published_words: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            other_language: AtomicU64::new(0),
            files_retagged: AtomicU64::new(0),
            files_unfit: AtomicU64::new(0),
            reload_failures: AtomicU64::new(0),
            scans: AtomicU64::new(0),
            annotations_stored: AtomicU64::new(0),
            annotations_rejected: AtomicU64::new(0),
            annotations_suspect: AtomicU64::new(0),
            retrain_promoted: AtomicU64::new(0),
            retrain_rejected: AtomicU64::new(0),
            retrain_skipped: AtomicU64::new(0),
            retrain_failed: AtomicU64::new(0),
            model: Mutex::new(Default::default()),
            busy: BusyTime::default(),
            started: now,
            last_rate: Mutex::new((0, now, 0.0)),
        }
    }
}

fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

impl Metrics {
    /// Adds `n` to counter `c`.
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// Records the model now in use: its file name and fingerprint.
    pub fn set_model(&self, file: &str, fingerprint: &str) {
        if let Ok(mut m) = self.model.lock() {
            *m = (file.to_string(), fingerprint.to_string());
        }
    }

    /// Words per second since the previous call (at least a second ago; else the previous
    /// figure).
    pub fn words_per_second(&self) -> f64 {
        let Ok(mut last) = self.last_rate.lock() else { return 0.0 };
        let (words, now) = (get(&self.parsed_words), Instant::now());
        let secs = now.duration_since(last.1).as_secs_f64();
        if secs >= 1.0 {
            *last = (words, now, (words - last.0) as f64 / secs);
        }
        last.2
    }

    /// A number that grows whenever a sentence or a file is finished.
    pub fn progress(&self) -> u64 {
        get(&self.parsed_sentences) + get(&self.files_done) + get(&self.files_failed) + get(&self.files_retried)
    }

    /// One line for systemd's STATUS.
    pub fn status(&self) -> String {
        format!(
            "{} files done, {} failed; {} sentences published ({} lowconf, {} malformed); {:.0} words/s",
            get(&self.files_done),
            get(&self.files_failed),
            get(&self.accepted) + get(&self.lowconf),
            get(&self.lowconf),
            get(&self.malformed),
            self.words_per_second()
        )
    }

    /// The metrics in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let counters = [
            (
                "files_total",
                "Input files by outcome (retried: outputs not writable, tried again).",
                "{outcome=\"done\"}",
                &self.files_done,
            ),
            ("files_total", "", "{outcome=\"failed\"}", &self.files_failed),
            ("files_total", "", "{outcome=\"retried\"}", &self.files_retried),
            (
                "published_sentences_total",
                "Sentences published in out/, by output (malformed ones in lowconf).",
                "{output=\"accepted\"}",
                &self.accepted,
            ),
            ("published_sentences_total", "", "{output=\"lowconf\"}", &self.lowconf),
            ("published_words_total", "Words of the published sentences.", "", &self.published_words),
            (
                "published_malformed_sentences_total",
                "Malformed sentences published unparsed (in lowconf).",
                "",
                &self.malformed,
            ),
            (
                "published_other_language_sentences_total",
                "Sentences published in lowconf, whatever their confidence, as another language's \
                 than the model's (judged one by one; counted in lowconf too).",
                "",
                &self.other_language,
            ),
            (
                "input_files_total",
                "Input files whose first words showed tags the model was not trained on (retagged: \
                 the model's tagger replaced them), or tags or forms it does not fit (unfit: parsed \
                 as they are, far less accurately).",
                "{check=\"retagged\"}",
                &self.files_retagged,
            ),
            ("input_files_total", "", "{check=\"unfit\"}", &self.files_unfit),
            (
                "parsed_sentences_total",
                "Sentences parsed (work done, also in files that failed or were parsed again).",
                "",
                &self.parsed_sentences,
            ),
            ("parsed_words_total", "Words parsed (work done).", "", &self.parsed_words),
            (
                "reload_failures_total",
                "Reloads that failed and kept the previous configuration and model.",
                "",
                &self.reload_failures,
            ),
            ("scans_total", "Scans of incoming/.", "", &self.scans),
            (
                "annotations_total",
                "Annotated sentences taken in from annotated/, by outcome.",
                "{outcome=\"stored\"}",
                &self.annotations_stored,
            ),
            ("annotations_total", "", "{outcome=\"rejected\"}", &self.annotations_rejected),
            ("annotations_total", "", "{outcome=\"suspect\"}", &self.annotations_suspect),
            (
                "retrain_cycles_total",
                "Retraining cycles by decision (failed: the cycle could not run).",
                "{decision=\"promoted\"}",
                &self.retrain_promoted,
            ),
            ("retrain_cycles_total", "", "{decision=\"rejected\"}", &self.retrain_rejected),
            ("retrain_cycles_total", "", "{decision=\"skipped\"}", &self.retrain_skipped),
            ("retrain_cycles_total", "", "{decision=\"failed\"}", &self.retrain_failed),
        ];
        let mut out = String::new();
        for (name, help, labels, value) in counters {
            if !help.is_empty() {
                let _ = writeln!(out, "# HELP spoolparse_{name} {help}\n# TYPE spoolparse_{name} counter");
            }
            let _ = writeln!(out, "spoolparse_{name}{labels} {}", get(value));
        }
        let busy = self.busy.snapshot();
        let _ = writeln!(
            out,
            "# HELP spoolparse_busy_seconds_total Busy time of the parsing pipeline's stages, summed over \
             threads (reading and writing run one thread at a time, parsing on every thread at once).\n\
             # TYPE spoolparse_busy_seconds_total counter"
        );
        for (stage, time) in [("reading", busy.reading), ("parsing", busy.parsing), ("writing", busy.writing)] {
            let _ = writeln!(out, "spoolparse_busy_seconds_total{{stage=\"{stage}\"}} {:.3}", time.as_secs_f64());
        }
        let _ = writeln!(
            out,
            "# HELP spoolparse_serial_fraction Share of the busy time spent reading and writing, one \
             thread at a time: Amdahl's law allows 1 / (s + (1 - s) / N) times one thread on N cores.\n\
             # TYPE spoolparse_serial_fraction gauge\nspoolparse_serial_fraction {:.4}",
            busy.serial_fraction()
        );
        let (file, fingerprint) = self.model.lock().map(|m| m.clone()).unwrap_or_default();
        let escape = |v: &str| v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
        let _ = writeln!(
            out,
            "# HELP spoolparse_words_per_second Parsing throughput over the last interval.\n\
             # TYPE spoolparse_words_per_second gauge\nspoolparse_words_per_second {:.1}\n\
             # HELP spoolparse_model_info The model in use (its file in models/ and fingerprint), always 1.\n\
             # TYPE spoolparse_model_info gauge\nspoolparse_model_info{{file=\"{}\",fingerprint=\"{}\"}} 1\n\
             # HELP spoolparse_uptime_seconds Seconds since the daemon started.\n\
             # TYPE spoolparse_uptime_seconds gauge\nspoolparse_uptime_seconds {:.0}",
            self.words_per_second(),
            escape(&file),
            escape(&fingerprint),
            self.started.elapsed().as_secs_f64()
        );
        out
    }

    /// Writes [`Metrics::render`] to `path` atomically.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        crate::base::io::write_atomically(path, self.render().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_counter_once() {
        let m = Metrics::default();
        Metrics::add(&m.parsed_words, 42);
        m.set_model("en\"x.model", "0123abcd");
        let text = m.render();
        assert!(text.contains("spoolparse_parsed_words_total 42\n"), "{text}");
        assert!(text.contains("spoolparse_model_info{file=\"en\\\"x.model\",fingerprint=\"0123abcd\"} 1"), "{text}");
        assert_eq!(text.matches("# TYPE spoolparse_files_total").count(), 1);
        assert!(text.contains("spoolparse_files_total{outcome=\"failed\"} 0"));
    }

    #[test]
    fn the_pipeline_s_busy_time_and_serial_fraction_are_exported() {
        use crate::parse::pipeline::Stage;
        use std::time::Duration;
        let m = Metrics::default();
        m.busy.add(Stage::Reading, Duration::from_millis(250));
        m.busy.add(Stage::Parsing, Duration::from_millis(1500));
        m.busy.add(Stage::Writing, Duration::from_millis(250));
        let text = m.render();
        assert!(text.contains("spoolparse_busy_seconds_total{stage=\"reading\"} 0.250\n"), "{text}");
        assert!(text.contains("spoolparse_busy_seconds_total{stage=\"parsing\"} 1.500\n"), "{text}");
        assert!(text.contains("spoolparse_serial_fraction 0.2500\n"), "{text}");
        assert_eq!(text.matches("# TYPE spoolparse_busy_seconds_total").count(), 1);
    }
}

//! The daemon's counters, shared between threads as atomics, and their rendering in the
//! Prometheus text format for node_exporter's textfile collector (written atomically, so the
//! collector never reads half a file). This module must not decide when to write.

use std::fmt::Write as _;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Counters since the daemon started.
#[derive(Debug)]
pub struct Metrics {
    pub files_done: AtomicU64,
    pub files_failed: AtomicU64,
    pub sentences: AtomicU64,
    pub words: AtomicU64,
    pub accepted: AtomicU64,
    pub lowconf: AtomicU64,
    /// Malformed sentences passed through unparsed (into lowconf).
    pub malformed: AtomicU64,
    /// Model identifier, for the `spoolparse_model_info` gauge.
    model: Mutex<String>,
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
            sentences: AtomicU64::new(0),
            words: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            lowconf: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            model: Mutex::new(String::new()),
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

    /// Records the model now in use.
    pub fn set_model(&self, model: &str) {
        if let Ok(mut m) = self.model.lock() {
            *m = model.to_string();
        }
    }

    /// Words per second since the previous call (at least a second ago; else the previous
    /// figure).
    pub fn words_per_second(&self) -> f64 {
        let Ok(mut last) = self.last_rate.lock() else { return 0.0 };
        let (words, now) = (get(&self.words), Instant::now());
        let secs = now.duration_since(last.1).as_secs_f64();
        if secs >= 1.0 {
            *last = (words, now, (words - last.0) as f64 / secs);
        }
        last.2
    }

    /// A number that grows whenever a sentence or a file is finished.
    pub fn progress(&self) -> u64 {
        get(&self.sentences) + get(&self.files_done) + get(&self.files_failed)
    }

    /// One line for systemd's STATUS.
    pub fn status(&self) -> String {
        format!(
            "{} files done, {} failed; {} sentences ({} lowconf, {} malformed); {:.0} words/s",
            get(&self.files_done),
            get(&self.files_failed),
            get(&self.sentences),
            get(&self.lowconf),
            get(&self.malformed),
            self.words_per_second()
        )
    }

    /// The metrics in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let counters = [
            ("files_total", "Input files finished, by outcome.", "{outcome=\"done\"}", &self.files_done),
            ("files_total", "", "{outcome=\"failed\"}", &self.files_failed),
            ("sentences_total", "Sentences written (accepted, lowconf or malformed).", "", &self.sentences),
            ("words_total", "Words parsed.", "", &self.words),
            ("accepted_sentences_total", "Sentences at or above the confidence threshold.", "", &self.accepted),
            ("lowconf_sentences_total", "Sentences below the threshold, malformed ones included.", "", &self.lowconf),
            ("malformed_sentences_total", "Malformed sentences passed through unparsed.", "", &self.malformed),
        ];
        let mut out = String::new();
        for (name, help, labels, value) in counters {
            if !help.is_empty() {
                let _ = writeln!(out, "# HELP spoolparse_{name} {help}\n# TYPE spoolparse_{name} counter");
            }
            let _ = writeln!(out, "spoolparse_{name}{labels} {}", get(value));
        }
        let model = self.model.lock().map(|m| m.clone()).unwrap_or_default();
        let _ = writeln!(
            out,
            "# HELP spoolparse_words_per_second Parsing throughput over the last interval.\n\
             # TYPE spoolparse_words_per_second gauge\nspoolparse_words_per_second {:.1}\n\
             # HELP spoolparse_model_info The model in use (label), always 1.\n\
             # TYPE spoolparse_model_info gauge\nspoolparse_model_info{{model=\"{}\"}} 1\n\
             # HELP spoolparse_uptime_seconds Seconds since the daemon started.\n\
             # TYPE spoolparse_uptime_seconds gauge\nspoolparse_uptime_seconds {:.0}",
            self.words_per_second(),
            model.replace('\\', "\\\\").replace('"', "\\\""),
            self.started.elapsed().as_secs_f64()
        );
        out
    }

    /// Writes [`Metrics::render`] to `path` atomically.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        crate::io::write_atomically(path, self.render().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_counter_once() {
        let m = Metrics::default();
        Metrics::add(&m.words, 42);
        m.set_model("en.model 0123abcd");
        let text = m.render();
        assert!(text.contains("spoolparse_words_total 42\n"), "{text}");
        assert!(text.contains("spoolparse_model_info{model=\"en.model 0123abcd\"} 1"), "{text}");
        assert_eq!(text.matches("# TYPE spoolparse_files_total").count(), 1);
        assert!(text.contains("spoolparse_files_total{outcome=\"failed\"} 0"));
    }
}

//! Fuzzes the daemon's configuration parser: any text must give a configuration or an error
//! naming the file, never a panic; a configuration accepted must satisfy what
//! `Config::check` promises, so that the daemon may use its values without checking again
//! (the durations it builds from them included).
#![no_main]

use std::path::Path;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use spoolparse::daemon::config::{Config, ConfigError};

fuzz_target!(|data: &[u8]| {
    // TOML is UTF-8; invalid bytes become U+FFFD so that mutations of valid files stay useful.
    let text = String::from_utf8_lossy(data);
    match Config::parse(&text, Path::new("fuzz.toml")) {
        Ok(c) => {
            assert!(c.parse.threads >= 1);
            assert!(c.queues.readers >= 1 && c.queues.batch_words >= 1 && c.queues.batches_per_thread >= 1);
            assert!((0.0..=1.0).contains(&c.parse.min_confidence));
            for s in [c.watch.rescan_seconds, c.metrics.interval_seconds] {
                assert!(s.is_finite() && s > 0.0 && s < 1e6, "{s}");
            }
            assert!(c.shutdown.grace_seconds.is_finite() && (0.0..1e6).contains(&c.shutdown.grace_seconds));
            assert!(!c.paths.spool.as_os_str().is_empty() && !c.paths.output.as_os_str().is_empty());
            // The daemon turns these into durations; none of the conversions may panic.
            assert!(c.rescan() > Duration::ZERO);
            Duration::from_secs_f64(c.shutdown.grace_seconds);
            Duration::from_secs_f64(c.metrics.interval_seconds);
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with("fuzz.toml: "), "{msg}");
            if let ConfigError::Value { key, .. } = e {
                assert!(key.contains('.'), "{key}");
            }
        }
    }
});

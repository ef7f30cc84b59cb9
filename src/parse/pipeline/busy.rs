//! Where a run's time goes: the busy time of each stage of the pipeline, summed over threads,
//! so that the share of the work done one thread at a time (the serial fraction), and the
//! speed-up it allows on any number of cores (Amdahl's law), can be read on any machine, a
//! 2-core one included.
//!
//! - reading: opening files, decompressing and decoding them, reading sentences (and
//!   tokenizing raw text where that is done while reading): one thread at a time;
//! - parsing: tokenizing raw text handed to the pool, tagging, parsing, confidences: every
//!   thread at once;
//! - writing: ordering batches, formatting sentences and writing them: one thread at a time.
//!
//! Waiting (for a job, a free batch, a lock) is no stage's. The clocks are read once per batch
//! in the pool and once per sentence in the calling thread: a few tens of nanoseconds against
//! the tens of microseconds a sentence takes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A stage of the pipeline (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Reading,
    Parsing,
    Writing,
}

/// Busy time per stage, added to from any thread.
#[derive(Debug, Default)]
pub struct BusyTime {
    nanos: [AtomicU64; 3],
}

impl BusyTime {
    /// Adds the time since `since` to `stage`.
    pub fn add_since(&self, stage: Stage, since: Instant) {
        self.add(stage, since.elapsed());
    }

    /// Adds the time since `since` to `stage`, and returns now: for stages one after another.
    pub fn lap(&self, stage: Stage, since: Instant) -> Instant {
        let now = Instant::now();
        self.add(stage, now - since);
        now
    }

    /// Adds `time` to `stage`.
    pub fn add(&self, stage: Stage, time: Duration) {
        let nanos = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
        self.nanos[stage as usize].fetch_add(nanos, Ordering::Relaxed);
    }

    /// The totals so far.
    pub fn snapshot(&self) -> Busy {
        let get = |s: Stage| Duration::from_nanos(self.nanos[s as usize].load(Ordering::Relaxed));
        Busy { reading: get(Stage::Reading), parsing: get(Stage::Parsing), writing: get(Stage::Writing) }
    }
}

/// Busy time per stage of a run (see the module comment).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Busy {
    pub reading: Duration,
    pub parsing: Duration,
    pub writing: Duration,
}

impl Busy {
    /// All stages together.
    pub fn total(&self) -> Duration {
        self.reading + self.parsing + self.writing
    }

    /// The share of the work done one thread at a time (reading and writing); 0 without work.
    pub fn serial_fraction(&self) -> f64 {
        let total = self.total().as_secs_f64();
        if total > 0.0 {
            (self.reading + self.writing).as_secs_f64() / total
        } else {
            0.0
        }
    }

    /// The speed-up over one thread that Amdahl's law allows on `cores` cores with this serial
    /// fraction: 1 / (s + (1 − s) / cores).
    pub fn amdahl(&self, cores: usize) -> f64 {
        let s = self.serial_fraction();
        1.0 / (s + (1.0 - s) / cores.max(1) as f64)
    }

    /// Adds another part's busy time (of the same run) to this.
    pub fn add(&mut self, other: Busy) {
        self.reading += other.reading;
        self.parsing += other.parsing;
        self.writing += other.writing;
    }

    /// One line for a person: each stage's seconds and share, the serial fraction, and the
    /// speed-up it allows on 16 and 64 cores.
    pub fn describe(&self) -> String {
        let total = self.total().as_secs_f64().max(1e-9);
        let share = |d: Duration| 100.0 * d.as_secs_f64() / total;
        format!(
            "busy: reading {:.2} s ({:.1}%), parsing {:.2} s ({:.1}%), writing {:.2} s ({:.1}%); \
             serial {:.1}%, which allows {:.1}x on 16 cores and {:.1}x on 64",
            self.reading.as_secs_f64(),
            share(self.reading),
            self.parsing.as_secs_f64(),
            share(self.parsing),
            self.writing.as_secs_f64(),
            share(self.writing),
            100.0 * self.serial_fraction(),
            self.amdahl(16),
            self.amdahl(64)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amdahl_s_law_gives_the_speed_up_of_the_serial_fraction() {
        let ms = Duration::from_millis;
        let busy = Busy { reading: ms(30), parsing: ms(900), writing: ms(70) };
        assert!((busy.serial_fraction() - 0.1).abs() < 1e-12);
        // 1 / (0.1 + 0.9 / 16) = 6.4
        assert!((busy.amdahl(16) - 6.4).abs() < 1e-9);
        assert!((busy.amdahl(1) - 1.0).abs() < 1e-12);
        assert_eq!(Busy::default().serial_fraction(), 0.0);
    }

    #[test]
    fn busy_time_adds_up_per_stage_from_any_thread() {
        let busy = BusyTime::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| busy.add(Stage::Parsing, Duration::from_micros(250)));
            }
        });
        busy.add(Stage::Writing, Duration::from_micros(5));
        let got = busy.snapshot();
        assert_eq!(got.parsing, Duration::from_millis(1));
        assert_eq!(got.writing, Duration::from_micros(5));
        assert_eq!(got.reading, Duration::ZERO);
    }
}

//! Log lines: how they look and where they go (stderr). This module owns the line format and
//! the `tracing` subscriber; it must not decide what is logged or at which level (callers use
//! `tracing`'s macros, or [`crate::daemon::log`]).
//!
//! - Under journald (systemd's `JOURNAL_STREAM` names the device and inode of our stderr):
//!   `<P>message`, `P` the syslog priority (sd-daemon(3)): the journal records the priority
//!   and adds the time and the `spoolparse` identifier itself.
//! - Elsewhere: `TIME LEVEL spoolparse: message`, the time in RFC 3339, UTC.
//!
//! One event is one line: newlines in a message (multi-line error chains, TOML errors with
//! their source excerpt) are escaped as `\n`, so no line goes out without its prefix. The level
//! is `SPOOLPARSE_LOG`: `error`, `warn`, `info` (the default), `debug`, `trace` or `off`.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, MakeWriter};
use tracing_subscriber::registry::LookupSpan;

/// The environment variable that sets the level.
pub const LEVEL_VAR: &str = "SPOOLPARSE_LOG";

/// Where lines go, hence what they carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// stderr is the journal: a syslog priority prefix, no time.
    Journal,
    /// Anything else (a terminal, a file): time, level and the program's name.
    Plain,
}

impl Style {
    /// [`Style::Journal`] if `JOURNAL_STREAM` names our stderr. Checking the device and inode,
    /// not only that the variable is set, matters: systemd passes it on to children whose
    /// stderr may have been redirected elsewhere (`spoolparse daemon 2>log` from a unit's shell).
    pub fn detect() -> Style {
        let stderr = std::io::stderr().as_fd().try_clone_to_owned().and_then(|fd| std::fs::File::from(fd).metadata());
        let id = stderr.ok().map(|m| (m.dev(), m.ino()));
        Style::from_journal_stream(std::env::var("JOURNAL_STREAM").ok().as_deref(), id)
    }

    /// The style for a `JOURNAL_STREAM` value (`DEVICE:INODE`, decimal) and stderr's identity.
    pub fn from_journal_stream(journal_stream: Option<&str>, stderr: Option<(u64, u64)>) -> Style {
        let named = journal_stream.and_then(|v| {
            let (dev, ino) = v.trim().split_once(':')?;
            Some((dev.parse::<u64>().ok()?, ino.parse::<u64>().ok()?))
        });
        match (named, stderr) {
            (Some(named), Some(ours)) if named == ours => Style::Journal,
            _ => Style::Plain,
        }
    }
}

/// The syslog priority of a level: err, warning, info, debug.
pub fn syslog_priority(level: Level) -> u8 {
    match level {
        Level::ERROR => 3,
        Level::WARN => 4,
        Level::INFO => 6,
        _ => 7,
    }
}

/// `message` on one line: line breaks become `\n` and `\r`.
pub fn one_line(message: &str) -> Cow<'_, str> {
    if !message.contains(['\n', '\r']) {
        return Cow::Borrowed(message);
    }
    Cow::Owned(message.trim_end_matches(['\n', '\r']).replace('\r', "\\r").replace('\n', "\\n"))
}

/// One log line, with its newline; `time` is used only by [`Style::Plain`].
pub fn format_line(style: Style, level: Level, time: &str, message: &str) -> String {
    let message = one_line(message);
    match style {
        Style::Journal => format!("<{}>{message}\n", syslog_priority(level)),
        Style::Plain => format!("{time} {level:>5} spoolparse: {message}\n"),
    }
}

/// The level `SPOOLPARSE_LOG` asks for, and a complaint if its value is not a level.
fn level_from_env() -> (tracing::level_filters::LevelFilter, Option<String>) {
    let default = tracing::level_filters::LevelFilter::INFO;
    match std::env::var(LEVEL_VAR) {
        Err(_) => (default, None),
        Ok(v) if v.trim().is_empty() => (default, None),
        Ok(v) => match v.trim().parse() {
            Ok(level) => (level, None),
            Err(_) => (
                default,
                Some(format!("{LEVEL_VAR}={v:?} is not a level (error, warn, info, debug, trace, off); using info")),
            ),
        },
    }
}

/// Formats events as [`format_line`] says.
struct LineFormat {
    style: Style,
}

/// Collects an event's message and, after it, any other fields as ` name=value`.
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let _ = if field.name() == "message" {
            write!(self.0, "{value:?}")
        } else {
            write!(self.0, " {}={value:?}", field.name())
        };
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

impl<S, N> FormatEvent<S, N> for LineFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, _: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let mut message = Message(String::new());
        event.record(&mut message);
        let mut time = String::new();
        if self.style == Style::Plain {
            SystemTime.format_time(&mut Writer::new(&mut time))?;
        }
        writer.write_str(&format_line(self.style, *event.metadata().level(), &time, &message.0))
    }
}

/// A subscriber writing lines of `style` at `level` and above to `writer`.
fn subscriber<W>(style: Style, level: tracing::level_filters::LevelFilter, writer: W) -> impl Subscriber + Send + Sync
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    tracing_subscriber::fmt().event_format(LineFormat { style }).with_writer(writer).with_max_level(level).finish()
}

/// Sends this process's `tracing` events to stderr, in the style [`Style::detect`] finds. A
/// second call (or another subscriber already in place) changes nothing.
pub fn init() {
    let (level, complaint) = level_from_env();
    if tracing::subscriber::set_global_default(subscriber(Style::detect(), level, std::io::stderr)).is_ok() {
        if let Some(complaint) = complaint {
            tracing::warn!("{complaint}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn journal_lines_carry_the_priority_and_no_time() {
        assert_eq!(format_line(Style::Journal, Level::INFO, "T", "watching"), "<6>watching\n");
        assert_eq!(format_line(Style::Journal, Level::WARN, "T", "w"), "<4>w\n");
        assert_eq!(format_line(Style::Journal, Level::ERROR, "T", "e"), "<3>e\n");
        assert_eq!(format_line(Style::Journal, Level::DEBUG, "T", "d"), "<7>d\n");
    }

    #[test]
    fn plain_lines_carry_time_level_and_name() {
        assert_eq!(
            format_line(Style::Plain, Level::WARN, "2024-05-01T10:00:00.000000Z", "slow"),
            "2024-05-01T10:00:00.000000Z  WARN spoolparse: slow\n"
        );
    }

    #[test]
    fn a_multi_line_message_stays_one_prefixed_line() {
        let message = "config.toml: TOML parse error at line 6\n  |\n6 | threds = 2\r\n";
        for style in [Style::Journal, Style::Plain] {
            let line = format_line(style, Level::ERROR, "T", message);
            assert_eq!(line.lines().count(), 1, "{line:?}");
            assert!(line.ends_with("line 6\\n  |\\n6 | threds = 2\n"), "{line:?}");
        }
    }

    #[test]
    fn journal_stream_must_name_stderr() {
        assert_eq!(Style::from_journal_stream(Some("8:12345"), Some((8, 12345))), Style::Journal);
        assert_eq!(Style::from_journal_stream(Some("8:12345"), Some((8, 99))), Style::Plain);
        assert_eq!(Style::from_journal_stream(None, Some((8, 12345))), Style::Plain);
        assert_eq!(Style::from_journal_stream(Some("garbage"), Some((8, 12345))), Style::Plain);
        assert_eq!(Style::from_journal_stream(Some("8:12345"), None), Style::Plain);
    }

    /// Events through the real subscriber: level filter, fields, one line per event.
    #[test]
    fn the_subscriber_writes_one_line_per_event() {
        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let run = |style| {
            let buffer = Buffer::default();
            let out = buffer.clone();
            let subscriber = subscriber(style, tracing::level_filters::LevelFilter::INFO, move || out.clone());
            tracing::subscriber::with_default(subscriber, || {
                tracing::debug!("hidden");
                tracing::info!(file = "a.conllu", "done");
                tracing::error!("reload failed:\nline two");
            });
            let bytes = buffer.0.lock().unwrap().clone();
            String::from_utf8(bytes).unwrap()
        };
        assert_eq!(run(Style::Journal), "<6>done file=a.conllu\n<3>reload failed:\\nline two\n");
        let plain = run(Style::Plain);
        let lines: Vec<&str> = plain.lines().collect();
        assert_eq!(lines.len(), 2, "{plain}");
        for (line, rest) in
            lines.iter().zip(["  INFO spoolparse: done file=a.conllu", " ERROR spoolparse: reload failed:\\nline two"])
        {
            let (time, tail) = line.split_at(27);
            assert!(is_rfc3339_utc(time), "{line}");
            assert_eq!(tail, rest);
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    fn is_rfc3339_utc(s: &str) -> bool {
        let b = s.as_bytes();
        b.len() == 27
            && b.iter().enumerate().all(|(i, &c)| match i {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                19 => c == b'.',
                26 => c == b'Z',
                _ => c.is_ascii_digit(),
            })
    }
}

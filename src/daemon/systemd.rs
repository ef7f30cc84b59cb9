//! Talking to systemd (`Type=notify`): readiness, status, watchdog pings, stopping and
//! reloading. Every call is a no-op outside systemd (no `NOTIFY_SOCKET`), and a failed
//! notification is not worth stopping a daemon for: errors are ignored here, on purpose.

use std::time::Duration;

use sd_notify::NotifyState;

fn send(state: &[NotifyState]) {
    let _ = sd_notify::notify(false, state);
}

/// The model is mapped and the spool is being watched.
pub fn ready(status: &str) {
    send(&[NotifyState::Ready, NotifyState::Status(status)]);
}

/// A free-form status line (`systemctl status` shows it).
pub fn status(status: &str) {
    send(&[NotifyState::Status(status)]);
}

/// Reloading configuration and model (ends with [`ready`]). `MONOTONIC_USEC` (CLOCK_MONOTONIC
/// in µs) goes with `RELOADING=1`, as sd_notify(3) asks: it lets systemd tie the message to the
/// reload it requested, which `Type=notify-reload` (systemd 253+) relies on.
pub fn reloading() {
    let status = NotifyState::Status("reloading configuration and model");
    match NotifyState::monotonic_usec_now() {
        Ok(now) => send(&[NotifyState::Reloading, now, status]),
        Err(_) => send(&[NotifyState::Reloading, status]),
    }
}

/// Shutting down.
pub fn stopping() {
    send(&[NotifyState::Stopping, NotifyState::Status("stopping")]);
}

/// Tells the watchdog we are alive.
pub fn watchdog() {
    send(&[NotifyState::Watchdog]);
}

/// The watchdog timeout systemd set for us, if any: ping at least twice per timeout.
pub fn watchdog_timeout() -> Option<Duration> {
    let mut usec = 0;
    sd_notify::watchdog_enabled(false, &mut usec).then(|| Duration::from_micros(usec))
}

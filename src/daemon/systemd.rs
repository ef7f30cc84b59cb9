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

/// Reloading configuration and model (ends with [`ready`]).
pub fn reloading() {
    send(&[NotifyState::Reloading, NotifyState::Status("reloading configuration and model")]);
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

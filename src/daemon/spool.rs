//! The spool protocol on disk: which files may be taken, claiming by atomic rename, and the
//! moves that acknowledge (to `done/`) or reject (to `failed/`) an input once its fate is
//! durable. This module owns directory layout and file ownership; it must not read or parse
//! file contents.
//!
//! ```text
//! spool/incoming/    producers rename complete files in here (dot-files are ignored)
//! spool/processing/  claimed: renamed here from incoming/ by the daemon that holds its lock
//! spool/done/        input moved here only after its outputs are durable
//! spool/failed/      unreadable input, with NAME.error saying why
//! out/accepted/      NAME.conllu.zst: sentences at or above the confidence threshold
//! out/lowconf/       NAME.conllu.zst: the rest
//! ```
//!
//! Names: every input gets outputs and a `done/` (or `failed/`) entry of its own. A file
//! whose outputs would take names already used (`x.conllu` after `x.conllu.zst`, or the same
//! name delivered twice) is renamed at claim time to the first free `x~2.conllu`,
//! `x~3.conllu`, … (the suffix goes before the format's extension); since the claim renames it
//! into `processing/` under that name, a re-parse after a crash writes the same names again.
//! Nothing published is ever overwritten by another input.
//!
//! A file is claimed only once no process has it open for writing: producers are asked to
//! rename complete files in, but a file copied straight into `incoming/` (`cp big.conllu
//! incoming/`) is there, growing, while it is written. Where the kernel grants a read lease
//! (`F_SETLEASE`, refused while any process holds the file open for writing; the daemon must
//! own the file or have `CAP_LEASE`), that is the test; elsewhere a file is taken once it has
//! not changed for [`QUIET`]. A claim remembers the file's size and modification time, and a
//! file that changed while it was parsed is not acknowledged ([`Claim::changed`]).
//!
//! Ownership is an exclusive `flock` on the input file, taken before the rename out of
//! `incoming/` and held until the file has left `processing/`. The kernel drops it when the
//! daemon dies, however it dies, so a file in `processing/` whose lock can be taken belongs to
//! nobody: it is parsed again from the start. Two daemons on one spool thus never work on the
//! same file at the same time, and a file finished by one is no longer in `processing/`.

use std::fs::{self, File, TryLockError};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::base::io::{numbered_name, rename_durably, write_atomically};
use crate::corpus::Format;

/// The directories of one spool and its outputs.
#[derive(Debug, Clone)]
pub struct Spool {
    pub incoming: PathBuf,
    pub processing: PathBuf,
    pub done: PathBuf,
    pub failed: PathBuf,
    pub accepted: PathBuf,
    pub lowconf: PathBuf,
}

/// The entries of `incoming/` ([`Spool::waiting`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Waiting {
    /// Regular files, in name order: the inputs.
    pub files: Vec<String>,
    /// Anything else, with what it is: never claimed.
    pub others: Vec<(String, &'static str)>,
    /// Entries whose names are not valid UTF-8, escaped (`caf\xe9.conllu`): never claimed,
    /// since every output and log line is named after the input.
    pub bad_names: Vec<String>,
}

/// What [`Spool::claim`] got.
#[derive(Debug)]
pub enum Attempt {
    /// The file is ours, in `processing/`.
    Claimed(Claim),
    /// Another daemon has it, or it has gone.
    Gone,
    /// A process still has it open for writing (or, without leases, it changed within
    /// [`QUIET`]): left in `incoming/` for a later scan.
    BeingWritten,
}

/// Where leases are not available, a file is taken once it has not changed for this long.
pub const QUIET: Duration = Duration::from_secs(2);

/// What a claimed file looked like when it was claimed: a file that is written to after that
/// differs in one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime: (i64, i64),
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp { len: meta.len(), mtime: (meta.mtime(), meta.mtime_nsec()) }
    }
}

/// What a directory entry that is not a regular file is, in words.
fn kind_of(t: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// An input file this daemon owns, in `processing/`.
#[derive(Debug)]
pub struct Claim {
    /// The file name, the same in every directory.
    pub name: String,
    /// Its path in `processing/`.
    pub path: PathBuf,
    /// The name it arrived under in `incoming/`, when it had to be renamed to stay unique.
    pub arrived_as: Option<String>,
    /// When this daemon claimed it.
    pub claimed: Instant,
    /// Its size and modification time when claimed (or last parsed again).
    stamp: Stamp,
    /// Holds the lock for as long as the claim lives.
    _lock: File,
}

impl Claim {
    /// Takes the lock `lock` on the file at `path` as a claim, stamped as it is now.
    fn new(name: String, path: PathBuf, arrived_as: Option<String>, lock: File) -> io::Result<Claim> {
        let stamp = Stamp::of(&lock.metadata()?);
        Ok(Claim { name, path, arrived_as, claimed: Instant::now(), stamp, _lock: lock })
    }

    /// Whether the file was written to since it was claimed (or since [`Claim::restamp`]): its
    /// size or modification time differ. Its outputs then may miss what was written since.
    pub fn changed(&self) -> io::Result<bool> {
        Ok(Stamp::of(&self._lock.metadata()?) != self.stamp)
    }

    /// Takes the file as it is now, to be parsed again from the start.
    pub fn restamp(&mut self) -> io::Result<()> {
        self.stamp = Stamp::of(&self._lock.metadata()?);
        self.claimed = Instant::now();
        Ok(())
    }

    /// Whether a process still has the file open for writing (see [`being_written`]).
    pub fn being_written(&self) -> io::Result<bool> {
        being_written(&self._lock)
    }
}

/// The names of a claim's outputs, temporary and final.
#[derive(Debug, Clone)]
pub struct OutputPaths {
    pub accepted: PathBuf,
    pub lowconf: PathBuf,
    pub accepted_tmp: PathBuf,
    pub lowconf_tmp: PathBuf,
}

impl Spool {
    /// The layout under `spool` and `output`.
    pub fn new(spool: &Path, output: &Path) -> Spool {
        Spool {
            incoming: spool.join("incoming"),
            processing: spool.join("processing"),
            done: spool.join("done"),
            failed: spool.join("failed"),
            accepted: output.join("accepted"),
            lowconf: output.join("lowconf"),
        }
    }

    /// Creates every directory that is missing.
    pub fn create(&self) -> io::Result<()> {
        for d in [&self.incoming, &self.processing, &self.done, &self.failed, &self.accepted, &self.lowconf] {
            fs::create_dir_all(d).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", d.display())))?;
        }
        // Producers in the daemon's group rename files in: incoming/ is group-writable, and
        // setgid so that files created in it belong to that group. Other modes stay the umask's.
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&self.incoming)?.mode() & 0o7777;
        if mode & 0o2070 != 0o2070 {
            fs::set_permissions(&self.incoming, fs::Permissions::from_mode(mode | 0o2070))
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.incoming.display())))?;
        }
        Ok(())
    }

    /// What is waiting in `incoming/`: the regular files, in name order, to be claimed; and
    /// the other entries (a directory, a link, a FIFO, …), which are left alone, with what they
    /// are. Dot-files (still being written, by convention) are neither.
    pub fn waiting(&self) -> io::Result<Waiting> {
        let mut waiting = Waiting::default();
        for entry in fs::read_dir(&self.incoming)? {
            let entry = entry?;
            let name = match entry.file_name().into_string() {
                Ok(name) => name,
                Err(raw) => {
                    if !raw.as_encoded_bytes().starts_with(b".") {
                        waiting.bad_names.push(escaped_name(&raw));
                    }
                    continue;
                }
            };
            if name.starts_with('.') {
                continue;
            }
            match entry.file_type()? {
                t if t.is_file() => waiting.files.push(name),
                t => waiting.others.push((name, kind_of(t))),
            }
        }
        waiting.files.sort();
        waiting.others.sort();
        waiting.bad_names.sort();
        Ok(waiting)
    }

    /// Claims `incoming/NAME`, unless another daemon has it, it has gone, or a process is
    /// still writing it.
    pub fn claim(&self, name: &str) -> io::Result<Attempt> {
        let from = self.incoming.join(name);
        let Some(lock) = lock(&from)? else { return Ok(Attempt::Gone) };
        // Between our open and our lock, another daemon may have claimed, finished and moved
        // that file, and a new one with the same name may have arrived: rename only the file
        // that we hold.
        if !still_named(&from, &lock)? {
            return Ok(Attempt::Gone);
        }
        if being_written(&lock)? {
            return Ok(Attempt::BeingWritten);
        }
        for n in 1u64.. {
            let unique = numbered_name(name, n);
            if self.taken(&unique) {
                continue;
            }
            let path = self.processing.join(&unique);
            // No-replace: another daemon may have taken the same free name an instant ago.
            match rename_no_replace(&from, &path) {
                Ok(()) => {
                    let arrived_as = (unique != name).then(|| name.to_string());
                    return Claim::new(unique, path, arrived_as, lock).map(Attempt::Claimed);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Attempt::Gone),
                Err(e) => return Err(e),
            }
        }
        unreachable!("there is always a free name")
    }

    /// Whether an input named `name` would write names another input has: its outputs, or
    /// an entry in `processing/`, `done/` or `failed/` under any name with the same outputs.
    fn taken(&self, name: &str) -> bool {
        let out = self.outputs(name);
        if out.accepted.exists() || out.lowconf.exists() {
            return true;
        }
        let file = out.accepted.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let variants = names_with_outputs(file.strip_suffix(".conllu.zst").unwrap_or(&file));
        [&self.processing, &self.done, &self.failed]
            .iter()
            .any(|dir| variants.iter().chain([&name.to_string()]).any(|v| dir.join(v).exists()))
    }

    /// Removes temporaries that a daemon killed at the wrong moment left behind: outputs
    /// `.tmp.*` of inputs no longer in `processing/`, and `NAME.tmpPID` files (atomic writes)
    /// of processes that are gone. Returns how many were removed.
    pub fn sweep_temporaries(&self) -> io::Result<usize> {
        let mut removed = 0;
        for dir in [&self.accepted, &self.lowconf] {
            for name in dot_files_in(dir)? {
                let Some(output) = name.strip_prefix(".tmp.") else { continue };
                let variants = names_with_outputs(output.strip_suffix(".conllu.zst").unwrap_or(output));
                if !variants.iter().any(|v| self.processing.join(v).exists())
                    && fs::remove_file(dir.join(&name)).is_ok()
                {
                    removed += 1;
                }
            }
        }
        removed += crate::base::io::sweep_atomic_temporaries(&self.failed)?;
        Ok(removed)
    }

    /// Claims every file in `processing/` that no live daemon holds: files of a daemon that
    /// died (or was stopped) while parsing them.
    pub fn orphans(&self) -> io::Result<Vec<Claim>> {
        let mut claims = Vec::new();
        for name in crate::base::io::visible_files(&self.processing)? {
            let path = self.processing.join(&name);
            if let Some(lock) = lock(&path)? {
                // Still there once locked? (Its owner may have just finished with it.)
                if still_named(&path, &lock).unwrap_or(false) {
                    claims.push(Claim::new(name, path, None, lock)?);
                }
            }
        }
        Ok(claims)
    }

    /// Where the outputs of input `name` go. Inputs that are not CoNLL-U keep their extension
    /// in the output name (`a.txt` → `a.txt.conllu.zst`), so that `a.conllu` and `a.txt`
    /// do not overwrite each other's outputs.
    pub fn outputs(&self, name: &str) -> OutputPaths {
        let base = name.strip_suffix(".zst").unwrap_or(name);
        let base = base.strip_suffix(".conllu").unwrap_or(base);
        let file = format!("{base}.conllu.zst");
        // Dot-files (ignored by convention), and still `.zst` so that they are compressed.
        let tmp = format!(".tmp.{file}");
        OutputPaths {
            accepted: self.accepted.join(&file),
            lowconf: self.lowconf.join(&file),
            accepted_tmp: self.accepted.join(&tmp),
            lowconf_tmp: self.lowconf.join(&tmp),
        }
    }

    /// Publishes a claim's outputs (already written durably to their temporary names) and then
    /// moves the input to `done/`.
    pub fn acknowledge(&self, claim: &Claim, outputs: &OutputPaths) -> io::Result<()> {
        rename_durably(&outputs.accepted_tmp, &outputs.accepted)?;
        rename_durably(&outputs.lowconf_tmp, &outputs.lowconf)?;
        rename_durably(&claim.path, &self.done.join(&claim.name))
    }

    /// Moves a claim to `failed/` with `NAME.error` saying `why`; any partial outputs are
    /// removed. The claim's lock is released when the caller drops it.
    pub fn fail(&self, claim: &Claim, why: &str) -> io::Result<()> {
        self.discard(&self.outputs(&claim.name));
        write_atomically(&self.failed.join(format!("{}.error", claim.name)), format!("{why}\n").as_bytes())?;
        rename_durably(&claim.path, &self.failed.join(&claim.name))
    }

    /// Removes temporary outputs (the input stays in `processing/` for the next daemon).
    pub fn discard(&self, outputs: &OutputPaths) {
        let _ = fs::remove_file(&outputs.accepted_tmp);
        let _ = fs::remove_file(&outputs.lowconf_tmp);
    }

    /// After a failed publication: removes the temporary outputs and any output already
    /// renamed into place, so that `out/` holds both outputs of an input or neither.
    pub fn unpublish(&self, outputs: &OutputPaths) {
        self.discard(outputs);
        let _ = fs::remove_file(&outputs.accepted);
        let _ = fs::remove_file(&outputs.lowconf);
    }
}

/// The input names whose outputs are `BASE.conllu.zst` (see [`Spool::outputs`]).
fn names_with_outputs(base: &str) -> [String; 4] {
    [base.to_string(), format!("{base}.zst"), format!("{base}.conllu"), format!("{base}.conllu.zst")]
}

/// Renames `from` to `to` unless `to` exists (`AlreadyExists` then), atomically on Linux.
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
        let (f, t) = (c(from)?, c(to)?);
        // SAFETY: two valid NUL-terminated paths; the call only reads them.
        let r =
            unsafe { libc::renameat2(libc::AT_FDCWD, f.as_ptr(), libc::AT_FDCWD, t.as_ptr(), libc::RENAME_NOREPLACE) };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        // File systems without RENAME_NOREPLACE: check, then rename (a race only between daemons).
        if e.raw_os_error() != Some(libc::EINVAL) {
            return Err(e);
        }
    }
    if to.exists() {
        return Err(io::Error::from(io::ErrorKind::AlreadyExists));
    }
    fs::rename(from, to)
}

/// Dot-files in `dir` (where temporaries live).
fn dot_files_in(dir: &Path) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        let Ok(name) = entry?.file_name().into_string() else { continue };
        if name.starts_with('.') {
            names.push(name);
        }
    }
    Ok(names)
}

/// Whether a file name can be parsed at all: `None` if its extension is unknown.
pub fn format_of(name: &str) -> Option<Format> {
    Format::from_extension(Path::new(name))
}

/// Opens `path` and takes its lock without waiting: `None` if someone holds it, or the file
/// has gone.
fn lock(path: &Path) -> io::Result<Option<File>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Whether a process has `file` open for writing. Where the kernel grants a read lease on it,
/// it does so only while no process has the file open for writing; the lease is given back at
/// once. Where leases are not available (the daemon neither owns the file nor has
/// `CAP_LEASE`, or the file system has none), a file written to (or renamed) within [`QUIET`]
/// counts as being written.
pub fn being_written(file: &File) -> io::Result<bool> {
    match read_lease(file) {
        Ok(free) => Ok(!free),
        Err(_) => Ok(changed_within(&file.metadata()?, SystemTime::now(), QUIET)),
    }
}

/// Whether `meta`'s file changed (contents: mtime; anything, a rename included: ctime) within
/// `quiet` before `now`.
fn changed_within(meta: &fs::Metadata, now: SystemTime, quiet: Duration) -> bool {
    let at = |secs: i64, nsecs: i64| {
        let secs = u64::try_from(secs).unwrap_or(0);
        SystemTime::UNIX_EPOCH + Duration::new(secs, u32::try_from(nsecs).unwrap_or(0))
    };
    let last = at(meta.mtime(), meta.mtime_nsec()).max(at(meta.ctime(), meta.ctime_nsec()));
    // A time in the future (a clock set back) counts as now.
    now.duration_since(last).map_or(true, |age| age < quiet)
}

/// Takes a read lease on `file` (open read-only) and gives it back: `Ok(true)` if it was
/// granted (no process had the file open for writing), `Ok(false)` if not, an error if leases
/// are not available here.
fn read_lease(file: &File) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // A writer that opens the file while we hold the lease makes the kernel signal us,
        // SIGIO by default, whose default action ends the process: it is ignored, as nothing
        // else in the daemon uses it.
        static IGNORE_SIGIO: std::sync::Once = std::sync::Once::new();
        // SAFETY: setting a signal's disposition to SIG_IGN has no handler to race with.
        IGNORE_SIGIO.call_once(|| unsafe {
            libc::signal(libc::SIGIO, libc::SIG_IGN);
        });
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor that `file` keeps open, with integer arguments.
        if unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) } == 0 {
            // SAFETY: as above.
            unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK) };
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EAGAIN) {
            return Ok(false);
        }
        Err(e)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// A file name that is not valid UTF-8, its other bytes escaped as `\xNN`.
fn escaped_name(raw: &std::ffi::OsStr) -> String {
    let mut out = String::new();
    for chunk in raw.as_encoded_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Whether `path` still names the file that `lock` has open (not gone, not replaced).
fn still_named(path: &Path, lock: &File) -> io::Result<bool> {
    let named = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let held = lock.metadata()?;
    Ok(named.dev() == held.dev() && named.ino() == held.ino())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spool with its directories under `dir`.
    fn created(dir: &Path) -> Spool {
        let spool = Spool::new(&dir.join("s"), &dir.join("o"));
        spool.create().unwrap();
        spool
    }

    /// Claims `name`, which must be free.
    fn claimed(spool: &Spool, name: &str) -> Claim {
        match spool.claim(name).unwrap() {
            Attempt::Claimed(claim) => claim,
            other => panic!("{name} not claimed: {other:?}"),
        }
    }

    #[test]
    fn a_file_open_for_writing_is_left_in_incoming_until_its_writer_closes_it() {
        let dir = tempfile::tempdir().unwrap();
        let spool = created(dir.path());
        let path = spool.incoming.join("a.conllu");
        let mut writer = File::create(&path).unwrap();
        io::Write::write_all(&mut writer, b"# sent_id = 1\n").unwrap();
        // Leases need the file's owner or CAP_LEASE: as anyone else, the quiet period decides.
        let leases = read_lease(&File::open(&path).unwrap()).is_ok();
        assert!(matches!(spool.claim("a.conllu").unwrap(), Attempt::BeingWritten), "claimed while written");
        assert!(path.exists(), "left in incoming/");
        drop(writer);
        if leases {
            let claim = claimed(&spool, "a.conllu");
            assert!(!claim.changed().unwrap());
        } else {
            eprintln!("leases unavailable here: only the quiet period was tested");
        }
    }

    #[test]
    fn without_leases_a_file_is_taken_once_it_has_not_changed_for_the_quiet_period() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        fs::write(&path, "x").unwrap();
        let meta = fs::metadata(&path).unwrap();
        let now = SystemTime::now();
        assert!(changed_within(&meta, now, QUIET), "just written");
        assert!(!changed_within(&meta, now + QUIET + Duration::from_millis(10), QUIET), "quiet since");
        assert!(changed_within(&meta, now - Duration::from_secs(3600), QUIET), "written in the future");
    }

    #[test]
    fn a_claimed_file_written_to_after_the_claim_counts_as_changed() {
        let dir = tempfile::tempdir().unwrap();
        let spool = created(dir.path());
        fs::write(spool.incoming.join("a.conllu"), "x\n").unwrap();
        let mut claim = claimed(&spool, "a.conllu");
        assert!(!claim.changed().unwrap());
        let mut more = fs::OpenOptions::new().append(true).open(&claim.path).unwrap();
        io::Write::write_all(&mut more, b"y\n").unwrap();
        assert!(claim.changed().unwrap(), "grown since the claim");
        claim.restamp().unwrap();
        assert!(!claim.changed().unwrap(), "taken as it is now");
    }

    #[test]
    fn a_name_that_is_not_utf8_is_listed_escaped_and_never_claimed() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let spool = created(dir.path());
        fs::write(spool.incoming.join(std::ffi::OsStr::from_bytes(b"caf\xe9.conllu")), "x").unwrap();
        fs::write(spool.incoming.join(std::ffi::OsStr::from_bytes(b".caf\xe9.conllu")), "x").unwrap();
        let waiting = spool.waiting().unwrap();
        assert!(waiting.files.is_empty());
        assert_eq!(waiting.bad_names, ["caf\\xe9.conllu"]);
    }

    #[test]
    fn only_regular_files_wait_and_other_entries_are_named_with_what_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let spool = created(dir.path());
        fs::write(spool.incoming.join("a.conllu"), "x").unwrap();
        fs::create_dir(spool.incoming.join("d.conllu")).unwrap();
        std::os::unix::fs::symlink(spool.incoming.join("a.conllu"), spool.incoming.join("l.conllu")).unwrap();
        let fifo =
            std::ffi::CString::new(spool.incoming.join("p.conllu").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "mkfifo");
        fs::create_dir(spool.incoming.join(".hidden")).unwrap();
        let waiting = spool.waiting().unwrap();
        assert_eq!(waiting.files, ["a.conllu"]);
        assert_eq!(
            waiting.others,
            [
                ("d.conllu".to_string(), "a directory"),
                ("l.conllu".into(), "a symbolic link"),
                ("p.conllu".into(), "a FIFO")
            ]
        );
    }

    #[test]
    fn a_file_is_claimed_once_and_a_dead_owner_releases_it() {
        let dir = tempfile::tempdir().unwrap();
        let spool = created(dir.path());
        fs::write(spool.incoming.join("a.conllu"), "x").unwrap();
        fs::write(spool.incoming.join(".b.conllu"), "x").unwrap();
        assert_eq!(spool.waiting().unwrap().files, ["a.conllu"]);
        let claim = claimed(&spool, "a.conllu");
        assert!(matches!(spool.claim("a.conllu").unwrap(), Attempt::Gone), "claimed twice");
        assert!(spool.orphans().unwrap().is_empty(), "a held file is no orphan");
        drop(claim);
        let orphans = spool.orphans().unwrap();
        assert_eq!(orphans.len(), 1);
        assert!(spool.orphans().unwrap().is_empty(), "an orphan is taken once");
        spool.fail(&orphans[0], "because").unwrap();
        assert_eq!(fs::read_to_string(spool.failed.join("a.conllu.error")).unwrap(), "because\n");
        assert!(spool.failed.join("a.conllu").exists());
    }

    #[test]
    fn output_names_do_not_collide_across_formats() {
        let spool = Spool::new(Path::new("s"), Path::new("o"));
        assert_eq!(spool.outputs("a.conllu.zst").accepted, Path::new("o/accepted/a.conllu.zst"));
        assert_eq!(spool.outputs("a.conllu").lowconf, Path::new("o/lowconf/a.conllu.zst"));
        assert_eq!(spool.outputs("a.txt").accepted, Path::new("o/accepted/a.txt.conllu.zst"));
        assert_eq!(spool.outputs("a.conllx.zst").accepted_tmp, Path::new("o/accepted/.tmp.a.conllx.conllu.zst"));
    }
}

//! Opening inputs and outputs by path: `-` is stdin/stdout, a path ending in `.zst` is a zstd
//! stream, anything else a plain file; making files durable (fsync, atomic replacement); and
//! numbering a file name that is taken (`x~2.conllu`). This module owns byte streams and file
//! names only; it knows nothing of the formats read from them.

use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The conventional name for stdin/stdout on the command line.
pub const STDIO: &str = "-";

fn is_zst(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// Opens `path` for buffered reading, decompressing `.zst` files on the fly.
pub fn open_input(path: &Path) -> io::Result<Box<dyn BufRead + Send>> {
    if path.as_os_str() == STDIO {
        return Ok(Box::new(BufReader::new(io::stdin())));
    }
    let file = File::open(path).map_err(|e| io::Error::new(e.kind(), format!("cannot open: {e}")))?;
    if is_zst(path) {
        Ok(Box::new(ReadAhead::spawn(Zstd { inner: zstd::Decoder::new(file)?, produced: 0 })?))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
    }
}

/// Bytes a [`ReadAhead`] thread reads at a time.
const AHEAD_CHUNK: usize = 256 << 10;

/// A reader that reads (and so decompresses) its input on a thread of its own, up to two
/// chunks ahead, so that decompressing runs beside the work of whoever reads, not under it:
/// in the parsing pipeline the reading stage runs one thread at a time, and decompressing
/// there was a serial share that more cores could never shorten (about 1% of a CoNLL-U parse).
/// The thread ends at the end of the input, at its first error, or once the reader is dropped.
/// The error is passed on at every read from then on, never as the end of the input: readers
/// that meet an error where they cannot report it leave it to be met again (the block reader
/// of the pipeline does), and a truncated `.zst` read as ending early lost the rest of the file
/// without a word.
pub struct ReadAhead {
    chunks: crossbeam_channel::Receiver<io::Result<Vec<u8>>>,
    /// Chunks read, given back for the thread to fill again.
    spent: crossbeam_channel::Sender<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
    end: Option<End>,
}

/// How a [`ReadAhead`]'s input ended.
enum End {
    Complete,
    /// The input's error, as its kind and message (an `io::Error` cannot be cloned).
    Failed(io::ErrorKind, String),
}

impl ReadAhead {
    /// Starts reading `input` ahead (an error if no thread can be started).
    pub fn spawn<R: io::Read + Send + 'static>(mut input: R) -> io::Result<ReadAhead> {
        let (tx, chunks) = crossbeam_channel::bounded::<io::Result<Vec<u8>>>(2);
        let (spent, refill) = crossbeam_channel::unbounded::<Vec<u8>>();
        let started = std::thread::Builder::new().name("spoolparse-read-ahead".into()).spawn(move || loop {
            let mut chunk = refill.try_recv().unwrap_or_default();
            chunk.resize(AHEAD_CHUNK, 0);
            let result = loop {
                match input.read(&mut chunk) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other,
                }
            };
            let last = !matches!(result, Ok(n) if n > 0);
            let sent = tx.send(result.map(|n| {
                chunk.truncate(n);
                chunk
            }));
            if last || sent.is_err() {
                return;
            }
        });
        started.map_err(|e| io::Error::new(e.kind(), format!("cannot start a thread to read ahead: {e}")))?;
        Ok(ReadAhead { chunks, spent, chunk: Vec::new(), at: 0, end: None })
    }
}

impl io::Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ReadAhead {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.at == self.chunk.len() && self.end.is_none() {
            match self.chunks.recv() {
                Ok(Ok(next)) if !next.is_empty() => {
                    let spent = std::mem::replace(&mut self.chunk, next);
                    let _ = self.spent.send(spent);
                    self.at = 0;
                }
                Ok(Err(e)) => self.end = Some(End::Failed(e.kind(), e.to_string())),
                // The end of the input (an empty chunk, or the thread gone after sending it).
                Ok(Ok(_)) | Err(_) => self.end = Some(End::Complete),
            }
        }
        match &self.end {
            Some(End::Failed(kind, message)) if self.at == self.chunk.len() => {
                Err(io::Error::new(*kind, message.clone()))
            }
            _ => Ok(&self.chunk[self.at..]),
        }
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.chunk.len());
    }
}

/// A zstd decoder whose errors say what happened in a user's words (zstd's own are "Unknown
/// frame descriptor" for a file that is not zstd at all, "incomplete frame" for a truncated one).
struct Zstd<R: BufRead> {
    inner: zstd::Decoder<'static, R>,
    /// Decompressed bytes so far.
    produced: u64,
}

impl<R: BufRead> io::Read for Zstd<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.produced += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(io::Error::new(e.kind(), describe_zstd_error(&e, self.produced))),
        }
    }
}

/// What a zstd decoding error means, after `produced` decompressed bytes.
fn describe_zstd_error(e: &io::Error, produced: u64) -> String {
    let message = e.to_string();
    if e.kind() == io::ErrorKind::UnexpectedEof || message.contains("incomplete frame") {
        format!("the zstd stream is truncated: the file ends after {produced} bytes of decompressed text (cut off while being copied?)")
    } else if produced == 0 && message.contains("Unknown frame descriptor") {
        "not zstd-compressed data, although the name ends in .zst".to_string()
    } else {
        format!("corrupt zstd data after {produced} bytes of decompressed text ({message})")
    }
}

/// Opens bytes `range` of the plain file `path` for buffered reading: a shard of a large file.
/// Compressed files (`.zst`) cannot be read from the middle, nor can stdin: both are refused.
pub fn open_input_range(path: &Path, range: std::ops::Range<u64>) -> io::Result<Box<dyn BufRead + Send>> {
    use std::io::{Read, Seek, SeekFrom};
    if path.as_os_str() == STDIO || is_zst(path) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "only a plain file can be read from a byte offset (not stdin, not a .zst stream)",
        ));
    }
    let mut file = File::open(path).map_err(|e| io::Error::new(e.kind(), format!("cannot open: {e}")))?;
    file.seek(SeekFrom::Start(range.start))?;
    let len = range.end.saturating_sub(range.start);
    Ok(Box::new(BufReader::with_capacity(1 << 16, file.take(len))))
}

/// Number of line feeds in the first `end` bytes of the plain file `path`: the line number,
/// less one, of the line that starts at byte `end`.
pub fn count_lines_before(path: &Path, end: u64) -> io::Result<u64> {
    use std::io::Read;
    let mut input = File::open(path)?.take(end);
    let mut buf = vec![0u8; 1 << 16];
    let mut lines = 0;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => return Ok(lines),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
    }
}

/// A buffered output stream that must be [`Output::finish`]ed: a zstd frame is only complete
/// once its epilogue is written, and errors on that last write must not be lost in a `Drop`.
pub struct Output {
    inner: Sink,
    /// A second handle on the file, for `fsync` once the stream is complete.
    file: Option<File>,
}

enum Sink {
    Plain(BufWriter<Box<dyn Write + Send>>),
    Zstd(WriteBehind),
}

/// The buffered file under a compressed output.
type Buffered = BufWriter<Box<dyn Write + Send>>;

/// A zstd stream compressed on a thread of its own: writes only fill chunks, and the thread
/// compresses them, so that compressing runs beside the work of whoever writes, not under it
/// (in the parsing pipeline writing runs one thread at a time, and compressing there was a
/// serial share that more cores could never shorten: about 7% of a CoNLL-U parse in the
/// daemon, whose outputs are compressed). The thread stops at its first error, which the next
/// write, or [`WriteBehind::finish`], returns.
struct WriteBehind {
    chunk: Vec<u8>,
    chunks: Option<crossbeam_channel::Sender<Vec<u8>>>,
    /// Chunks compressed, given back to fill again.
    spent: crossbeam_channel::Receiver<Vec<u8>>,
    thread: Option<std::thread::JoinHandle<io::Result<Buffered>>>,
}

impl WriteBehind {
    fn spawn(out: Buffered) -> io::Result<WriteBehind> {
        let mut encoder = zstd::Encoder::new(out, ZSTD_LEVEL)?;
        let (tx, chunks) = crossbeam_channel::bounded::<Vec<u8>>(2);
        let (give_back, spent) = crossbeam_channel::unbounded::<Vec<u8>>();
        let thread = std::thread::Builder::new()
            .name("spoolparse-write-behind".into())
            .spawn(move || {
                let mut written = false;
                for chunk in chunks {
                    encoder.write_all(&chunk)?;
                    written |= !chunk.is_empty();
                    let _ = give_back.send(chunk);
                }
                let mut out = encoder.finish()?;
                if !written {
                    // The encoder writes nothing for no input, which decoders reject.
                    out.write_all(&zstd::encode_all(io::empty(), ZSTD_LEVEL)?)?;
                }
                Ok(out)
            })
            .map_err(|e| io::Error::new(e.kind(), format!("cannot start a thread to compress: {e}")))?;
        Ok(WriteBehind { chunk: Vec::with_capacity(AHEAD_CHUNK), chunks: Some(tx), spent, thread: Some(thread) })
    }

    /// Hands the chunk filled so far to the thread.
    fn send(&mut self) -> io::Result<()> {
        let mut next = self.spent.try_recv().unwrap_or_else(|_| Vec::with_capacity(AHEAD_CHUNK));
        next.clear();
        let chunk = std::mem::replace(&mut self.chunk, next);
        let sent = self.chunks.as_ref().is_some_and(|c| c.send(chunk).is_ok());
        if sent {
            Ok(())
        } else {
            // The thread stopped: its error says why.
            Err(self.join().err().unwrap_or_else(|| io::Error::other("the compressing thread stopped")))
        }
    }

    /// Waits for the thread, once the channel is closed.
    fn join(&mut self) -> io::Result<Buffered> {
        self.chunks = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the compressing thread panicked")),
            None => Err(io::Error::other("the compressed stream was already closed")),
        }
    }

    /// Compresses what is left, completes the stream and returns the file under it.
    fn finish(mut self) -> io::Result<Buffered> {
        if !self.chunk.is_empty() {
            self.send()?;
        }
        self.join()
    }
}

impl Write for WriteBehind {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.chunk.extend_from_slice(buf);
        if self.chunk.len() >= AHEAD_CHUNK {
            self.send()?;
        }
        Ok(buf.len())
    }

    /// Only hands the chunk on: the stream is flushed where it is finished.
    fn flush(&mut self) -> io::Result<()> {
        if !self.chunk.is_empty() {
            self.send()?;
        }
        Ok(())
    }
}

/// zstd level used for outputs: fast, and still several times smaller than plain text.
const ZSTD_LEVEL: i32 = 3;

impl Output {
    /// Creates (truncates) `path`, compressing if it ends in `.zst`; `-` is stdout.
    pub fn create(path: &Path) -> io::Result<Output> {
        let (raw, file): (Box<dyn Write + Send>, _) = if path.as_os_str() == STDIO {
            (Box::new(io::stdout()), None)
        } else {
            let f = File::create(path)?;
            let handle = f.try_clone()?;
            (Box::new(f), Some(handle))
        };
        let buffered = BufWriter::with_capacity(1 << 16, raw);
        let inner = if path.as_os_str() != STDIO && is_zst(path) {
            Sink::Zstd(WriteBehind::spawn(buffered)?)
        } else {
            Sink::Plain(buffered)
        };
        Ok(Output { inner, file })
    }

    /// Creates a new temporary file beside `path` (in its directory, a dot-file, never an existing
    /// file), compressed if `path` ends in `.zst`; returns it and its name. Give it its name
    /// with [`publish`] once [`Output::finish_durably`] succeeded, or remove it.
    pub fn create_temporary(path: &Path) -> io::Result<(Output, PathBuf)> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (f, tmp) = create_unique(|pid, n| path.with_file_name(format!(".{name}.tmp{pid}-{n}")))?;
        let handle = f.try_clone()?;
        let buffered = BufWriter::with_capacity(1 << 16, Box::new(f) as Box<dyn Write + Send>);
        let inner = if is_zst(path) { Sink::Zstd(WriteBehind::spawn(buffered)?) } else { Sink::Plain(buffered) };
        Ok((Output { inner, file: Some(handle) }, tmp))
    }

    /// Completes the stream (zstd epilogue) and flushes everything to the OS.
    pub fn finish(self) -> io::Result<()> {
        self.finish_inner().map(drop)
    }

    /// Like [`Output::finish`], then waits until the file's contents are on disk (`fsync`).
    pub fn finish_durably(self) -> io::Result<()> {
        if let Some(file) = self.finish_inner()? {
            file.sync_all()?;
        }
        Ok(())
    }

    fn finish_inner(self) -> io::Result<Option<File>> {
        let mut buffered = match self.inner {
            Sink::Plain(w) => w,
            Sink::Zstd(behind) => behind.finish()?,
        };
        buffered.flush()?;
        Ok(self.file)
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Sink::Plain(w) => w.write(buf),
            Sink::Zstd(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Sink::Plain(w) => w.flush(),
            Sink::Zstd(w) => w.flush(),
        }
    }
}

/// Creates a new file, open for reading and writing, at the first name `name(pid, n)` that does
/// not exist yet (`n` counts up across calls); returns it and its name.
fn create_unique(name: impl Fn(u32, u64) -> PathBuf) -> io::Result<(fs::File, PathBuf)> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    loop {
        let path = name(std::process::id(), NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        match fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
            Ok(f) => return Ok((f, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A new temporary file in `TMPDIR`, already unlinked: it disappears when closed, even if the
/// process is killed.
pub fn anonymous_temporary() -> io::Result<fs::File> {
    let dir = std::env::temp_dir();
    let (file, path) = create_unique(|pid, n| dir.join(format!(".spoolparse-spill-{pid}-{n}")))?;
    fs::remove_file(path)?;
    Ok(file)
}

/// Names of the regular files in `dir`, in name order, leaving out dot-files (files still being
/// written, by the spool convention: producers rename them in when complete).
pub fn visible_files(dir: &Path) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        if name.starts_with('.') || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// The `n`th name for a file named `name` when earlier ones are taken: `name` itself for 1,
/// else `~N` before the format's extension (`x.conllu.zst` → `x~2.conllu.zst`, `a.txt` →
/// `a~2.txt`), so that the numbered file is still recognised by its extension; a name without
/// a known extension gets `~N` at its end.
pub fn numbered_name(name: &str, n: u64) -> String {
    if n == 1 {
        return name.to_string();
    }
    let (stem, ext) = split_extension(name);
    format!("{stem}~{n}{ext}")
}

/// Splits a name before its format's extension (`x.conllu.zst` → `x`, `.conllu.zst`); a name
/// without a known one keeps its whole self as the stem.
fn split_extension(name: &str) -> (&str, &str) {
    const KNOWN: [&str; 4] = [".conllu", ".conllx", ".conll", ".txt"];
    let unzst = name.strip_suffix(".zst").unwrap_or(name);
    match KNOWN.iter().find(|k| unzst.ends_with(*k) && unzst.len() > k.len()) {
        Some(k) => name.split_at(unzst.len() - k.len()),
        None => (name, ""),
    }
}

/// Whether `a` and `b` name one file: the same device and inode (through any links) if both
/// exist, else the same path once the directory of each is resolved (`x`, `./x`, `d/../x`, or
/// through a link to the directory); false for stdin/stdout (`-`).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if a.as_os_str() == STDIO || b.as_os_str() == STDIO {
        return false;
    }
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        // A file that exists is never one that does not.
        (Ok(_), Err(_)) | (Err(_), Ok(_)) => false,
        _ => matches!((resolved(a), resolved(b)), (Some(x), Some(y)) if x == y),
    }
}

/// The path of a file that does not exist (yet) with its directory resolved (links, `..`), or
/// made absolute where the directory does not exist either.
fn resolved(path: &Path) -> Option<PathBuf> {
    match (fs::canonicalize(parent_dir(path)), path.file_name()) {
        (Ok(dir), Some(name)) => Some(dir.join(name)),
        _ => std::path::absolute(path).ok(),
    }
}

/// The directory `path` is in (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Makes the entries of directory `dir` durable (renames and creations in it).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Renames `from` to `to` and makes the rename durable in both directories.
pub fn rename_durably(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)?;
    sync_dir(parent_dir(to))?;
    if parent_dir(from) != parent_dir(to) {
        sync_dir(parent_dir(from))?;
    }
    Ok(())
}

/// Gives the complete file `tmp` the name `path` (in the same directory) and makes that durable.
/// Unless `replace`, an existing `path` is never replaced: the call fails with
/// [`io::ErrorKind::AlreadyExists`] and `tmp` stays. The name is taken by a hard link, which
/// fails if it exists; where the file system has no hard links, by a rename after a check.
pub fn publish(tmp: &Path, path: &Path, replace: bool) -> io::Result<()> {
    if replace {
        return rename_durably(tmp, path);
    }
    match fs::hard_link(tmp, path) {
        Ok(()) => fs::remove_file(tmp)?,
        Err(_) if fs::symlink_metadata(path).is_ok() => return Err(already_exists(path)),
        Err(_) => fs::rename(tmp, path)?,
    }
    sync_dir(parent_dir(path))
}

/// The error for an output that exists and is not to be replaced.
pub fn already_exists(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::AlreadyExists, format!("{} exists, and is never overwritten", path.display()))
}

/// Writes `bytes` to `path` so that readers see either the old file or the complete new one:
/// a temporary file in the same directory, fsync, rename, fsync of the directory.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".tmp{}", std::process::id()));
    let tmp = path.with_file_name(name);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        sync_dir(parent_dir(path))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes the temporaries of [`write_atomically`] (`NAME.tmpPID`) in `dir` whose process is
/// gone, or is this one (call it before this process writes any). Returns how many.
pub fn sweep_atomic_temporaries(dir: &Path) -> io::Result<usize> {
    sweep(dir, true)
}

/// Removes the temporaries of [`write_atomically`] (`NAME.tmpPID`) in `dir` whose process is
/// gone, never one of a live process, this one included: safe while other threads and
/// processes write there. Returns how many.
pub fn sweep_dead_temporaries(dir: &Path) -> io::Result<usize> {
    sweep(dir, false)
}

/// Removes the temporaries in `dir` of dead processes, and with `own` those of this one.
fn sweep(dir: &Path, own: bool) -> io::Result<usize> {
    let mut removed = 0;
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        let Some((_, pid)) = name.rsplit_once(".tmp") else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        let ours = pid == std::process::id();
        if ((own && ours) || (!ours && !process_alive(pid))) && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// Whether a process with this id exists (Linux and other Unixes: `kill(pid, 0)`).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Asks the kernel to drop `path`'s pages from the page cache (Linux; elsewhere nothing). For
/// a model file just written: its cached pages are the small ones the writes made, and a page
/// cache that holds a file in small pages maps it in small pages. Read back from disk into a
/// mapping advised for huge pages, it is read and mapped in 2 MiB pages instead (see
/// [`crate::model::file::ModelFile::open`]). Only clean, unmapped pages are dropped, so call
/// it after `fsync`; it never loses data, and readers that have the file mapped keep their pages.
pub fn drop_from_page_cache(path: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let file = File::open(path)?;
        // SAFETY: a valid open descriptor; the call only reads its arguments.
        let err = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gives `bytes` in reads of odd sizes, then fails.
    struct Failing {
        bytes: Vec<u8>,
        at: usize,
    }

    impl io::Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.at == self.bytes.len() {
                return Err(io::Error::other("the disk went away"));
            }
            let n = buf.len().min(self.bytes.len() - self.at).min(77_777);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn a_compressed_output_holds_every_byte_written_in_order() {
        use io::Read as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.conllu.zst");
        let mut out = Output::create(&path).unwrap();
        let mut expected = Vec::new();
        // Writes of every size, many more bytes than a chunk, as sentences come.
        for i in 0..40_000usize {
            let line: Vec<u8> = (0..i % 97).map(|j| b'a' + ((i + j) % 26) as u8).chain([b'\n']).collect();
            out.write_all(&line).unwrap();
            expected.extend_from_slice(&line);
        }
        out.finish_durably().unwrap();
        let mut got = Vec::new();
        zstd::Decoder::new(File::open(&path).unwrap()).unwrap().read_to_end(&mut got).unwrap();
        assert!(got.len() == expected.len() && got == expected, "{} bytes back of {}", got.len(), expected.len());
        let empty = dir.path().join("empty.conllu.zst");
        Output::create(&empty).unwrap().finish().unwrap();
        assert_eq!(zstd::decode_all(File::open(&empty).unwrap()).unwrap(), b"");
    }

    #[test]
    fn reading_ahead_gives_every_byte_in_order_then_the_input_s_error_at_every_read() {
        use io::Read as _;
        let bytes: Vec<u8> = (0..3 * AHEAD_CHUNK + 12_345).map(|i| (i * 7 % 251) as u8).collect();
        let mut ahead = ReadAhead::spawn(Failing { bytes: bytes.clone(), at: 0 }).unwrap();
        let mut got = vec![0; bytes.len()];
        ahead.read_exact(&mut got).unwrap();
        assert!(got == bytes, "the bytes differ");
        // The error stays: a reader that meets it again must not take it for the end.
        for _ in 0..3 {
            let err = ahead.read(&mut [0; 10]).unwrap_err();
            assert_eq!(err.to_string(), "the disk went away");
        }
        let zst = tempfile::Builder::new().suffix(".zst").tempfile().unwrap();
        std::fs::write(zst.path(), zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
        let mut whole = Vec::new();
        open_input(zst.path()).unwrap().read_to_end(&mut whole).unwrap();
        assert!(whole == bytes, "the decompressed bytes differ");
    }

    #[test]
    fn only_the_temporaries_of_dead_processes_are_swept_while_others_may_write() {
        let dir = tempfile::tempdir().unwrap();
        // A pid above the kernel's pid_max is never alive; pid 1 (init) always is.
        let (dead, own) = ("a.model.tmp4999999", format!("b.model.tmp{}", std::process::id()));
        for name in [dead, own.as_str(), "c.model", "d.tmpx", "e.model.tmp1"] {
            fs::write(dir.path().join(name), b"x").unwrap();
        }
        assert_eq!(sweep_dead_temporaries(dir.path()).unwrap(), 1);
        assert!(!dir.path().join(dead).exists());
        assert!(dir.path().join(&own).exists(), "a temporary of this live process was removed");
        // At start, before this process writes any, its own pid's are stale too.
        assert_eq!(sweep_atomic_temporaries(dir.path()).unwrap(), 1);
        assert_eq!(visible_files(dir.path()).unwrap(), ["c.model", "d.tmpx", "e.model.tmp1"]);
        assert_eq!(sweep_dead_temporaries(&dir.path().join("absent")).unwrap(), 0);
    }

    #[test]
    fn a_numbered_name_keeps_the_format_extension() {
        assert_eq!(numbered_name("c.conllu", 1), "c.conllu");
        assert_eq!(numbered_name("c.conllu", 2), "c~2.conllu");
        assert_eq!(numbered_name("x.conllu.zst", 3), "x~3.conllu.zst");
        assert_eq!(numbered_name("a.b.txt", 2), "a.b~2.txt");
        // Nothing before the extension, or none known: the number goes at the end.
        assert_eq!(numbered_name(".conllu", 2), ".conllu~2");
        assert_eq!(numbered_name("notes.md", 2), "notes.md~2");
    }
}

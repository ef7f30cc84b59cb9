//! Opening inputs and outputs by path: `-` is stdin/stdout, a path ending in `.zst` is a zstd
//! stream, anything else a plain file. This module owns byte streams only; it knows nothing of
//! the formats read from them.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;

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
    let file = File::open(path)?;
    if is_zst(path) {
        Ok(Box::new(BufReader::new(zstd::Decoder::new(file)?)))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
    }
}

/// A buffered output stream that must be [`Output::finish`]ed: a zstd frame is only complete
/// once its epilogue is written, and errors on that last write must not be lost in a `Drop`.
pub struct Output {
    inner: Sink,
}

enum Sink {
    Plain(BufWriter<Box<dyn Write + Send>>),
    Zstd(zstd::Encoder<'static, BufWriter<Box<dyn Write + Send>>>),
}

/// zstd level used for outputs: fast, and still several times smaller than plain text.
const ZSTD_LEVEL: i32 = 3;

impl Output {
    /// Creates (truncates) `path`, compressing if it ends in `.zst`; `-` is stdout.
    pub fn create(path: &Path) -> io::Result<Output> {
        let raw: Box<dyn Write + Send> =
            if path.as_os_str() == STDIO { Box::new(io::stdout()) } else { Box::new(File::create(path)?) };
        let buffered = BufWriter::with_capacity(1 << 16, raw);
        let inner = if path.as_os_str() != STDIO && is_zst(path) {
            Sink::Zstd(zstd::Encoder::new(buffered, ZSTD_LEVEL)?)
        } else {
            Sink::Plain(buffered)
        };
        Ok(Output { inner })
    }

    /// Completes the stream (zstd epilogue) and flushes everything to the OS.
    pub fn finish(self) -> io::Result<()> {
        let mut buffered = match self.inner {
            Sink::Plain(w) => w,
            Sink::Zstd(enc) => enc.finish()?,
        };
        buffered.flush()
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

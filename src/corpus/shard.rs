//! Splitting a large file into shards that each start at a sentence, so that parsing the shards
//! one by one (see [`super::Reader::open_range`]) and concatenating their outputs gives what
//! parsing the whole file does, byte for byte. This module owns where a sentence may start in
//! the bytes of a file; it reads nothing else of them, and never the whole file.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

use super::Format;

/// Byte ranges that cover the plain file `path` in order, each starting at a sentence and all
/// but the last about `max_bytes` long (or longer, to reach the next sentence); a single range
/// for a file of at most `max_bytes`, or when `max_bytes` is 0. `None` for input that cannot be
/// read from an offset: stdin, and `.zst` streams, which a caller parses whole; and raw text,
/// whose sentences are only known once the text before them is tokenized (a shard could not
/// number them as the whole file does, and its first sentence would see no text to its left).
///
/// A CoNLL sentence starts at a line that is not blank after a blank line, so that the blank
/// lines after a sentence stay with it (the parser writes them back); in tokenized text every
/// line is a sentence. Lines may end in LF or CR LF, as the reader reads them. Only the bytes around each split point are read.
pub fn shard_ranges(path: &Path, format: Format, max_bytes: u64) -> io::Result<Option<Vec<Range<u64>>>> {
    let name = path.to_string_lossy();
    // A sentence starts after this many line feeds in a row (a blank line, in CoNLL).
    let after = match format {
        Format::Text => 1,
        Format::Conllu | Format::Conllx => 2,
        Format::Raw => return Ok(None),
    };
    if name == crate::base::io::STDIO || name.ends_with(".zst") {
        return Ok(None);
    }
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if max_bytes == 0 || len <= max_bytes {
        #[allow(clippy::single_range_in_vec_init)] // one shard: the whole file
        return Ok(Some(vec![0..len]));
    }
    let shards = len.div_ceil(max_bytes);
    let mut starts = vec![0];
    for i in 1..shards {
        let target = len / shards * i;
        let last = starts[starts.len() - 1];
        if target <= last {
            continue;
        }
        match next_start(&mut file, target, after)? {
            Some(p) if p < len => starts.push(p),
            _ => break,
        }
    }
    let mut ranges: Vec<Range<u64>> = starts.windows(2).map(|w| w[0]..w[1]).collect();
    ranges.push(starts[starts.len() - 1]..len);
    Ok(Some(ranges))
}

/// How many sentences bytes `range` of the plain file `path` hold, malformed ones included, as
/// the reader counts them, from their lines alone: in CoNLL a sentence is a run of lines that
/// are not blank (a blank line is empty or a lone CR), in tokenized text a line that is not
/// blank (whitespace only). For numbering a shard's sentences as the whole file does without
/// reading every shard before it, which cost the last of 16 shards as much as parsing its own
/// (the reader counts the same unless the bytes hold what makes reading them fail anyway:
/// binary data, a line over the limit, text not in the format at all).
pub fn count_sentences(path: &Path, format: Format, range: Range<u64>) -> io::Result<u64> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(range.start))?;
    let mut input = BufReader::with_capacity(1 << 16, file.take(range.end.saturating_sub(range.start)));
    let (mut count, mut in_sentence, mut line) = (0, false, Vec::new());
    let mut first = range.start == 0;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(count);
        }
        let mut text = line.strip_suffix(b"\n").unwrap_or(&line);
        if std::mem::take(&mut first) {
            // A byte order mark is no part of the file's first line.
            text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
        }
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let blank = match format {
            Format::Text => super::reader::is_blank_text(text),
            _ => text.is_empty(),
        };
        count += u64::from(!blank && (format == Format::Text || !in_sentence));
        in_sentence = !blank;
    }
}

/// The first offset at or after `from` where a sentence may start, if any before the end.
/// A sentence starts after `after` line feeds in a row.
fn next_start(file: &mut File, from: u64, after: u64) -> io::Result<Option<u64>> {
    // One byte more for the CR of a CR LF line ending, which counts as the LF does.
    let begin = from.saturating_sub(2 * after);
    file.seek(SeekFrom::Start(begin))?;
    let mut run = 0u64;
    let mut bytes = (begin..).zip(BufReader::with_capacity(1 << 16, &mut *file).bytes()).peekable();
    while let Some((pos, byte)) = bytes.next() {
        let byte = byte?;
        let ends_line = byte == b'\n' || (byte == b'\r' && matches!(bytes.peek(), Some((_, Ok(b'\n')))));
        if pos >= from && run >= after && !ends_line {
            return Ok(Some(pos));
        }
        run = match byte {
            b'\n' => run + 1,
            _ if ends_line => run,
            _ => 0,
        };
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(text: &str, format: Format, max: u64) -> Vec<Range<u64>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.conllu");
        std::fs::write(&path, text).unwrap();
        shard_ranges(&path, format, max).unwrap().unwrap()
    }

    #[test]
    fn shards_cover_the_file_and_start_at_sentences() {
        let text = "# a\n1\tx\n\n\n1\ty\n2\tz\n\n1\tw\n\n";
        for max in 1..text.len() as u64 + 2 {
            let r = ranges(text, Format::Conllu, max);
            assert_eq!(r[0].start, 0);
            assert_eq!(r[r.len() - 1].end, text.len() as u64);
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                let p = w[1].start as usize;
                assert!(p > w[0].start as usize);
                assert_eq!(&text[p - 2..p], "\n\n", "max {max}: split at {p}");
                assert_ne!(&text[p..p + 1], "\n", "max {max}: split at {p} in a run of blank lines");
            }
        }
        let whole = ranges(text, Format::Conllu, 0);
        assert_eq!((whole.len(), whole[0].clone()), (1, 0..text.len() as u64));
        assert_eq!(ranges(text, Format::Conllu, 5).len(), 3);
    }

    #[test]
    fn crlf_files_split_where_their_lf_copies_do() {
        let lf = "# a\n1\tx\n\n\n1\ty\n2\tz\n\n1\tw\n\n";
        let crlf = lf.replace('\n', "\r\n");
        for max in 1..crlf.len() as u64 + 2 {
            let r = ranges(&crlf, Format::Conllu, max);
            assert_eq!((r[0].start, r[r.len() - 1].end), (0, crlf.len() as u64));
            for w in r.windows(2) {
                let p = w[1].start as usize;
                assert_eq!(&crlf[p - 4..p], "\r\n\r\n", "max {max}: split at {p}");
                assert!(!crlf[p..].starts_with('\r'), "max {max}: split at {p} in a run of blank lines");
            }
        }
        // The smallest shards: one per sentence, as in the LF file.
        assert_eq!(ranges(&crlf, Format::Conllu, 1).len(), 3);
        assert_eq!(ranges(lf, Format::Conllu, 1).len(), 3);
        // A CR that ends no line is content: the line it starts may start a sentence.
        let r = ranges("1\tx\n\n\r1\ty\n\n", Format::Conllu, 3);
        assert_eq!(r.iter().map(|r| r.start).collect::<Vec<_>>(), [0, 5]);
    }

    #[test]
    fn text_shards_start_at_lines_and_compressed_files_are_not_split() {
        let text = "a b\nc\n\nd e f\n";
        let r = ranges(text, Format::Text, 4);
        assert!(r.len() > 1);
        for w in r.windows(2) {
            assert_eq!(&text[w[1].start as usize - 1..w[1].start as usize], "\n");
        }
        assert!(shard_ranges(Path::new("x.conllu.zst"), Format::Conllu, 1).unwrap().is_none());
        let raw = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(raw.path(), "One paragraph.\n\nAnother one.\n".repeat(100)).unwrap();
        assert!(shard_ranges(raw.path(), Format::Raw, 10).unwrap().is_none(), "raw text is never split");
    }
}

//! Fuzzes the corpus readers (CoNLL-U, CoNLL-X, tokenized text) for properties that hold by
//! design, not only for panics: reading terminates; errors name a line of the input; a
//! sentence read without error is the input's lines verbatim, writes back and reads again as
//! an equal sentence, has as many words as word lines, and has HEADs in range; reading a file
//! gives the same sentences as reading each of its blank-line-separated blocks on its own (an
//! error in one sentence costs only that sentence, unless the file as a whole is unreadable:
//! binary, or not the format at all); and neither `keep_text`, the buffer size
//! nor a zstd stream in between changes what is read.
//!
//! The first input byte chooses: bits 0-1 the format (0 and 3 CoNLL-U, 1 CoNLL-X, 2 text);
//! bit 2 `keep_text`; bits 3-4 the transport: 0 plain, 1 a `BufReader` of 1-8 bytes (bits
//! 5-7), 2 the rest compressed and read back through zstd as `io::open_input` does, 3 the
//! rest taken as a zstd stream itself (decoding errors must end reading, with a line).
#![no_main]

use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use spoolparse::corpus::{Format, Reader, Sentence};

/// Bound on what a zstd stream of transport 3 may decode to (a few bytes can name megabytes).
const DECODED_LIMIT: u64 = 1 << 20;

/// One result of `read_next`: a sentence with its first line, or an error's line and message.
#[derive(Debug, PartialEq)]
enum Outcome {
    Sentence(Sentence, u64),
    Error(u64, String, bool),
}

/// Reads `input` to the end, panicking if it yields more results than it has lines (+1 for
/// an error after the last one): each result consumes at least one line.
fn read(input: impl BufRead, format: Format, keep_text: bool, lines: u64) -> Vec<Outcome> {
    let reader = Reader::new(input, Path::new("fuzz"), format);
    let mut reader = if keep_text { reader.keep_text() } else { reader };
    let mut out = Vec::new();
    loop {
        let mut sent = Sentence::default();
        match reader.read_next(&mut sent) {
            None => break,
            Some(Ok(())) => {
                let first = sent.first_line;
                out.push(Outcome::Sentence(sent, first));
            }
            Some(Err(e)) => {
                assert_eq!(e.path, Path::new("fuzz"));
                out.push(Outcome::Error(e.line, e.kind.to_string(), e.kind.is_unreadable()));
            }
        }
        assert!(out.len() as u64 <= lines + 1, "{} results from {lines} lines", out.len());
    }
    out
}

fn line_count(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

fn written(sent: &Sentence) -> Vec<u8> {
    let mut out = Vec::new();
    sent.write_to(&mut out).unwrap();
    out
}

/// The properties of each result, for `input` (`lines` lines) read in `format`.
fn check(outcomes: &[Outcome], input: &[u8], lines: u64, format: Format) {
    let input_lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    for o in outcomes {
        match o {
            Outcome::Error(line, msg, unreadable) => {
                // An error that ends reading may concern the whole file (line 0: I/O, not this
                // format) or name the line it failed on; any other names a line of the input.
                let whole_file = *unreadable && *line == 0;
                assert!(whole_file || (1..=lines).contains(line), "error at line {line} of {lines}: {msg}");
            }
            Outcome::Sentence(sent, first) => {
                assert!((1..=lines).contains(first), "sentence at line {first} of {lines}");
                let out = written(sent);
                let out_lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
                let out_lines = &out_lines[..out_lines.len() - 1];
                // Word lines are those whose ID is an integer; comments come first.
                let words = out_lines
                    .iter()
                    .filter(|l| !l.is_empty() && l[0] != b'#')
                    .filter(|l| {
                        let id = l.split(|&b| b == b'\t').next().unwrap();
                        !id.is_empty() && id.iter().all(u8::is_ascii_digit)
                    })
                    .count();
                assert_eq!(sent.len(), words, "len() is not the number of word lines");
                assert!(sent.len() >= 1);
                match sent.heads() {
                    Ok(Some(heads)) => assert!(heads.iter().all(|&h| h <= sent.len())),
                    Ok(None) => {}
                    Err((line, e)) => panic!("a sentence read without error has a bad HEAD: {line}: {e}"),
                }
                if format == Format::Text {
                    assert_eq!(sent.heads().unwrap(), None);
                } else {
                    // Lossless: the sentence writes back as the input lines it came from.
                    let from = (*first - 1) as usize;
                    assert!(
                        input_lines.len() >= from + out_lines.len()
                            && input_lines[from..from + out_lines.len()] == *out_lines,
                        "sentence at line {first} does not write back as read"
                    );
                }
                // What was written reads back as the same sentence, and only that.
                let again_format = if format == Format::Text { Format::Conllu } else { format };
                let again = read(Cursor::new(&out[..]), again_format, false, line_count(&out));
                match &again[..] {
                    [Outcome::Sentence(s, 1)] => assert!(s == sent, "round trip changed the sentence"),
                    _ => panic!("round trip read {again:?}"),
                }
            }
        }
    }
}

/// A sentence as written, without the blank lines after it (which depend on its neighbours).
fn shown(sent: &Sentence) -> String {
    String::from_utf8_lossy(written(sent).trim_ascii_end()).into_owned()
}

/// Reading a CoNLL file gives, sentence for sentence, what reading each of its blocks of
/// non-blank lines on its own gives: after an error the reader resumes at the next block.
fn check_blocks(outcomes: &[Outcome], input: &[u8], format: Format) {
    let mut expected = Vec::new();
    let mut start = 0;
    let mut line = 1u64;
    let mut block_line = 1u64;
    for piece in input.split_inclusive(|&b| b == b'\n') {
        if piece == b"\n" {
            if start < (piece.as_ptr() as usize - input.as_ptr() as usize) {
                let end = piece.as_ptr() as usize - input.as_ptr() as usize + 1;
                let block = &input[start..end];
                for o in read(Cursor::new(block), format, false, line_count(block)) {
                    if let Outcome::Sentence(s, first) = o {
                        expected.push((first + block_line - 1, shown(&s)));
                    }
                }
            }
            start = piece.as_ptr() as usize - input.as_ptr() as usize + 1;
            block_line = line + 1;
        }
        line += 1;
    }
    let got: Vec<_> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Sentence(s, first) => Some((*first, shown(s))),
            Outcome::Error(..) => None,
        })
        .collect();
    assert!(got == expected, "whole file read {got:?}, its blocks {expected:?}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, input)) = data.split_first() else { return };
    let format = match mode & 3 {
        1 => Format::Conllx,
        2 => Format::Text,
        _ => Format::Conllu,
    };
    let keep_text = mode & 4 != 0;
    let lines = line_count(input);
    let reference = read(Cursor::new(input), format, false, lines);
    let variant = match (mode >> 3) & 3 {
        0 => read(Cursor::new(input), format, keep_text, lines),
        1 => {
            let capacity = usize::from(mode >> 5) + 1;
            read(BufReader::with_capacity(capacity, Cursor::new(input)), format, keep_text, lines)
        }
        2 => {
            let compressed = zstd::encode_all(input, 1).unwrap();
            let decoder = zstd::Decoder::new(Cursor::new(compressed)).unwrap();
            read(BufReader::new(decoder), format, keep_text, lines)
        }
        _ => {
            // What the stream decodes to, up to its first error, bounds the lines named.
            let mut decoded = Vec::new();
            let decoder = zstd::Decoder::new(Cursor::new(input)).unwrap();
            let _ = decoder.take(DECODED_LIMIT).read_to_end(&mut decoded);
            let decoded_lines = line_count(&decoded);
            let decoder = zstd::Decoder::new(Cursor::new(input)).unwrap();
            let outcomes = read(BufReader::new(decoder.take(DECODED_LIMIT)), format, keep_text, decoded_lines);
            check(&outcomes, &decoded, decoded_lines, format);
            return;
        }
    };
    assert!(variant == reference, "plain: {reference:?}\nwith mode {mode:#x}: {variant:?}");
    check(&reference, input, lines, format);
    // An error that ends reading (binary data, not this format at all) stops the whole file,
    // not a block: the comparison with blocks read one by one holds only without one.
    let ended = reference.iter().any(|o| matches!(o, Outcome::Error(_, _, true)));
    if format != Format::Text && std::str::from_utf8(input).is_ok() && !ended {
        check_blocks(&reference, input, format);
    }
});

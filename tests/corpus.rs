//! Corpus reading and writing: lossless round trips and located errors for bad input.

mod common;

use std::io::{Cursor, Read};
use std::path::Path;

use spoolparse::base::io::Output;
use spoolparse::corpus::tree::gold_heads;
use spoolparse::corpus::{Column, ErrorKind, Format, Limits, Reader, Sentence, TokenKind};

fn decompress(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    zstd::Decoder::new(std::fs::File::open(path).unwrap()).unwrap().read_to_end(&mut bytes).unwrap();
    bytes
}

fn read_all(bytes: &[u8], format: Format) -> Vec<Sentence> {
    Reader::new(Cursor::new(bytes), Path::new("mem"), format).collect::<Result<_, _>>().unwrap()
}

fn write_all(sents: &[Sentence]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in sents {
        s.write_to(&mut out).unwrap();
    }
    out
}

#[test]
fn every_shared_treebank_round_trips_byte_for_byte() {
    for path in common::all_treebank_files() {
        let original = decompress(&path);
        let mut sents = 0;
        let mut out = Vec::with_capacity(original.len());
        for s in Reader::open(&path, Format::Conllu).unwrap() {
            let s = s.unwrap_or_else(|e| panic!("{e}"));
            gold_heads(&s, &path).unwrap_or_else(|e| panic!("{e}"));
            s.write_to(&mut out).unwrap();
            sents += 1;
        }
        assert!(sents > 100, "{}: only {sents} sentences", path.display());
        assert!(out == original, "{} does not round-trip", path.display());
    }
}

#[test]
fn multiword_tokens_and_empty_nodes_are_kept_and_not_words() {
    let bytes = std::fs::read(common::fixture("special.conllu")).unwrap();
    let sents = read_all(&bytes, Format::Conllu);
    assert_eq!(sents.len(), 3);
    assert_eq!(sents[0].len(), 6);
    assert_eq!(sents[0].token_lines().len(), 8);
    assert_eq!(sents[0].token_lines()[0].kind(), TokenKind::Range);
    assert_eq!(sents[1].len(), 6);
    assert_eq!(sents[1].token_lines()[5].kind(), TokenKind::Empty);
    assert_eq!(sents[1].word(6).get(Column::Form), "tea");
    assert_eq!(write_all(&sents), bytes);
}

#[test]
fn windows_files_read_as_unix_ones_in_every_format() {
    for (fixture, format) in [("special.conllu", Format::Conllu), ("small.conllx", Format::Conllx)] {
        let bytes = std::fs::read(common::fixture(fixture)).unwrap();
        // CR LF line endings, and a byte order mark before the first line.
        let crlf = format!("\u{feff}{}", String::from_utf8(bytes.clone()).unwrap().replace('\n', "\r\n"));
        let sents = read_all(crlf.as_bytes(), format);
        assert_eq!(sents, read_all(&bytes, format), "{fixture}");
        assert_eq!(write_all(&sents), bytes, "{fixture}: written back with LF, without the mark");
    }
    let text = read_all(b"\xef\xbb\xbfThe dog barks .\r\n\r\nIt sleeps\r\n", Format::Text);
    assert_eq!(text.len(), 2);
    assert_eq!(text[0].word(1).get(Column::Form), "The", "a byte order mark is not part of the first word");
    assert_eq!(text[0].word(4).get(Column::Form), ".");
    assert_eq!(text[1].word(2).get(Column::Form), "sleeps");
}

#[test]
fn setting_an_attachment_changes_only_head_and_deprel() {
    let bytes = std::fs::read(common::fixture("special.conllu")).unwrap();
    let mut sents = read_all(&bytes, Format::Conllu);
    sents[1].set_attachment(5, 12, "nmod:poss");
    let line = sents[1].word(5).text();
    assert_eq!(line, "5\tBill\tBill\tPROPN\tNNP\t_\t12\tnmod:poss\t2.1:nsubj\t_");
    assert_eq!(sents[1].word(5).get(Column::Deps), "2.1:nsubj");
}

#[test]
fn conllx_round_trips_and_rejects_ranges() {
    let bytes = std::fs::read(common::fixture("small.conllx")).unwrap();
    let sents = read_all(&bytes, Format::Conllx);
    assert_eq!(sents.len(), 2);
    assert_eq!(sents[0].word(2).get(Column::Deps), "3", "PHEAD is column 9");
    assert_eq!(write_all(&sents), bytes);
    let bad = b"1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\t_\t_\t_\t_\t0\tROOT\t_\t_\n\n";
    let err = Reader::new(Cursor::new(&bad[..]), Path::new("x.conllx"), Format::Conllx).next().unwrap().unwrap_err();
    assert!(matches!(err.kind, ErrorKind::BadId(_)), "{err}");
}

#[test]
fn zstd_output_round_trips() {
    let bytes = std::fs::read(common::fixture("special.conllu")).unwrap();
    let sents = read_all(&bytes, Format::Conllu);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.conllu.zst");
    let mut out = Output::create(&path).unwrap();
    for s in &sents {
        s.write_to(&mut out).unwrap();
    }
    out.finish().unwrap();
    assert_eq!(decompress(&path), bytes);
    let again: Vec<Sentence> = Reader::open(&path, Format::Conllu).unwrap().map(Result::unwrap).collect();
    assert_eq!(again, sents);
}

/// Reads `text` as `bad.conllu` and returns the first error's message.
fn first_error(text: &[u8]) -> String {
    let reader = Reader::new(Cursor::new(text), Path::new("bad.conllu"), Format::Conllu);
    for s in reader {
        match s {
            Err(e) => return e.to_string(),
            Ok(s) => {
                if let Err(e) = gold_heads(&s, Path::new("bad.conllu")) {
                    return e.to_string();
                }
            }
        }
    }
    panic!("no error for {:?}", String::from_utf8_lossy(text));
}

const GOOD: &str = "1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n";

#[test]
fn bad_input_is_reported_with_file_and_line() {
    let cases: Vec<(String, &str)> = vec![
        (format!("{GOOD}2\tb\t_\tX\t_\t_\t1\n\n"), "bad.conllu:2: expected 10 tab-separated columns, found 7"),
        (format!("{GOOD}x\tb\t_\tX\t_\t_\t1\tdep\t_\t_\n\n"), "bad.conllu:2: invalid ID \"x\""),
        (format!("{GOOD}3\tb\t_\tX\t_\t_\t1\tdep\t_\t_\n\n"), "bad.conllu:2: word ID 3 out of sequence (expected 2)"),
        (format!("{GOOD}2\tb\t_\tX\t_\t_\tone\tdep\t_\t_\n\n"), "bad.conllu:2: invalid HEAD \"one\""),
        (format!("{GOOD}2\tb\t_\tX\t_\t_\t7\tdep\t_\t_\n\n"), "bad.conllu:2: HEAD 7 out of range"),
        (
            "1\ta\t_\tX\t_\t_\t2\tdep\t_\t_\n2\tb\t_\tX\t_\t_\t1\tdep\t_\t_\n\n".into(),
            "bad.conllu:1: word 1 is its own ancestor",
        ),
        (format!("{GOOD}2\tb\t_\tX\t_\t_\t_\t_\t_\t_\n\n"), "bad.conllu:2: missing HEAD"),
        (format!("{GOOD}# late\n\n"), "bad.conllu:2: comment line after a token line"),
        ("# only\n# comments\n".into(), "bad.conllu:2: the file ends with comment lines and no sentence after them"),
        (format!("{GOOD}\n# trailing\n"), "bad.conllu:3: the file ends with comment lines and no sentence after them"),
    ];
    for (text, expected) in cases {
        let msg = first_error(text.as_bytes());
        assert!(msg.starts_with(expected), "got {msg:?}, expected {expected:?}");
    }
    let mut invalid = format!("{GOOD}\n").into_bytes();
    invalid.extend_from_slice(b"1\t\xff\t_\tX\t_\t_\t0\troot\t_\t_\n\n");
    assert_eq!(first_error(&invalid), "bad.conllu:3: invalid UTF-8: input must be UTF-8 (convert a file in another encoding, such as Latin-1, e.g. with iconv)");
    // A file compressed with something else than zstd is named for what it is: gzip's, xz's,
    // bzip2's and zip's magic bytes (with a line feed soon, or none at all).
    let compressed: [(&[u8], &str); 5] = [
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\n\x00", "gzip"),
        (b"\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46", "xz"),
        (b"BZh91AY&SY\x00\x01\n", "bzip2"),
        (b"PK\x03\x04\x14\x00\x00\x00\n", "zip"),
        (&[0x1f, 0x8b, 0, 0, 0, 0, 0, 0], "gzip"),
    ];
    for (bytes, what) in compressed {
        let expected = format!("bad.conllu:1: {what}-compressed data, not CoNLL-U: decompress it first");
        assert!(first_error(bytes).starts_with(&expected), "{what}: {}", first_error(bytes));
    }
    // A text line that merely starts like bzip2's magic is just a bad line.
    assert!(first_error(b"BZh is no magic\n\n").starts_with("bad.conllu:1: expected 10 tab-separated columns"));
}

#[test]
fn a_last_sentence_without_its_blank_line_is_read_whole_and_written_with_one() {
    let second = "1\tb\t_\tX\t_\t_\t0\troot\t_\t_";
    for text in [format!("{GOOD}\n{second}\n"), format!("{GOOD}\n{second}"), format!("\n{GOOD}")] {
        let sents = read_all(text.as_bytes(), Format::Conllu);
        assert!(!sents.is_empty() && sents.iter().all(|s| s.len() == 1), "{text:?}");
        let written = String::from_utf8(write_all(&sents)).unwrap();
        assert!(written.ends_with("\t_\n\n"), "{written:?}");
        assert_eq!(read_all(written.as_bytes(), Format::Conllu), sents);
    }
    // Comments with no token line after them are still an error.
    assert!(first_error(format!("{GOOD}\n# trailing").as_bytes()).contains("ends with comment lines"));
}

#[test]
fn reading_goes_on_after_a_bad_sentence() {
    let text = format!("1\ta\n\n{GOOD}\n");
    let results: Vec<_> = Reader::new(Cursor::new(text.as_bytes()), Path::new("f"), Format::Conllu).collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].is_err());
    assert_eq!(results[1].as_ref().unwrap().first_line, 3);
}

#[test]
fn parse_input_may_leave_head_and_deprel_empty() {
    let text = "1\ta\t_\tX\t_\t_\t_\t_\t_\t_\n2\tb\t_\tX\t_\t_\t_\t_\t_\t_\n\n";
    let sents = read_all(text.as_bytes(), Format::Conllu);
    assert_eq!(sents[0].heads().unwrap(), None);
}

/// Every kind of malformed sentence, followed by a good one: the good one is read whole and
/// unharmed, whether the bad one is the first, a middle or the last sentence but one. Errors
/// found only once the sentence's closing blank line has been read (a bad HEAD, a cycle-free
/// but out-of-range HEAD, a sentence of comments only) used to make the reader skip the next
/// sentence too.
#[test]
fn a_malformed_sentence_never_takes_the_next_one_with_it() {
    let bad: [&str; 7] = [
        "1\ta\t_\tX\t_\t_\tone\tdep\t_\t_\n",
        "1\ta\t_\tX\t_\t_\t7\tdep\t_\t_\n",
        "1\ta\t_\tX\n",
        "x\ta\t_\tX\t_\t_\t0\troot\t_\t_\n",
        "2\ta\t_\tX\t_\t_\t0\troot\t_\t_\n",
        "# only a comment\n",
        "1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n# late comment\n",
    ];
    let good = |i: usize| format!("# sent_id = g{i}\n1\tg{i}\t_\tX\t_\t_\t0\troot\t_\t_\n\n");
    for b in bad {
        for place in 0..3 {
            // Good sentences before and after the bad one; `place` of them before it.
            let mut text = String::new();
            for i in 0..place {
                text.push_str(&good(i));
            }
            text.push_str(b);
            text.push('\n');
            for i in place..3 {
                text.push_str(&good(i));
            }
            let results: Vec<_> =
                Reader::new(Cursor::new(text.as_bytes()), Path::new("f"), Format::Conllu).keep_text().collect();
            let errors = results.iter().filter(|r| r.is_err()).count();
            let ids: Vec<String> = results
                .iter()
                .filter_map(|r| r.as_ref().ok())
                .map(|s| s.word(1).get(Column::Form).to_string())
                .collect();
            assert_eq!(errors, 1, "{b:?} at {place}: {results:?}");
            assert_eq!(ids, ["g0", "g1", "g2"], "{b:?} at {place}");
        }
    }
}

/// Errors about a whole file (it cannot be opened, it is not zstd, it was cut off) name the
/// file without a misleading line number, in words a user understands.
#[test]
fn file_level_errors_are_worded_for_users() {
    let dir = tempfile::tempdir().unwrap();
    let first_error = |name: &str, bytes: Option<&[u8]>| {
        let path = dir.path().join(name);
        if let Some(b) = bytes {
            std::fs::write(&path, b).unwrap();
        }
        let error = match Reader::open(&path, Format::Conllu) {
            Err(e) => e,
            Ok(r) => r.into_iter().find_map(Result::err).expect("an error"),
        };
        assert!(error.kind.is_unreadable(), "{error}");
        error.to_string().replace(&dir.path().display().to_string(), "D")
    };
    assert_eq!(
        first_error("plain.conllu.zst", Some(format!("{GOOD}\n").as_bytes())),
        "D/plain.conllu.zst: not zstd-compressed data, although the name ends in .zst"
    );
    let mut text = String::new();
    for _ in 0..2000 {
        text.push_str(GOOD);
        text.push('\n');
    }
    let whole = zstd::encode_all(text.as_bytes(), 3).unwrap();
    let cut = first_error("cut.conllu.zst", Some(&whole[..whole.len() / 2]));
    assert!(cut.starts_with("D/cut.conllu.zst: the zstd stream is truncated: the file ends after "), "{cut}");
    let missing = first_error("missing.conllu", None);
    assert!(missing.starts_with("D/missing.conllu: cannot open: No such file"), "{missing}");
}

/// Reads `text` with `limits`, keeping text: each sentence's first form, or its error.
fn read_limited(text: &[u8], format: Format, limits: Limits) -> Vec<Result<String, String>> {
    let mut reader = Reader::new(Cursor::new(text), Path::new("f"), format).keep_text().with_limits(limits);
    let mut sent = Sentence::default();
    let mut out = Vec::new();
    while let Some(r) = reader.read_next(&mut sent) {
        out.push(r.map(|()| sent.word(1).get(Column::Form).to_string()).map_err(|e| e.to_string()));
        assert!(reader.sentence_text().len() <= limits.max_bytes, "kept text beyond the limit");
    }
    out
}

#[test]
fn sentences_beyond_the_limits_are_malformed_and_reading_goes_on() {
    let limits = Limits { max_words: 3, max_bytes: 200 };
    let long_line = format!("1\t{}\t_\tX\t_\t_\t0\troot\t_\t_\n\n", "x".repeat(1000));
    let four_words: String = (1..=4).map(|i| format!("{i}\tw\t_\tX\t_\t_\t0\troot\t_\t_\n")).collect();
    let many_lines: String = (0..30).map(|_| "# a comment of some length\n").collect();
    for bad in [long_line, format!("{four_words}\n"), format!("{many_lines}{GOOD}\n")] {
        let text = format!("{GOOD}\n{bad}{}\n", GOOD.replace("\ta\t", "\tb\t"));
        let got = read_limited(text.as_bytes(), Format::Conllu, limits);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0], Ok("a".into()));
        assert!(got[1].as_ref().is_err_and(|e| e.contains("limit")), "{got:?}");
        assert_eq!(got[2], Ok("b".into()));
    }
    let text = "a b c\na b c d\nb\n".to_string() + &"y".repeat(500) + "\nc\n";
    let got = read_limited(text.as_bytes(), Format::Text, limits);
    let firsts: Vec<_> = got.iter().map(|r| r.as_ref().map(String::as_str).map_err(|_| "error")).collect();
    assert_eq!(firsts, [Ok("a"), Err("error"), Ok("b"), Err("error"), Ok("c")]);
}

#[test]
fn binary_data_and_files_of_another_format_are_unreadable_not_malformed() {
    let mut binary = format!("{GOOD}\n").into_bytes();
    binary.extend_from_slice(b"1\ta\0b\t_\n\n");
    let got = read_limited(&binary, Format::Conllu, Limits::default());
    assert_eq!(got.len(), 2);
    assert_eq!(got[1], Err("f:3: a NUL byte: this is binary data, not CoNLL-U".into()));

    // JSON lines: one long "sentence"; JSON records with blank lines: many.
    let lines: String = (0..150).map(|i| format!("{{\"sentence\": {i}}}\n")).collect();
    let records: String = (0..150).map(|i| format!("{{\"sentence\": {i}}}\n\n")).collect();
    let short: String = (0..3).map(|i| format!("{{\"sentence\": {i}}}\n")).collect();
    for (json, read) in [(&lines, 1), (&records, 100), (&short, 2)] {
        let got = read_limited(json.as_bytes(), Format::Conllu, Limits::default());
        assert_eq!(got.len(), read, "{got:?}");
        let last = got.last().unwrap().as_ref().unwrap_err();
        assert!(
            last.starts_with("f: not CoNLL-U: no token line has 10 tab-separated columns (")
                && last.contains(" read; line 1: expected 10"),
            "{last}"
        );
    }
    // A stream that never has a blank line (`yes | spoolparse parse -`) is given up on after as
    // many lines, not read to its end; nor is binary data without a line feed (`/dev/zero`).
    let endless: String = (0..100_000).map(|_| "garbage line\n").collect();
    let got = read_limited(endless.as_bytes(), Format::Conllu, Limits::default());
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].as_ref().is_err_and(|e| e.contains("(100 read; line 1:")), "{got:?}");
    let zeros = vec![0u8; 1 << 16];
    let got = read_limited(&zeros, Format::Conllu, Limits { max_words: 10, max_bytes: 1000 });
    assert_eq!(got, [Err("f:1: a NUL byte: this is binary data, not CoNLL-U".to_string())]);
    // Once one sentence was good, or one line had ten columns, bad ones are just malformed.
    let bad_head = "1\ta\t_\tX\t_\t_\tone\tdep\t_\t_\n\n";
    for mostly_bad in [format!("{GOOD}\n{records}"), format!("{bad_head}{records}")] {
        let got = read_limited(mostly_bad.as_bytes(), Format::Conllu, Limits::default());
        assert_eq!(got.len(), 151);
        assert!(got.iter().all(|r| !r.as_ref().is_err_and(|e| e.contains("not CoNLL-U"))));
    }
}

/// Reads `text` as CoNLL-U and returns, for each result, the error's line or the sentence's
/// first line.
fn result_lines(text: &str) -> Vec<Result<u64, u64>> {
    Reader::new(Cursor::new(text.as_bytes()), Path::new("f"), Format::Conllu)
        .map(|r| r.map(|s| s.first_line).map_err(|e| e.line))
        .collect()
}

#[test]
fn a_sentence_after_one_without_words_is_read() {
    // Found by fuzz/fuzz_targets/corpus_readers.rs: "no words" is raised after the closing
    // blank line has been read, and skipping to the next blank line then skipped the next
    // sentence too.
    assert_eq!(result_lines(&format!("#\n\n{GOOD}\n")), [Err(1), Ok(3)]);
    assert_eq!(result_lines(&format!("# a\n# b\n\n\n{GOOD}\n")), [Err(1), Ok(5)]);
}

#[test]
fn a_sentence_after_one_with_a_bad_head_is_read() {
    // Found by the fuzzer as above: HEADs are checked once the whole sentence has been read.
    let bad_head = "1\ta\t_\tX\t_\t_\t3\tdep\t_\t_\n";
    assert_eq!(result_lines(&format!("{bad_head}\n{GOOD}\n")), [Err(1), Ok(3)]);
    assert_eq!(result_lines(&format!("{bad_head}\n\n\n{GOOD}\n{GOOD}\n")), [Err(1), Ok(5), Ok(7)]);
    let text = format!("1\ta\t_\tX\t_\t_\tx\tdep\t_\t_\n\n{GOOD}\n");
    let results: Vec<_> = Reader::new(Cursor::new(text.as_bytes()), Path::new("x.conllx"), Format::Conllx).collect();
    assert!(matches!(results[..], [Err(_), Ok(_)]), "{results:?}");
}

/// One invalid UTF-8 byte used to fail the whole file: now its sentence is malformed (with its
/// line, and its text kept with U+FFFD for the bad byte) and the rest is read.
#[test]
fn invalid_utf8_makes_its_sentence_malformed_and_the_rest_is_read() {
    let mut text = format!("{GOOD}\n").into_bytes();
    text.extend_from_slice(b"1\tcaf\xe9\t_\tX\t_\t_\t0\troot\t_\t_\n2\tb\xff\t_\tX\t_\t_\t1\tdep\t_\t_\n\n");
    text.extend_from_slice(b"1\tnext\t_\tX\t_\t_\t0\troot\t_\t_\n\n");
    let mut reader = Reader::new(Cursor::new(&text[..]), Path::new("f"), Format::Conllu).keep_text();
    let mut sent = Sentence::default();
    assert!(matches!(reader.read_next(&mut sent), Some(Ok(()))));
    let err = reader.read_next(&mut sent).unwrap().unwrap_err();
    assert_eq!(err.to_string(), "f:3: invalid UTF-8: input must be UTF-8 (convert a file in another encoding, such as Latin-1, e.g. with iconv)");
    assert!(!err.kind.is_unreadable());
    assert!(reader.sentence_text().starts_with("1\tcaf\u{fffd}\t_"), "{:?}", reader.sentence_text());
    assert!(matches!(reader.read_next(&mut sent), Some(Ok(()))));
    assert_eq!(sent.word(1).get(Column::Form), "next");
    assert!(reader.read_next(&mut sent).is_none());
}

/// A token whose FORM is empty, or nothing but spaces, used to pass (and the CoNLL 2018
/// evaluator then refused the whole output): its sentence is malformed, located by its line.
/// An empty node's form is left alone, as the evaluator leaves it.
#[test]
fn an_empty_form_makes_its_sentence_malformed() {
    let cases: [(&str, &str); 4] = [
        ("1\t\t_\tX\t_\t_\t0\troot\t_\t_\n", "f:1: empty FORM"),
        ("1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n2\t \u{a0}\t_\tX\t_\t_\t1\tdep\t_\t_\n", "f:2: empty FORM"),
        (
            "1-2\t\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n2\tb\t_\tX\t_\t_\t1\tdep\t_\t_\n",
            "f:1: empty FORM",
        ),
        ("1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n1.1\t\t_\tX\t_\t_\t_\t_\t_\t_\n", ""),
    ];
    for (bad, expected) in cases {
        let text = format!("{bad}\n{GOOD}\n");
        let got = read_limited(text.as_bytes(), Format::Conllu, Limits::default());
        if expected.is_empty() {
            assert!(got.iter().all(Result::is_ok), "{bad:?}: {got:?}");
            continue;
        }
        assert_eq!(got.len(), 2, "{bad:?}: {got:?}");
        assert!(got[0].as_ref().is_err_and(|e| e.starts_with(expected)), "{bad:?}: {got:?}");
        assert_eq!(got[1], Ok("a".to_string()));
    }
}

/// A file of sentences good and bad, with the separators and bytes a reader must take (CR LF,
/// lone CRs, runs of blank lines, lines of spaces, comment-only blocks, invalid UTF-8, a byte
/// order mark), its first sentence good.
fn random_file(seed: u64, format: Format) -> Vec<u8> {
    let mut next = common::random(seed);
    let good = if format == Format::Text { "Sue likes coffee .\n" } else { "# a\n1\tx\t_\t_\t_\t_\t0\troot\t_\t_\n" };
    let mut out: Vec<u8> = if next(2) == 0 { b"\xef\xbb\xbf".to_vec() } else { Vec::new() };
    out.extend_from_slice(good.as_bytes());
    for _ in 0..next(60) {
        let piece: &[u8] = match next(15) {
            0..=3 => good.as_bytes(),
            4 => b"\n",
            5 => b"\r\n",
            6 => b"\r",
            7 => b"   \n",
            8 => b"# only a comment\n",
            9 => b"2\tbad\t_\t_\t_\t_\t0\troot\t_\t_\n",
            10 => b"1\tx\xff\t_\t_\t_\t_\t0\troot\t_\t_\n",
            11 => b"\t \xe3\x80\x80\n",
            12 => b"1\tx\t_\t_\t_\t_\t0\troot\t_\t_\r\n",
            13 => b"1\tlong\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No|xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
            _ => b"\n\n",
        };
        out.extend_from_slice(piece);
    }
    if next(10) == 0 {
        out.extend_from_slice(b"1\tx\x00\n\n");
        out.extend_from_slice(good.as_bytes());
    }
    out
}

/// Each sentence as written with its first line, and each error with its line and the text
/// kept of it: all that a reader gives.
fn outcome(result: Result<(), spoolparse::corpus::CorpusError>, sent: &Sentence, text: &str) -> String {
    match result {
        Ok(()) => {
            let mut out = Vec::new();
            sent.write_to(&mut out).unwrap();
            format!("line {} ({} bytes): {}", sent.first_line, sent.bytes_read(), String::from_utf8_lossy(&out))
        }
        Err(e) => format!("{e} [{text}]"),
    }
}

#[test]
fn sentences_counted_from_lines_are_the_sentences_the_reader_reads() {
    use spoolparse::corpus::shard::{count_sentences, shard_ranges};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x");
    let mut sent = Sentence::default();
    for format in [Format::Conllu, Format::Conllx, Format::Text] {
        for seed in 0..300 {
            let bytes = random_file(seed, format);
            if bytes.contains(&0) {
                continue; // unreadable from there: reading fails, whatever the count
            }
            std::fs::write(&path, &bytes).unwrap();
            let len = bytes.len() as u64;
            let mut read = |range: std::ops::Range<u64>| {
                let mut reader = Reader::open_range(&path, format, range).unwrap();
                std::iter::from_fn(|| reader.read_next(&mut sent)).count() as u64
            };
            assert_eq!(count_sentences(&path, format, 0..len).unwrap(), read(0..len), "{format:?} seed {seed}");
            // Before every place a shard may start, as numbering shards needs.
            for r in shard_ranges(&path, format, 1).unwrap().unwrap() {
                let before = count_sentences(&path, format, 0..r.start).unwrap();
                assert_eq!(before, read(0..r.start), "{format:?} seed {seed}, before {}", r.start);
            }
        }
    }
}

#[test]
fn blocks_read_apart_give_the_sentences_lines_and_errors_of_the_whole_file() {
    use spoolparse::corpus::BlockRead;
    let limits = Limits { max_words: 5, max_bytes: 300 };
    for format in [Format::Conllu, Format::Conllx, Format::Text] {
        for seed in 0..300 {
            let bytes = random_file(seed, format);
            let open = |bytes: &[u8]| {
                Reader::new(Cursor::new(bytes.to_vec()), Path::new("x"), format).with_limits(limits).keep_text()
            };
            let mut sent = Sentence::default();
            let mut whole = open(&bytes);
            let expected: Vec<String> = std::iter::from_fn(|| {
                let r = whole.read_next(&mut sent)?;
                Some(outcome(r, &sent, whole.sentence_text()))
            })
            .collect();
            // Sentence by sentence until a block can be cut, then blocks of 1 to 7 lines read
            // by readers of their own, as the pipeline's threads read them.
            let mut reader = open(&bytes);
            let (mut got, mut block, mut size) = (Vec::new(), Vec::new(), 0);
            loop {
                size = size % 7 + 1;
                if reader.between_sentences() {
                    match reader.read_block(&mut block, size, usize::MAX) {
                        BlockRead::End => break,
                        BlockRead::Block { lines_before } => {
                            let mut part =
                                Reader::resume(Cursor::new(block.clone()), Path::new("x"), format, lines_before, 0)
                                    .with_limits(limits)
                                    .keep_text();
                            while let Some(r) = part.read_next(&mut sent) {
                                got.push(outcome(r, &sent, part.sentence_text()));
                            }
                            continue;
                        }
                        BlockRead::Uncut => {}
                    }
                }
                match reader.read_next(&mut sent) {
                    Some(r) => got.push(outcome(r, &sent, reader.sentence_text())),
                    None => break,
                }
            }
            assert_eq!(got, expected, "{format:?} seed {seed}");
        }
    }
}

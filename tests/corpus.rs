//! Corpus reading and writing: lossless round trips and located errors for bad input.

mod common;

use std::io::{Cursor, Read};
use std::path::Path;

use spoolparse::corpus::tree::gold_heads;
use spoolparse::corpus::{Column, ErrorKind, Format, Reader, Sentence, TokenKind};
use spoolparse::io::Output;

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
        (format!("\n{GOOD}"), "bad.conllu:2: the file ends inside a sentence"),
        (format!("{GOOD}2\tb\t_\tX\t_\t_\t_\t_\t_\t_\n\n"), "bad.conllu:2: missing HEAD"),
        (format!("{GOOD}# late\n\n"), "bad.conllu:2: comment line after a token line"),
    ];
    for (text, expected) in cases {
        let msg = first_error(text.as_bytes());
        assert!(msg.starts_with(expected), "got {msg:?}, expected {expected:?}");
    }
    let mut invalid = format!("{GOOD}\n").into_bytes();
    invalid.extend_from_slice(b"1\t\xff\t_\tX\t_\t_\t0\troot\t_\t_\n\n");
    assert_eq!(first_error(&invalid), "bad.conllu:3: invalid UTF-8");
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

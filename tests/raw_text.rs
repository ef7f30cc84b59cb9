//! Raw text in: the tokenizer trained with the model splits text into sentences and tokens,
//! and the CoNLL-U written from it holds the text (round trip), passes the UD validator, and
//! bad input (invalid UTF-8, binary data, control characters, text without any whitespace)
//! ends in a clear error or a bounded parse, never in lost text.

mod common;

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::spoolparse;
use spoolparse::corpus::{Format, Reader, Sentence};
use spoolparse::model::file::ModelFile;
use spoolparse::parse::raw::{recover_text, RawReader, RawSentences, MAX_SENTENCE_CHARS, MAX_SENTENCE_TOKENS};

/// A model with tagger and tokenizer trained on the fixture (it has multiword tokens).
fn model(dir: &Path) -> PathBuf {
    let model = dir.join("t.model");
    let args = ["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "1", "--tokenizer"];
    let out = common::train(&common::fixture("special.conllu"), &model, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    model
}

/// Every sentence the raw reader makes of `text`, and the error that ended it, if any.
fn read_raw(model: &Path, text: &[u8]) -> (Vec<Sentence>, Option<String>) {
    read_raw_with(model, text, RawSentences::Model)
}

fn read_raw_with(model: &Path, text: &[u8], sentences: RawSentences) -> (Vec<Sentence>, Option<String>) {
    let model = Arc::new(ModelFile::open(model).unwrap());
    let input: Box<dyn std::io::BufRead + Send> = Box::new(Cursor::new(text.to_vec()));
    let mut reader = RawReader::new(input, Path::new("in.raw"), model, sentences, true).unwrap();
    let mut sents = Vec::new();
    loop {
        let mut s = Sentence::default();
        match reader.read_next(&mut s) {
            None => return (sents, None),
            Some(Ok(())) => sents.push(s),
            Some(Err(e)) => return (sents, Some(e.to_string())),
        }
    }
}

fn parse_raw(model: &Path, dir: &Path, text: &[u8]) -> (Vec<Sentence>, PathBuf) {
    parse_raw_with(model, dir, text, &[])
}

/// `spoolparse parse --threads 1 ARGS` of `text` as a `.raw` file: its sentences and output.
fn parse_raw_with(model: &Path, dir: &Path, text: &[u8], args: &[&str]) -> (Vec<Sentence>, PathBuf) {
    let input = dir.join("in.raw");
    std::fs::write(&input, text).unwrap();
    let output = dir.join("out.conllu");
    let _ = std::fs::remove_file(&output);
    let out = common::parse(model, &input, &output, &[&["--threads", "1"], args].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read(&output).unwrap();
    let sents = Reader::new(&written[..], Path::new("out"), Format::Conllu).map(|s| s.unwrap()).collect();
    (sents, output)
}

/// Text with every kind of spacing and script the reader must keep.
const AWKWARD: &str = "  Vámonos al mar. Sue likes coffee!\r\nYes\n\n \t\nSecond  paragraph:\tcafe\u{301} 👍🏽 and \
    👩\u{200d}💻 ok.\nשלום עולם. مرحبا بالعالم.\u{1}x\u{7f}y\u{200b}z \\|a|\u{feff}b.\n\n\n";

#[test]
fn raw_text_comes_back_from_the_conllu_written_and_it_passes_the_validator() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let (sents, output) = parse_raw(&model, dir.path(), AWKWARD.as_bytes());
    assert!(sents.len() >= 3, "{} sentences", sents.len());
    assert_eq!(recover_text(&sents), AWKWARD, "the text comes back from the output");
    // Paragraphs are sentence ends, and the first sentence starts the document; its id comes
    // after the marks, where UD puts it.
    assert_eq!(sents[0].comments[..2], ["# newdoc", "# newpar"]);
    assert!(sents[0].comments[2].starts_with("# sent_id = "), "{:?}", sents[0].comments);
    let pars = sents.iter().filter(|s| s.comments.iter().any(|c| c == "# newpar")).count();
    assert_eq!(pars, 2);
    for s in &sents {
        assert!(s.comments.iter().any(|c| c.starts_with("# sent_id = in.raw-")));
        assert!(s.heads().unwrap().is_some(), "parsed");
    }
    common::validate(&output, "es");
    // A byte order mark at the start is dropped, as CoNLL readers drop it.
    let (sents, _) = parse_raw(&model, dir.path(), format!("\u{feff}{AWKWARD}").as_bytes());
    assert_eq!(recover_text(&sents), AWKWARD);
}

#[test]
fn with_raw_sentences_lines_every_line_is_one_sentence_and_the_text_still_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    // Lines the tokenizer would run together (no punctuation) or split (two sentences in one),
    // a blank line (a paragraph), spaces around line ends, and a last line without its end.
    let text = "show me flights from boston to denver\nwhat about tuesday\n\n  The dog barks. It sees cats!  \r\nok";
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let (sents, error) = read_raw_with(&model, text.as_bytes(), RawSentences::Lines);
    assert_eq!(error, None);
    let texts: Vec<_> =
        sents.iter().map(|s| s.comments.iter().find_map(|c| c.strip_prefix("# text = ")).unwrap()).collect();
    assert_eq!(texts, lines, "one sentence per line");
    assert_eq!(recover_text(&sents), text);
    let pars = sents.iter().filter(|s| s.comments.iter().any(|c| c == "# newpar")).count();
    assert_eq!(pars, 2, "blank lines still make paragraphs");
    // The same from the command line, whose output passes the validator.
    let (parsed, output) = parse_raw_with(&model, dir.path(), text.as_bytes(), &["--raw-sentences", "lines"]);
    assert_eq!(parsed.len(), lines.len());
    assert_eq!(recover_text(&parsed), text);
    common::validate(&output, "en");
}

#[test]
fn multiword_tokens_of_the_training_data_are_split_into_their_words() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let (sents, output) = parse_raw(&model, dir.path(), "Vámonos al mar.\n".as_bytes());
    let lines: Vec<&str> = sents.iter().flat_map(|s| s.token_lines()).map(|t| t.text()).collect();
    let ids_forms: Vec<String> = lines.iter().map(|l| l.split('\t').take(2).collect::<Vec<_>>().join(" ")).collect();
    assert!(ids_forms.contains(&"1-2 Vámonos".to_string()), "{ids_forms:?}");
    assert!(ids_forms.contains(&"1 vamos".to_string()) || ids_forms.contains(&"1 Vamos".to_string()), "{ids_forms:?}");
    let al = ids_forms.iter().position(|l| l.ends_with(" al")).expect("al is a token");
    assert_eq!(ids_forms[al + 1..al + 3], ["3 a", "4 el"]);
    common::validate(&output, "es");
}

#[test]
fn invalid_utf8_makes_only_its_sentence_malformed_and_the_text_around_it_is_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let mut text = b"Yes.\n\nSue likes coffee.\nYes \xff\xfe no.\n\nSue likes tea.\n".to_vec();
    let model_file = Arc::new(ModelFile::open(&model).unwrap());
    let input: Box<dyn std::io::BufRead + Send> = Box::new(Cursor::new(text.clone()));
    let mut reader = RawReader::new(input, Path::new("in.raw"), model_file, RawSentences::Model, true).unwrap();
    let (mut sents, mut errors) = (Vec::new(), Vec::new());
    loop {
        let mut s = Sentence::default();
        match reader.read_next(&mut s) {
            None => break,
            Some(Ok(())) => sents.push(s),
            Some(Err(e)) => errors.push((e.to_string(), reader.sentence_text().to_string())),
        }
    }
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].0.starts_with("in.raw:4: invalid UTF-8 at byte offset 28"), "{errors:?}");
    assert!(errors[0].1.contains('\u{fffd}'), "the bad sentence's text is kept: {errors:?}");
    let texts: Vec<String> =
        sents.iter().map(|s| s.comments.iter().find(|c| c.starts_with("# text = ")).unwrap().clone()).collect();
    assert_eq!(texts.first().map(String::as_str), Some("# text = Yes."));
    assert!(texts.iter().any(|t| t.starts_with("# text = Sue likes tea")), "the text after it is read: {texts:?}");
    // Through the command: by default the error names the file and fails it; with
    // `--malformed lowconf` the sentence is passed on unparsed, the others parsed, and the output
    // passes the validator (no U+FFFD: the raw line keeps `\ufffd`).
    let input = dir.path().join("latin1.raw");
    std::fs::write(&input, &text).unwrap();
    let out = common::parse(&model, &input, &dir.path().join("o.conllu"), &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("latin1.raw:4: invalid UTF-8 at byte offset 28"), "{stderr}");
    let output = dir.path().join("lowconf.conllu");
    let out = common::parse(&model, &input, &output, &["--malformed", "lowconf"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(&output).unwrap();
    assert!(!written.contains('\u{fffd}') && written.contains("\\ufffd"), "{written}");
    let read: Vec<Sentence> =
        Reader::new(written.as_bytes(), Path::new("o"), Format::Conllu).map(|s| s.unwrap()).collect();
    assert_eq!(read.len(), sents.len() + 1);
    common::validate(&output, "en");
    // A sequence cut by the end of a read is no error.
    text = "é".repeat(spoolparse::parse::raw::READ_BYTES).into_bytes();
    let (sents, error) = read_raw(&model, &text);
    assert_eq!(error, None);
    assert_eq!(recover_text(&sents), "é".repeat(spoolparse::parse::raw::READ_BYTES));
}

#[test]
fn a_binary_file_named_raw_is_refused_as_binary_data() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let (_, error) = read_raw(&model, b"Yes.\nno\0\x01\x02\x03");
    assert_eq!(error.as_deref(), Some("in.raw:2: a NUL byte: this is binary data, not raw text"));
    let out = spoolparse(&["parse", "--model", model.to_str().unwrap(), "--format", "raw", "/bin/sh"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("binary data, not raw text"));
}

#[test]
fn text_without_whitespace_or_sentence_ends_is_cut_into_bounded_sentences_and_kept_whole() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    for text in ["ab".repeat(3 * MAX_SENTENCE_CHARS), "ab ".repeat(3 * MAX_SENTENCE_TOKENS)] {
        let (sents, error) = read_raw(&model, text.as_bytes());
        assert_eq!(error, None);
        assert!(sents.len() >= 3, "{} sentences", sents.len());
        for s in &sents {
            let chars: usize =
                s.token_lines().iter().map(|t| t.text().split('\t').nth(1).unwrap().chars().count()).sum();
            assert!(chars <= MAX_SENTENCE_CHARS && s.token_lines().len() <= MAX_SENTENCE_TOKENS);
        }
        assert_eq!(recover_text(&sents), text);
    }
}

#[test]
fn raw_text_needs_a_model_with_a_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("t.model");
    let args = ["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "1"];
    assert!(common::train(&common::fixture("special.conllu"), &model, &args).status.success());
    let input = dir.path().join("in.raw");
    std::fs::write(&input, "Yes.\n").unwrap();
    let out = common::parse(&model, &input, &dir.path().join("o.conllu"), &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("the model has no tokenizer"));
}

#[test]
fn greek_raw_text_gets_the_multiword_tokens_of_el_gdt_and_passes_the_validator() {
    let Some(ud) = common::ud_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("el.model");
    let args = ["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "1", "--tokenizer"];
    let out = common::train(&ud.join("el_gdt/train.conllu.zst"), &model, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = "Πήγαμε στο σπίτι και στην αγορά. Στο τέλος, είδαμε τους φίλους μας στις δέκα.\n";
    let (sents, output) = parse_raw(&model, dir.path(), text.as_bytes());
    assert_eq!(recover_text(&sents), text);
    let forms: Vec<String> = sents
        .iter()
        .flat_map(|s| s.token_lines())
        .map(|t| t.text().split('\t').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    // el_gdt writes the preposition of `στο` as `σ` (its lemma is `σε`).
    for (range, words) in [("στο", ["σ", "το"]), ("στην", ["σ", "την"]), ("Στο", ["Σ", "το"])] {
        let at = forms.iter().position(|f| f.ends_with(&format!(" {range}")) && f.contains('-'));
        let at = at.unwrap_or_else(|| panic!("{range} is a multiword token: {forms:?}"));
        let got: Vec<&str> = forms[at + 1..at + 3].iter().map(|f| f.split(' ').nth(1).unwrap()).collect();
        assert_eq!(got, words);
    }
    common::validate(&output, "el");
}

#[test]
fn a_large_raw_file_parses_to_the_same_bytes_on_one_thread_and_on_two() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    // Over the size at which other formats are split between threads.
    let par = "Sue likes coffee. Vámonos al mar!\n  Yes yes.\n\n";
    let input = dir.path().join("big.raw");
    std::fs::write(&input, par.repeat((1 << 20) / par.len() + 1000)).unwrap();
    let outputs: Vec<Vec<u8>> = ["1", "2"]
        .iter()
        .map(|threads| {
            let output = dir.path().join(format!("out{threads}.conllu"));
            let out = common::parse(&model, &input, &output, &["--threads", threads]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            std::fs::read(&output).unwrap()
        })
        .collect();
    assert!(outputs[0] == outputs[1], "the outputs differ");
}

#[test]
fn inspect_shows_the_tokenizer_with_its_dev_scores() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("t.model");
    let fixture = common::fixture("special.conllu");
    let args = ["--epochs", "1", "--tokenizer", "--dev", fixture.to_str().unwrap()];
    let out = common::train(&fixture, &model, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tokenizer: "), "training logs it");
    let out = spoolparse(&["inspect", "--verify", model.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("tokenizer ")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("multiword forms") && line.contains("dev tokens F1 "), "{line}");
    for section in ["TOKMETA", "TKSLOTS", "TKROWS"] {
        assert!(text.contains(&format!("section {section}")), "{text}");
    }
}

#[test]
fn raw_sentences_carry_the_tokenizer_s_margin_for_each_word_and_tokenized_ones_none() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let (sents, error) = read_raw(&model, AWKWARD.as_bytes());
    assert!(error.is_none(), "{error:?}");
    for s in &sents {
        assert_eq!(s.tokenization.words.len(), s.len(), "one margin per word: {:?}", s.comments);
        assert!(s.tokenization.words.iter().all(|&m| m >= 0.0), "{:?}", s.tokenization);
    }
    assert!(sents.iter().flat_map(|s| &s.tokenization.words).any(|m| m.is_finite()), "the tokenizer decided something");
    let conllu = Reader::open(&common::fixture("special.conllu"), Format::Conllu).unwrap();
    for s in conllu {
        assert!(s.unwrap().tokenization.words.is_empty(), "text that came tokenized has no tokenizer's margins");
    }
}

/// Input handed out at most `step` bytes a read, as a pipe or a decompressor may hand it.
struct Trickle {
    data: Vec<u8>,
    pos: usize,
    step: usize,
}

impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = std::io::BufRead::fill_buf(self)?.len().min(buf.len());
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl std::io::BufRead for Trickle {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        Ok(&self.data[self.pos..(self.pos + self.step).min(self.data.len())])
    }
    fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

/// What the raw reader makes of `text` read `step` bytes at a time, pieces cut as `sizes`
/// says: each sentence as written, with its line and the tokenizer's margins, and each error.
fn sentences_in_pieces(
    model: &Arc<ModelFile>,
    text: &[u8],
    step: usize,
    sizes: (usize, usize),
    sentences: RawSentences,
) -> Vec<String> {
    let input = Box::new(Trickle { data: text.to_vec(), pos: 0, step });
    let mut reader = RawReader::new(input, Path::new("in.raw"), Arc::clone(model), sentences, true)
        .unwrap()
        .with_sizes(sizes.0, sizes.1);
    let mut out = Vec::new();
    loop {
        let mut s = Sentence::default();
        match reader.read_next(&mut s) {
            None => return out,
            Some(Ok(())) => {
                let mut conllu = Vec::new();
                s.write_to(&mut conllu).unwrap();
                let conllu = String::from_utf8(conllu).unwrap();
                out.push(format!("line {}: {:?}\n{conllu}", s.first_line, s.tokenization.words));
            }
            Some(Err(e)) => out.push(format!("{e}: {:?}", reader.sentence_text())),
        }
    }
}

/// Random text with what cuts must respect: sentence ends and their absence, line and
/// paragraph breaks, long tokens and long runs of whitespace, other scripts, glued marks,
/// invalid UTF-8.
fn random_text(seed: u64) -> Vec<u8> {
    let mut next = common::random(seed);
    const WORDS: [&str; 12] =
        ["Sue", "likes", "coffee", "al", "mar", "Vámonos", "cafe\u{301}", "👍🏽", "שלום", "A.B.", "x", "yes"];
    let mut text = Vec::new();
    let len = 2000 + next(40_000);
    while text.len() < len {
        match next(100) {
            0..=59 => text.extend_from_slice(WORDS[next(WORDS.len() as u64)].as_bytes()),
            60..=69 => text.extend_from_slice([".", "!", "?", ",", ":"][next(5)].as_bytes()),
            70..=79 => text.push(b' '),
            80..=84 => text.push(b'\n'),
            85..=86 => text.extend_from_slice(b"\n\n"),
            87 => text.extend_from_slice(b" \t \r\n"),
            88 => text.push([0xff, 0xc3, 0x80][next(3)]),
            89 => text.extend_from_slice("ab".repeat(next(6000) + 1).as_bytes()),
            90 => text.extend_from_slice(b" ".repeat(next(20_000) + 1).as_slice()),
            91 => text.extend_from_slice("yes ".repeat(next(3000) + 1).as_bytes()),
            _ => text.extend_from_slice("Sue likes coffee. ".as_bytes()),
        }
    }
    text
}

#[test]
fn pieces_cut_anywhere_and_read_in_any_chunks_give_the_sentences_of_the_whole_text() {
    let dir = tempfile::tempdir().unwrap();
    let model = Arc::new(ModelFile::open(&model(dir.path())).unwrap());
    let whole = (usize::MAX / 4, usize::MAX / 4);
    for seed in 0..24 {
        let text = random_text(seed);
        for sentences in [RawSentences::Model, RawSentences::Lines] {
            let expected = sentences_in_pieces(&model, &text, text.len() + 1, whole, sentences);
            assert!(!expected.is_empty(), "seed {seed}: no sentences");
            // Cut at every sure end, at some, at the fewest; read a byte, a few, 4 KiB at a time.
            for (step, target) in [(1, 1), (7, 300), (4096, 4096), (65536, 20_000)] {
                let got = sentences_in_pieces(&model, &text, step, (target, 0), sentences);
                let differs =
                    got.iter().zip(&expected).position(|(a, b)| a != b).unwrap_or(got.len().min(expected.len()));
                assert!(
                    got == expected,
                    "seed {seed}, {sentences:?}, reads of {step}, pieces of {target}: sentence {differs} differs:\n{}\nexpected\n{}",
                    got.get(differs).map_or("(none)", |s| s.as_str()),
                    expected.get(differs).map_or("(none)", |s| s.as_str()),
                );
            }
        }
    }
}

#[test]
fn line_numbers_count_the_line_feeds_of_whitespace_too_long_to_keep() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let text = format!("Sue likes coffee.{}Yes \u{1}\u{2}\n\nyes.", "\n \t".repeat(30_000));
    let input = Box::new(Trickle { data: text.clone().into_bytes(), pos: 0, step: 5000 });
    let model = Arc::new(ModelFile::open(&model).unwrap());
    let mut reader = RawReader::new(input, Path::new("in.raw"), model, RawSentences::Model, true).unwrap();
    let mut lines = Vec::new();
    let mut s = Sentence::default();
    while let Some(r) = reader.read_next(&mut s) {
        r.unwrap();
        lines.push(s.first_line);
    }
    assert_eq!(lines, [1, 30_001, 30_003]);
}

#[test]
fn a_file_ending_without_a_space_before_another_file_stays_valid_ud() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let (first, second) = (dir.path().join("a.raw"), dir.path().join("b.raw"));
    std::fs::write(&first, "Sue likes coffee. Yes").unwrap();
    std::fs::write(&second, "Vámonos al mar.\n").unwrap();
    let last_misc = |text: &str, of: &str| {
        let line =
            text.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())).take_while(|l| !l.contains(of)).last();
        line.unwrap().rsplit('\t').next().unwrap().to_string()
    };
    // Alone, the file's last token says that nothing followed it.
    let alone = dir.path().join("alone.conllu");
    assert!(common::parse(&model, &first, &alone, &["--threads", "1"]).status.success());
    let alone = std::fs::read_to_string(&alone).unwrap();
    assert!(last_misc(&alone, "\u{0}").split('|').any(|e| e == "SpaceAfter=No"), "{alone}");
    // Before the next file's `# newdoc` UD forbids it (the validator's spaceafter-newdocpar).
    let both = dir.path().join("both.conllu");
    let out = common::spoolparse(&[
        "parse",
        "--model",
        model.to_str().unwrap(),
        "--threads",
        "1",
        first.to_str().unwrap(),
        second.to_str().unwrap(),
        "--output",
        both.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&both).unwrap();
    assert!(!last_misc(&text, "Vámonos").split('|').any(|e| e == "SpaceAfter=No"), "{text}");
    assert_eq!(text.matches("# newdoc").count(), 2);
    common::validate(&both, "en");
}

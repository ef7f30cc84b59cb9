//! Raw text of a kind no treebank holds (Debian documentation, man pages, docstrings): URLs,
//! e-mail addresses, file paths and command-line options come out as one token each, with the
//! punctuation after them split off, and a curly apostrophe is read as a straight one by the
//! tokenizer, the tagger and the lemmatizer while the FORM keeps it. The model is trained on a
//! made-up treebank whose hyphens, slashes, dots, colons and at signs are tokens of their own,
//! so that its tokenizer splits at them (as en_ewt's did inside URLs and addresses).

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use spoolparse::corpus::{Column, Format, Reader, Sentence};

const NOUNS: [&str; 10] = ["dog", "cat", "file", "tool", "user", "box", "page", "site", "mail", "list"];
const VERBS: [&str; 5] = ["work", "stop", "help", "run", "fail"];

/// A sentence of `(form, lemma, upos, glued to the next)` tokens, every word headed by the first.
fn sentence(out: &mut String, words: &[(&str, &str, &str, bool)]) {
    let text: String =
        words.iter().map(|&(f, _, _, glued)| if glued { f.to_string() } else { format!("{f} ") }).collect();
    let _ = writeln!(out, "# text = {}", text.trim_end());
    for (i, &(form, lemma, upos, glued)) in words.iter().enumerate() {
        let (head, rel) = if i == 0 { (0, "root") } else { (1, "dep") };
        let misc = if glued { "SpaceAfter=No" } else { "_" };
        let _ = writeln!(out, "{}\t{form}\t{lemma}\t{upos}\t{upos}\t_\t{head}\t{rel}\t_\t{misc}", i + 1);
    }
    out.push('\n');
}

/// The made-up treebank: compounds split at `-`, `/`, `@`, `.` and `:`, and `does n't`,
/// `NOUN 's` written without a space, as en_ewt writes them.
fn treebank() -> String {
    let mut out = String::new();
    for (i, a) in NOUNS.iter().enumerate() {
        for (j, b) in NOUNS.iter().enumerate().filter(|&(j, _)| j != i) {
            let (c, v) = (NOUNS[(i + j) % NOUNS.len()], VERBS[(i + 2 * j) % VERBS.len()]);
            let sep = ["-", "/", "@", ":", "."][(i + j) % 5];
            let cap = format!("{}{}", a[..1].to_uppercase(), &a[1..]);
            sentence(
                &mut out,
                &[
                    (&cap, a, "NOUN", false),
                    (b, b, "NOUN", true),
                    (sep, sep, "PUNCT", true),
                    (c, c, "NOUN", false),
                    ("does", "do", "AUX", true),
                    ("n't", "not", "PART", false),
                    (v, v, "VERB", true),
                    (".", ".", "PUNCT", false),
                ],
            );
            sentence(
                &mut out,
                &[
                    ("The", "the", "DET", false),
                    (a, a, "NOUN", true),
                    ("'s", "'s", "PART", false),
                    (b, b, "NOUN", false),
                    (&format!("{v}s"), v, "VERB", true),
                    (".", ".", "PUNCT", false),
                ],
            );
        }
    }
    out
}

/// A model with tagger, lemmatizer and tokenizer trained on [`treebank`].
fn model(dir: &Path) -> PathBuf {
    let train = dir.join("train.conllu");
    std::fs::write(&train, treebank()).unwrap();
    let model = dir.join("t.model");
    let args = ["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "3", "--tokenizer"];
    let out = common::train(&train, &model, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    model
}

/// The sentences `spoolparse parse` makes of `text` as raw text.
fn parse_raw(model: &Path, dir: &Path, text: &str) -> Vec<Sentence> {
    let input = dir.join("in.raw");
    std::fs::write(&input, text).unwrap();
    let output = dir.join("out.conllu");
    let _ = std::fs::remove_file(&output);
    let out = common::parse(model, &input, &output, &["--threads", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read(&output).unwrap();
    Reader::new(&written[..], Path::new("out"), Format::Conllu).map(|s| s.unwrap()).collect()
}

/// The tokens (multiword tokens as one) of `sents`.
fn tokens(sents: &[Sentence]) -> Vec<String> {
    sents.iter().flat_map(|s| s.token_lines()).map(|t| t.text().split('\t').nth(1).unwrap_or("").to_string()).collect()
}

/// (FORM, LEMMA, UPOS) of every word of `sents`.
fn words(sents: &[Sentence]) -> Vec<(String, String, String)> {
    sents
        .iter()
        .flat_map(|s| s.words().map(|w| [Column::Form, Column::Lemma, Column::Upos].map(|c| w.get(c).to_string())))
        .map(|[f, l, u]| (f, l, u))
        .collect()
}

#[test]
fn urls_addresses_paths_and_options_are_one_token_and_the_punctuation_after_them_splits_off() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    // The made-up treebank's tokenizer splits these at every hyphen, slash, dot and at sign.
    let (sents, split) = (parse_raw(&model, dir.path(), "The dog-box does n't work.\n"), "dog-box");
    assert!(!tokens(&sents).contains(&split.to_string()), "the fixture splits compounds: {:?}", tokens(&sents));
    let text = "See https://bugs.debian.org/cgi-bin/pkgreport.cgi?pkg=dpkg. Write to \
        jean-pierre.dupont+list@debian-fr.example.org, (www.debian.org/doc) or <deity@lists.debian.org>. \
        Run dpkg --min-confidence -j in /usr/share/doc/base-passwd or ~/.config/spoolparse/x.toml!\n";
    let sents = parse_raw(&model, dir.path(), text);
    let got = tokens(&sents);
    let whole = [
        ("https://bugs.debian.org/cgi-bin/pkgreport.cgi?pkg=dpkg", "."),
        ("jean-pierre.dupont+list@debian-fr.example.org", ","),
        ("www.debian.org/doc", ")"),
        ("deity@lists.debian.org", ">"),
        ("--min-confidence", "-j"),
        ("/usr/share/doc/base-passwd", "or"),
        ("~/.config/spoolparse/x.toml", "!"),
    ];
    for (token, next) in whole {
        let at = got.iter().position(|t| t == token).unwrap_or_else(|| panic!("{token} is one token: {got:?}"));
        assert_eq!(got.get(at + 1).map(String::as_str), Some(next), "{got:?}");
    }
    assert!(got.contains(&"(".to_string()) && got.contains(&"<".to_string()), "{got:?}");
    // Each is its own lemma, as written.
    for (form, lemma, _) in words(&sents).iter().filter(|(f, _, _)| whole.iter().any(|(t, _)| t == f)) {
        assert_eq!(form, lemma);
    }
}

#[test]
fn a_curly_apostrophe_is_read_as_a_straight_one_and_the_form_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(dir.path());
    let straight = words(&parse_raw(&model, dir.path(), "The box's page doesn't help.\n"));
    let curly = words(&parse_raw(&model, dir.path(), "The box’s page doesn’t help.\n"));
    assert_eq!(curly.len(), straight.len(), "{curly:?} against {straight:?}");
    for (c, s) in curly.iter().zip(&straight) {
        assert_eq!(c.0, s.0.replace('\'', "’"), "the form keeps its apostrophe");
        assert_eq!((&c.1, &c.2), (&s.1, &s.2), "lemma and UPOS as for the straight form");
    }
    let nt = curly.iter().find(|w| w.0 == "n’t").unwrap_or_else(|| panic!("doesn’t is split: {curly:?}"));
    assert_eq!((nt.1.as_str(), nt.2.as_str()), ("not", "PART"));
    let s = curly.iter().find(|w| w.0 == "’s").unwrap_or_else(|| panic!("box’s is split: {curly:?}"));
    assert_eq!(s.1, "'s", "the lemma is the straight form's");
}

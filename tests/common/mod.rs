//! Helpers shared by the integration tests: locating the shared treebanks (tests that need them
//! skip with a visible message where `../shared` is absent).

#![allow(dead_code)]

use std::path::PathBuf;

/// The shared UD folder, if present.
pub fn ud_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ud");
    if dir.is_dir() {
        Some(dir)
    } else {
        skip(&format!("{} not found; this test needs the shared treebanks", dir.display()));
        None
    }
}

/// Says that a test is skipped, and why, where it is seen.
pub fn skip(why: &str) {
    // Written to the stream itself, not through `eprintln!`, which the test harness captures
    // and hides for passing tests: a skip must be visible.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// The treebanks the project works with.
pub const TREEBANKS: [&str; 3] = ["en_ewt", "el_gdt", "hu_szeged"];

/// Every shared treebank file (train and dev of each treebank).
pub fn all_treebank_files() -> Vec<PathBuf> {
    let Some(dir) = ud_dir() else {
        return Vec::new();
    };
    TREEBANKS
        .iter()
        .flat_map(|tb| ["train", "dev"].map(|split| dir.join(tb).join(format!("{split}.conllu.zst"))))
        .collect()
}

/// A seeded source of random numbers below its argument (xorshift), for inputs made up by tests.
pub fn random(seed: u64) -> impl FnMut(u64) -> usize {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n) as usize
    }
}

/// A fixture file of `tests/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Runs the `spoolparse` binary built for these tests.
pub fn spoolparse(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_spoolparse")).args(args).output().expect("run spoolparse")
}

/// Runs `spoolparse train --train TRAIN --output MODEL ARGS...`.
pub fn train(train: &std::path::Path, model: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["train", "--train", train.to_str().unwrap(), "--output", model.to_str().unwrap()];
    all.extend_from_slice(args);
    spoolparse(&all)
}

/// Runs `spoolparse parse --model MODEL INPUT --output OUTPUT ARGS...`.
pub fn parse(
    model: &std::path::Path,
    input: &std::path::Path,
    output: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    let mut all = vec![
        "parse",
        "--model",
        model.to_str().unwrap(),
        input.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    spoolparse(&all)
}

/// The fixture `special.conllu` with every XPOS replaced by `zz` (a tag set no model saw),
/// `times` over.
pub fn foreign_tags(times: usize) -> String {
    let text = std::fs::read_to_string(fixture("special.conllu")).unwrap();
    let blanked: String = text
        .lines()
        .map(|l| {
            let mut cols: Vec<&str> = l.split('\t').collect();
            if cols.len() == 10 && cols[0].parse::<u32>().is_ok() {
                cols[4] = "zz";
            }
            cols.join("\t") + "\n"
        })
        .collect();
    blanked.repeat(times)
}

/// Runs the UD validator at level 2 on `path`, if the test venv has it (skipping visibly if not).
pub fn validate(path: &std::path::Path, lang: &str) {
    let validator = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/python-venv/bin/udvalidate");
    if !validator.exists() {
        skip(&format!("{} not found (scripts/python-test.sh builds it)", validator.display()));
        return;
    }
    let out = std::process::Command::new(validator)
        .args(["--lang", lang, "--level", "2", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// Words with their lemma, UPOS, XPOS and FEATS, which [`tagged_corpus`] trains on and
/// [`upos_only`] is made of.
pub const WORDS: [(&str, &str, &str, &str, &str); 10] = [
    ("the", "the", "DET", "DT", "Definite=Def|PronType=Art"),
    ("dog", "dog", "NOUN", "NN", "Number=Sing"),
    ("barks", "bark", "VERB", "VBZ", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"),
    ("at", "at", "ADP", "IN", "_"),
    ("cats", "cat", "NOUN", "NNS", "Number=Plur"),
    ("quickly", "quickly", "ADV", "RB", "_"),
    ("big", "big", "ADJ", "JJ", "Degree=Pos"),
    ("and", "and", "CCONJ", "CC", "_"),
    ("sees", "see", "VERB", "VBZ", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"),
    (".", ".", "PUNCT", ".", "_"),
];

/// `n` sentences of [`WORDS`] (sentence `s` starts at word `s mod 10`, takes every third word
/// after it, 3 to 8 words, each attached to the one before), with `# sent_id` and `# text`;
/// `columns` gives a word's LEMMA, UPOS, XPOS and FEATS.
fn sentences_of_words(n: usize, columns: impl Fn(usize) -> [String; 4]) -> String {
    let mut out = String::new();
    for s in 0..n {
        let words: Vec<usize> = (0..3 + s % 6).map(|i| (s + 3 * i) % WORDS.len()).collect();
        let forms: Vec<&str> = words.iter().map(|&w| WORDS[w].0).collect();
        out.push_str(&format!("# sent_id = s{s}\n# text = {}\n", forms.join(" ")));
        for (i, &w) in words.iter().enumerate() {
            let [lemma, upos, xpos, feats] = columns(w);
            let (head, deprel) = if i == 0 { (0, "root") } else { (i, "dep") };
            out.push_str(&format!(
                "{}\t{}\t{lemma}\t{upos}\t{xpos}\t{feats}\t{head}\t{deprel}\t_\t_\n",
                i + 1,
                forms[i]
            ));
        }
        out.push('\n');
    }
    out
}

/// Training text of `n` sentences of [`WORDS`], every column given.
pub fn tagged_corpus(n: usize) -> String {
    sentences_of_words(n, |w| {
        let (_, lemma, upos, xpos, feats) = WORDS[w];
        [lemma, upos, xpos, feats].map(str::to_string)
    })
}

/// `n` sentences of the words of [`tagged_corpus`] as another domain writes them: a
/// tag the base never has (UPOS `X`, XPOS `FW`) and head-final trees (every word attached to
/// the last), confirmed by a person; with `blank_first`, the first word of each is left
/// unannotated (HEAD and DEPREL `_`), as a correction of some arcs only.
pub fn head_final(n: usize, blank_first: bool) -> String {
    let mut out = String::new();
    for block in tagged_corpus(n).split("\n\n").filter(|b| !b.trim().is_empty()) {
        let words: Vec<Vec<&str>> =
            block.lines().filter(|l| !l.starts_with('#')).map(|l| l.split('\t').collect()).collect();
        let id = block.lines().find_map(|l| l.strip_prefix("# sent_id = ")).unwrap();
        out.push_str(&format!("# sent_id = x{id}\n# confirmed = yes\n"));
        for (i, w) in words.iter().enumerate() {
            let (head, deprel) = match i {
                0 if blank_first => ("_".to_string(), "_"),
                _ if i + 1 == words.len() => ("0".to_string(), "root"),
                _ => (words.len().to_string(), "dep"),
            };
            out.push_str(&format!("{}\t{}\t{}\tX\tFW\t_\t{head}\t{deprel}\t_\t_\n", i + 1, w[1], w[2]));
        }
        out.push('\n');
    }
    out
}

/// CoNLL-U `text` with every HEAD and DEPREL blanked: text of a domain whose trees nobody gave.
pub fn without_trees(text: &str) -> String {
    let blank = |line: &str| {
        let mut cols: Vec<&str> = line.split('\t').collect();
        if cols.len() == 10 {
            cols[6] = "_";
            cols[7] = "_";
        }
        cols.join("\t") + "\n"
    };
    text.lines().map(blank).collect()
}

/// The sentences of [`head_final`] from the `first`th on, of `n` in all.
pub fn head_final_from(first: usize, n: usize) -> String {
    let text = head_final(n, false);
    let from = text.find(&format!("# sent_id = xs{first}\n")).unwrap();
    text[from..].to_string()
}

/// A base treebank (each word attached to the one before) and a neural teacher trained on it
/// and on 150 sentences of a head-final domain tagged `X`/`FW`.
pub fn teacher_setup(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let base = dir.join("base.conllu");
    std::fs::write(&base, tagged_corpus(200)).unwrap();
    let domain = dir.join("domain.conllu");
    std::fs::write(&domain, head_final(150, false)).unwrap();
    let teacher = dir.join("teacher.model");
    let args = ["--train", domain.to_str().unwrap(), "--neural", "--neural-size", "small", "--neural-epochs", "8"];
    let out = train(&base, &teacher, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (base, teacher)
}

/// `n` sentences of [`WORDS`] as en_atis gives its words: gold UPOS, LEMMA and FEATS, XPOS `_`;
/// and "barks" is a NOUN ("the dog's barks", `Number=Plur`), which a tagger trained on
/// [`tagged_corpus`] never makes it.
pub fn upos_only(n: usize) -> String {
    sentences_of_words(n, |w| {
        let (form, lemma, upos, _, feats) = WORDS[w];
        let (upos, feats) = if form == "barks" { ("NOUN", "Number=Plur") } else { (upos, feats) };
        [lemma, upos, "_", feats].map(str::to_string)
    })
}

/// The LEMMA, UPOS, XPOS, FEATS and DEPS of every word of CoNLL-U `text`, in order.
pub fn word_columns(text: &[u8]) -> Vec<[String; 5]> {
    use spoolparse::corpus::{Column, Format, Reader};
    let cols = [Column::Lemma, Column::Upos, Column::Xpos, Column::Feats, Column::Deps];
    Reader::new(text, std::path::Path::new("text"), Format::Conllu)
        .flat_map(|s| s.unwrap().words().map(|w| cols.map(|c| w.get(c).to_string())).collect::<Vec<_>>())
        .collect()
}

/// The HEAD of every word of a CoNLL-U file, in order.
pub fn heads(path: &std::path::Path) -> Vec<String> {
    column(path, spoolparse::corpus::Column::Head)
}

/// Column `col` of every word of a CoNLL-U file, in order.
pub fn column(path: &std::path::Path, col: spoolparse::corpus::Column) -> Vec<String> {
    use spoolparse::corpus::{Format, Reader};
    let text = std::fs::read(path).unwrap();
    Reader::new(&text[..], path, Format::Conllu)
        .flat_map(|s| s.unwrap().words().map(|w| w.get(col).to_string()).collect::<Vec<_>>())
        .collect()
}

/// A small hu_szeged model (tagger, tokenizer) trained with its dev file, if the treebanks are
/// here.
pub fn hungarian_model(dir: &std::path::Path) -> Option<(PathBuf, PathBuf)> {
    let ud = ud_dir()?.join("hu_szeged");
    let (training, dev) = (ud.join("train.conllu.zst"), ud.join("dev.conllu.zst"));
    let model = dir.join("hu.model");
    let args =
        ["--dev", dev.to_str().unwrap(), "--epochs", "2", "--tagger", "--jackknife", "0", "--tagger-epochs", "2"];
    let out = train(&training, &model, &[&args[..], &["--tokenizer"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("confidence: fitted on"), "training says what the confidence was fitted on: {log}");
    Some((model, dev))
}

/// The raw text of a gold file (`# text`, paragraphs apart), written to `to`.
pub fn raw_text(gold: &std::path::Path, to: &std::path::Path) -> PathBuf {
    let corpus = spoolparse::model::tokenizer::load_raw(&[gold.to_path_buf()]).unwrap();
    std::fs::write(to, corpus.text() + "\n").unwrap();
    to.to_path_buf()
}

/// Whether `text` has a Greek letter (the sentences [`hungarian_with_greek`] puts in).
pub fn has_greek(text: &str) -> bool {
    text.chars().any(|c| ('\u{0370}'..='\u{03FF}').contains(&c))
}

/// Hungarian raw text (hu_szeged dev's sentences, a paragraph each) with a sentence of Greek
/// (el_gdt dev's) after every eighth of its own, at `to`: a file of the Hungarian model's
/// language, which its first words say, with sentences of another language and script in it.
/// Returns the Greek sentences.
pub fn hungarian_with_greek(hungarian: &std::path::Path, to: &std::path::Path) -> Vec<String> {
    use spoolparse::corpus::{Format, Reader};
    let texts = |gold: &std::path::Path| -> Vec<String> {
        let sentences = Reader::open(gold, Format::Conllu).unwrap().map(|s| s.unwrap());
        sentences.filter_map(|s| s.comment("text").map(str::to_string)).collect()
    };
    let greek = ud_dir().unwrap().join("el_gdt/dev.conllu.zst");
    let mut other = texts(&greek).into_iter();
    let (mut text, mut inserted) = (Vec::new(), Vec::new());
    for (i, own) in texts(hungarian).into_iter().enumerate() {
        text.push(own);
        if i % 8 == 7 {
            if let Some(g) = other.next() {
                text.push(g.clone());
                inserted.push(g);
            }
        }
    }
    std::fs::write(to, text.join("\n\n") + "\n").unwrap();
    inserted
}

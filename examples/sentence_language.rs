//! The figures behind the per-sentence language check of `spoolparse::parse::fit`: for each
//! sentence of parsed CoNLL-U files (`spoolparse parse` output, with `# confidence`), a line
//! of: file, confidence, words, and the check's counts of its words with a letter (those among
//! the model's training text's commonest forms, those the parser was not trained on, those of
//! a script the commonest forms do not use) and its verdict (1: another language's).
//!
//!     cargo run --release --example sentence_language -- MODEL PARSED.conllu... > counts.tsv

use std::path::PathBuf;

use anyhow::Context;
use spoolparse::corpus::{Format, Reader, Sentence};
use spoolparse::model::file::ModelFile;
use spoolparse::parse::fit::SentenceCheck;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(PathBuf::from);
    let model = args.next().context("usage: sentence_language MODEL PARSED...")?;
    let model = ModelFile::open(&model)?;
    let mut check = SentenceCheck::new(&model).context("the model keeps no commonest forms")?;
    println!("file\tconfidence\twords\tlettered\tfrequent\tunknown\tother_script\tforeign");
    for path in args {
        let mut reader = Reader::open(&path, Format::Conllu)?;
        let mut sent = Sentence::default();
        while let Some(r) = reader.read_next(&mut sent) {
            r.with_context(|| path.display().to_string())?;
            let confidence = sent
                .comments
                .iter()
                .find_map(|c| c.strip_prefix("# confidence = "))
                .context("no # confidence: parse without --no-confidence")?;
            let c = check.counts(&sent);
            let foreign = u8::from(check.foreign(&sent).is_some());
            let (lettered, frequent, unknown, other) = (c.lettered, c.frequent, c.unknown, c.other_script);
            let name = path.display();
            println!("{name}\t{confidence}\t{}\t{lettered}\t{frequent}\t{unknown}\t{other}\t{foreign}", sent.len());
        }
    }
    Ok(())
}

//! The figures behind the thresholds of `spoolparse::parse::fit`: for each file, the shares of
//! its first 1000 words (whole sentences) with XPOS `_`, with a UPOS+XPOS pair the model's
//! parser was not trained on, with a FORM it was not trained on, and (of its words with a
//! letter) among the training text's commonest forms, with their share of the training text.
//!
//!     cargo run --release --example input_fit -- MODEL FILE...

use std::path::PathBuf;

use anyhow::Context;
use spoolparse::corpus::{Format, Reader, Sentence};
use spoolparse::model::file::ModelFile;
use spoolparse::parse::fit::FitCheck;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(PathBuf::from);
    let model = args.next().context("usage: input_fit MODEL FILE...")?;
    let model = ModelFile::open(&model)?;
    let expected = model.frequent_forms().map_or(0.0, |f| f.coverage);
    println!(
        "{:40} {:>6} {:>9} {:>12} {:>13} {:>17}",
        "file",
        "words",
        "XPOS _",
        "unknown tag",
        "unknown form",
        format!("frequent ({:.0}%)", 100.0 * expected)
    );
    for path in args {
        let mut reader = Reader::open(&path, Format::from_path(&path))?;
        let mut check = FitCheck::new(&model);
        let mut sent = Sentence::default();
        while !check.done() {
            match reader.read_next(&mut sent) {
                None => break,
                Some(r) => r.with_context(|| path.display().to_string())?,
            }
            check.add(&sent);
        }
        let c = check.counts();
        let pct = |n: usize| format!("{:.1}%", 100.0 * n as f64 / c.words.max(1) as f64);
        let name = path.display().to_string();
        let frequent = format!("{:.1}%", 100.0 * c.frequent as f64 / c.lettered.max(1) as f64);
        println!(
            "{name:40} {:>6} {:>9} {:>12} {:>13} {frequent:>17}",
            c.words,
            pct(c.empty_xpos),
            pct(c.unknown_tags),
            pct(c.unknown_forms)
        );
    }
    Ok(())
}

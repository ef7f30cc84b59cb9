//! What re-parsing around a correction saves an annotator (issue 29): a simulated annotator
//! takes each sentence of a gold file as the model parses it (gold tags), sets the gold arc of
//! the least confident wrong word, lets the workbench re-parse the sentence with every arc set
//! so far as a constraint (`Parser::parse_constrained`), and goes on until the tree is right.
//! Prints the corrections needed per wrong arc of the first parse: 1.0 means re-parsing fixed
//! nothing by itself.
//!
//!     cargo run --release --example reparse_gain -- MODEL GOLD.conllu[.zst]

use std::path::PathBuf;

use spoolparse::base::label::Label;
use spoolparse::corpus::{Column, Format, Reader};
use spoolparse::model::features::encode_sentence;
use spoolparse::model::file::ModelFile;
use spoolparse::parse::constrained::{Arc, Constraints};
use spoolparse::parse::parser::Parser;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(PathBuf::from);
    let (Some(model_path), Some(gold_path)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: reparse_gain MODEL GOLD.conllu[.zst]");
    };
    let model = ModelFile::open(&model_path)?;
    let meta = model.meta();
    let mut parser =
        Parser::new(&model).with_confidence(meta.temperature).with_calibration(meta.arc_calibration.as_ref());
    let (mut sentences, mut words, mut first_wrong, mut corrections, mut free) = (0, 0, 0usize, 0usize, 0usize);
    let mut attrs = Vec::new();
    for sent in Reader::open(&gold_path, Format::from_path(&gold_path))? {
        let sent = sent?;
        encode_sentence(&sent, meta.morphology, &mut attrs);
        let n = sent.len();
        // Gold arcs; a label the model does not have cannot be set, and is not asked for.
        let gold: Vec<(u32, Option<Label>)> = sent
            .words()
            .map(|w| (w.get(Column::Head).parse().unwrap_or(0), meta.labels.get(w.get(Column::Deprel))))
            .collect();
        let wrong = |p: &Parser<_>| -> Vec<u32> {
            (1..=n as u32)
                .filter(|&w| {
                    let (h, l) = gold[w as usize - 1];
                    p.heads()[w as usize] != h || l.is_some_and(|l| p.labels()[w as usize] != l)
                })
                .collect()
        };
        let mut set: Vec<Arc> = Vec::new();
        parser.parse_constrained(&attrs, &Constraints::none(n));
        let initial = wrong(&parser);
        let mut left = initial.clone();
        while !left.is_empty() && set.len() < n {
            let conf = parser.arc_confidence();
            let worst =
                *left.iter().min_by(|&&a, &&b| conf[a as usize].total_cmp(&conf[b as usize])).unwrap_or(&left[0]);
            let (head, label) = gold[worst as usize - 1];
            set.push(Arc { word: worst, head, label });
            parser.parse_constrained(&attrs, &Constraints::new(n, set.iter().copied())?);
            left = wrong(&parser);
        }
        sentences += 1;
        words += n;
        first_wrong += initial.len();
        corrections += set.len();
        // Wrong arcs of the first parse that became right without being set.
        free += initial.iter().filter(|w| !set.iter().any(|a| a.word == **w)).count();
    }
    println!(
        "{sentences} sentences, {words} words: {first_wrong} arcs wrong in the first parse (LAS {:.2}); \
         {corrections} corrections to make every tree right: {:.3} per wrong arc; {free} wrong arcs ({:.1}%) fixed by re-parsing alone",
        100.0 * (1.0 - first_wrong as f64 / words as f64),
        corrections as f64 / first_wrong.max(1) as f64,
        100.0 * free as f64 / first_wrong.max(1) as f64
    );
    Ok(())
}

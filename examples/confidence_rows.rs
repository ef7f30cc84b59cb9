//! The rows the whole pipeline's confidence is fitted on, as TSV: input, sentence, right, and
//! the signals (`learn::confidence_model::ArcSignals`), for studying other features and
//! sentence scores outside the binary.
//!
//!     cargo run --release --example confidence_rows MODEL GOLD.conllu > rows.tsv

use std::path::Path;
use std::sync::Arc;

use spoolparse::model::file::ModelFile;
use spoolparse::train::pipeline_confidence::collect_rows;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, gold] = args.as_slice() else { anyhow::bail!("usage: confidence_rows MODEL GOLD.conllu") };
    let model = Arc::new(ModelFile::open(Path::new(model))?);
    let (rows, _) = collect_rows(&model, Path::new(gold))?;
    println!("input\tsentence\tright\tparser\tdependent_tag\thead_tag\tdependent_unknown\tunknown_share\twords\tdistance\ttoken_margin\tsentence_margin\thead_parser\tsentence_parser\trelation\tupos");
    for r in rows {
        let s = r.signals;
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            r.input.name(),
            r.sentence,
            u8::from(r.right),
            s.parser,
            s.dependent_tag,
            s.head_tag,
            u8::from(s.dependent_unknown),
            s.unknown_share,
            s.words,
            s.distance,
            s.token_margin,
            s.sentence_margin,
            s.head_parser,
            s.sentence_parser,
            s.relation.map_or(-1, i32::from),
            s.upos.map_or(-1, i32::from)
        );
    }
    Ok(())
}

//! `spoolparse inspect`: prints a model file's metadata and sections.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use spoolparse::base::label::Label;
use spoolparse::model::file::ModelFile;

/// Print a model's metadata and sections.
#[derive(Args)]
pub struct InspectArgs {
    model: PathBuf,
    /// Also check every section's checksum (reads the whole file).
    #[arg(long)]
    verify: bool,
}

/// Runs `spoolparse inspect`.
pub fn exec(args: InspectArgs) -> Result<()> {
    let InspectArgs { model: path, verify } = args;
    let model = ModelFile::open(&path)?;
    if verify {
        model.verify()?;
    }
    let m = model.meta();
    println!("model           {}", path.display());
    println!("file size       {} bytes", model.file_len());
    println!("transitions     {}", m.transition_system);
    println!("feature set     {}", m.feature_set);
    let labels: Vec<&str> = (0..m.labels.len()).map(|i| m.labels.name(Label::from_index(i))).collect();
    println!("labels          {} ({})", m.labels.len(), labels.join(" "));
    match model.neural() {
        Some(net) => {
            println!("neural parser   {}", net.spec.summary());
            println!("inventory       {} forms and tag pairs (a neural model's table: never scored)", m.features);
        }
        None => println!(
            "weights         {} in {} features, {:?}, {} table slots, pruned below {}",
            m.weights, m.features, m.table.precision, m.table.slots, m.pruned_below
        ),
    }
    println!("temperature     {}", m.temperature);
    println!("training        {}", serde_json::to_string(&m.info)?);
    if let Some((t, _, _)) = model.tagger() {
        println!("tagger          {} tags, {} weights, {}", t.tags.len(), t.weights, t.feature_set);
    }
    let dev = |accuracy: Option<f64>| accuracy.map_or("no dev score".to_string(), |a| format!("dev accuracy {a:.2}"));
    if let Some((f, table)) = model.feats() {
        println!(
            "feats           {} FEATS values ({:?}), {} weights, {:?}, {} forms with ambiguity classes, {}; {}",
            f.inventory.strings(),
            f.inventory.mode(),
            f.weights,
            table.layout().precision,
            f.dict.len(),
            f.feature_set,
            dev(f.dev_accuracy)
        );
    }
    if let Some((l, table)) = model.lemmatizer() {
        println!(
            "lemmatizer      {} rules ({} classified), {} dictionary keys, {} weights, {:?}, {}; {}",
            l.rules.len(),
            l.rules.classified(),
            l.dict.len(),
            l.weights,
            table.layout().precision,
            l.feature_set,
            dev(l.dev_accuracy)
        );
    }
    if let Some((t, table)) = model.tokenizer() {
        let dev = t.dev.map_or("no dev scores".to_string(), |d| {
            format!("dev tokens F1 {:.2}, sentences F1 {:.2}", d.tokens, d.sentences)
        });
        println!(
            "tokenizer       {} weights, {:?}, {} multiword forms, {}; {dev}",
            t.weights,
            table.layout().precision,
            t.mwt.len(),
            t.feature_set
        );
    }
    match model.confidence() {
        Some(c) => {
            println!("confidence      the whole pipeline's, {}", super::calibrate::describe(c));
            println!("min precision   {}", super::calibrate::describe_precisions(c));
        }
        None => println!("confidence      the parser's probability, isotonic map (no pipeline confidence)"),
    }
    match model.frequent_forms() {
        Some(f) => println!(
            "language        {} commonest forms of the training text ({:.1}% of its words): {} …",
            f.forms.len(),
            100.0 * f.coverage,
            f.forms.iter().take(12).map(String::as_str).collect::<Vec<_>>().join(" ")
        ),
        None => println!("language        not kept (trained before models kept their commonest forms)"),
    }
    for s in model.sections() {
        println!("section {:<8} offset {:>10} length {:>10} crc32 {:08x}", s.name(), s.offset, s.len, s.crc);
    }
    if verify {
        println!("checksums       all sections verified");
    }
    Ok(())
}

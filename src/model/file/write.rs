//! Writing model files: a trained [`Model`] (with its tagger, analysis, tokenizer and the
//! extras of [`Extras`]) laid out as the module doc of [`super`] says, or a model file again
//! with a new whole-pipeline confidence. Every write is atomic (temporary file, fsync, rename,
//! fsync of the directory); this module builds weight tables and bytes, and reads no model
//! but the one it copies sections from.

use std::io;
use std::path::Path;

use super::table;
use super::{
    Extras, FeatsMeta, FormatError, LemmatizerMeta, Metadata, ModelError, ModelFile, PipelineConfidence, Precision,
    Section, TaggerMeta, TokenizerMeta, ALIGN, CONFMETA, ENDIAN_MARK, ENTRY_LEN, FEATMETA, FEATS_SECTIONS,
    FORMAT_VERSION, FROWS, FSLOTS, HEADER_LEN, LANGMETA, LEMMATIZER_SECTIONS, LEMMETA, LROWS, LSLOTS, MAGIC, META,
    RECIPE, ROWS, SLOTS, T2ROWS, T2SLOTS, TAGGER_SECTIONS, TAGMETA, TKROWS, TKSLOTS, TOKENIZER_SECTIONS, TOKMETA,
    TROWS, TSLOTS,
};
use crate::learn::scorer::ClassOrder;
use crate::model::feats::FEATS_FEATURE_SET;
use crate::model::lemmatizer::LEMMATIZER_FEATURE_SET;
use crate::model::tagger::TAGGER_FEATURE_SET;
use crate::model::tokenizer::TOKENIZER_FEATURE_SET;
use crate::model::Model;
use crate::transition::Transition;

/// How to write a model.
#[derive(Debug, Clone, Copy)]
pub struct WriteOptions {
    pub precision: Precision,
    /// Leave out weights whose absolute value is below this.
    pub prune_below: f32,
    /// Prune more, by the smallest threshold that makes the parser's weight table (slots and
    /// rows) fit in this many bytes; the threshold reached is recorded as `pruned_below`.
    pub max_table_bytes: Option<u64>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions { precision: Precision::F32, prune_below: 0.0, max_table_bytes: None }
    }
}

/// Writes `model` to `path` atomically (temporary file, fsync, rename, fsync of the directory);
/// returns the metadata written.
pub fn write(model: &Model, path: &Path, opts: WriteOptions) -> Result<Metadata, ModelError> {
    write_with(model, path, opts, Extras::default())
}

/// [`fn@write`], with a recipe and another file's tagger.
pub fn write_with(model: &Model, path: &Path, opts: WriteOptions, extras: Extras) -> Result<Metadata, ModelError> {
    let labels = model.labels.len();
    let position = |c: u16| Transition::from_index(c.into()).score_position(labels) as u16;
    let (built, pruned_below) = match opts.max_table_bytes {
        None => (build_table(&model.weights, opts, ClassOrder::Score, position), opts.prune_below),
        Some(max) => build_table_within(&model.weights, opts, max, position),
    };
    let meta = Metadata {
        transition_system: model.encoding().id(),
        feature_set: model.feature_set.clone(),
        labels: model.labels.clone(),
        fallback: model.fallback,
        table: built.layout,
        features: built.features,
        weights: built.weights,
        pruned_below,
        info: model.info.clone(),
        reads_columns: model.morphology.reads_columns(),
        morphology: model.morphology,
        temperature: model.temperature,
        arc_calibration: model.arc_calibration.clone(),
    };
    let io_err = |e| ModelError::Io { path: path.to_path_buf(), error: io::Error::other(e) };
    let meta_bytes = bincode::serialize(&meta).map_err(io_err)?;
    let mut payloads: Vec<(&[u8; 8], Vec<u8>)> = vec![(&META, meta_bytes), (&SLOTS, built.slots), (&ROWS, built.rows)];
    if let Some(tagger) = &model.tagger {
        let (first, second) = (
            build_table(&tagger.first, opts, ClassOrder::Index, |c| c),
            build_table(&tagger.second, opts, ClassOrder::Index, |c| c),
        );
        let tmeta = TaggerMeta {
            feature_set: TAGGER_FEATURE_SET.to_string(),
            tags: tagger.tags.clone(),
            dict: tagger.dict.clone(),
            tables: [first.layout, second.layout],
            weights: first.weights + second.weights,
        };
        payloads.push((&TAGMETA, bincode::serialize(&tmeta).map_err(io_err)?));
        payloads.push((&TSLOTS, first.slots));
        payloads.push((&TROWS, first.rows));
        payloads.push((&T2SLOTS, second.slots));
        payloads.push((&T2ROWS, second.rows));
    } else if let Some(from) = extras.tagger_from.filter(|f| f.tagger.is_some()) {
        copy_sections(from, &TAGGER_SECTIONS, &mut payloads)?;
    }
    if let Some(feats) = &model.feats {
        let table = build_table(&feats.weights, opts, ClassOrder::Index, |c| c);
        let fmeta = FeatsMeta {
            feature_set: FEATS_FEATURE_SET.to_string(),
            inventory: feats.inventory.clone(),
            dict: feats.dict.clone(),
            table: table.layout,
            weights: table.weights,
            dev_accuracy: feats.dev_accuracy,
        };
        payloads.push((&FEATMETA, bincode::serialize(&fmeta).map_err(io_err)?));
        payloads.push((&FSLOTS, table.slots));
        payloads.push((&FROWS, table.rows));
    } else if let Some(from) = extras.tagger_from.filter(|f| f.feats.is_some()) {
        copy_sections(from, &FEATS_SECTIONS, &mut payloads)?;
    }
    if let Some(lemmatizer) = &model.lemmatizer {
        let table = build_table(&lemmatizer.weights, opts, ClassOrder::Index, |c| c);
        let lmeta = LemmatizerMeta {
            feature_set: LEMMATIZER_FEATURE_SET.to_string(),
            rules: lemmatizer.rules.clone(),
            dict: lemmatizer.dict.clone(),
            table: table.layout,
            weights: table.weights,
            dev_accuracy: lemmatizer.dev_accuracy,
        };
        payloads.push((&LEMMETA, bincode::serialize(&lmeta).map_err(io_err)?));
        payloads.push((&LSLOTS, table.slots));
        payloads.push((&LROWS, table.rows));
    } else if let Some(from) = extras.tagger_from.filter(|f| f.lemmatizer.is_some()) {
        copy_sections(from, &LEMMATIZER_SECTIONS, &mut payloads)?;
    }
    if let Some((tokenizer, dev)) = &model.tokenizer {
        let table = build_table(&tokenizer.weights, opts, ClassOrder::Index, |c| c);
        let tmeta = TokenizerMeta {
            feature_set: TOKENIZER_FEATURE_SET.to_string(),
            mwt: tokenizer.mwt.clone(),
            table: table.layout,
            weights: table.weights,
            dev: *dev,
        };
        payloads.push((&TOKMETA, bincode::serialize(&tmeta).map_err(io_err)?));
        payloads.push((&TKSLOTS, table.slots));
        payloads.push((&TKROWS, table.rows));
    } else if let Some(from) = extras.tagger_from.filter(|f| f.tokenizer.is_some()) {
        copy_sections(from, &TOKENIZER_SECTIONS, &mut payloads)?;
    }
    // A retrained parser keeps the language of the text it was first trained on.
    let given = |tag: &[u8; 8]| extras.sections.iter().any(|(t, _)| t == tag);
    if let Some(from) = extras.tagger_from.filter(|f| f.frequent_forms().is_some() && !given(&LANGMETA)) {
        copy_sections(from, &[LANGMETA], &mut payloads)?;
    }
    if let Some(recipe) = extras.recipe {
        let json = serde_json::to_vec(recipe)
            .map_err(|e| ModelError::Io { path: path.to_path_buf(), error: io::Error::other(e) })?;
        payloads.push((&RECIPE, json));
    }
    for (tag, bytes) in extras.sections {
        payloads.push((tag, bytes.clone()));
    }
    write_sections(path, &payloads)?;
    Ok(meta)
}

/// The model file `from` with `confidence` as its whole-pipeline confidence (in place of any it
/// had), written to `path` atomically: every other section as it is.
pub fn write_with_confidence(from: &ModelFile, confidence: &PipelineConfidence, path: &Path) -> Result<(), ModelError> {
    let mut payloads: Vec<(&[u8; 8], Vec<u8>)> = Vec::new();
    for section in from.sections.iter().filter(|s| s.tag != CONFMETA) {
        payloads.push((&section.tag, from.map[section.range()].to_vec()));
    }
    let json = serde_json::to_vec(confidence)
        .map_err(|e| ModelError::Io { path: path.to_path_buf(), error: io::Error::other(e) })?;
    payloads.push((&CONFMETA, json));
    write_sections(path, &payloads)
}

/// Lays out `payloads` as a model file (header, section table, aligned sections) and writes it
/// to `path` atomically.
fn write_sections(path: &Path, payloads: &[(&[u8; 8], Vec<u8>)]) -> Result<(), ModelError> {
    let mut file = vec![0u8; HEADER_LEN + payloads.len() * ENTRY_LEN];
    let mut entries = Vec::new();
    for (tag, data) in payloads {
        file.resize(file.len().next_multiple_of(ALIGN), 0);
        entries.push(Section {
            tag: **tag,
            offset: file.len() as u64,
            len: data.len() as u64,
            crc: crc32fast::hash(data),
        });
        file.extend_from_slice(data);
    }
    for (i, s) in entries.iter().enumerate() {
        let at = HEADER_LEN + i * ENTRY_LEN;
        file[at..at + 8].copy_from_slice(&s.tag);
        file[at + 8..at + 16].copy_from_slice(&s.offset.to_le_bytes());
        file[at + 16..at + 24].copy_from_slice(&s.len.to_le_bytes());
        file[at + 24..at + 28].copy_from_slice(&s.crc.to_le_bytes());
    }
    file[..8].copy_from_slice(&MAGIC);
    file[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    file[12..16].copy_from_slice(&ENDIAN_MARK.to_le_bytes());
    file[16..20].copy_from_slice(&(entries.len() as u32).to_le_bytes());
    let table_crc = crc32fast::hash(&file[HEADER_LEN..HEADER_LEN + entries.len() * ENTRY_LEN]);
    file[20..24].copy_from_slice(&table_crc.to_le_bytes());
    crate::base::io::write_atomically(path, &file)
        .map_err(|source| ModelError::Io { path: path.to_path_buf(), error: source })?;
    // Only a hint for speed (huge pages, see `ModelFile::open`): the file is durable either way.
    let _ = crate::base::io::drop_from_page_cache(path);
    Ok(())
}

/// Appends the sections `tags` of `from`, as they are, to `payloads`.
fn copy_sections<'t>(
    from: &ModelFile,
    tags: &'t [[u8; 8]],
    payloads: &mut Vec<(&'t [u8; 8], Vec<u8>)>,
) -> Result<(), ModelError> {
    for tag in tags {
        let section = from.sections.iter().find(|s| s.tag == *tag).ok_or_else(|| ModelError::Format {
            path: from.path.clone(),
            error: FormatError::Missing(String::from_utf8_lossy(tag).trim_end_matches('\0').to_string()),
        })?;
        payloads.push((tag, from.map[section.range()].to_vec()));
    }
    Ok(())
}

/// Builds the weight table of `weights` with class `c` stored at `position(c)` (numbering the
/// classes in `order`), leaving out weights below the pruning threshold.
fn build_table(
    weights: &crate::learn::perceptron::Weights,
    opts: WriteOptions,
    order: ClassOrder,
    position: impl Fn(u16) -> u16,
) -> table::BuiltTable {
    let pruned: Vec<(u64, Vec<(u16, f32)>)> = weights
        .rows()
        .map(|(f, row)| {
            (f, row.iter().filter(|&&(_, w)| w.abs() >= opts.prune_below).map(|&(c, w)| (position(c), w)).collect())
        })
        .collect();
    let mut built = table::build(pruned.iter().map(|(f, row)| (*f, row.as_slice())), weights.classes(), opts.precision);
    built.layout.order = order;
    built
}

/// [`build_table`] pruned by the smallest threshold, at least `opts.prune_below`, at which the
/// slots and rows fit in `max` bytes, and that threshold. The size only shrinks as the
/// threshold grows, so a bisection over the weights' magnitudes finds it in about 20 builds.
fn build_table_within(
    weights: &crate::learn::perceptron::Weights,
    opts: WriteOptions,
    max: u64,
    position: impl Fn(u16) -> u16 + Copy,
) -> (table::BuiltTable, f32) {
    let size = |b: &table::BuiltTable| (b.slots.len() + b.rows.len()) as u64;
    let at = |threshold: f32| {
        build_table(weights, WriteOptions { prune_below: threshold, ..opts }, ClassOrder::Score, position)
    };
    let first = at(opts.prune_below);
    if size(&first) <= max {
        return (first, opts.prune_below);
    }
    let mut magnitudes: Vec<f32> = weights
        .rows()
        .flat_map(|(_, row)| row.iter().map(|&(_, w)| w.abs()))
        .filter(|&a| a > opts.prune_below)
        .collect();
    magnitudes.sort_unstable_by(f32::total_cmp);
    magnitudes.dedup();
    // Thresholds `magnitudes[i]` for i >= hi fit; below lo they do not. Past the largest
    // magnitude every weight is left out.
    let (mut lo, mut hi) = (0, magnitudes.len());
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi) / 2;
        let built = at(magnitudes[mid]);
        if size(&built) <= max {
            best = Some((built, magnitudes[mid]));
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    best.unwrap_or_else(|| (at(f32::INFINITY), f32::INFINITY))
}

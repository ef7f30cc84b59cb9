//! The model file: one immutable file, written once and memory-mapped read-only.
//!
//! ```text
//! offset 0   header (32 bytes): magic "SPOOLPM\0", format version u32, endianness mark u32
//!            (0x01020304 as written), section count u32, CRC-32 of the section table u32,
//!            8 reserved bytes
//! offset 32  section table: per section a tag [u8; 8], offset u64, length u64, CRC-32 u32,
//!            4 reserved bytes
//! …          sections, each starting on a 64-byte boundary:
//!            META   serde + bincode [`Metadata`]: transition system, feature set, labels,
//!                   table layout, hyperparameters, training-data fingerprint, dev scores
//!            SLOTS  the weight table's slots   (see [`table`])
//!            ROWS   the weight table's rows, classes in the parser's score order
//!                   ([`crate::transition::Transition::score_position`])
//!            TAGMETA, TSLOTS, TROWS, T2SLOTS, T2ROWS   optional: the tagger's metadata
//!                   ([`TaggerMeta`]) and the weight tables of its two passes
//!            FEATMETA, FSLOTS, FROWS   optional: the FEATS classifier's metadata ([`FeatsMeta`]:
//!                   its FEATS inventory and ambiguity classes) and its weight table
//!            LEMMETA, LSLOTS, LROWS    optional: the lemmatizer's metadata ([`LemmatizerMeta`]:
//!                   its rules and dictionary) and its weight table
//!            TOKMETA, TKSLOTS, TKROWS   optional: the tokenizer's metadata ([`TokenizerMeta`]:
//!                   its multiword-token dictionary and dev scores) and its weight table
//!            CONFMETA optional, JSON [`PipelineConfidence`]: the whole pipeline's arc
//!                   confidence model and what it was fitted on
//!            LANGMETA optional, JSON [`FrequentForms`]: the training text's commonest
//!                   forms, which tell its language (the input check reads them)
//!            RECIPE optional, JSON [`Recipe`]: the training settings that `META` does not
//!                   hold (learner, storage), so that retraining can train the model's like
//!            NEUMETA, NEURAL   optional: a neural model's architecture and weights
//!                   ([`crate::model::neural`] decodes them; with them the parser
//!                   table is empty)
//! ```
//!
//! Readers ignore sections they do not know, so an optional section needs no new version.
//!
//! Opening checks magic, version, endianness, the section table's checksum, every section's
//! bounds and alignment, and META's checksum, and decodes META; it does not read the weights, so it costs the same
//! for any model size. [`ModelFile::verify`] checks every section's checksum (`inspect
//! --verify`, and before a model is promoted). Writing ([`write`]) goes to a temporary name, is fsync'd,
//! renamed, and the directory fsync'd. All integers are little-endian; a big-endian host
//! refuses the file rather than misreading it. This module owns the byte layout; it does not
//! train, and parses nothing but its own header.

pub mod table;
mod write;

use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use serde::{Deserialize, Serialize};

use crate::base::label::{Label, LabelSet};
use crate::learn::confidence_model::ConfidenceModel;
use crate::learn::precision::SentenceRow;
use crate::learn::scorer::{ClassOrder, Scorer};
use crate::model::analysis::Analyzer;
use crate::model::feats::{FeatsDict, FeatsInventory, FeatsTagger, FEATS_FEATURE_SET};
use crate::model::features::{feature_set, Morphology};
use crate::model::frequent_forms::FrequentForms;
use crate::model::lemmatizer::{LemmaDict, Lemmatizer, RuleSet, LEMMATIZER_FEATURE_SET};
use crate::model::neural::{Net, NeuralSections, NEUMETA, NEURAL};
use crate::model::tagger::{TagDict, TagSet, Tagger, TAGGER_FEATURE_SET};
use crate::model::tokenizer::{MwtDict, Scores, TOKENIZER_FEATURE_SET};
use crate::model::TrainingInfo;
use crate::transition::{Encoding, System, Transition};
pub use table::{Precision, TableLayout, TableView};
pub use write::{write, write_with, write_with_confidence, WriteOptions};

/// First bytes of every model file.
pub const MAGIC: [u8; 8] = *b"SPOOLPM\0";
/// Version of the layout described above; bump on any incompatible change (7: slots carry a
/// 28-bit fingerprint and a reach, see [`table`]).
pub const FORMAT_VERSION: u32 = 7;
const ENDIAN_MARK: u32 = 0x0102_0304;
const HEADER_LEN: usize = 32;
const ENTRY_LEN: usize = 32;
const ALIGN: usize = 64;
const MAX_SECTIONS: u32 = 64;

const META: [u8; 8] = *b"META\0\0\0\0";
const SLOTS: [u8; 8] = *b"SLOTS\0\0\0";
const ROWS: [u8; 8] = *b"ROWS\0\0\0\0";
const TAGMETA: [u8; 8] = *b"TAGMETA\0";
const TSLOTS: [u8; 8] = *b"TSLOTS\0\0";
const TROWS: [u8; 8] = *b"TROWS\0\0\0";
const T2SLOTS: [u8; 8] = *b"T2SLOTS\0";
const T2ROWS: [u8; 8] = *b"T2ROWS\0\0";
const RECIPE: [u8; 8] = *b"RECIPE\0\0";
const CONFMETA: [u8; 8] = *b"CONFMETA";
/// The training text's commonest forms ([`FrequentForms`]).
pub const LANGMETA: [u8; 8] = *b"LANGMETA";
const FEATMETA: [u8; 8] = *b"FEATMETA";
const FSLOTS: [u8; 8] = *b"FSLOTS\0\0";
const FROWS: [u8; 8] = *b"FROWS\0\0\0";
const LEMMETA: [u8; 8] = *b"LEMMETA\0";
const LSLOTS: [u8; 8] = *b"LSLOTS\0\0";
const LROWS: [u8; 8] = *b"LROWS\0\0\0";
const TOKMETA: [u8; 8] = *b"TOKMETA\0";
const TKSLOTS: [u8; 8] = *b"TKSLOTS\0";
const TKROWS: [u8; 8] = *b"TKROWS\0\0";
/// The tagger's sections, in the order they are written.
const TAGGER_SECTIONS: [[u8; 8]; 5] = [TAGMETA, TSLOTS, TROWS, T2SLOTS, T2ROWS];
/// The FEATS classifier's sections, in the order they are written.
const FEATS_SECTIONS: [[u8; 8]; 3] = [FEATMETA, FSLOTS, FROWS];
/// The lemmatizer's sections, in the order they are written.
const LEMMATIZER_SECTIONS: [[u8; 8]; 3] = [LEMMETA, LSLOTS, LROWS];
/// The tokenizer's sections, in the order they are written.
const TOKENIZER_SECTIONS: [[u8; 8]; 3] = [TOKMETA, TKSLOTS, TKROWS];

/// How a model was trained beyond [`TrainingInfo`]: what retraining needs to train its like.
/// JSON, so that fields can be added without a new format version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recipe {
    /// The learner's name (`perceptron`, `logistic`, `cw`, `cost-sensitive`, `pa`).
    pub learner: String,
    /// AdaGrad-RDA settings (logistic learner).
    pub rda_alpha: f32,
    pub rda_rho: f32,
    pub rda_lambda: Option<f32>,
    pub precision: Precision,
    pub prune_below: f32,
    /// The bound on the parser's weight table, if any (files written before it have none).
    #[serde(default)]
    pub max_table_bytes: Option<u64>,
    /// Pseudo-projective training: how often an encoded label had to occur to be kept (files
    /// written before it have none: the default applies).
    #[serde(default)]
    pub lift_min_count: Option<usize>,
    /// Confidence-weighted settings φ and the prior variance; the passive-aggressive step
    /// bound C; learning to search's roll-in decay α; the rare-feature cutoff. Files written
    /// before these learners have none: the defaults apply.
    #[serde(default)]
    pub cw_phi: Option<f32>,
    #[serde(default)]
    pub cw_variance: Option<f32>,
    #[serde(default)]
    pub pa_c: Option<f32>,
    #[serde(default)]
    pub rollin_alpha: Option<f64>,
    #[serde(default)]
    pub min_feature_count: Option<u32>,
}

/// What [`write_with`] adds to a model beyond its own contents.
#[derive(Default, Clone, Copy)]
pub struct Extras<'a> {
    /// Written as the `RECIPE` section.
    pub recipe: Option<&'a Recipe>,
    /// For each of the tagger, the FEATS classifier, the lemmatizer and the tokenizer that the
    /// model has none of its own: copy this file's sections as they are (a retrained parser
    /// keeps the analysis and tokenizer it was served with).
    pub tagger_from: Option<&'a ModelFile>,
    /// Sections a higher layer gives meaning to, written as they are (a neural model's).
    pub sections: &'a [([u8; 8], Vec<u8>)],
}

/// The whole pipeline's arc confidence ([`ConfidenceModel`]), with what it was fitted on and how
/// well it did there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineConfidence {
    pub model: ConfidenceModel,
    /// The file it was fitted on.
    pub fitted_on: String,
    /// How that file was given to the model: `raw text`, `gold tokens`, `unknown forms`.
    pub inputs: Vec<String>,
    /// Arcs it was fitted on.
    pub arcs: u64,
    /// Arc ECE on the fitting file's raw text (or gold tokens without a tokenizer): the
    /// parser's calibration before, and this model's by 2-fold cross-fitting.
    pub ece_before: f64,
    pub ece_crossfit: f64,
    /// The fitting file's sentences (from its first input), each with its confidence by
    /// 2-fold cross-fitting: what `--min-precision` chooses its threshold on
    /// ([`crate::learn::precision`]). Empty in a model written before they were kept.
    #[serde(default)]
    pub sentences: Vec<SentenceRow>,
    /// Where `sentences` come from when not from `fitted_on`: the user's own sentences, drawn
    /// uniformly by the workbench and reviewed whole, parsed with this confidence as fitted
    /// (never fitted on them: [`crate::train::pipeline_confidence::scored_sentences`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentences_from: Option<String>,
}

impl PipelineConfidence {
    /// The file `sentences` come from.
    pub fn sentences_source(&self) -> &str {
        self.sentences_from.as_deref().unwrap_or(&self.fitted_on)
    }
}

/// One entry of the section table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub tag: [u8; 8],
    pub offset: u64,
    pub len: u64,
    pub crc: u32,
}

impl Section {
    /// The tag without trailing NULs, for messages.
    pub fn name(&self) -> String {
        String::from_utf8_lossy(&self.tag).trim_end_matches('\0').to_string()
    }

    fn range(&self) -> Range<usize> {
        self.offset as usize..(self.offset + self.len) as usize
    }
}

/// What is wrong with a model file's bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("file too short for a model header ({0} bytes)")]
    TooShort(usize),
    #[error("not a spoolparse model (bad magic bytes)")]
    NotAModel,
    #[error("model format version {0}, this build reads version {FORMAT_VERSION}")]
    Version(u32),
    #[error("model written with another byte order")]
    Endianness,
    #[error("implausible section count {0}")]
    SectionCount(u32),
    #[error("section table checksum mismatch: the header is corrupt")]
    TableChecksum,
    #[error("section {name} at {offset}+{len} lies outside the {file_len}-byte file: truncated?")]
    OutOfBounds { name: String, offset: u64, len: u64, file_len: usize },
    #[error("section {0} is not 64-byte aligned")]
    Misaligned(String),
    #[error("section {0} is missing")]
    Missing(String),
    #[error("section {name} checksum mismatch: the file is corrupt")]
    Checksum { name: String },
    #[error("metadata does not decode: {0}")]
    Metadata(String),
    #[error("weight table does not match its layout")]
    Table,
    #[error("trained with feature set {found:?}, this build extracts {expected:?} for its transition system")]
    FeatureSet { found: String, expected: String },
    #[error("neural model: {0}")]
    Neural(String),
    #[error("transition system {0:?}, this build implements arc-eager+single-root/1 and arc-hybrid+single-root/1, each with ;pseudo-projective=head|head+path|path or without")]
    TransitionSystem(String),
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Parses and checks the header and section table of a model file's bytes; never panics.
pub fn parse_header(bytes: &[u8]) -> Result<Vec<Section>, FormatError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(FormatError::NotAModel);
    }
    if bytes.len() < HEADER_LEN {
        return Err(FormatError::TooShort(bytes.len()));
    }
    let version = u32_at(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(FormatError::Version(version));
    }
    if u32_at(bytes, 12) != ENDIAN_MARK || cfg!(target_endian = "big") {
        return Err(FormatError::Endianness);
    }
    let count = u32_at(bytes, 16);
    if count > MAX_SECTIONS {
        return Err(FormatError::SectionCount(count));
    }
    let table_end = HEADER_LEN + count as usize * ENTRY_LEN;
    if bytes.len() < table_end {
        return Err(FormatError::TooShort(bytes.len()));
    }
    if crc32fast::hash(&bytes[HEADER_LEN..table_end]) != u32_at(bytes, 20) {
        return Err(FormatError::TableChecksum);
    }
    let mut sections = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        let at = HEADER_LEN + i * ENTRY_LEN;
        let mut tag = [0u8; 8];
        tag.copy_from_slice(&bytes[at..at + 8]);
        let s =
            Section { tag, offset: u64_at(bytes, at + 8), len: u64_at(bytes, at + 16), crc: u32_at(bytes, at + 24) };
        let end = s.offset.checked_add(s.len);
        if end.is_none_or(|e| e > bytes.len() as u64) || s.offset < table_end as u64 {
            return Err(FormatError::OutOfBounds {
                name: s.name(),
                offset: s.offset,
                len: s.len,
                file_len: bytes.len(),
            });
        }
        if !(s.offset as usize).is_multiple_of(ALIGN) {
            return Err(FormatError::Misaligned(s.name()));
        }
        sections.push(s);
    }
    Ok(sections)
}

/// Everything about a model except its weights.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Metadata {
    pub transition_system: String,
    pub feature_set: String,
    /// Label inventory; index 0 is the root label.
    pub labels: LabelSet,
    /// Label for words the parser leaves headless (see `Configuration::finish`).
    pub fallback: Label,
    pub table: TableLayout,
    /// Features and weights stored.
    pub features: u64,
    pub weights: u64,
    /// Weights whose absolute value was below this were left out when writing.
    pub pruned_below: f32,
    /// Training provenance: hyperparameters, data fingerprint, dev scores.
    pub info: TrainingInfo,
    /// Whether the parser's features read the LEMMA and FEATS columns (what the file stores;
    /// the feature set's name says what they read otherwise).
    pub reads_columns: bool,
    /// What the parser's LEMMA and FEATS features read: set on load from `reads_columns` and
    /// `feature_set`, not stored.
    #[serde(skip)]
    pub morphology: Morphology,
    /// Softmax temperature for transition probabilities (calibration, fitted on dev).
    pub temperature: f32,
    /// Post-hoc map from raw to calibrated arc confidence (isotonic, fitted on dev).
    pub arc_calibration: Option<crate::learn::confidence::Isotonic>,
}

/// The tagger's metadata.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaggerMeta {
    pub feature_set: String,
    pub tags: TagSet,
    pub dict: TagDict,
    /// Layouts of the first and second pass's tables.
    pub tables: [TableLayout; 2],
    pub weights: u64,
}

/// The FEATS classifier's metadata.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FeatsMeta {
    pub feature_set: String,
    pub inventory: FeatsInventory,
    pub dict: FeatsDict,
    pub table: TableLayout,
    pub weights: u64,
    /// Accuracy on the dev file's gold tokens, as trained (before quantisation).
    pub dev_accuracy: Option<f64>,
}

/// The lemmatizer's metadata.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LemmatizerMeta {
    pub feature_set: String,
    pub rules: RuleSet,
    pub dict: LemmaDict,
    pub table: TableLayout,
    pub weights: u64,
    /// Accuracy on the dev file's gold tokens, as trained (before quantisation).
    pub dev_accuracy: Option<f64>,
}

/// The tokenizer's metadata.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokenizerMeta {
    pub feature_set: String,
    pub mwt: MwtDict,
    pub table: TableLayout,
    pub weights: u64,
    /// Token and sentence F1 on the dev file, as trained (before quantisation).
    pub dev: Option<Scores>,
}

/// Why a model file could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: {error}", path.display())]
    Format { path: PathBuf, error: FormatError },
}

impl ModelError {
    /// What is wrong, without the file's name: for a message that names the file itself.
    pub fn problem(&self) -> String {
        match self {
            ModelError::Io { error, .. } => error.to_string(),
            ModelError::Format { error, .. } => error.to_string(),
        }
    }
}

/// Byte ranges of a weight table's slots and rows in the file.
type TableRanges = (Range<usize>, Range<usize>);

/// An opened, memory-mapped model.
pub struct ModelFile {
    map: Mmap,
    path: PathBuf,
    sections: Vec<Section>,
    meta: Metadata,
    /// What `meta.transition_system` names, checked on open.
    encoding: Encoding,
    slots: Range<usize>,
    rows: Range<usize>,
    /// Tagger metadata and the (slots, rows) ranges of its two passes.
    tagger: Option<(TaggerMeta, [TableRanges; 2])>,
    /// FEATS classifier metadata and the (slots, rows) ranges of its table.
    feats: Option<(FeatsMeta, TableRanges)>,
    /// Lemmatizer metadata and the (slots, rows) ranges of its table.
    lemmatizer: Option<(LemmatizerMeta, TableRanges)>,
    /// Tokenizer metadata and the (slots, rows) ranges of its table.
    tokenizer: Option<(TokenizerMeta, TableRanges)>,
    /// The whole pipeline's arc confidence (`CONFMETA`).
    confidence: Option<PipelineConfidence>,
    /// The training text's commonest forms (`LANGMETA`).
    frequent_forms: Option<FrequentForms>,
    /// A neural model's decoded spec and the range of its weights (`NEUMETA`, `NEURAL`).
    neural: Option<(NeuralSections, Range<usize>)>,
}

impl ModelFile {
    /// Maps `path` and checks its header, sections and metadata (not the weights' checksums:
    /// see [`ModelFile::verify`]).
    pub fn open(path: &Path) -> Result<ModelFile, ModelError> {
        let io_err = |source| ModelError::Io { path: path.to_path_buf(), error: source };
        let fmt_err = |source| ModelError::Format { path: path.to_path_buf(), error: source };
        let file = File::open(path).map_err(io_err)?;
        // Mapping a directory fails with "No such device": say what it is.
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(io_err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory, not a model file")));
        }
        // SAFETY: model files are immutable once renamed into place (they are only ever
        // replaced by rename, never written in place), so the mapping does not change under us.
        let map = unsafe { Mmap::map(&file) }.map_err(io_err)?;
        // Lookups hit random lines all over the weights, and with 4 KiB pages most of them
        // also miss the TLB. Advised, the kernel reads pages that are not cached yet in 2 MiB
        // folios and maps each with one TLB entry (en_ewt, one thread: about 5% faster). Only a
        // hint: without it, or where the cache already holds the file in small pages, reads are
        // the same. Writers drop a new model's pages from the cache for this reason
        // ([`crate::base::io::drop_from_page_cache`]).
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        let sections = parse_header(&map).map_err(fmt_err)?;
        let find = |tag: [u8; 8]| {
            sections.iter().find(|s| s.tag == tag).copied().ok_or_else(|| {
                fmt_err(FormatError::Missing(String::from_utf8_lossy(&tag).trim_end_matches('\0').to_string()))
            })
        };
        let (meta_s, slots_s, rows_s) = (find(META)?, find(SLOTS)?, find(ROWS)?);
        // The metadata is small and everything depends on it: check it now, not only in verify.
        if crc32fast::hash(&map[meta_s.range()]) != meta_s.crc {
            return Err(fmt_err(FormatError::Checksum { name: meta_s.name() }));
        }
        let mut meta: Metadata =
            bincode::deserialize(&map[meta_s.range()]).map_err(|e| fmt_err(FormatError::Metadata(e.to_string())))?;
        let encoding = Encoding::from_id(&meta.transition_system)
            .ok_or_else(|| fmt_err(FormatError::TransitionSystem(meta.transition_system.clone())))?;
        meta.morphology = match Morphology::of_stored(encoding.system, meta.reads_columns, &meta.feature_set) {
            Some(m) => m,
            None => {
                let expected = feature_set(encoding.system, Morphology::Columns);
                return Err(fmt_err(FormatError::FeatureSet { found: meta.feature_set, expected }));
            }
        };
        meta.labels.rebuild_index();
        let tagger = match sections.iter().find(|s| s.tag == TAGMETA).copied() {
            None => None,
            Some(tm) => {
                check_component(&map, tm, TAGGER_FEATURE_SET).map_err(fmt_err)?;
                let mut tmeta: TaggerMeta = bincode::deserialize(&map[tm.range()])
                    .map_err(|e| fmt_err(FormatError::Metadata(e.to_string())))?;
                tmeta.tags.rebuild_index();
                let passes =
                    [(find(TSLOTS)?.range(), find(TROWS)?.range()), (find(T2SLOTS)?.range(), find(T2ROWS)?.range())];
                for ((slots, rows), layout) in passes.iter().zip(&tmeta.tables) {
                    if TableView::new(&map[slots.clone()], &map[rows.clone()], *layout).is_none()
                        || layout.order != ClassOrder::Index
                        || layout.classes as usize != tmeta.tags.len().max(1)
                    {
                        return Err(fmt_err(FormatError::Table));
                    }
                }
                Some((tmeta, passes))
            }
        };
        // One table per component, whose classes its metadata says.
        let component_table = |slots: [u8; 8], rows: [u8; 8], layout: TableLayout, classes: usize| {
            let (slots, rows) = (find(slots)?.range(), find(rows)?.range());
            if TableView::new(&map[slots.clone()], &map[rows.clone()], layout).is_none()
                || layout.order != ClassOrder::Index
                || layout.classes as usize != classes.max(1)
            {
                return Err(fmt_err(FormatError::Table));
            }
            Ok((slots, rows))
        };
        let feats = match sections.iter().find(|s| s.tag == FEATMETA).copied() {
            None => None,
            Some(m) => {
                check_component(&map, m, FEATS_FEATURE_SET).map_err(fmt_err)?;
                let mut fmeta: FeatsMeta =
                    bincode::deserialize(&map[m.range()]).map_err(|e| fmt_err(FormatError::Metadata(e.to_string())))?;
                fmeta.inventory.rebuild_index();
                let ranges = component_table(FSLOTS, FROWS, fmeta.table, fmeta.inventory.classes())?;
                Some((fmeta, ranges))
            }
        };
        let lemmatizer = match sections.iter().find(|s| s.tag == LEMMETA).copied() {
            None => None,
            Some(m) => {
                check_component(&map, m, LEMMATIZER_FEATURE_SET).map_err(fmt_err)?;
                let mut lmeta: LemmatizerMeta =
                    bincode::deserialize(&map[m.range()]).map_err(|e| fmt_err(FormatError::Metadata(e.to_string())))?;
                lmeta.rules.rebuild_index();
                let ranges = component_table(LSLOTS, LROWS, lmeta.table, lmeta.rules.classified())?;
                Some((lmeta, ranges))
            }
        };
        let tokenizer = match sections.iter().find(|s| s.tag == TOKMETA).copied() {
            None => None,
            Some(tm) => {
                check_component(&map, tm, TOKENIZER_FEATURE_SET).map_err(fmt_err)?;
                let tmeta: TokenizerMeta = bincode::deserialize(&map[tm.range()])
                    .map_err(|e| fmt_err(FormatError::Metadata(e.to_string())))?;
                let (slots, rows) = (find(TKSLOTS)?.range(), find(TKROWS)?.range());
                if TableView::new(&map[slots.clone()], &map[rows.clone()], tmeta.table).is_none()
                    || tmeta.table.order != ClassOrder::Index
                {
                    return Err(fmt_err(FormatError::Table));
                }
                Some((tmeta, (slots, rows)))
            }
        };
        // The optional JSON sections, checked and decoded.
        fn json<T: serde::de::DeserializeOwned>(
            map: &[u8],
            sections: &[Section],
            tag: [u8; 8],
            fmt_err: impl Fn(FormatError) -> ModelError,
        ) -> Result<Option<T>, ModelError> {
            let Some(c) = sections.iter().find(|s| s.tag == tag) else { return Ok(None) };
            if crc32fast::hash(&map[c.range()]) != c.crc {
                return Err(fmt_err(FormatError::Checksum { name: c.name() }));
            }
            serde_json::from_slice(&map[c.range()]).map(Some).map_err(|e| fmt_err(FormatError::Metadata(e.to_string())))
        }
        let confidence = json(&map, &sections, CONFMETA, fmt_err)?;
        let frequent_forms = json(&map, &sections, LANGMETA, fmt_err)?;
        let neural = match sections.iter().find(|s| s.tag == NEUMETA).copied() {
            None => None,
            Some(m) => {
                if crc32fast::hash(&map[m.range()]) != m.crc {
                    return Err(fmt_err(FormatError::Checksum { name: m.name() }));
                }
                let weights = find(NEURAL)?.range();
                let decoded = NeuralSections::decode(&map[m.range()], &map[weights.clone()])
                    .map_err(|e| fmt_err(FormatError::Neural(e.to_string())))?;
                if decoded.spec.classes != Transition::count(meta.labels.len()) {
                    return Err(fmt_err(FormatError::Neural(format!(
                        "{} transitions for {} labels",
                        decoded.spec.classes,
                        meta.labels.len()
                    ))));
                }
                Some((decoded, weights))
            }
        };
        let (slots, rows) = (slots_s.range(), rows_s.range());
        let model = ModelFile {
            map,
            path: path.to_path_buf(),
            sections,
            meta,
            encoding,
            slots,
            rows,
            tagger,
            feats,
            lemmatizer,
            tokenizer,
            confidence,
            frequent_forms,
            neural,
        };
        if TableView::new(&model.map[model.slots.clone()], &model.map[model.rows.clone()], model.meta.table).is_none()
            || model.meta.table.classes as usize != Transition::count(model.meta.labels.len())
            || model.meta.fallback.index() >= model.meta.labels.len()
        {
            return Err(fmt_err(FormatError::Table));
        }
        Ok(model)
    }

    /// The recipe the model was trained with, if it was written with one (and it reads).
    pub fn recipe(&self) -> Option<Recipe> {
        let s = self.sections.iter().find(|s| s.tag == RECIPE)?;
        serde_json::from_slice(&self.map[s.range()]).ok()
    }

    /// The whole pipeline's arc confidence, if the model has one (models trained before it, and
    /// retrained parsers, calibrate the parser's probability alone).
    pub fn confidence(&self) -> Option<&PipelineConfidence> {
        self.confidence.as_ref()
    }

    /// The training text's commonest forms, if the model keeps them (models trained before
    /// they were kept do not).
    pub fn frequent_forms(&self) -> Option<&FrequentForms> {
        self.frequent_forms.as_ref()
    }

    /// Checks every section's checksum: reads the whole file.
    pub fn verify(&self) -> Result<(), ModelError> {
        for s in &self.sections {
            if crc32fast::hash(&self.map[s.range()]) != s.crc {
                return Err(ModelError::Format {
                    path: self.path.clone(),
                    error: FormatError::Checksum { name: s.name() },
                });
            }
        }
        Ok(())
    }

    /// The neural parser's weights, for a model of `train --neural` (its parser table then
    /// holds only the inventory of forms and tags, never scored).
    pub fn neural(&self) -> Option<Net<'_>> {
        self.neural.as_ref().map(|(sections, range)| sections.net(&self.map[range.clone()]))
    }

    /// The bytes of the section tagged `tag`, if the file has one: for sections a higher layer
    /// gives meaning to.
    pub fn section(&self, tag: &[u8; 8]) -> Option<&[u8]> {
        self.sections.iter().find(|s| &s.tag == tag).map(|s| &self.map[s.range()])
    }

    /// The metadata.
    pub fn meta(&self) -> &Metadata {
        &self.meta
    }

    /// The transition system the model parses with.
    pub fn system(&self) -> System {
        self.encoding.system
    }

    /// How the model's transitions encode trees: its system and pseudo-projective scheme.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// A short identifier of the model's contents: a CRC-32 over every section's tag and
    /// checksum, in hex. Two files with the same identifier hold the same model.
    pub fn fingerprint(&self) -> String {
        let mut h = crc32fast::Hasher::new();
        for s in &self.sections {
            h.update(&s.tag);
            h.update(&s.crc.to_le_bytes());
        }
        format!("{:08x}", h.finalize())
    }

    /// The path the model was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The section table.
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> usize {
        self.map.len()
    }

    /// The tagger's metadata and the weights of its two passes, if the model has a tagger.
    pub fn tagger(&self) -> Option<(&TaggerMeta, TableView<'_>, TableView<'_>)> {
        let (meta, [(s1, r1), (s2, r2)]) = self.tagger.as_ref()?;
        // Checked in `open`.
        let first = TableView::new(&self.map[s1.clone()], &self.map[r1.clone()], meta.tables[0])?;
        let second = TableView::new(&self.map[s2.clone()], &self.map[r2.clone()], meta.tables[1])?;
        Some((meta, first, second))
    }

    /// The FEATS classifier's metadata and weights, if the model has one.
    pub fn feats(&self) -> Option<(&FeatsMeta, TableView<'_>)> {
        let (meta, (slots, rows)) = self.feats.as_ref()?;
        // Checked in `open`.
        let view = TableView::new(&self.map[slots.clone()], &self.map[rows.clone()], meta.table)?;
        Some((meta, view))
    }

    /// The lemmatizer's metadata and weights, if the model has one.
    pub fn lemmatizer(&self) -> Option<(&LemmatizerMeta, TableView<'_>)> {
        let (meta, (slots, rows)) = self.lemmatizer.as_ref()?;
        // Checked in `open`.
        let view = TableView::new(&self.map[slots.clone()], &self.map[rows.clone()], meta.table)?;
        Some((meta, view))
    }

    /// The analysis this model runs on tokenized text (its tagger, then FEATS and lemmas where
    /// it has them), if it has a tagger.
    pub fn analyzer(&self) -> Option<Analyzer<'_, TableView<'_>>> {
        let (meta, first, second) = self.tagger()?;
        Some(Analyzer {
            tagger: Tagger::new(first, second, &meta.tags, &meta.dict),
            feats: self.feats().map(|(m, weights)| FeatsTagger::new(weights, &m.inventory, &m.dict)),
            lemmatizer: self.lemmatizer().map(|(m, weights)| Lemmatizer::new(weights, &m.rules, &m.dict)),
        })
    }

    /// The tokenizer's metadata and weights, if the model has a tokenizer.
    pub fn tokenizer(&self) -> Option<(&TokenizerMeta, TableView<'_>)> {
        let (meta, (slots, rows)) = self.tokenizer.as_ref()?;
        // Checked in `open`.
        let view = TableView::new(&self.map[slots.clone()], &self.map[rows.clone()], meta.table)?;
        Some((meta, view))
    }

    /// The weights, read in place.
    pub fn weights(&self) -> TableView<'_> {
        // Checked in `open`.
        TableView::new(&self.map[self.slots.clone()], &self.map[self.rows.clone()], self.meta.table)
            .expect("table layout checked at open")
    }
}

impl Scorer for TableView<'_> {
    fn classes(&self) -> usize {
        self.layout().classes as usize
    }

    fn score(&self, features: &[u64], scores: &mut [f32]) {
        TableView::score(self, features, scores)
    }

    fn add(&self, features: &[u64], scores: &mut [f32]) {
        TableView::add(self, features, scores)
    }

    fn class_order(&self) -> ClassOrder {
        self.layout().order
    }
}

/// Checks a component's metadata section (the tagger's, the tokenizer's): its checksum, then
/// its feature set, which comes first so that a component of other features is told apart
/// before the rest (whose layout may differ) is read.
fn check_component(map: &[u8], meta: Section, expected: &'static str) -> Result<(), FormatError> {
    if crc32fast::hash(&map[meta.range()]) != meta.crc {
        return Err(FormatError::Checksum { name: meta.name() });
    }
    let found: String = bincode::deserialize(&map[meta.range()]).map_err(|e| FormatError::Metadata(e.to_string()))?;
    if found != expected {
        return Err(FormatError::FeatureSet { found, expected: expected.to_string() });
    }
    Ok(())
}

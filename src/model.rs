//! The trained model and its file.
//!
//! For now the file is a short fixed header (magic, format version) followed by the model in
//! serde + bincode; the compact memory-mapped layout comes later. Files are written to a
//! temporary name, fsync'd and renamed, so a reader never sees a half-written model. This
//! module owns persistence; it does not train or parse.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::features::FEATURE_SET;
use crate::label::{Label, LabelSet};
use crate::perceptron::Weights;

/// First bytes of every model file.
pub const MAGIC: &[u8; 8] = b"SPOOLPM\0";
/// Version of the file layout; bump on any incompatible change.
pub const FORMAT_VERSION: u32 = 1;

/// How a model was trained and how it scored: printed by `inspect`, kept for provenance.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TrainingInfo {
    /// `static` or `dynamic`.
    pub oracle: String,
    pub epochs: u32,
    /// The epoch whose averaged weights were kept (best dev LAS).
    pub best_epoch: u32,
    pub explore_k: u32,
    pub explore_p: f64,
    pub seed: u64,
    pub train_files: Vec<String>,
    pub train_sentences: usize,
    pub train_words: usize,
    /// Training sentences left out because their gold tree is not projective.
    pub skipped_nonprojective: usize,
    /// Training sentences left out because they do not have exactly one root word (or use the
    /// root label elsewhere).
    pub skipped_root: usize,
    pub dev_file: Option<String>,
    pub dev_uas: f64,
    pub dev_las: f64,
}

/// A trained parser model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Model {
    /// Template set the weights belong to ([`FEATURE_SET`]).
    pub feature_set: String,
    /// Label inventory; index 0 is the root label.
    pub labels: LabelSet,
    /// Label given to words the parser left without a head and that were repaired onto the root
    /// word (see `Configuration::finish`).
    pub fallback: Label,
    pub weights: Weights,
    pub info: TrainingInfo,
}

/// Why a model file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{}: not a spoolparse model (bad magic bytes)", path.display())]
    NotAModel { path: PathBuf },
    #[error("{}: model format version {found}, this build reads version {FORMAT_VERSION}", path.display())]
    Version { path: PathBuf, found: u32 },
    #[error("{}: corrupt or truncated model: {source}", path.display())]
    Corrupt {
        path: PathBuf,
        source: bincode::Error,
    },
    #[error("{}: trained with feature set {found:?}, this build extracts {FEATURE_SET:?}", path.display())]
    FeatureSet { path: PathBuf, found: String },
}

impl Model {
    /// Writes the model atomically: temporary file, fsync, rename, fsync of the directory.
    pub fn save(&self, path: &Path) -> Result<(), ModelError> {
        let io_err = |source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        };
        let tmp = temp_name(path);
        let result = (|| -> io::Result<()> {
            let file = File::create(&tmp)?;
            let mut w = BufWriter::new(file);
            w.write_all(MAGIC)?;
            w.write_all(&FORMAT_VERSION.to_le_bytes())?;
            bincode::serialize_into(&mut w, self).map_err(io::Error::other)?;
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            fs::rename(&tmp, path)?;
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            File::open(dir)?.sync_all()
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map_err(io_err)
    }

    /// Reads and checks a model file.
    pub fn load(path: &Path) -> Result<Model, ModelError> {
        let p = || path.to_path_buf();
        let mut bytes = Vec::new();
        File::open(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(|source| ModelError::Io { path: p(), source })?;
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(ModelError::NotAModel { path: p() });
        }
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != FORMAT_VERSION {
            return Err(ModelError::Version {
                path: p(),
                found: version,
            });
        }
        let mut model: Model = bincode::deserialize(&bytes[12..])
            .map_err(|source| ModelError::Corrupt { path: p(), source })?;
        if model.feature_set != FEATURE_SET {
            return Err(ModelError::FeatureSet {
                path: p(),
                found: model.feature_set,
            });
        }
        model.labels.rebuild_index();
        Ok(model)
    }
}

fn temp_name(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

//! The daemon's own model files, in `models/` (config `paths.models`): immutable copies named
//! by their content, the only model files the daemon ever maps.
//!
//! A mapped file that someone rewrites in place (`cp new.model current.model`) turns the
//! daemon's next read of a changed page into SIGBUS, with nothing in the log. So a configured
//! model is copied here first, at start and on every reload: streamed to a dot-name while its
//! SHA-256 is computed, fsync'd, checked in full (header, bounds, every section's CRC-32),
//! made read-only and renamed to `STEM-HASH.model`. A half-copied or corrupt source fails the
//! check and leaves nothing behind; the same model installed twice is one file. This module
//! owns that directory's contents; it must not decide when a model is served.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::io::sync_dir;
use crate::model_file::{ModelError, ModelFile};

/// Why a model could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: not a usable model: {error}", source_path.display())]
    Model { source_path: PathBuf, error: ModelError },
}

/// Hex digits of the SHA-256 kept in a copy's name: 64 bits, no collision among any number of
/// models one daemon will see.
const HASH_DIGITS: usize = 16;

/// Copies `source` into `dir` under its content's name unless it is there already, checks it in
/// full and opens the copy.
pub fn install(source: &Path, dir: &Path) -> Result<ModelFile, InstallError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |error| InstallError::Io { path, error }
    };
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    // Named like write_atomically's temporaries, so that the same sweep finds them after a crash.
    let tmp = dir.join(format!(".install.model.tmp{}", std::process::id()));
    let result = (|| {
        let hash = copy_hashing(source, &tmp).map_err(io_err(source))?;
        let stem = source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let stem: String =
            stem.chars().map(|c| if c.is_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
        let name = dir.join(format!("{stem}-{}.model", &hash[..HASH_DIGITS]));
        let checked = |path: &Path, named: &Path| {
            let error = |error| InstallError::Model { source_path: named.into(), error };
            let model = ModelFile::open(path).map_err(error)?;
            model.verify().map_err(error)?;
            Ok(model)
        };
        if name.exists() {
            // Installed before: checked again, as the disk may have changed it since.
            return checked(&name, &name);
        }
        // Checked before it gets its final name, so that a file there is always a whole model;
        // opened again after the rename only to carry that name (no second checksum pass).
        drop(checked(&tmp, source)?);
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o444)).map_err(io_err(&tmp))?;
        fs::rename(&tmp, &name).map_err(io_err(&name))?;
        sync_dir(dir).map_err(io_err(dir))?;
        ModelFile::open(&name).map_err(|error| InstallError::Model { source_path: name.clone(), error })
    })();
    let _ = fs::remove_file(&tmp);
    result
}

/// Streams `from` into a new file `to` (fsync'd), returning the SHA-256 of the bytes in hex.
fn copy_hashing(from: &Path, to: &Path) -> io::Result<String> {
    let mut input = File::open(from)?;
    let mut output = File::create(to)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        output.write_all(&buf[..n])?;
    }
    output.sync_all()?;
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_source_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("m.model");
        fs::write(&source, b"not a model at all").unwrap();
        let models = dir.path().join("models");
        let e = install(&source, &models).err().expect("refused").to_string();
        assert!(e.contains("m.model: not a usable model"), "{e}");
        assert_eq!(fs::read_dir(&models).unwrap().count(), 0, "a temporary copy was left");
        let e = install(&dir.path().join("absent.model"), &models).err().expect("refused").to_string();
        assert!(e.contains("absent.model"), "{e}");
    }
}

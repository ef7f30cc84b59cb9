//! Who may use the workbench. Without `[annotate] tokens_file` it listens on loopback only and
//! everyone is the one local annotator, `local`, an admin. With it, every request carries
//! `Authorization: Bearer TOKEN`; the file names the annotators and stores only the SHA-256 of
//! each token (make one with `printf %s "$TOKEN" | sha256sum`):
//!
//! ```toml
//! [[annotator]]
//! name = "ana"
//! sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//! admin = true
//! ```
//!
//! This module checks tokens; it does not decide what a route needs.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// An annotator known to the workbench.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotator {
    pub name: String,
    pub admin: bool,
}

/// Why the tokens file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokensError {
    #[error("{}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    #[error("{}: {message}", path.display())]
    Syntax { path: PathBuf, message: String },
    #[error("{}: {problem}", path.display())]
    Value { path: PathBuf, problem: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    annotator: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    sha256: String,
    #[serde(default)]
    admin: bool,
}

/// The annotators and their token hashes.
#[derive(Debug, Clone)]
pub struct Tokens {
    entries: Vec<([u8; 32], Annotator)>,
}

impl Tokens {
    /// Reads and checks a tokens file: at least one annotator, names that can go into a CoNLL-U
    /// comment, hashes of 64 hex digits, no hash twice.
    pub fn load(path: &Path) -> Result<Tokens, TokensError> {
        let text =
            std::fs::read_to_string(path).map_err(|error| TokensError::Read { path: path.to_path_buf(), error })?;
        let file: File = toml::from_str(&text)
            .map_err(|e| TokensError::Syntax { path: path.to_path_buf(), message: e.to_string().trim_end().into() })?;
        let value = |problem: String| TokensError::Value { path: path.to_path_buf(), problem };
        if file.annotator.is_empty() {
            return Err(value("no [[annotator]]".into()));
        }
        let mut entries: Vec<([u8; 32], Annotator)> = Vec::new();
        for e in file.annotator {
            if e.name.is_empty() || !e.name.chars().all(|c| c.is_alphanumeric() || "._-@".contains(c)) {
                return Err(value(format!("annotator name {:?}: letters, digits and . _ - @ only", e.name)));
            }
            let hash = parse_hex(&e.sha256)
                .ok_or_else(|| value(format!("{}: sha256 must be 64 hexadecimal digits", e.name)))?;
            if entries.iter().any(|(h, _)| *h == hash) {
                return Err(value(format!("{}: the same token as another annotator", e.name)));
            }
            entries.push((hash, Annotator { name: e.name, admin: e.admin }));
        }
        Ok(Tokens { entries })
    }

    /// The annotator whose token this is.
    pub fn check(&self, token: &str) -> Option<&Annotator> {
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Every entry is compared, and each comparison looks at every byte: no early exit that
        // a timing could tell.
        let mut found = None;
        for (h, a) in &self.entries {
            let diff = h.iter().zip(hash.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y));
            if diff == 0 {
                found = Some(a);
            }
        }
        found
    }
}

fn parse_hex(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_annotator_and_a_wrong_one_nobody() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        let hash = |t: &str| Sha256::digest(t.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>();
        std::fs::write(
            &path,
            format!(
                "[[annotator]]\nname = \"ana\"\nsha256 = \"{}\"\nadmin = true\n\n[[annotator]]\nname = \"bo\"\nsha256 = \"{}\"\n",
                hash("secret-a"),
                hash("secret-b")
            ),
        )
        .unwrap();
        let tokens = Tokens::load(&path).unwrap();
        assert_eq!(tokens.check("secret-a"), Some(&Annotator { name: "ana".into(), admin: true }));
        assert_eq!(tokens.check("secret-b"), Some(&Annotator { name: "bo".into(), admin: false }));
        assert_eq!(tokens.check("secret-c"), None);
        std::fs::write(&path, "[[annotator]]\nname = \"a b\"\nsha256 = \"00\"\n").unwrap();
        assert!(Tokens::load(&path).unwrap_err().to_string().contains("letters, digits"));
    }
}

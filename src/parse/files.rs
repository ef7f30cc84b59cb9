//! Parsing files into files, as `spoolparse parse` does and the Python package's
//! `Model.parse_file` too: opening the model (checksums verified), creating the accepted and
//! rejected outputs, running the [`pipeline`](crate::parse::pipeline) and completing the outputs.
//! This module owns where the outputs are written and how they get their names; parsing and
//! ordering are the pipeline's, and it keeps no state between calls.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::base::io::{self as base_io, Output, STDIO};
use crate::model::file::{ModelError, ModelFile};
use crate::parse::pipeline::{parse_inputs_split, Input, Outputs, ParseStats, PipelineError, PipelineOptions};

/// Opens the model file at `path`; with `verify`, checks every checksum first, as `parse` does
/// by default (a corrupt model parses without complaint, only wrongly; this takes a few ms).
pub fn open_model(path: &Path, verify: bool) -> Result<ModelFile, ModelError> {
    let model = ModelFile::open(path)?;
    if verify {
        model.verify()?;
    }
    Ok(model)
}

/// How the outputs get their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publish {
    /// Each output is created (an existing file truncated) and written in place: stdout (`-`),
    /// a device or a pipe can be outputs. What the command line does.
    InPlace,
    /// Each output is written under a temporary name beside it, made durable (fsync), and only
    /// then given its name, both outputs once both are complete: a reader never sees a part of
    /// one, and a failed run leaves nothing. Unless `replace`, an existing output is an error,
    /// both before parsing starts and when the names are given (it is never overwritten).
    Atomic { replace: bool },
}

/// Why [`parse_to_files`] failed. Nothing is left under an output's name but by
/// [`Publish::InPlace`].
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    /// An output could not be created.
    #[error("creating {}: {error}", path.display())]
    Create { path: PathBuf, error: io::Error },
    /// An output exists, and [`Publish::Atomic`] does not replace it.
    #[error("{} exists, and is never overwritten", path.display())]
    Exists { path: PathBuf },
    /// Reading, parsing or writing failed (bad input: `FILE:LINE: problem`).
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// Completing an output (the end of a zstd stream, flushing, fsync) failed.
    #[error("writing {}: {error}", path.display())]
    Write { path: PathBuf, error: io::Error },
    /// Giving a complete output its name failed.
    #[error("renaming {} to {}: {error}", from.display(), path.display())]
    Publish { from: PathBuf, path: PathBuf, error: io::Error },
    /// An input cannot be opened, or is a directory (checked before any output is created).
    #[error("{}: cannot open: {error}", path.display())]
    Input { path: PathBuf, error: io::Error },
    /// An output names the same file as an input, or as the other output: writing it would
    /// destroy what is still to be read (or interleave the two outputs).
    #[error("{}: an output cannot be the same file as {what}", path.display())]
    SameFile { path: PathBuf, what: String },
    /// Outputs are files here, and `-` is not one.
    #[error("{STDIO} (stdout) cannot be an output that is written atomically")]
    Stdout,
    /// The confidence threshold is not a probability: every sentence would go to one output.
    #[error("the minimum confidence must be within 0..1 (got {0})")]
    Threshold(f64),
    /// An output to be replaced atomically is a directory, a device or a pipe: renaming a file
    /// over it would replace the node itself (or fail after the other output was published).
    #[error("{}: not a regular file, and an output written atomically replaces one", path.display())]
    NotAFile { path: PathBuf },
}

/// `path`, or the file it is a link to (through any chain of links); `path` itself if that
/// cannot be resolved (a dangling link).
fn through_link(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

/// An output being written: its stream, and for [`Publish::Atomic`] its temporary name.
struct Pending {
    path: PathBuf,
    out: Output,
    tmp: Option<PathBuf>,
}

impl Pending {
    fn create(path: &Path, publish: Publish) -> Result<Pending, FilesError> {
        let create = |error| FilesError::Create { path: path.to_path_buf(), error };
        match publish {
            Publish::InPlace => {
                Ok(Pending { path: path.to_path_buf(), out: Output::create(path).map_err(create)?, tmp: None })
            }
            Publish::Atomic { replace } => {
                if path.as_os_str() == STDIO {
                    return Err(FilesError::Stdout);
                }
                if !replace && std::fs::symlink_metadata(path).is_ok() {
                    return Err(FilesError::Exists { path: path.to_path_buf() });
                }
                // Through a link to a file, the file is the output: renamed over, the link would
                // be replaced and the file left as it was.
                let target = through_link(path);
                let (out, tmp) = Output::create_temporary(&target).map_err(create)?;
                Ok(Pending { path: target, out, tmp: Some(tmp) })
            }
        }
    }

    /// Completes the stream; returns the temporary name to publish, if any.
    fn finish(self) -> Result<Option<(PathBuf, PathBuf)>, FilesError> {
        let write = |error| FilesError::Write { path: self.path.clone(), error };
        match self.tmp {
            None => {
                self.out.finish().map_err(write)?;
                Ok(None)
            }
            Some(tmp) => {
                let path = self.path.clone();
                match self.out.finish_durably() {
                    Ok(()) => Ok(Some((tmp, path))),
                    Err(error) => {
                        let _ = std::fs::remove_file(&tmp);
                        Err(FilesError::Write { path, error })
                    }
                }
            }
        }
    }

    /// Removes the temporary file of an output given up.
    fn abandon(self) {
        if let Some(tmp) = self.tmp {
            drop(self.out);
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Parses `inputs` (files or shards, in order) with `model` into `accepted`, or, with
/// `rejected` and `opts.min_confidence`, the sentences below it into `rejected`: each sentence
/// exactly once, in input order. The outputs are compressed if their names end in `.zst`, and
/// get their names as `publish` says. Stops at the first bad input, or at the next sentence
/// once `cancel` is set (from another thread; [`PipelineError::Cancelled`]).
pub fn parse_to_files(
    model: &Arc<ModelFile>,
    inputs: &[Input],
    accepted: &Path,
    rejected: Option<&Path>,
    opts: PipelineOptions,
    publish: Publish,
    cancel: Option<&AtomicBool>,
) -> Result<ParseStats, FilesError> {
    // Before anything is created, as creating an output truncates it: the threshold is a
    // probability, every input can be read, and no output is an input or the other output.
    if let Some(t) = opts.min_confidence.filter(|t| !(0.0..=1.0).contains(t)) {
        return Err(FilesError::Threshold(t));
    }
    for input in inputs.iter().filter(|i| i.path.as_os_str() != STDIO) {
        let unreadable = |error| FilesError::Input { path: input.path.clone(), error };
        let meta = std::fs::metadata(&input.path).map_err(unreadable)?;
        if meta.is_dir() {
            // Said with what to do instead: a directory is not read file by file.
            let glob = input.path.join("*.conllu");
            let why = format!("is a directory; name the files in it instead (say {})", glob.display());
            return Err(unreadable(io::Error::new(io::ErrorKind::IsADirectory, why)));
        }
        // A plain file is opened to check permissions; a pipe is not (a writer would see its
        // reader leave before the pipeline opens it again).
        if meta.is_file() {
            std::fs::File::open(&input.path).map_err(unreadable)?;
        }
    }
    for out in std::iter::once(accepted).chain(rejected) {
        if let Some(input) = inputs.iter().find(|i| base_io::same_file(out, &i.path)) {
            let what = format!("the input {}", input.path.display());
            return Err(FilesError::SameFile { path: out.to_path_buf(), what });
        }
    }
    if let Some(r) = rejected {
        // Both on stdout would interleave the two, losing the split.
        let what = if r.as_os_str() == STDIO && accepted.as_os_str() == STDIO {
            Some("the output: both are stdout".to_string())
        } else {
            base_io::same_file(accepted, r).then(|| format!("the output {}", accepted.display()))
        };
        if let Some(what) = what {
            return Err(FilesError::SameFile { path: r.to_path_buf(), what });
        }
    }
    if let Publish::Atomic { replace } = publish {
        // Before any parsing: a run that cannot publish is not worth starting.
        for path in std::iter::once(accepted).chain(rejected) {
            match std::fs::symlink_metadata(path) {
                Ok(_) if !replace => return Err(FilesError::Exists { path: path.to_path_buf() }),
                Ok(meta) if !meta.is_file() && !meta.is_symlink() => {
                    return Err(FilesError::NotAFile { path: path.to_path_buf() })
                }
                _ => {}
            }
        }
    }
    let mut acc = Pending::create(accepted, publish)?;
    let mut rej = match rejected.map(|p| Pending::create(p, publish)).transpose() {
        Ok(r) => r,
        Err(e) => {
            acc.abandon();
            return Err(e);
        }
    };
    let outputs = Outputs {
        accepted: &mut acc.out,
        rejected: rej.as_mut().map(|r| &mut r.out as &mut (dyn Write + Send)),
        cancel,
        confidences: None,
    };
    // A cancel that came after the last sentence still publishes nothing.
    let cancelled = || cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed));
    let parsed = parse_inputs_split(model, inputs, outputs, opts).and_then(|stats| {
        if cancelled() {
            Err(PipelineError::Cancelled)
        } else {
            Ok(stats)
        }
    });
    let stats = match parsed {
        Ok(stats) => stats,
        Err(e) => {
            acc.abandon();
            if let Some(r) = rej {
                r.abandon();
            }
            return Err(e.into());
        }
    };
    let acc_tmp = match acc.finish() {
        Ok(t) => t,
        Err(e) => {
            if let Some(r) = rej {
                r.abandon();
            }
            return Err(e);
        }
    };
    let rej_tmp = match rej.map(Pending::finish).transpose() {
        Ok(t) => t.flatten(),
        Err(e) => {
            if let Some((tmp, _)) = &acc_tmp {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(e);
        }
    };
    publish_all(acc_tmp.into_iter().chain(rej_tmp).collect(), publish)?;
    Ok(stats)
}

/// Gives each complete temporary file its name; if one cannot be, the names given so far are
/// taken back (the files are this run's), and every temporary removed.
fn publish_all(files: Vec<(PathBuf, PathBuf)>, publish: Publish) -> Result<(), FilesError> {
    let replace = matches!(publish, Publish::Atomic { replace: true });
    for (i, (tmp, path)) in files.iter().enumerate() {
        if let Err(error) = base_io::publish(tmp, path, replace) {
            if !replace {
                for (_, done) in &files[..i] {
                    let _ = std::fs::remove_file(done);
                }
            }
            for (tmp, _) in &files[i..] {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(match error.kind() {
                io::ErrorKind::AlreadyExists => FilesError::Exists { path: path.clone() },
                _ => FilesError::Publish { from: tmp.clone(), path: path.clone(), error },
            });
        }
    }
    Ok(())
}

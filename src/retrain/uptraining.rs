//! `retrain.teacher`: uptraining in a cycle (Petrov et al. 2010). The teacher, an accurate
//! model, parses `retrain.unlabeled` (the user's own text: by default the daemon's published
//! output, [`Settings::default_unlabeled`]), and its confident parses
//! ([`crate::train::teacher`]) are trained on by the fast candidate beside the base treebank
//! and the annotations. This module owns which unlabeled files are read and which teacher
//! parses are left out: a sentence a person annotated (the correction wins) and one of the
//! gate's (held out, never trained on). Training and gating are the parent's.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{io_err, reference, store, Report, RetrainError, Settings};
use crate::corpus::{Format, Sentence};
use crate::parse::files::open_model;
use crate::train::teacher::{teacher_parses, TeacherOptions};

/// The files of `retrain.unlabeled`, newest first (by modification time, then path): each
/// file as given, and of each folder the visible files whose name says a format (`.raw`,
/// `.txt`, `.conllu`, `.conllx`, `.conll`, each optionally `.zst`). Under
/// `retrain.unlabeled_max_words` the user's most recent text is the sample.
fn unlabeled_files(unlabeled: &[PathBuf]) -> Result<Vec<PathBuf>, RetrainError> {
    Ok(dated_unlabeled_files(unlabeled)?.into_iter().map(|(_, file)| file).collect())
}

/// [`unlabeled_files`] with the time each was last modified.
fn dated_unlabeled_files(unlabeled: &[PathBuf]) -> Result<Vec<(SystemTime, PathBuf)>, RetrainError> {
    let mut files = Vec::new();
    for path in unlabeled {
        if !path.exists() {
            return Err(RetrainError::Settings(format!(
                "retrain.unlabeled: {} does not exist (without `unlabeled`, the daemon's accepted/ and lowconf/, \
                 which it makes when it starts)",
                path.display()
            )));
        }
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let names = crate::base::io::visible_files(path).map_err(io_err(path))?;
        files.extend(names.iter().map(|n| path.join(n)).filter(|p| Format::from_extension(p).is_some()));
    }
    let mut dated = Vec::new();
    for file in files {
        let modified = std::fs::metadata(&file).and_then(|m| m.modified()).map_err(io_err(&file))?;
        dated.push((std::cmp::Reverse(modified), file));
    }
    dated.sort();
    Ok(dated.into_iter().map(|(std::cmp::Reverse(modified), file)| (modified, file)).collect())
}

/// Words of `retrain.unlabeled` in the files modified in a second after `since` (Unix seconds;
/// every file when `None`: a file of the cycle's own second is not new, so that one published
/// just before it is not counted again), counted up to `retrain.unlabeled_min_new_words` and no further, so that a
/// large spool costs a look at its newest files only; `None` when new text is not what makes a
/// cycle run (no teacher, or the setting 0). Words are the whitespace-separated tokens of raw
/// and tokenized text and the word lines of CoNLL-U and CoNLL-X, as the file's name says.
pub(super) fn new_text_words(settings: &Settings, since: Option<u64>) -> Result<Option<usize>, RetrainError> {
    let enough = settings.unlabeled_min_new_words;
    if settings.teacher.is_none() || enough == 0 {
        return Ok(None);
    }
    let mut words = 0;
    for (modified, file) in dated_unlabeled_files(&settings.unlabeled)? {
        let second = modified.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if since.is_some_and(|since| second <= since) || words >= enough {
            break;
        }
        words += count_words(&file, enough - words).map_err(io_err(&file))?;
    }
    Ok(Some(words.min(enough)))
}

/// Words of `file`, read until `enough` are counted.
fn count_words(file: &Path, enough: usize) -> std::io::Result<usize> {
    let tabular = !matches!(Format::from_path(file), Format::Raw | Format::Text);
    let mut input = crate::base::io::open_input(file)?;
    let (mut words, mut line) = (0, Vec::new());
    while words < enough && input.read_until(b'\n', &mut line)? > 0 {
        words += if tabular {
            // A word's ID is an integer: ranges (multiword tokens) and decimals (empty nodes) are not.
            let id = line.split(|&b| b == b'\t').next().unwrap_or_default();
            usize::from(line.contains(&b'\t') && !id.is_empty() && id.iter().all(u8::is_ascii_digit))
        } else {
            line.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty()).count()
        };
        line.clear();
    }
    Ok(words)
}

/// The teacher's kept parses of `retrain.unlabeled`, with their files, and none whose words are
/// a sentence of an annotation (`contents`) or of the held-out file `heldout`; the report's
/// counts are filled in. Empty without `retrain.teacher`.
pub(super) fn teacher_sentences(
    settings: &Settings,
    contents: &store::Contents,
    heldout: &Path,
    report: &mut Report,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<(Sentence, PathBuf)>, RetrainError> {
    let Some(teacher_path) = &settings.teacher else { return Ok(Vec::new()) };
    let teacher = Arc::new(open_model(teacher_path, true)?);
    let files = unlabeled_files(&settings.unlabeled)?;
    progress(&format!("the teacher {} parses {} unlabeled files", teacher_path.display(), files.len()));
    let opts = TeacherOptions {
        min_confidence: settings.teacher_min_confidence,
        threads: crate::base::available_cpus(),
        raw_sentences: settings.unlabeled_sentences,
        max_words: (settings.unlabeled_max_words > 0).then_some(settings.unlabeled_max_words),
    };
    let started = std::time::Instant::now();
    let parses = teacher_parses(&teacher, &files, opts)?;
    let seconds = started.elapsed().as_secs_f64();
    let mut known = super::training_data::forms_of_file(heldout)?;
    known.extend(contents.annotations.iter().map(|a| reference::forms_hash(&a.sentence)));
    report.teacher_parsed = parses.parsed;
    let described = parses.describe(settings.teacher_min_confidence);
    let kept: Vec<_> =
        parses.sentences.into_iter().filter(|(s, _)| !known.contains(&reference::forms_hash(s))).collect();
    report.teacher_sentences = kept.len();
    progress(&format!(
        "teacher: kept {described}; {} of them trained on, the others annotated or held out; parsed in {seconds:.1}s",
        kept.len()
    ));
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_are_those_given_and_a_folder_s_of_known_formats_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let day = std::time::Duration::from_secs(86_400);
        let now = std::time::SystemTime::now();
        for (name, days_old) in [("b.raw", 1), ("a.conllu.zst", 2), (".c.txt", 0), ("notes.md", 0), ("d.txt", 1)] {
            let file = std::fs::File::create(dir.path().join(name)).unwrap();
            file.set_modified(now - day * days_old).unwrap();
        }
        let single = dir.path().join("notes.md");
        let files = unlabeled_files(&[dir.path().to_path_buf(), single.clone()]).unwrap();
        let names: Vec<_> = files.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
        // Of the same age, by name; a file named on its own is read whatever its name (as CoNLL-U).
        assert_eq!(names, ["notes.md", "b.raw", "d.txt", "a.conllu.zst"]);
    }
}

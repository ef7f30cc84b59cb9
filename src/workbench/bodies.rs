//! The JSON bodies the workbench's API takes, and the tags and lemmas an answer fixes, checked
//! once here into what the routes trust: a UD UPOS, an XPOS only with it, a lemma a CoNLL-U
//! column can hold, one value per word. This module knows requests and sentences, not tasks or
//! files.

use serde::Deserialize;

use super::answers::TagFix;
use super::http::Response;
use crate::corpus::{Column, Sentence, Upos, UPOS_TAGS};
use crate::model::file::ModelFile;

/// An arc as the API takes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ArcIn {
    pub id: u32,
    /// `None` (or absent): the arc is not answered (the word may still carry a tag).
    #[serde(default)]
    pub head: Option<u32>,
    #[serde(default)]
    pub deprel: Option<String>,
    /// The word's UPOS as the annotator fixed or confirmed it.
    #[serde(default)]
    pub upos: Option<String>,
    /// Its XPOS, given with `upos` only.
    #[serde(default)]
    pub xpos: Option<String>,
    /// The word's LEMMA as the annotator fixed or confirmed it.
    #[serde(default)]
    pub lemma: Option<String>,
}

/// The body of `/api/reparse` and `/api/answer`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ArcsIn {
    pub task: String,
    #[serde(default)]
    pub arcs: Vec<ArcIn>,
    #[serde(default)]
    pub whole: bool,
}

/// The body of `/api/skip`, `/api/bad` and `/api/resume`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskIn {
    pub task: String,
    #[serde(default)]
    pub reason: Option<String>,
}

/// A refused request: the response to send.
pub(super) type Refusal = Response;

/// A 422: the request is well-formed but asks for what cannot be.
pub(super) fn unprocessable(message: impl Into<String>) -> Refusal {
    Response::error(422, message)
}

/// The tags a request fixes or confirms, per word (index 0 unused), checked: a UD UPOS, an
/// XPOS only with it, once per word of the sentence.
pub(super) fn tag_fixes(sent: &Sentence, arcs: &[ArcIn]) -> Result<Vec<Option<TagFix>>, Refusal> {
    let n = sent.len();
    let mut fixes: Vec<Option<TagFix>> = vec![None; n + 1];
    for a in arcs {
        let xpos = a.xpos.as_deref().map(str::trim).filter(|x| !x.is_empty() && *x != "_");
        let Some(name) = a.upos.as_deref() else {
            if xpos.is_some() {
                return Err(unprocessable(format!("word {}: an XPOS goes with its UPOS: give \"upos\" too", a.id)));
            }
            continue;
        };
        if a.id == 0 || a.id as usize > n {
            return Err(unprocessable(format!("word {}: no such word (the sentence has {n})", a.id)));
        }
        let upos = Upos::parse(name).ok_or_else(|| {
            unprocessable(format!("word {}: {name:?} is not a UD UPOS tag (one of {})", a.id, UPOS_TAGS.join(" ")))
        })?;
        if let Some(x) = xpos {
            if x.contains(char::is_whitespace) || crate::corpus::check_value(x).is_err() {
                return Err(unprocessable(format!("word {}: {x:?} cannot be an XPOS (no spaces or tabs)", a.id)));
            }
        }
        let fix = TagFix { upos, xpos: xpos.map(str::to_string) };
        match &fixes[a.id as usize] {
            Some(other) if *other != fix => {
                return Err(unprocessable(format!("word {}: two different tags given", a.id)));
            }
            _ => fixes[a.id as usize] = Some(fix),
        }
    }
    Ok(fixes)
}

/// The lemmas a request fixes or confirms, per word (index 0 unused), checked: a lemma
/// ([`crate::corpus::check_lemma`]: no control or separator characters, not too long), not
/// `_`, once per word of the sentence.
pub(super) fn lemma_fixes(sent: &Sentence, arcs: &[ArcIn]) -> Result<Vec<Option<String>>, Refusal> {
    let n = sent.len();
    let mut fixes: Vec<Option<String>> = vec![None; n + 1];
    for a in arcs {
        let Some(lemma) = a.lemma.as_deref() else { continue };
        if a.id == 0 || a.id as usize > n {
            return Err(unprocessable(format!("word {}: no such word (the sentence has {n})", a.id)));
        }
        let lemma = lemma.trim();
        if lemma.is_empty() || lemma == "_" {
            return Err(unprocessable(format!("word {}: cannot be a lemma: empty or _", a.id)));
        }
        if let Err(why) = crate::corpus::check_lemma(lemma, sent.word(a.id as usize).get(Column::Form)) {
            return Err(unprocessable(format!("word {}: cannot be a lemma: it {why}", a.id)));
        }
        match &fixes[a.id as usize] {
            Some(other) if other != lemma => {
                return Err(unprocessable(format!("word {}: two different lemmas given", a.id)));
            }
            _ => fixes[a.id as usize] = Some(lemma.to_string()),
        }
    }
    Ok(fixes)
}

/// `sent` with the tags of `fixes` (see [`TagFix::applied`]; `model`'s tagger gives the XPOS of
/// a changed UPOS) and the lemmas of `lemmas`.
pub(super) fn with_fixes(
    sent: &Sentence,
    fixes: &[Option<TagFix>],
    lemmas: &[Option<String>],
    model: &ModelFile,
) -> Sentence {
    let mut out = sent.clone();
    let tags = model.tagger().map(|(meta, _, _)| &meta.tags);
    for (w, fix) in fixes.iter().enumerate().skip(1) {
        if let Some(fix) = fix {
            let word = sent.word(w);
            let (upos, xpos) = fix.applied(word.get(Column::Upos), word.get(Column::Xpos), tags);
            out.set_tags(w, &upos, &xpos);
        }
    }
    for (w, lemma) in lemmas.iter().enumerate().skip(1) {
        if let Some(lemma) = lemma {
            out.set_column(w, Column::Lemma, lemma);
        }
    }
    out
}

/// The body as `T`, or a 400 saying what is malformed.
pub(super) fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Refusal> {
    serde_json::from_slice(body).map_err(|e| Response::error(400, format!("malformed JSON: {e}")))
}

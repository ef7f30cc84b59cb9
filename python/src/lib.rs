//! The extension module `spoolparse._spoolparse` of the Python package: Python types over the
//! `spoolparse` library. It converts arguments and results and maps errors to Python
//! exceptions; it must not parse, read or write anything itself: every step is the library's
//! (the same functions as `spoolparse parse`), so that Python and the command line give the
//! same bytes. Parsing runs with the GIL released.

use std::collections::HashMap;
use std::io::Cursor;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;

use pyo3::create_exception;
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyIsADirectoryError, PyOSError, PyPermissionError, PyRuntimeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};

use spoolparse::corpus::shard::shard_ranges as library_shard_ranges;
use spoolparse::corpus::{check_value, parse_head, Column, CorpusError, Format, Limits, Sentence};
use spoolparse::model::analysis::Analyze;
use spoolparse::model::file::{ModelError as LibraryModelError, ModelFile};
use spoolparse::parse::annotate::{Annotator, NoTagger, Steps};
use spoolparse::parse::files::{self, FilesError, Publish};
use spoolparse::parse::fit::Retag;
use spoolparse::parse::pipeline::{self, Input, Outputs, PipelineError, PipelineOptions};
use spoolparse::parse::precision::Threshold;
use spoolparse::parse::raw::{read_document, RawSentences, SentencePart};

create_exception!(
    spoolparse,
    InputError,
    PyValueError,
    "Bad input. ``str(e)`` is ``FILE:LINE: problem`` (``FILE: problem`` for a file as a whole); \
     the attributes ``path`` (str) and ``line`` (int, 0 for the whole file) say where."
);
create_exception!(
    spoolparse,
    ModelError,
    PyValueError,
    "A file that is not a usable spoolparse model (wrong format version, bad checksum, truncated)."
);

/// The Python exception for an I/O error, of the `OSError` subclass its kind calls for, with
/// `message` (which names the file).
fn os_error(kind: std::io::ErrorKind, message: String) -> PyErr {
    match kind {
        std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
        std::io::ErrorKind::AlreadyExists => PyFileExistsError::new_err(message),
        std::io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// `InputError` for bad input, with its `path` and `line` attributes.
fn input_error(py: Python<'_>, e: &CorpusError) -> PyErr {
    let err = InputError::new_err(e.to_string());
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail in practice; if it did, the
    // message still carries FILE:LINE.
    let _ = value.setattr("path", e.path.display().to_string());
    let _ = value.setattr("line", e.line);
    err
}

fn model_error(e: LibraryModelError) -> PyErr {
    match &e {
        LibraryModelError::Io { error, .. } => os_error(error.kind(), e.to_string()),
        LibraryModelError::Format { .. } => ModelError::new_err(e.to_string()),
    }
}

fn pipeline_error(py: Python<'_>, e: PipelineError) -> PyErr {
    match &e {
        PipelineError::Corpus(c) => input_error(py, c),
        PipelineError::Write(io) => os_error(io.kind(), e.to_string()),
        PipelineError::Pool(_) => PyRuntimeError::new_err(e.to_string()),
        PipelineError::NoTagger(_) | PipelineError::NoTokenizer(_) => PyValueError::new_err(e.to_string()),
        PipelineError::Cancelled => pyo3::exceptions::PyKeyboardInterrupt::new_err(e.to_string()),
    }
}

fn files_error(py: Python<'_>, e: FilesError) -> PyErr {
    match e {
        FilesError::Pipeline(p) => pipeline_error(py, p),
        FilesError::Exists { .. } => PyFileExistsError::new_err(e.to_string()),
        FilesError::Create { ref error, .. }
        | FilesError::Input { ref error, .. }
        | FilesError::Write { ref error, .. }
        | FilesError::Publish { ref error, .. } => os_error(error.kind(), e.to_string()),
        FilesError::Stdout | FilesError::SameFile { .. } | FilesError::Threshold(_) | FilesError::NotAFile { .. } => {
            PyValueError::new_err(e.to_string())
        }
    }
}

/// The format named `name` (`"conllu"`, `"conllx"`, `"text"` or `"raw"`).
fn format_named(name: &str) -> PyResult<Format> {
    match name {
        "conllu" => Ok(Format::Conllu),
        "conllx" => Ok(Format::Conllx),
        "text" => Ok(Format::Text),
        "raw" => Ok(Format::Raw),
        _ => Err(PyValueError::new_err(format!("unknown format {name:?}: conllu, conllx, text or raw"))),
    }
}

/// The raw-text sentence mode named `name` (`"model"` or `"lines"`).
fn raw_sentences_named(name: &str) -> PyResult<RawSentences> {
    match name {
        "model" => Ok(RawSentences::Model),
        "lines" => Ok(RawSentences::Lines),
        _ => Err(PyValueError::new_err(format!("sentences must be \"model\" or \"lines\", not {name:?}"))),
    }
}

/// A spoolparse model file, memory-mapped: opening costs about 0.1 ms whatever its size, and
/// one ``Model`` may be used by any number of threads at once (parsing releases the GIL).
///
/// ``Model(path, verify=True)`` checks every checksum of the file first, as
/// ``spoolparse parse`` does (a few ms; a corrupt model would parse wrongly without
/// complaint). ``fingerprint``, if given, is the model the file must hold (``ModelError``
/// naming the file otherwise). The path is made absolute when the model is opened (``path``).
///
/// A ``Model`` pickles as its absolute path and fingerprint: unpickling opens the file again
/// (for example in a Spark executor, whatever its working directory), which must be there and
/// still hold the same model: a file replaced by another model raises ``ModelError``.
///
/// Raises ``FileNotFoundError`` (or another ``OSError``) if the file cannot be read, and
/// ``spoolparse.ModelError`` if it is not a model this version can use.
#[pyclass(module = "spoolparse", frozen)]
struct Model {
    model: Arc<ModelFile>,
    path: PathBuf,
    verify: bool,
}

/// One parsed sentence, as returned by ``Model.parse``.
///
/// Lists are indexed by word (the first word at index 0). ``heads[i]`` is the 1-based position
/// of word ``i``'s head, 0 for the root word. ``confidence[i]`` is the calibrated probability
/// of the transition that attached word ``i``; ``sentence_confidence`` their mean (what
/// ``--min-confidence`` compares with), ``tree_prob`` the probability of the whole transition
/// sequence. ``upos`` and ``xpos`` are the tags the model's tagger predicted, or ``None`` when
/// the sentence was parsed with the tags it was given. ``lemmas`` and ``feats`` (FEATS strings,
/// ``_`` for none) are the model's predictions, or ``None`` when the model predicts no lemmas
/// (FEATS), as models trained before it did not.
#[pyclass(module = "spoolparse", frozen, get_all)]
struct Parse {
    words: Vec<String>,
    heads: Vec<usize>,
    labels: Vec<String>,
    confidence: Vec<f32>,
    sentence_confidence: f64,
    tree_prob: f64,
    upos: Option<Vec<String>>,
    xpos: Option<Vec<String>>,
    lemmas: Option<Vec<String>>,
    feats: Option<Vec<String>>,
}

#[pymethods]
impl Parse {
    fn __len__(&self) -> usize {
        self.words.len()
    }

    fn __repr__(&self) -> String {
        let arcs: Vec<String> =
            (0..self.words.len()).map(|i| format!("{}<-{}:{}", self.words[i], self.heads[i], self.labels[i])).collect();
        format!("Parse([{}], sentence_confidence={:.3})", arcs.join(", "), self.sentence_confidence)
    }
}

/// Checks the tags of one sentence: as many as words, each a valid column value.
fn check_tags(tags: &[String], words: usize, which: &str, sentence: usize) -> PyResult<()> {
    if tags.len() != words {
        return Err(PyValueError::new_err(format!(
            "sentence {}: {} {which} tags for {} tokens",
            sentence + 1,
            tags.len(),
            words
        )));
    }
    for (i, t) in tags.iter().enumerate() {
        check_value(t).map_err(|problem| {
            PyValueError::new_err(format!("sentence {}: {which} tag {}: {problem}", sentence + 1, i + 1))
        })?;
    }
    Ok(())
}

/// Parses sentences built from tokens (and tags, where given); what `Model.parse` returns.
fn parse_sentences(model: &ModelFile, mut sentences: Vec<Sentence>, tag: bool) -> Result<Vec<Parse>, String> {
    let mut annotator = Annotator::new(model, true);
    // Given tags are kept; FEATS and LEMMA are predicted where the model predicts them.
    let analyze = if tag { Analyze::ALL } else { Analyze { feats: true, lemmas: true, ..Analyze::NONE } };
    let steps = Steps { analyze, write_confidence: false, mark_below: None, mark_deps: false };
    let (has_lemmas, has_feats) = (model.lemmatizer().is_some(), model.feats().is_some());
    let mut parses = Vec::with_capacity(sentences.len());
    for sent in &mut sentences {
        annotator.annotate(sent, steps).map_err(|e| e.to_string())?;
        let n = sent.len();
        let column = |c: Column| (1..=n).map(|w| sent.word(w).get(c).to_string()).collect::<Vec<_>>();
        let heads = (1..=n)
            .map(|w| match parse_head(sent.word(w).get(Column::Head), n) {
                Ok(Some(h)) => Ok(h),
                _ => Err(format!("internal error: the parser left word {w} without a head")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (mean, tree) = annotator.confidence();
        parses.push(Parse {
            words: column(Column::Form),
            heads,
            labels: column(Column::Deprel),
            confidence: annotator.arc_confidence().get(1..).unwrap_or_default().to_vec(),
            sentence_confidence: mean,
            tree_prob: tree,
            upos: tag.then(|| column(Column::Upos)),
            xpos: tag.then(|| column(Column::Xpos)),
            lemmas: has_lemmas.then(|| column(Column::Lemma)),
            feats: has_feats.then(|| column(Column::Feats)),
        });
    }
    Ok(parses)
}

/// Why parsing text held in memory gave no output: the pipeline's error, or output that is not
/// what the library writes (a bug).
enum InMemoryError {
    Pipeline(PipelineError),
    Internal(String),
}

impl InMemoryError {
    fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            InMemoryError::Pipeline(e) => pipeline_error(py, e),
            InMemoryError::Internal(e) => PyRuntimeError::new_err(format!("internal error: {e}")),
        }
    }
}

/// Parses `input`, text held in memory, as one input named `name`, returning what `spoolparse
/// parse` writes for it (and each sentence's unrounded confidence into `confidences`). Call
/// it with the GIL released.
fn parse_in_memory(
    model: &Arc<ModelFile>,
    input: Box<dyn std::io::BufRead + Send>,
    name: &std::path::Path,
    format: Format,
    opts: PipelineOptions,
    confidences: Option<&mut Vec<f64>>,
) -> Result<String, InMemoryError> {
    let mut out = Vec::new();
    let outputs = Outputs { accepted: &mut out, rejected: None, cancel: None, confidences };
    pipeline::parse_reader(model, input, name, format, outputs, opts).map_err(InMemoryError::Pipeline)?;
    String::from_utf8(out).map_err(|e| InMemoryError::Internal(format!("output not UTF-8: {e}")))
}

impl Model {
    /// Parses `text` held in memory as one input named `name`, returning what `spoolparse
    /// parse` writes for it.
    fn parse_string(
        &self,
        py: Python<'_>,
        text: String,
        format: Format,
        opts: PipelineOptions,
        name: &str,
    ) -> PyResult<String> {
        let model = Arc::clone(&self.model);
        let name = PathBuf::from(name);
        let input = Box::new(Cursor::new(text.into_bytes()));
        py.detach(move || parse_in_memory(&model, input, &name, format, opts, None)).map_err(|e| e.into_py(py))
    }
}

/// Python strings made once per call: a document repeats its tags, labels, FEATS and
/// common words thousands of times, and one object each keeps its memory (and the time of
/// making them) to what it says.
struct Strings<'py> {
    py: Python<'py>,
    made: HashMap<String, Bound<'py, PyString>>,
}

impl<'py> Strings<'py> {
    fn get(&mut self, s: String) -> Bound<'py, PyString> {
        if let Some(made) = self.made.get(&s) {
            return made.clone();
        }
        let made = PyString::new(self.py, &s);
        self.made.insert(s, made.clone());
        made
    }
}

/// The Python tuple of one sentence of ``Model._parse_text_parts``, with its unrounded
/// `confidence`.
fn sentence_tuple<'py>(
    strings: &mut Strings<'py>,
    part: SentencePart,
    confidence: Option<f64>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = strings.py;
    let tokens: Vec<Bound<'py, PyTuple>> = part
        .tokens
        .into_iter()
        .map(|t| (t.first, t.count, t.start, t.end, strings.get(t.misc)).into_pyobject(py))
        .collect::<PyResult<_>>()?;
    let words: Vec<Bound<'py, PyTuple>> = part
        .words
        .into_iter()
        .map(|w| {
            let columns = [w.form, w.lemma, w.upos, w.xpos, w.feats].map(|c| strings.get(c));
            let [form, lemma, upos, xpos, feats] = columns;
            let (deprel, misc) = (strings.get(w.deprel), strings.get(w.misc));
            (w.id, form, lemma, upos, xpos, feats, w.head, deprel, misc, w.confidence, w.start, w.end).into_pyobject(py)
        })
        .collect::<PyResult<_>>()?;
    let (tokens, words) = (PyList::new(py, tokens)?, PyList::new(py, words)?);
    (part.sent_id, part.text, confidence, part.new_par, part.new_doc, tokens, words, part.other_language)
        .into_pyobject(py)
}

impl Model {
    /// The threshold of `min_confidence` and `min_precision` ([`Threshold::resolve`]).
    fn threshold(&self, min_confidence: Option<f64>, min_precision: Option<f64>) -> PyResult<Option<f64>> {
        let t = Threshold::resolve(&self.model, min_confidence, min_precision)
            .map_err(|e| PyValueError::new_err(format!("min_precision: {e}")))?;
        Ok(t.min_confidence)
    }
}

#[pymethods]
impl Model {
    #[new]
    #[pyo3(signature = (path, verify = true, fingerprint = None))]
    fn new(py: Python<'_>, path: PathBuf, verify: bool, fingerprint: Option<String>) -> PyResult<Self> {
        // Absolute, not canonical: a link stays a link (a model swapped by relinking is
        // followed), and the path still names the file for another working directory.
        let path = std::path::absolute(&path).map_err(|e| os_error(e.kind(), format!("{}: {e}", path.display())))?;
        let opened = py.detach(|| files::open_model(&path, verify));
        let model = opened.map_err(model_error)?;
        if let Some(expected) = fingerprint.filter(|f| *f != model.fingerprint()) {
            return Err(ModelError::new_err(format!(
                "{}: holds model {}, not {expected}: the file was replaced since this Model was made",
                path.display(),
                model.fingerprint()
            )));
        }
        Ok(Model { model: Arc::new(model), path, verify })
    }

    /// Pickles as ``Model(path, verify, fingerprint)``: the mapping is not copied, the file is
    /// opened again by its absolute path, and must still hold this model.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, (PathBuf, bool, String)) {
        let me = slf.get();
        (slf.get_type(), (me.path.clone(), me.verify, me.model.fingerprint()))
    }

    /// The sentence confidence at or above which the accepted words are right at
    /// ``min_precision`` or better, with probability 0.9 over the calibration text the model
    /// carries (``--min-precision``): for :meth:`Sentence.accepted`. ``ValueError`` when the
    /// model carries none, or when no threshold gives that precision there.
    fn threshold_for(&self, min_precision: f64) -> PyResult<f64> {
        self.threshold(None, Some(min_precision))?.ok_or_else(|| PyValueError::new_err("min_precision: no threshold"))
    }

    fn __repr__(&self) -> String {
        format!("Model({:?}, fingerprint={:?})", self.path.display().to_string(), self.model.fingerprint())
    }

    /// The absolute path the model was opened from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// A short identifier of the model's contents (two files with the same one hold the same
    /// model), as in the ``# model =`` line of the daemon's outputs.
    #[getter]
    fn fingerprint(&self) -> String {
        self.model.fingerprint()
    }

    /// Whether the model has a part-of-speech tagger (needed for tokens without tags, and for
    /// text).
    #[getter]
    fn has_tagger(&self) -> bool {
        self.model.tagger().is_some()
    }

    /// Whether the model has a tokenizer (needed for raw text: ``parse_text``).
    #[getter]
    fn has_tokenizer(&self) -> bool {
        self.model.tokenizer().is_some()
    }

    /// The dependency labels the model predicts.
    #[getter]
    fn labels(&self) -> Vec<String> {
        let labels = &self.model.meta().labels;
        (0..labels.len()).map(|i| labels.name(spoolparse::base::label::Label::from_index(i)).to_string()).collect()
    }

    /// The transition system (and pseudo-projective encoding) the model parses with.
    #[getter]
    fn system(&self) -> String {
        self.model.meta().transition_system.clone()
    }

    /// Parses tokenized sentences: ``sentences`` is a list of sentences, each a list of tokens.
    ///
    /// ``upos`` and ``xpos``, if given, hold one list of tags per sentence, parallel to its
    /// tokens; without them the model's tagger predicts the tags (``ValueError`` if the model
    /// has none: it was trained on tagged input). Tokens and tags must be non-empty and hold no
    /// tab or line break. Returns one ``Parse`` per sentence, in order.
    #[pyo3(signature = (sentences, upos = None, xpos = None))]
    fn parse(
        &self,
        py: Python<'_>,
        sentences: &Bound<'_, PyAny>,
        upos: Option<&Bound<'_, PyAny>>,
        xpos: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Parse>> {
        let sentences = lists_of_strings(sentences, "sentences", "tokens")?;
        let upos = upos.map(|u| lists_of_strings(u, "upos", "tags")).transpose()?;
        let xpos = xpos.map(|x| lists_of_strings(x, "xpos", "tags")).transpose()?;
        let tagged = upos.is_some() || xpos.is_some();
        if !tagged && self.model.tagger().is_none() {
            return Err(PyValueError::new_err(format!("{NoTagger}; or pass upos= (and xpos=) tags")));
        }
        for (which, tags) in [("upos", &upos), ("xpos", &xpos)] {
            if let Some(t) = tags.as_ref().filter(|t| t.len() != sentences.len()) {
                return Err(PyValueError::new_err(format!(
                    "{} lists of {which} tags for {} sentences",
                    t.len(),
                    sentences.len()
                )));
            }
        }
        let mut built = Vec::with_capacity(sentences.len());
        for (s, tokens) in sentences.iter().enumerate() {
            if tokens.is_empty() {
                return Err(PyValueError::new_err(format!("sentence {}: no tokens", s + 1)));
            }
            let mut sent = Sentence::default();
            sent.fill_from_tokens(tokens).map_err(|e| PyValueError::new_err(format!("sentence {}: {e}", s + 1)))?;
            let none = vec!["_".to_string(); tokens.len()];
            let u = upos.as_ref().map_or(&none, |u| &u[s]);
            let x = xpos.as_ref().map_or(&none, |x| &x[s]);
            check_tags(u, tokens.len(), "upos", s)?;
            check_tags(x, tokens.len(), "xpos", s)?;
            if tagged {
                for w in 0..tokens.len() {
                    sent.set_tags(w + 1, &u[w], &x[w]);
                }
            }
            built.push(sent);
        }
        let model = Arc::clone(&self.model);
        py.detach(move || parse_sentences(&model, built, !tagged)).map_err(PyRuntimeError::new_err)
    }

    /// Parses CoNLL-U text (or ``format="conllx"``, or ``"text"``: one sentence per line,
    /// tokens separated by whitespace, or ``"raw"``: see ``parse_text``) and returns what ``spoolparse parse`` writes for it:
    /// HEAD and DEPREL filled, every other byte kept, and unless ``confidence=False`` the
    /// ``Conf=`` MISC entries and ``# confidence`` / ``# tree_prob`` comments. ``retag=True``
    /// replaces the tags with the tagger's; by default they are replaced only when most of the
    /// first 1000 words have tags the model was not trained on (and it has a tagger). Bad input raises ``spoolparse.InputError`` naming
    /// ``name:LINE``.
    #[pyo3(signature = (text, *, format = "conllu", confidence = true, retag = false, name = "<string>"))]
    fn parse_conllu(
        &self,
        py: Python<'_>,
        text: String,
        format: &str,
        confidence: bool,
        retag: bool,
        name: &str,
    ) -> PyResult<String> {
        let format = format_named(format)?;
        let opts = PipelineOptions { confidence, retag: retag_of(retag), ..PipelineOptions::default() };
        self.parse_string(py, text, format, opts, name)
    }

    /// Parses raw text (paragraphs separated by blank lines) as ``spoolparse parse --format
    /// raw`` does: tokenized and split into sentences by the model's tokenizer, tagged and
    /// parsed; returns the CoNLL-U (``# newdoc``, ``# newpar``, ``# text``, ``SpaceAfter=No``,
    /// multiword tokens; see docs/formats.md). ``sentences="lines"`` ends a sentence at every
    /// line end and nowhere else (``--raw-sentences lines``: text written one sentence per
    /// line). Needs a model trained with ``--tagger --tokenizer`` (else ``ValueError``);
    /// invalid input raises ``spoolparse.InputError``.
    #[pyo3(signature = (text, *, confidence = true, sentences = "model", name = "<string>"))]
    fn parse_text(
        &self,
        py: Python<'_>,
        text: String,
        confidence: bool,
        sentences: &str,
        name: &str,
    ) -> PyResult<String> {
        let raw_sentences = raw_sentences_named(sentences)?;
        let opts = PipelineOptions { confidence, raw_sentences, ..PipelineOptions::default() };
        self.parse_string(py, text, Format::Raw, opts, name)
    }

    /// ``parse_text``'s CoNLL-U and the parts of the document it holds, for
    /// ``spoolparse.parse_document`` (not a public API): per sentence ``(sent_id, text,
    /// confidence, new_par, new_doc, tokens, words, other_language)``, ``confidence``
    /// unrounded (what
    /// ``--min-confidence`` compares), each token ``(first, count, start, end, misc)`` (its
    /// words, by index in ``words``, and its span in ``text`` in characters), each word ``(id,
    /// form, lemma, upos, xpos, feats, head, deprel, misc, confidence, start, end)``.
    #[pyo3(signature = (text, *, confidence = true, sentences = "model", name = "<string>"))]
    fn _parse_text_parts<'py>(
        &self,
        py: Python<'py>,
        text: String,
        confidence: bool,
        sentences: &str,
        name: &str,
    ) -> PyResult<(String, Bound<'py, PyList>)> {
        let raw_sentences = raw_sentences_named(sentences)?;
        let opts = PipelineOptions { confidence, raw_sentences, ..PipelineOptions::default() };
        let model = Arc::clone(&self.model);
        let name = PathBuf::from(name);
        // One copy of the text, read by the pipeline and then searched for its tokens.
        let text: Arc<[u8]> = text.into_bytes().into();
        let input = Box::new(Cursor::new(Arc::clone(&text)));
        let result = py.detach(move || {
            let mut confidences = Vec::new();
            let conllu = parse_in_memory(&model, input, &name, Format::Raw, opts, Some(&mut confidences))?;
            // The library wrote it from this text: anything else is a bug.
            let text = std::str::from_utf8(&text).map_err(|e| InMemoryError::Internal(e.to_string()))?;
            let parts = read_document(&conllu, text).map_err(|e| InMemoryError::Internal(e.to_string()))?;
            Ok((conllu, parts, confidences))
        });
        let (conllu, parts, confidences) = result.map_err(|e: InMemoryError| e.into_py(py))?;
        let mut strings = Strings { py, made: HashMap::new() };
        let with_confidence = |i: usize| confidences.get(i).copied().filter(|_| confidence);
        let sentences: Vec<_> = parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| sentence_tuple(&mut strings, p, with_confidence(i)))
            .collect::<PyResult<_>>()?;
        Ok((conllu, PyList::new(py, sentences)?))
    }

    /// Parses the file ``input`` (or a list of files, in order) into ``accepted``, exactly as
    /// ``spoolparse parse INPUT --output ACCEPTED [--min-confidence X --rejected LOWCONF]``
    /// does, byte for byte: with ``lowconf`` and ``min_confidence``, the sentences whose
    /// confidence is below ``min_confidence`` go to ``lowconf``, the others to ``accepted``,
    /// each exactly once and in input order. Names ending in ``.zst`` are compressed.
    ///
    /// Each output is written under a temporary name beside it and renamed once complete, so
    /// that a reader never sees a part of one and a failure leaves nothing; an existing output
    /// raises ``FileExistsError`` before anything is parsed, unless ``overwrite=True``.
    /// Ctrl-C (``KeyboardInterrupt``) stops it within about 50 ms, and nothing is published.
    /// ``byte_range=(start, end)`` parses only those bytes of a single plain file: a shard
    /// from ``spoolparse.shard_ranges``. ``threads`` parsing threads (input order is kept).
    /// ``sentences="lines"`` is ``--raw-sentences lines`` (raw text, one sentence per line).
    ///
    /// ``malformed="fail"`` (the default) raises ``spoolparse.InputError`` (``FILE:LINE:
    /// problem``) at the first malformed sentence and publishes nothing; ``"lowconf"`` writes
    /// each unparsed, as the daemon does (a placeholder word, the error and the raw lines in
    /// comments), to ``lowconf`` (which may then be given without ``min_confidence``), or to
    /// ``accepted`` without one, and goes on. A file that is not a corpus at all raises
    /// ``InputError`` either way. ``min_precision=P`` (with ``lowconf``) is ``--min-precision``:
    /// the threshold of :meth:`threshold_for`, or the higher of it and ``min_confidence``.
    /// Returns ``{"sentences": …, "words": …, "lowconf": …,
    /// "malformed": …}`` (malformed sentences are counted in ``sentences``, and in ``lowconf``
    /// when they went there).
    #[pyo3(signature = (input, accepted, lowconf = None, min_confidence = None, *, threads = 1, format = None,
                        retag = false, confidence = true, overwrite = false, byte_range = None,
                        malformed = "fail", sentences = "model", min_precision = None))]
    #[allow(clippy::too_many_arguments)]
    fn parse_file<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        accepted: PathBuf,
        lowconf: Option<PathBuf>,
        min_confidence: Option<f64>,
        threads: usize,
        format: Option<&str>,
        retag: bool,
        confidence: bool,
        overwrite: bool,
        byte_range: Option<(u64, u64)>,
        malformed: &str,
        sentences: &str,
        min_precision: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let raw_sentences = raw_sentences_named(sentences)?;
        if min_precision.is_some() && lowconf.is_none() {
            return Err(PyValueError::new_err("min_precision needs lowconf, the output of the sentences below it"));
        }
        let min_confidence = self.threshold(min_confidence, min_precision)?;
        let keep_malformed = match malformed {
            "fail" => false,
            "lowconf" => true,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "malformed must be \"fail\" or \"lowconf\" (got {malformed:?})"
                )))
            }
        };
        if min_confidence.is_some() && lowconf.is_none() {
            return Err(PyValueError::new_err("min_confidence needs lowconf, the output of the sentences below it"));
        }
        if lowconf.is_some() && min_confidence.is_none() && !keep_malformed {
            return Err(PyValueError::new_err(
                "lowconf takes the sentences below min_confidence or, with malformed=\"lowconf\", the malformed ones: give either",
            ));
        }
        if threads == 0 {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let paths: Vec<PathBuf> = match input.extract::<PathBuf>() {
            Ok(p) => vec![p],
            Err(_) => input
                .extract::<Vec<PathBuf>>()
                .map_err(|_| pyo3::exceptions::PyTypeError::new_err("input must be a path or a list of paths"))?,
        };
        if byte_range.is_some() && paths.len() != 1 {
            return Err(PyValueError::new_err("byte_range needs a single input file"));
        }
        if let Some((start, end)) = byte_range.filter(|(s, e)| s > e) {
            return Err(PyValueError::new_err(format!("byte_range ({start}, {end}) ends before it starts")));
        }
        if let (Some((start, end)), [path]) = (byte_range, paths.as_slice()) {
            // A shard of a file that has shrunk since it was planned: not silently nothing.
            if let Ok(len) = std::fs::metadata(path).map(|m| m.len()) {
                if end > len {
                    return Err(PyValueError::new_err(format!(
                        "byte_range ({start}, {end}) goes past the end of {} ({len} bytes)",
                        path.display()
                    )));
                }
            }
        }
        let inputs: Vec<Input> =
            paths.into_iter().map(|path| Input { path, range: byte_range.map(|(s, e)| s..e) }).collect();
        let opts = PipelineOptions {
            threads,
            format: format.map(format_named).transpose()?,
            retag: retag_of(retag),
            raw_sentences,
            confidence,
            min_confidence,
            keep_malformed,
            limits: Limits::default(),
            ..PipelineOptions::default()
        };
        let model = Arc::clone(&self.model);
        let publish = Publish::Atomic { replace: overwrite };
        let cancel = AtomicBool::new(false);
        let (result, interrupt) = py.detach(|| {
            std::thread::scope(|scope| {
                let (done, finished) = std::sync::mpsc::channel();
                let parse = || {
                    files::parse_to_files(&model, &inputs, &accepted, lowconf.as_deref(), opts, publish, Some(&cancel))
                };
                scope.spawn(move || done.send(parse()));
                // Python runs signal handlers (Ctrl-C) in the main thread only, and only with the
                // GIL: look every 50 ms, and on one, stop the parse before anything is published.
                let mut interrupt = None;
                loop {
                    match finished.recv_timeout(std::time::Duration::from_millis(50)) {
                        Ok(result) => return (result, interrupt),
                        Err(RecvTimeoutError::Timeout) if interrupt.is_none() => {
                            if let Err(e) = Python::attach(|py| py.check_signals()) {
                                interrupt = Some(e);
                                cancel.store(true, Ordering::Relaxed);
                            }
                        }
                        Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => {
                            let panicked = PipelineError::Pool("the parsing thread panicked".into());
                            return (Err(FilesError::Pipeline(panicked)), interrupt);
                        }
                    }
                }
            })
        });
        if let Some(e) = interrupt {
            return Err(e);
        }
        let stats = result.map_err(|e| files_error(py, e))?;
        let dict = PyDict::new(py);
        dict.set_item("sentences", stats.sentences)?;
        dict.set_item("words", stats.words)?;
        dict.set_item("lowconf", stats.rejected)?;
        dict.set_item("malformed", stats.malformed)?;
        Ok(dict)
    }
}

/// `obj` as a list of lists of strings (sentences of tokens, or of tags), or a `TypeError` that
/// shows the expected shape: PyO3's own says only "Can't extract `str` to `Vec`", and the
/// likeliest mistake is one sentence not wrapped in a list (or a string of text).
fn lists_of_strings(obj: &Bound<'_, PyAny>, name: &str, items: &str) -> PyResult<Vec<Vec<String>>> {
    let shape = format!("{name} must be a list with one list of {items} per sentence, e.g. [[\"The\", \"dog\"]]");
    if obj.is_instance_of::<pyo3::types::PyString>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!("{shape}, not a string")));
    }
    obj.extract::<Vec<Vec<String>>>().map_err(|_| {
        let flat = obj.extract::<Vec<String>>().is_ok();
        let hint = if flat { ", not a list of strings (one sentence? put it in a list)" } else { "" };
        pyo3::exceptions::PyTypeError::new_err(format!("{shape}{hint}"))
    })
}

/// Byte ranges ``(start, end)`` that cover the plain file ``path`` in order, each starting at a
/// sentence and all but the last about ``max_bytes`` long: shards that
/// ``Model.parse_file(..., byte_range=…)`` parses one by one into outputs whose concatenation
/// is the whole file's. ``None`` for a ``.zst`` file, which cannot be read from the middle.
/// ``format`` is taken from the name unless given. Only the bytes around each split point are
/// read.
#[pyfunction]
#[pyo3(signature = (path, max_bytes, format = None))]
fn shard_ranges(
    py: Python<'_>,
    path: PathBuf,
    max_bytes: u64,
    format: Option<&str>,
) -> PyResult<Option<Vec<(u64, u64)>>> {
    if max_bytes == 0 {
        return Err(PyValueError::new_err("max_bytes must be at least 1"));
    }
    let format = match format {
        Some(f) => format_named(f)?,
        None => Format::from_path(&path),
    };
    let ranges = py
        .detach(|| library_shard_ranges(&path, format, max_bytes))
        .map_err(|e| os_error(e.kind(), format!("{}: {e}", path.display())))?;
    Ok(ranges.map(|r| r.into_iter().map(|r| (r.start, r.end)).collect()))
}

/// Fast greedy dependency parsing (spoolparse), from Python.
#[pymodule]
fn _spoolparse(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_class::<Parse>()?;
    m.add_function(wrap_pyfunction!(shard_ranges, m)?)?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("ModelError", m.py().get_type::<ModelError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// `retag=True` is [`Retag::Always`]; `False` leaves it to the tags ([`Retag::Auto`]).
fn retag_of(retag: bool) -> Retag {
    if retag {
        Retag::Always
    } else {
        Retag::Auto
    }
}

//! Batches: the unit a parsing thread takes, a run of sentences of one job with their
//! confidences and malformed ones at their places; filling one from a reader, parsing one, and
//! handing one to the sink, numbered. Past a job's first batch, a batch is filled with text
//! the thread which parses it reads into sentences ([`read_text`]), so that reading runs on
//! every thread at once: raw text as pieces ([`crate::parse::raw::Piece`]), which are
//! tokenized there, and other formats as blocks of whole sentences' lines
//! ([`Reader::read_block`]). Nothing here knows about threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::corpus::{BlockRead, CorpusError, Reader, Sentence};
use crate::parse::annotate::{Annotator, Steps};
use crate::parse::fit::{FitCheck, FitCounts, FitReport, Stages, CHECK_WORDS};
use crate::parse::given::GivenCounts;
use crate::parse::raw::{Piece, PieceReader, RawReader};

use super::numbering::Numbering;
use super::render::Rendered;
use super::{Job, Outcome, PipelineOptions, Read, Sink, Source, Unreadable, Verdict};

/// A sentence that could not be read, at its place in a batch.
pub(super) struct Malformed {
    pub(super) index: usize,
    pub(super) error: CorpusError,
    pub(super) text: String,
    pub(super) truncated: bool,
    pub(super) sent_id: Option<String>,
}

impl Malformed {
    /// Hands it to `sink` ([`Sink::malformed`]).
    pub(super) fn deliver<S: Sink>(self, job: &Job, sink: &mut S) -> Result<(), S::Error> {
        let Malformed { error, text, truncated, sent_id, .. } = self;
        sink.malformed(job, Unreadable { error, text: &text, truncated, sent_id: sent_id.as_deref() })
    }
}

/// A batch is closed once its sentences hold this many bytes of text, whatever their words:
/// with the sentence limit, this bounds a batch's memory at about 2 MiB on any input.
const BATCH_BYTES: usize = 1 << 20;

/// A batch slot that held a sentence above this many bytes gives its allocations back.
const SLOT_BYTES: usize = 64 << 10;

/// A batch of sentences of one job, with its position in the job.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) job: Option<Arc<Job>>,
    pub(super) seq: u64,
    pub(super) sentences: Vec<Sentence>,
    pub(super) used: usize,
    pub(super) words: usize,
    /// Text bytes of the sentences read into it.
    pub(super) bytes: usize,
    /// What to do besides parsing (the same for the whole job).
    pub(super) steps: Steps,
    /// What the parse of each sentence says of it.
    pub(super) verdicts: Vec<Verdict>,
    /// Sentences left unparsed, by index in `sentences` (increasing).
    pub(super) malformed: Vec<Malformed>,
    /// Set on the job's last batch.
    pub(super) end: Option<Outcome>,
    /// Set on the job's first batch (if the job has any words): for [`Sink::fit`].
    pub(super) fit: Option<FitReport>,
    /// Raw text not read into sentences yet: `pieces[..pieces_used]` ([`read_pieces`]).
    pub(super) pieces: Vec<Piece>,
    pub(super) pieces_used: usize,
    /// The first batch of a raw-text job: its sentences, once read, decide [`Batch::fit`].
    pub(super) check_fit: bool,
    /// The job's numbering, which the reader hands to the delivery with the first batch.
    pub(super) numbering: Option<Numbering>,
    /// Whole sentences' lines not read into sentences yet, after this many lines of the input
    /// ([`read_text`]).
    pub(super) block: Vec<u8>,
    pub(super) block_after: Option<u64>,
    /// The sentences as written, rendered where they were parsed.
    pub(super) rendered: Rendered,
    /// What became of the values its sentences gave ([`Sink::given`]).
    pub(super) given: GivenCounts,
}

impl Batch {
    /// Empties the batch for use as number `seq` of `job`.
    pub(super) fn reset(&mut self, job: &Arc<Job>, seq: u64, steps: Steps) {
        self.job = Some(Arc::clone(job));
        self.seq = seq;
        self.used = 0;
        self.words = 0;
        self.bytes = 0;
        self.steps = steps;
        // A slot keeps the allocations of the largest sentence it ever held: let go of huge
        // ones, or every slot could end up holding a sentence of the maximum size.
        for s in &mut self.sentences {
            if s.bytes_read() > SLOT_BYTES {
                *s = Sentence::default();
            }
        }
        for p in &mut self.pieces {
            if p.len() > SLOT_BYTES {
                *p = Piece::default();
            }
        }
        self.verdicts.clear();
        self.rendered.clear();
        self.given = GivenCounts::default();
        self.malformed.clear();
        self.end = None;
        self.fit = None;
        self.pieces_used = 0;
        self.check_fit = false;
        self.numbering = None;
        self.block_after = None;
        if self.block.capacity() > 2 * BATCH_BYTES {
            self.block = Vec::new();
        }
    }

    /// The next free sentence slot.
    pub(super) fn slot(&mut self) -> &mut Sentence {
        if self.used == self.sentences.len() {
            self.sentences.push(Sentence::default());
        }
        &mut self.sentences[self.used]
    }

    pub(super) fn is_malformed(&self, index: usize) -> bool {
        self.malformed.binary_search_by_key(&index, |m| m.index).is_ok()
    }

    /// Hands every sentence, numbered by `numbering` (the job's, if it has one), and finally the
    /// outcome to `sink`; true if that ended the job.
    pub(super) fn deliver<S: Sink>(
        &mut self,
        sink: &mut S,
        mut numbering: Option<&mut Numbering>,
    ) -> Result<bool, S::Error> {
        let Some(job) = self.job.as_deref() else { return Ok(false) };
        if let Some(report) = self.fit.take() {
            sink.fit(job, &report)?;
        }
        let mut malformed = self.malformed.drain(..).peekable();
        for (i, s) in self.sentences[..self.used].iter().enumerate() {
            let id = numbering.as_deref_mut().and_then(|n| n.take());
            match malformed.next_if(|m| m.index == i) {
                Some(mut m) => {
                    m.sent_id = id.map(str::to_string);
                    m.deliver(job, sink)?
                }
                None => {
                    let written = self.rendered.get(i, id);
                    let verdict =
                        self.verdicts.get(i).copied().unwrap_or(Verdict { confidence: 1.0, other_language: false });
                    sink.sentence(job, s, written, verdict)?
                }
            }
        }
        if self.given.any() {
            sink.given(job, &self.given)?;
        }
        match self.end.take() {
            Some(outcome) => sink.end(job, outcome).map(|()| true),
            None => Ok(false),
        }
    }
}

/// Reads sentences of `job` into `batch` until it is full (raw text: pieces of text, see
/// [`fill_pieces`]); `Some` with how the job ended if it did. With `first` (the job's steps, on
/// its first batch), the batch is not full before [`CHECK_WORDS`] words (unless it holds
/// [`BATCH_BYTES`]); they decide the job's steps, this batch's included, and the decision goes
/// with the batch to the sink.
pub(super) fn fill_batch(
    opts: &PipelineOptions,
    abandon: &AtomicBool,
    reader: &mut Source,
    job: &Job,
    batch: &mut Batch,
    first: Option<&mut Steps>,
) -> Option<Outcome> {
    // Before any way of reading: a file read in blocks never meets the check below, and a
    // stop waited for the whole of a large file (35 s for 640 MB, past systemd's stop timeout).
    if abandon.load(Ordering::Relaxed) {
        return Some(Outcome::Abandoned);
    }
    let reader = match reader {
        Source::Raw(raw) => return fill_pieces(opts, abandon, raw, job, batch, first),
        Source::Corpus(corpus) if first.is_none() && corpus.between_sentences() => {
            match corpus.read_block(&mut batch.block, opts.batch_words as u64, BATCH_BYTES) {
                BlockRead::End => return Some(Outcome::Complete),
                BlockRead::Block { lines_before } => {
                    batch.block_after = Some(lines_before);
                    batch.bytes = batch.block.len();
                    return None;
                }
                // Read sentence by sentence, as the whole file is read.
                BlockRead::Uncut => reader,
            }
        }
        Source::Corpus(_) => reader,
    };
    let mut check = first.is_some().then(|| FitCheck::new(&job.model));
    let outcome = loop {
        if abandon.load(Ordering::Relaxed) {
            break Some(Outcome::Abandoned);
        }
        let index = batch.used;
        match opts.read(reader, batch.slot(), job.format) {
            Read::End => break Some(Outcome::Complete),
            Read::Unreadable(e) => break Some(Outcome::Failed(e.into())),
            Read::Malformed(m) => {
                batch.bytes += m.text.len();
                batch.malformed.push(Malformed { index, ..m });
            }
            Read::Sentence => {
                let s = &batch.sentences[index];
                batch.words += s.len();
                batch.bytes += s.bytes_read();
                if let Some(check) = check.as_mut() {
                    check.add(s);
                }
            }
        }
        batch.used += 1;
        let full = batch.words >= opts.batch_words || batch.used >= opts.batch_words;
        let deciding = check.as_ref().is_some_and(|c| !c.done());
        if (full && !deciding) || batch.bytes >= BATCH_BYTES {
            break None;
        }
    };
    if let (Some(check), Some(steps)) = (check, first) {
        let counts = check.counts();
        if counts.words > 0 {
            let report = FitReport::decide(counts, job.format, opts.retag, Stages::of(&job.model));
            steps.analyze = report.analyze();
            batch.steps = *steps;
            batch.fit = Some(report);
        }
    }
    outcome
}

/// Fills `batch` with pieces of raw text until they hold a batch's words (counted as
/// whitespace-separated chunks, which make at least as many words) or [`BATCH_BYTES`]
/// characters. A raw-text job's steps do not depend on its first words (it is analyzed
/// whatever they are): they are set at once, and the fit report, which the sink still hears,
/// is made where the first batch's pieces are read ([`read_pieces`]).
fn fill_pieces(
    opts: &PipelineOptions,
    abandon: &AtomicBool,
    reader: &mut RawReader,
    job: &Job,
    batch: &mut Batch,
    first: Option<&mut Steps>,
) -> Option<Outcome> {
    let mut want = opts.batch_words;
    if let Some(steps) = first {
        let report = FitReport::decide(FitCounts::default(), job.format, opts.retag, Stages::of(&job.model));
        steps.analyze = report.analyze();
        batch.steps = *steps;
        batch.check_fit = true;
        want = want.max(CHECK_WORDS);
    }
    loop {
        if abandon.load(Ordering::Relaxed) {
            return Some(Outcome::Abandoned);
        }
        if batch.pieces_used == batch.pieces.len() {
            batch.pieces.push(Piece::default());
        }
        let piece = &mut batch.pieces[batch.pieces_used];
        match reader.next_piece(piece) {
            None => return Some(Outcome::Complete),
            Some(Err(e)) => return Some(Outcome::Failed(e.into())),
            Some(Ok(())) => {}
        }
        batch.words += piece.chunks();
        batch.bytes += piece.len();
        batch.pieces_used += 1;
        if batch.words >= want || batch.bytes >= BATCH_BYTES {
            return None;
        }
    }
}

/// Reads the text that `batch` holds unread into its sentences: its block of lines, or its
/// pieces of raw text with `pieces` (see [`read_pieces`]).
pub(super) fn read_text(opts: &PipelineOptions, pieces: &mut Option<PieceReader>, batch: &mut Batch) {
    match batch.block_after.take() {
        Some(lines_before) => read_block(opts, batch, lines_before),
        None => read_pieces(opts, pieces, batch),
    }
}

/// Reads the sentences of `batch`'s block, which follows `lines_before` lines of its input, as
/// the job's reader would have read them ([`Reader::resume`]).
fn read_block(opts: &PipelineOptions, batch: &mut Batch, lines_before: u64) {
    let Some(job) = batch.job.clone() else { return };
    let block = std::mem::take(&mut batch.block);
    let start = job.range.as_ref().map_or(0, |r| r.start);
    let mut reader = Reader::resume(&block[..], &job.path, job.format, lines_before, start).with_limits(opts.limits);
    if opts.keep_malformed {
        reader = reader.keep_text();
    }
    loop {
        let index = batch.used;
        let result = reader.read_next(batch.slot());
        let text = || (reader.sentence_text().to_string(), reader.sentence_text_truncated());
        match opts.judge(result, &mut batch.sentences[index], job.format, text) {
            Read::End => break,
            Read::Sentence => batch.words += batch.sentences[index].len(),
            Read::Malformed(m) => batch.malformed.push(Malformed { index, ..m }),
            // A block holds nothing that makes a file unreadable (see `Reader::read_block`).
            Read::Unreadable(error) => {
                let text = reader.sentence_text().to_string();
                batch.malformed.push(Malformed { index, error, text, truncated: false, sent_id: None });
            }
        }
        batch.used += 1;
    }
    batch.block = block;
}

/// Reads the sentences of `batch`'s pieces into it with `reader` (made, or made again, for the
/// batch's model), and on a job's first batch makes the fit report of its first words.
fn read_pieces(opts: &PipelineOptions, reader: &mut Option<PieceReader>, batch: &mut Batch) {
    let Some(job) = batch.job.clone().filter(|_| batch.pieces_used > 0) else { return };
    if reader.as_ref().is_none_or(|r| !Arc::ptr_eq(r.model(), &job.model)) {
        // The job was opened with a tokenizer: this cannot fail.
        *reader = PieceReader::new(&job.path, Arc::clone(&job.model), opts.raw_sentences).ok();
    }
    let Some(reader) = reader.as_mut() else { return };
    reader.set_path(&job.path);
    let mut check = batch.check_fit.then(|| FitCheck::new(&job.model));
    batch.words = 0;
    for p in 0..batch.pieces_used {
        reader.load(&mut batch.pieces[p]);
        loop {
            let index = batch.used;
            match reader.read_next(batch.slot()) {
                None => break,
                Some(Ok(())) => {
                    let s = &batch.sentences[index];
                    batch.words += s.len();
                    if let Some(check) = check.as_mut() {
                        check.add(s);
                    }
                }
                Some(Err(error)) => {
                    let text = reader.sentence_text().to_string();
                    batch.malformed.push(Malformed { index, error, text, truncated: false, sent_id: None });
                }
            }
            batch.used += 1;
        }
    }
    batch.pieces_used = 0;
    if let Some(counts) = check.map(|c| c.counts()).filter(|c| c.words > 0) {
        batch.fit = Some(FitReport::decide(counts, job.format, opts.retag, Stages::of(&job.model)));
    }
}

/// Parses every well-formed sentence of `batch`, records its verdict and renders it.
pub(super) fn annotate_batch(annotator: &mut Annotator<'_>, batch: &mut Batch) {
    batch.verdicts.clear();
    batch.rendered.clear();
    batch.given = GivenCounts::default();
    for i in 0..batch.used {
        if batch.is_malformed(i) {
            batch.verdicts.push(Verdict { confidence: 0.0, other_language: false });
            batch.rendered.push(None);
            continue;
        }
        // Checked when the job was opened: the model can tag whenever a job needs it.
        let _ = annotator.annotate(&mut batch.sentences[i], batch.steps);
        batch.given.add(&annotator.given_counts());
        batch.verdicts.push(Verdict::of(annotator));
        batch.rendered.push(Some(&batch.sentences[i]));
    }
}

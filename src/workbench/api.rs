//! The workbench's routes: the page's files and the JSON API under `/api/` (documented in
//! `docs/workbench.md`), over the queue, the serving model and the files of [`super::answers`].
//!
//! Every request is checked before anything is written ([`super::origin`] first): an unknown or
//! expired task, a cycle, a head out of range, a label that is neither the model's nor a UD
//! relation or documented subtype ([`crate::base::label::new_label_problem`]), a tag that is not
//! a UD UPOS or a lemma [`crate::corpus::check_lemma`] refuses is a 4xx with a message, and
//! changes nothing. A word's `upos` (and `xpos`) in an answer fixes or
//! confirms its tag, its `lemma` its LEMMA: the sentence is re-parsed with them (a parser that
//! reads the analysis reads the lemma too), and the correction records them. An answer gets its
//! 200 only once its correction file and audit line are durable; one [`super::review`] finds a
//! rubber stamp goes to `annotated/suspect/` instead, as does every answer of an annotator
//! the known-answer checks hold back ([`super::standing`]). A check ([`super::known`]) is handed
//! out, re-parsed and answered as any task; its answer is scored and logged, never written as a
//! correction, and answered as a correction would be.
//!
//! This module owns request handling; ranking is [`super::queue`]'s, files are
//! [`super::answers`]', re-parsing is [`super::task`]'s.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use serde_json::json;

use super::answers::{Answers, ArcChange, Checked, CheckedTags, Decision, LemmaChange, Provenance, TagChange};
use super::auth::{Annotator, Tokens};
use super::bodies::{lemma_fixes, parse_json, tag_fixes, unprocessable, with_fixes, ArcIn, ArcsIn, Refusal, TaskIn};
use super::error_model::{ErrorModel, Pattern};
use super::http::{Request, Response};
use super::known::{self, Known, KnownAnswers};
use super::queue::{read_sentence, Queue};
use super::review::rubber_stamp;
use super::sampled::{self, Asked};
use super::standing::Standing;
use super::task::{arc_pattern, Reparser, WordView};
use crate::base::label::universal;
use crate::corpus::{Column, Sentence};
use crate::learn::precision::SentenceRow;
use crate::model::file::ModelFile;
use crate::model::registry::{unix_time, Registry};
use crate::parse::constrained::{Arc as ArcConstraint, Constraints};
use crate::retrain::RETRAIN_REQUEST;

const INDEX_HTML: &str = include_str!("page/index.html");
const WORKBENCH_CSS: &str = include_str!("page/workbench.css");
const WORKBENCH_JS: &str = include_str!("page/workbench.js");
const API_JS: &str = include_str!("page/api.js");
const TREE_JS: &str = include_str!("page/tree.js");
const CHOOSERS_JS: &str = include_str!("page/choosers.js");
const MODELS_JS: &str = include_str!("page/models.js");

/// The name of the one annotator when no tokens file is configured.
pub const LOCAL: &str = "local";

/// A task handed out: the sentence and what was shown of it.
struct Task {
    source: String,
    sent_id: String,
    sent: Sentence,
    /// The parse shown by `/api/next`, per word (index 0 unused).
    shown: Vec<(u32, String)>,
    check: Vec<u32>,
    /// What the queue knew of each word to check, by word id.
    checked: HashMap<u32, Checked>,
    /// What `/api/next` answered: `/api/resume` answers it again.
    body: serde_json::Value,
    /// For a known-answer check (not in the queue): its gold tree and lease.
    known: Option<Known>,
    /// A sentence of the uniform sample: `sent` holds its parse as published, by this model
    /// (as its file says).
    sample: bool,
    published_by: Option<String>,
}

impl Task {
    /// The task of `sent` (from `source`) shown as `words`, and the body `/api/next` answers.
    fn shown(id: &str, source: String, sent: Sentence, words: Vec<WordView>) -> Task {
        let sent_id = sent.comment("sent_id").map_or_else(|| source.clone(), str::to_string);
        let text = sent
            .comment("text")
            .map(str::to_string)
            .unwrap_or_else(|| words.iter().map(|w| w.form.as_str()).collect::<Vec<_>>().join(" "));
        let body = json!({ "task": id, "sent_id": sent_id, "text": text, "words": words });
        Task {
            source,
            sent_id,
            shown: std::iter::once((0, String::new()))
                .chain(words.iter().map(|w| (w.head, w.deprel.clone())))
                .collect(),
            check: words.iter().filter(|w| w.check).map(|w| w.id).collect(),
            checked: words
                .iter()
                .filter(|w| w.check)
                .map(|w| (w.id, Checked { p: 1.0 - w.conf, pattern: arc_pattern(&words, w).name }))
                .collect(),
            sent,
            body,
            known: None,
            sample: false,
            published_by: None,
        }
    }

    /// Who answers this task, and what it is, as the files and the audit log record it.
    fn provenance(&self, task: &str, who: &Annotator) -> Provenance {
        Provenance {
            task: task.to_string(),
            sent_id: self.sent_id.clone(),
            source: self.source.clone(),
            annotator: who.name.clone(),
            sample: None,
            published_by: None,
        }
    }
}

/// What today's work came to, for `/api/stats`.
#[derive(Default)]
struct Today {
    day: u64,
    answered: u64,
    arcs: u64,
    /// Milliseconds spent on the answered tasks.
    ms: u64,
}

/// The known-answer checks: the gold sentences they are drawn from, each annotator's results,
/// and the answers that wait for their next check.
pub struct Checks {
    known: KnownAnswers,
    standing: Standing,
    /// By annotator: answers set aside after one failed check, stored if the next one passes.
    pending: Mutex<HashMap<String, Vec<(Provenance, PathBuf)>>>,
}

impl Checks {
    /// Checks drawn from `known`, results kept in `standing`.
    pub fn new(known: KnownAnswers, standing: Standing) -> Checks {
        Checks { known, standing, pending: Mutex::new(HashMap::new()) }
    }
}

/// The workbench: everything a request may need.
pub struct Workbench {
    pub queue: Mutex<Queue>,
    tasks: Mutex<HashMap<String, Task>>,
    model: RwLock<(Option<String>, Arc<ModelFile>)>,
    registry: Registry,
    answers: Answers,
    annotated: PathBuf,
    tokens: Option<Tokens>,
    today: Mutex<Today>,
    /// Whether the daemon runs retraining cycles (`[retrain] enabled`): without them, asking
    /// for one is refused, not acknowledged as if it ran.
    retraining: bool,
    checks: Checks,
    /// The daemon's threshold, for what the sampled answers say at it.
    asked: Asked,
}

impl Workbench {
    /// A workbench over `queue`, serving the model `registry` names current (else `model`).
    pub fn new(
        queue: Queue,
        registry: Registry,
        model: (Option<String>, Arc<ModelFile>),
        answers: Answers,
        annotated: PathBuf,
        tokens: Option<Tokens>,
        checks: Checks,
    ) -> Workbench {
        Workbench {
            queue: Mutex::new(queue),
            tasks: Mutex::new(HashMap::new()),
            model: RwLock::new(model),
            registry,
            answers,
            annotated,
            tokens,
            today: Mutex::new(Today::default()),
            retraining: true,
            checks,
            asked: Asked::default(),
        }
    }

    /// The same workbench for a daemon that publishes with the threshold `asked` gives.
    pub fn asking(self, asked: Asked) -> Workbench {
        Workbench { asked, ..self }
    }

    /// The same workbench for a daemon whose configuration runs no retraining cycle.
    pub fn without_retraining(self) -> Workbench {
        Workbench { retraining: false, ..self }
    }

    /// Answers one request.
    pub fn handle(&self, req: Request) -> Response {
        let page = |body: &'static str, content_type: &'static str| Response {
            status: 200,
            content_type,
            body: body.as_bytes().to_vec(),
        };
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/" | "/index.html" | "/models") => return page(INDEX_HTML, "text/html; charset=utf-8"),
            ("GET", "/workbench.css") => return page(WORKBENCH_CSS, "text/css; charset=utf-8"),
            ("GET", "/workbench.js") => return page(WORKBENCH_JS, "text/javascript; charset=utf-8"),
            ("GET", "/api.js") => return page(API_JS, "text/javascript; charset=utf-8"),
            ("GET", "/tree.js") => return page(TREE_JS, "text/javascript; charset=utf-8"),
            ("GET", "/choosers.js") => return page(CHOOSERS_JS, "text/javascript; charset=utf-8"),
            ("GET", "/models.js") => return page(MODELS_JS, "text/javascript; charset=utf-8"),
            _ => {}
        }
        if !req.path.starts_with("/api/") {
            return Response::error(404, format!("no page {}", req.path));
        }
        let who = match self.annotator(&req) {
            Ok(who) => who,
            Err(refusal) => return refusal,
        };
        let result = match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/api/next") => self.next(&who),
            ("POST", "/api/resume") => self.resume(&who, &req.body),
            ("POST", "/api/reparse") => self.reparse(&who, &req.body),
            ("POST", "/api/answer") => self.answer(&who, &req.body),
            ("POST", "/api/skip") => self.skip(&who, &req.body),
            ("POST", "/api/bad") => self.bad(&who, &req.body),
            ("GET", "/api/labels") => Ok(self.labels()),
            ("GET", "/api/stats") => Ok(self.stats()),
            ("GET", "/api/models") => self.models(&who),
            ("POST", "/api/retrain") => self.retrain(&who),
            (_, "/api/next" | "/api/labels" | "/api/stats" | "/api/models") => {
                Err(Response::error(405, format!("{} takes GET", req.path)))
            }
            (_, "/api/reparse" | "/api/answer" | "/api/skip" | "/api/bad" | "/api/retrain" | "/api/resume") => {
                Err(Response::error(405, format!("{} takes POST", req.path)))
            }
            _ => Err(Response::error(404, format!("no API {}", req.path))),
        };
        result.unwrap_or_else(|refusal| refusal)
    }

    fn annotator(&self, req: &Request) -> Result<Annotator, Refusal> {
        let Some(tokens) = &self.tokens else { return Ok(Annotator { name: LOCAL.into(), admin: true }) };
        let token = req.bearer.as_deref().ok_or_else(|| Response::error(401, "send Authorization: Bearer TOKEN"))?;
        tokens.check(token).cloned().ok_or_else(|| Response::error(401, "unknown token"))
    }

    /// The serving model, opened again when `models/current` moved.
    fn serving(&self) -> Arc<ModelFile> {
        let current = self.registry.current_name().ok().flatten();
        {
            let held = self.model.read().unwrap_or_else(|p| p.into_inner());
            if current.is_none() || held.0 == current {
                return Arc::clone(&held.1);
            }
        }
        let mut held = self.model.write().unwrap_or_else(|p| p.into_inner());
        if let Some(name) = &current {
            if held.0.as_ref() != Some(name) {
                match self.registry.open(name) {
                    Ok(model) => *held = (current.clone(), Arc::new(model)),
                    Err(e) => tracing::warn!("workbench: keeping the model it has; {name} cannot be opened: {e}"),
                }
            }
        }
        Arc::clone(&held.1)
    }

    fn next(&self, who: &Annotator) -> Result<Response, Refusal> {
        let model = self.serving();
        if let Some(check) = self.next_check(who, &model) {
            return Ok(check);
        }
        // A sentence that cannot be read (its file removed) is passed over, and said.
        for _ in 0..8 {
            let now = Instant::now();
            let leased = self.queue.lock().unwrap_or_else(|p| p.into_inner()).lease(&who.name, now);
            let Some((task_id, index)) = leased else { return Ok(Response::empty()) };
            let (path, offset, source, sample, published_by) = {
                let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                let c = *q.candidate(index);
                let published_by = q.published_by(&c).map(str::to_string);
                (q.file(&c).to_path_buf(), c.offset, q.source(index), c.sampled, published_by)
            };
            let sent = match read_sentence(&path, offset) {
                Ok(sent) => sent,
                Err(e) => {
                    tracing::warn!("workbench: {source} cannot be read, passed over: {e}");
                    self.queue.lock().unwrap_or_else(|p| p.into_inner()).finish(&task_id);
                    continue;
                }
            };
            let errors = self.queue.lock().unwrap_or_else(|p| p.into_inner()).errors().clone();
            let mut reparser = Reparser::new(&model);
            let words = reparser.view(&sent, &Constraints::none(sent.len()), &[], &errors);
            let mut task = Task { sample, published_by, ..Task::shown(&task_id, source, sent, words) };
            if sample {
                task.body["sample"] = json!(true);
            }
            let body = task.body.clone();
            self.tasks.lock().unwrap_or_else(|p| p.into_inner()).insert(task_id, task);
            return Ok(Response::json(200, &body));
        }
        Err(Response::error(503, "the queued sentences could not be read; see the log"))
    }

    /// A known-answer check for `who`, if one is due and the queue has a task left (a check
    /// handed out from an empty queue would say what it is).
    fn next_check(&self, who: &Annotator, model: &ModelFile) -> Option<Response> {
        let (left, errors) = {
            let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            let s = q.stats();
            (s.left + s.sample_left > s.leased, q.errors().clone())
        };
        if !left || !self.checks.known.due(&who.name, &self.checks.standing.get(&who.name)) {
            return None;
        }
        let mut reparser = Reparser::new(model);
        let (sent, source, words, known) = self.checks.known.pick(&who.name, &mut reparser, &errors)?;
        // Ids as the queue's: nothing tells a check from a task.
        let task_id = format!("{:016x}", rand::random::<u64>());
        let task = Task { known: Some(known), ..Task::shown(&task_id, source, sent, words) };
        let body = task.body.clone();
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        tasks.retain(|_, t| t.known.as_ref().is_none_or(|k| !k.expired(now)));
        tasks.insert(task_id, task);
        Some(Response::json(200, &body))
    }

    /// The task a page had before it was reloaded, as `/api/next` gave it, if it is still the
    /// annotator's (410 otherwise: its lease expired, or it was answered).
    fn resume(&self, who: &Annotator, body: &[u8]) -> Result<Response, Refusal> {
        let req: TaskIn = parse_json(body)?;
        let body = self.with_task(who, &req.task, |t| t.body.clone())?;
        Ok(Response::json(200, &body))
    }

    /// The task `id`, if it is `who`'s and current; with `f` applied to it.
    fn with_task<T>(&self, who: &Annotator, id: &str, f: impl FnOnce(&Task) -> T) -> Result<T, Refusal> {
        let now = Instant::now();
        let mine =
            self.queue.lock().unwrap_or_else(|p| p.into_inner()).get(id, now).is_some_and(|l| l.annotator == who.name);
        let tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        match tasks.get(id) {
            Some(task) if mine || task.known.as_ref().is_some_and(|k| k.leased_to(&who.name, now)) => Ok(f(task)),
            _ => Err(Response::error(
                410,
                format!("task {id:?} is not yours, or expired: get another with GET /api/next"),
            )),
        }
    }

    /// Reads the arcs of a request into constraints on `sent`, with labels the model knows, and
    /// the labels given that it does not but that are universal relations or documented
    /// subtypes (`obl:tmod` through a model that never saw one), by word: those arcs hold their
    /// head, and are stored with that label. Any other label (`obl:tmodx`) is refused.
    fn constraints(
        &self,
        reparser: &Reparser,
        sent: &Sentence,
        arcs: &[ArcIn],
    ) -> Result<(Constraints, HashMap<u32, String>), Refusal> {
        let (mut out, mut new_labels) = (Vec::new(), HashMap::new());
        for a in arcs {
            let Some(head) = a.head else { continue };
            let label = match a.deprel.as_deref() {
                None | Some("" | "_") => None,
                Some(name) => match reparser.label(name) {
                    Some(label) => Some(label),
                    None => match crate::base::label::new_label_problem(
                        name,
                        reparser.label_names().iter().map(String::as_str),
                    ) {
                        None if name != "root" => {
                            new_labels.insert(a.id, name.to_string());
                            None
                        }
                        None => {
                            return Err(unprocessable(format!("word {}: only the root word has DEPREL root", a.id)))
                        }
                        Some(problem) => {
                            return Err(unprocessable(format!("word {}: {problem} (GET /api/labels)", a.id)))
                        }
                    },
                },
            };
            out.push(ArcConstraint { word: a.id, head, label });
        }
        let constraints = Constraints::new(sent.len(), out).map_err(|e| unprocessable(e.to_string()))?;
        Ok((constraints, new_labels))
    }

    fn reparse(&self, who: &Annotator, body: &[u8]) -> Result<Response, Refusal> {
        let req: ArcsIn = parse_json(body)?;
        let model = self.serving();
        let (sent, check) = self.with_task(who, &req.task, |t| (t.sent.clone(), t.check.clone()))?;
        let sent = with_fixes(&sent, &tag_fixes(&sent, &req.arcs)?, &lemma_fixes(&sent, &req.arcs)?, &model);
        let mut reparser = Reparser::new(&model);
        let (constraints, new_labels) = self.constraints(&reparser, &sent, &req.arcs)?;
        let mut words = reparser.view(&sent, &constraints, &check, &ErrorModel::default());
        for w in &mut words {
            if let Some(label) = new_labels.get(&w.id) {
                w.deprel = label.clone();
            }
        }
        Ok(Response::json(200, &json!({ "words": words })))
    }

    fn answer(&self, who: &Annotator, body: &[u8]) -> Result<Response, Refusal> {
        let req: ArcsIn = parse_json(body)?;
        let model = self.serving();
        let (shown_sent, shown, checked, mut meta, known, sample) = self.with_task(who, &req.task, |t| {
            let meta = t.provenance(&req.task, who);
            let sample = t.sample.then(|| t.published_by.clone());
            (t.sent.clone(), t.shown.clone(), t.checked.clone(), meta, t.known.clone(), sample)
        })?;
        let fixes = tag_fixes(&shown_sent, &req.arcs)?;
        let lemmas = lemma_fixes(&shown_sent, &req.arcs)?;
        let sent = with_fixes(&shown_sent, &fixes, &lemmas, &model);
        let mut reparser = Reparser::new(&model);
        let (constraints, new_labels) = self.constraints(&reparser, &sent, &req.arcs)?;
        let n = sent.len();
        if req.whole && constraints.arcs().count() != n {
            return Err(unprocessable(format!(
                "a whole sentence needs every word's arc: {} of {n} given",
                constraints.arcs().count()
            )));
        }
        if constraints.arcs().next().is_none() {
            // The store takes a correction for its arcs: a tag alone would be refused there.
            return Err(unprocessable(
                "no arc to store: give at least one (a tag or lemma goes with an arc), or skip the task",
            ));
        }
        // Arcs given without a label take the one the model gives them around the others.
        let view: Vec<WordView> = reparser.view(&sent, &constraints, &[], &ErrorModel::default());
        let mut arcs: Vec<Option<(u32, String)>> = vec![None; n + 1];
        for a in constraints.arcs() {
            let w = &view[a.word as usize - 1];
            let label = new_labels.get(&a.word).unwrap_or(&w.deprel);
            arcs[a.word as usize] = Some((w.head, label.clone()));
        }
        let mut tags_checked = CheckedTags::default();
        for (w, fix) in fixes.iter().enumerate().skip(1) {
            match fix {
                Some(f) if f.whole_tag() => tags_checked.whole.push(w as u32),
                Some(_) => tags_checked.upos.push(w as u32),
                None => {}
            }
        }
        tags_checked.lemmas = (1..=n).filter(|&w| lemmas[w].is_some()).map(|w| w as u32).collect();
        let stamp = rubber_stamp(&arcs, &shown, &checked, req.whole, self.lease_ms(&req.task));
        let changes: Vec<ArcChange> = (1..=n)
            .filter(|&w| arcs[w].is_some() || fixes[w].is_some() || lemmas[w].is_some())
            .map(|w| {
                let tag = |s: &Sentence| {
                    let word = s.word(w);
                    (word.get(Column::Upos).to_string(), word.get(Column::Xpos).to_string())
                };
                ArcChange {
                    id: w as u32,
                    old_head: shown[w].0,
                    old_deprel: shown[w].1.clone(),
                    head: arcs[w].as_ref().map(|a| a.0),
                    deprel: arcs[w].as_ref().map(|a| a.1.clone()),
                    checked: checked.get(&(w as u32)).filter(|_| arcs[w].is_some()).cloned(),
                    tag: fixes[w].as_ref().map(|_| {
                        let ((old_upos, old_xpos), (upos, xpos)) = (tag(&shown_sent), tag(&sent));
                        TagChange { old_upos, old_xpos, upos, xpos }
                    }),
                    lemma: lemmas[w].as_ref().map(|new| LemmaChange {
                        old: shown_sent.word(w).get(Column::Lemma).to_string(),
                        new: new.clone(),
                    }),
                }
            })
            .collect();
        let counts = json!({ "stored": arcs.iter().flatten().count(), "tags": tags_checked.len(),
                             "lemmas": tags_checked.lemmas.len() });
        if let Some(known) = known {
            return self.answer_check(&meta, &known, &arcs, changes, stamp, counts);
        }
        // The checks first: an annotator they hold back is held back however long they took.
        let record = self.checks.standing.get(&who.name);
        let held_back = record.held_back().or_else(|| stamp.clone());
        if let Some(published_by) = sample.filter(|_| req.whole && held_back.is_none()) {
            meta.sample = sample_row(&shown_sent, &arcs);
            meta.published_by = published_by.filter(|_| meta.sample.is_some());
        }
        let written = match &held_back {
            None => self.answers.write_correction(&sent, &arcs, req.whole, &tags_checked, &meta),
            Some(why) => self.answers.write_held_back(&sent, &arcs, req.whole, &tags_checked, &meta, why),
        };
        let file = written.map_err(|e| Response::error(500, format!("the answer could not be stored: {e}")))?;
        if record.pending() && stamp.is_none() {
            let mut pending = self.checks.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.entry(who.name.clone()).or_default().push((meta.clone(), file.clone()));
        }
        if let Some(why) = held_back {
            self.finish(&meta, "held", changes, Some(why.clone()), Some(file))?;
            return Ok(held_back_response(&why));
        }
        let decision = if req.whole { "whole" } else { "answer" };
        self.finish(&meta, decision, changes, None, Some(file))?;
        Ok(Response::json(200, &counts))
    }

    /// An answer to a known-answer check: scored against gold, its result kept in the
    /// annotator's standing and the audit log (never as a correction), and answered as an
    /// answer to a task would be, `counts` or held back: with the standing's reason if it now
    /// holds the annotator back, else `stamp`'s.
    fn answer_check(
        &self,
        meta: &Provenance,
        known: &Known,
        arcs: &[Option<(u32, String)>],
        changes: Vec<ArcChange>,
        stamp: Option<String>,
        counts: serde_json::Value,
    ) -> Result<Response, Refusal> {
        let result = known::score(known, arcs);
        if let Some(passed) = result {
            self.checks
                .standing
                .record(&meta.annotator, passed)
                .map_err(|e| Response::error(500, format!("the check's result could not be stored: {e}")))?;
            self.checks.known.answered(&meta.annotator);
            self.settle_pending(&meta.annotator)?;
        }
        let reason = match result {
            Some(true) => "passed".to_string(),
            Some(false) => format!("failed: words {:?} the model had wrong not answered as gold", known.wrong),
            None => "not scored: no word the model had wrong was answered".to_string(),
        };
        let ms = self.lease_ms(&meta.task);
        let held_back = self.checks.standing.held_back(&meta.annotator).or(stamp);
        if held_back.is_none() {
            self.count_today(changes.iter().filter(|a| a.head.is_some()).count() as u64, ms);
        }
        self.finish(meta, "check", changes, Some(reason), None)?;
        Ok(match held_back {
            Some(why) => held_back_response(&why),
            None => Response::json(200, &counts),
        })
    }

    /// After a check's result: the answers that waited for it are stored if it released the
    /// annotator, and stay set aside (for a person) if it held them back for good.
    fn settle_pending(&self, annotator: &str) -> Result<(), Refusal> {
        let record = self.checks.standing.get(annotator);
        if record.pending() {
            return Ok(());
        }
        let waiting = self.checks.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(annotator);
        if record.held_back().is_some() {
            return Ok(());
        }
        for (meta, held) in waiting.unwrap_or_default() {
            match self.answers.release(&held) {
                Ok(file) => {
                    let d =
                        decision(&meta, "released", 0, Vec::new(), Some("the next check passed".into()), Some(file));
                    self.answers
                        .record(&d)
                        .map_err(|e| Response::error(500, format!("the audit log could not be written: {e}")))?;
                }
                Err(e) => tracing::warn!("workbench: {} stays set aside: {e}", held.display()),
            }
        }
        Ok(())
    }

    fn skip(&self, who: &Annotator, body: &[u8]) -> Result<Response, Refusal> {
        let req: TaskIn = parse_json(body)?;
        let meta = self.with_task(who, &req.task, |t| t.provenance(&req.task, who))?;
        let ms = self.lease_ms(&req.task);
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).skip(&req.task);
        self.tasks.lock().unwrap_or_else(|p| p.into_inner()).remove(&req.task);
        let d = decision(&meta, "skip", ms, Vec::new(), None, None);
        self.answers
            .record(&d)
            .map_err(|e| Response::error(500, format!("the audit log could not be written: {e}")))?;
        Ok(Response::json(200, &json!({})))
    }

    fn bad(&self, who: &Annotator, body: &[u8]) -> Result<Response, Refusal> {
        let req: TaskIn = parse_json(body)?;
        let reason = req.reason.as_deref().map(str::trim).filter(|r| !r.is_empty()).ok_or_else(|| {
            unprocessable("say why the sentence is bad (\"reason\"): broken tokenization, not a sentence, ...")
        })?;
        let (sent, meta, known) =
            self.with_task(who, &req.task, |t| (t.sent.clone(), t.provenance(&req.task, who), t.known.is_some()))?;
        if known {
            // A treebank sentence: nothing to set aside, and the check stays due.
            self.finish(&meta, "check", Vec::new(), Some(format!("not scored: flagged bad: {reason}")), None)?;
            return Ok(Response::json(200, &json!({})));
        }
        let file = self
            .answers
            .write_bad(&sent, reason, &meta)
            .map_err(|e| Response::error(500, format!("the sentence could not be set aside: {e}")))?;
        self.finish(&meta, "bad", Vec::new(), Some(reason.to_string()), Some(file))?;
        Ok(Response::json(200, &json!({})))
    }

    /// Records a final decision on a task durably, then takes it out of the queue for good.
    fn finish(
        &self,
        meta: &Provenance,
        kind: &str,
        arcs: Vec<ArcChange>,
        reason: Option<String>,
        file: Option<PathBuf>,
    ) -> Result<(), Refusal> {
        let task = meta.task.as_str();
        let ms = self.lease_ms(task);
        let arcs_count = arcs.iter().filter(|a| a.head.is_some()).count() as u64;
        let d = decision(meta, kind, ms, arcs, reason, file);
        self.answers
            .record(&d)
            .map_err(|e| Response::error(500, format!("the audit log could not be written: {e}")))?;
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        // A held-back answer says nothing of the parser's errors, nor does a check (another text).
        for arc in d.arcs.iter().filter(|_| kind != "held" && kind != "check") {
            if let (Some(checked), Some(changed)) = (&arc.checked, arc.changed()) {
                queue.observe(Pattern::from_name(&checked.pattern).key, checked.p, changed);
            }
        }
        queue.finish(task);
        drop(queue);
        self.tasks.lock().unwrap_or_else(|p| p.into_inner()).remove(task);
        // A held-back answer is no review: not counted as one; a check counts itself.
        if kind == "answer" || kind == "whole" {
            self.count_today(arcs_count, ms);
        }
        Ok(())
    }

    /// Counts an answered task of `arcs` arcs that took `ms` in today's figures.
    fn count_today(&self, arcs: u64, ms: u64) {
        let mut today = self.today.lock().unwrap_or_else(|p| p.into_inner());
        let day = unix_time() / 86_400;
        if today.day != day {
            *today = Today { day, ..Today::default() };
        }
        today.answered += 1;
        today.arcs += arcs;
        today.ms += ms;
    }

    fn lease_ms(&self, task: &str) -> u64 {
        let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lease) = q.get(task, Instant::now()) {
            return lease.since.elapsed().as_millis() as u64;
        }
        drop(q);
        let tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.get(task).and_then(|t| t.known.as_ref()).map_or(0, |k| k.since.elapsed().as_millis() as u64)
    }

    /// Checks handed out and not answered: counted as leased tasks, as the queue's are.
    fn checks_leased(&self) -> usize {
        let now = Instant::now();
        let tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.values().filter(|t| t.known.as_ref().is_some_and(|k| !k.expired(now))).count()
    }

    fn labels(&self) -> Response {
        let model = self.serving();
        let names = Reparser::new(&model).label_names();
        // What an arc may have besides the model's labels: a universal relation or a subtype UD
        // documents (the page offers only these; the answer routes refuse any other).
        let relations: Vec<&str> =
            crate::base::label::UD_RELATIONS.iter().chain(&crate::base::label::UD_SUBTYPES).copied().collect();
        Response::json(200, &json!({ "labels": names, "relations": relations }))
    }

    fn stats(&self) -> Response {
        let s = self.queue.lock().unwrap_or_else(|p| p.into_inner()).stats();
        let today = self.today.lock().unwrap_or_else(|p| p.into_inner());
        let current = today.day == unix_time() / 86_400;
        let (answered, arcs, ms) = if current { (today.answered, today.arcs, today.ms) } else { (0, 0, 0) };
        let per_hour = if ms > 0 { arcs as f64 * 3_600_000.0 / ms as f64 } else { 0.0 };
        Response::json(
            200,
            &json!({
                "answered_today": answered,
                "arcs_today": arcs,
                "arcs_per_hour": per_hour,
                "queue_left": s.left,
                "queued": s.queued,
                "leased": s.leased + self.checks_leased(),
                "duplicates": s.duplicates,
                "held_out": s.held_out,
                "held_back_files": s.held_back_files,
                "other_language": s.other_language,
                "sample_left": s.sample_left,
                "sample_population": s.sample_population,
                "sample_unscored": s.sample_unscored,
            }),
        )
    }

    /// The model history, each change with the gate's scores and reasons where a cycle's report
    /// has them, and the candidates cycles rejected (which never served), oldest first; `time`
    /// in seconds since the Unix epoch.
    fn models(&self, who: &Annotator) -> Result<Response, Refusal> {
        let history = self.registry.history().map_err(|e| Response::error(500, e.to_string()))?;
        let current = self.registry.current_name().ok().flatten();
        let reports = cycle_reports(self.registry.dir());
        let candidate = |r: &serde_json::Value| r["candidate"]["model"].as_str().map(str::to_string);
        // The candidate's scores, and the serving model's it was gated against (on the same
        // data, analyzed as each model analyzes text): the change a cycle made or would have.
        let scores = |report: Option<&serde_json::Value>| {
            let las = |model: &str, key: &str| report.and_then(|r| r[model][key].as_f64());
            // A report says 0 annotations LAS when there were no held-out annotations.
            let annotations_las = |model: &str| las(model, "annotations_las").filter(|&l| l > 0.0);
            // What the gate decides on (reports of cycles before it have none).
            let whole = |key: &str| report.and_then(|r| r["gate"]["annotations_whole"][key].as_f64());
            json!({
                "heldout_las": las("candidate", "heldout_las"),
                "heldout_las_before": las("current", "heldout_las"),
                "your_text_las": whole("candidate_las"),
                "your_text_las_before": whole("serving_las"),
                "annotations_las": annotations_las("candidate"),
                "annotations_las_before": annotations_las("current"),
                "reasons": report.map_or(json!([]), |r| r["reasons"].clone()),
            })
        };
        let mut models: Vec<serde_json::Value> = history
            .iter()
            .map(|c| {
                let report = reports.iter().find(|r| candidate(r).as_deref() == Some(c.model.as_str()));
                let mut v = scores(report);
                v["time"] = json!(c.time);
                v["event"] = json!(c.event.name());
                v["model"] = json!(c.model);
                v["from"] = json!(c.from);
                v
            })
            .collect();
        for r in reports.iter().filter(|r| r["decision"] == "rejected") {
            let mut v = scores(Some(r));
            v["time"] = r["started"].clone();
            v["event"] = json!("rejected");
            v["model"] = json!(candidate(r));
            models.push(v);
        }
        models.sort_by_key(|v| v["time"].as_u64().unwrap_or(0));
        // Read whole, as a cycle reads it: a page view, not a hot path.
        let stored = crate::retrain::store::Store::new(&self.annotated)
            .read()
            .map(|contents| crate::retrain::State::read(self.registry.dir()).new_sentences(&contents))
            .ok();
        let annotators = self.annotators(who);
        let decisions = self.answers.decisions().map_err(|e| Response::error(500, e.to_string()))?;
        let precision = sampled::summary(&sampled::answered(&decisions), &self.serving(), self.asked);
        Ok(Response::json(
            200,
            &json!({ "current": current, "models": models, "stored_since_last_cycle": stored, "annotators": annotators,
                     "precision": precision }),
        ))
    }

    /// Each annotator's standing on the known-answer checks (an admin sees everyone's, others
    /// their own): checks passed and failed, the latest, and why their answers are held back.
    fn annotators(&self, who: &Annotator) -> Vec<serde_json::Value> {
        let mut records = self.checks.standing.all();
        records.entry(who.name.clone()).or_default();
        records
            .into_iter()
            .filter(|(name, _)| who.admin || *name == who.name)
            .map(|(name, r)| {
                json!({ "name": name, "passed": r.passed, "failed": r.failed, "recent": r.recent,
                        "held_back": r.held_back() })
            })
            .collect()
    }

    fn retrain(&self, who: &Annotator) -> Result<Response, Refusal> {
        if !who.admin {
            return Err(Response::error(
                403,
                format!("{} is not an admin: only admins may ask for a retraining", who.name),
            ));
        }
        if !self.retraining {
            return Err(Response::error(
                409,
                "retraining is off in the daemon's configuration ([retrain] enabled = false): no cycle would run; \
                 set enabled = true with every = … under [retrain] and reload the daemon",
            ));
        }
        let request = self.annotated.join(RETRAIN_REQUEST);
        crate::base::io::write_atomically(&request, who.name.as_bytes())
            .map_err(|e| Response::error(500, format!("the request could not be written: {e}")))?;
        Ok(Response::json(202, &json!({})))
    }
}

/// The answer to an answer that was set aside, not stored: a page tells it by `held_back`, why.
fn held_back_response(why: &str) -> Response {
    Response::json(200, &json!({ "stored": 0, "held_back": why, "tags": 0, "lemmas": 0 }))
}

/// An audit line for a decision on the task of `meta`.
fn decision(
    meta: &Provenance,
    kind: &str,
    ms: u64,
    arcs: Vec<ArcChange>,
    reason: Option<String>,
    file: Option<PathBuf>,
) -> Decision {
    Decision {
        time: unix_time(),
        annotator: meta.annotator.clone(),
        decision: kind.to_string(),
        task: meta.task.clone(),
        source: meta.source.clone(),
        sent_id: meta.sent_id.clone(),
        ms,
        arcs,
        reason,
        file: file.map(|f| f.display().to_string()),
        sample: meta.sample,
        published_by: meta.published_by.clone(),
    }
}

/// What a sampled sentence answered whole measures: its `# confidence` and words as `published`
/// (the file's parse, which the daemon decided on), and how many of those words have the head
/// and the universal relation the answer gives them (`arcs` by word id), as the official
/// evaluator counts LAS; `None` for a sentence published without a confidence.
fn sample_row(published: &Sentence, arcs: &[Option<(u32, String)>]) -> Option<SentenceRow> {
    let confidence = published.comment("confidence")?.parse::<f64>().ok()?;
    let right = published
        .words()
        .zip(arcs.iter().skip(1))
        .filter(|(w, answer)| {
            answer.as_ref().is_some_and(|(head, deprel)| {
                w.get(Column::Head).parse::<u32>().ok() == Some(*head)
                    && universal(w.get(Column::Deprel)) == universal(deprel)
            })
        })
        .count();
    Some(SentenceRow { confidence, words: published.len() as u32, right: right as u32 })
}

/// The reports of retraining cycles in `dir` (`CANDIDATE.json`, written beside the candidate
/// whatever became of it: [`crate::retrain::Report`]), read as JSON for the few fields shown, so
/// that reports of every version read; files that are not one are passed over.
fn cycle_reports(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .filter(|r| r["candidate"]["model"].is_string())
        .collect()
}

//! `spoolparse train`: trains a parser (and optionally a tagger) on gold treebanks and writes
//! the model file.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use spoolparse::corpus::{Column, Format, Reader};
use spoolparse::learn::cw::CwOptions;
use spoolparse::learn::logistic::RdaOptions;
use spoolparse::model::file::{self as model_file, ModelFile, Precision, Recipe, WriteOptions};
use spoolparse::model::frequent_forms::{FormCounter, FrequentForms};
use spoolparse::model::neural::spec::Chars as NeuralCharsSpec;
use spoolparse::model::neural::{CharEncoder, Context as NeuralContext, Sections, Spec};
use spoolparse::model::tagger::TagSet;
use spoolparse::model::tokenizer::{self, Scores, Tokenizer, TokenizerModel};
use spoolparse::model::{Model, TrainingInfo};
use spoolparse::neural::network::Dropout;
use spoolparse::neural::trainer::NeuralEpoch;
use spoolparse::neural::{DevScore, NeuralOptions};
use spoolparse::train::pipeline_confidence::fit_pipeline_confidence;
use spoolparse::train::teacher::{teacher_parses, TeacherOptions, TeacherParses};
use spoolparse::train::{self, LearnerKind, Lifting, OracleKind, Progress, TaggerOptions, TrainOptions};
use spoolparse::transition::projective::Scheme;
use spoolparse::transition::{System, Transition};

use super::parse::RawSentencesArg;

/// Train a parser on gold CoNLL-U/CoNLL-X files.
#[derive(Args)]
pub struct TrainArgs {
    /// Training files (`.zst` allowed).
    #[arg(long, required = true, num_args = 1..)]
    train: Vec<PathBuf>,
    /// Dev file: scored after every epoch; the best epoch by LAS is kept.
    #[arg(long)]
    dev: Option<PathBuf>,
    /// Where to write the model.
    #[arg(long)]
    output: PathBuf,
    /// Transition system: arc-eager or arc-hybrid.
    #[arg(long, default_value = "arc-eager")]
    system: System,
    /// Pseudo-projective training (Nivre & Nilsson 2005): non-projective training trees are
    /// lifted with this label encoding (head, head+path, path) and parses lowered back;
    /// `none` skips non-projective trees and parses projective trees only.
    #[arg(long, default_value = "head", value_parser = parse_projective)]
    pseudo_projective: ProjectiveArg,
    /// Pseudo-projective training: encoded labels seen fewer times lose their mark (each
    /// label is a class, and costs parse speed); their arcs stay lifted in the output.
    #[arg(long, default_value_t = train::DEFAULT_MIN_LIFTED)]
    lift_min_count: usize,
    #[arg(long, value_enum, default_value = "dynamic")]
    oracle: OracleArg,
    /// perceptron (averaged), logistic (AdaGrad-RDA, L1: sparse), cw (confidence-weighted),
    /// cost-sensitive (learning to search with a cost-sensitive passive-aggressive learner),
    /// pa (the same with a plain multi-class one).
    #[arg(long, default_value = "perceptron", value_parser = parse_learner)]
    learner: LearnerKind,
    /// Confidence-weighted learner: φ, the margin in standard deviations.
    #[arg(long, default_value_t = TrainOptions::default().cw.phi)]
    cw_phi: f32,
    /// Confidence-weighted learner: every weight's prior variance.
    #[arg(long, default_value_t = TrainOptions::default().cw.variance)]
    cw_variance: f32,
    /// Passive-aggressive learners: the largest step C.
    #[arg(long, default_value_t = TrainOptions::default().pa_c)]
    pa_c: f32,
    /// Learning to search: the reference policy rolls in with probability (1 − α)^(epoch − 1).
    #[arg(long, default_value_t = TrainOptions::default().rollin_alpha)]
    rollin_alpha: f64,
    /// Leave out features seen fewer than N times on the oracle's path through the training
    /// data (1: keep all). Default 5 for perceptron, pa and cost-sensitive (up to +0.7 dev
    /// LAS, half the weights), 1 for logistic (it hurts) and cw (no gain on average).
    #[arg(long)]
    min_feature_count: Option<u32>,
    /// Logistic learner: learning rate α.
    #[arg(long, default_value_t = 1.0)]
    rda_alpha: f32,
    /// Logistic learner: ridge ρ.
    #[arg(long, default_value_t = 0.01)]
    rda_rho: f32,
    /// Logistic learner: L1 penalty λ (default 1/(20·training tokens)).
    #[arg(long)]
    rda_lambda: Option<f32>,
    /// Passes over the training data (at least 1).
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..))]
    epochs: u32,
    /// Exploration starts after this many epochs (default 2 for the perceptron, 1 for the
    /// logistic learner).
    #[arg(long)]
    explore_k: Option<u32>,
    /// Probability of following a zero-cost transition instead of the prediction.
    #[arg(long, default_value_t = 0.1)]
    explore_p: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Weight precision in the model file. i8 by default: dev LAS within 0.03 of f32 on
    /// every shared treebank (en_ewt 87.71 / 87.72, el_gdt 86.44 / 86.41, hu_szeged 77.66 /
    /// 77.63), a file 28% smaller, parsing a few % faster and scaling better on 2 threads.
    #[arg(long, value_enum, default_value = "i8")]
    quantize: QuantizeArg,
    /// Leave out weights whose absolute value is below this.
    #[arg(long, default_value_t = 0.0)]
    prune: f32,
    /// Prune further, by the smallest threshold at which the parser's weight table fits in
    /// this many MB (10^6 bytes), so that a parser-only model stays under 10 MB; 0: no bound.
    #[arg(long, default_value_t = 9.5)]
    max_table_mb: f64,
    /// Also train the analysis of tokenized text: a part-of-speech tagger (UPOS and XPOS), then
    /// morphological features (FEATS) and a lemmatizer (LEMMA), where the training files have
    /// them; the parser then reads the predicted LEMMA and FEATS.
    #[arg(long)]
    tagger: bool,
    /// With --tagger: train the parser (and FEATS and lemmas) on tags, FEATS and lemmas predicted
    /// by K-fold jackknifing (0: on the gold columns).
    #[arg(long, default_value_t = 4)]
    jackknife: usize,
    /// With --tagger: tagger and lemmatizer training epochs (FEATS: half as many; at least 1).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    tagger_epochs: u32,
    /// Also train a tokenizer and sentence splitter for raw text (`parse --format raw`), from
    /// the training files' `# text`, `SpaceAfter=No`, multiword tokens and paragraphs.
    #[arg(long)]
    tokenizer: bool,
    /// With --tokenizer: tokenizer training epochs (at least 1).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    tokenizer_epochs: u32,
    /// Replace an existing --output (atomically: whoever has the old file open keeps it);
    /// without this an existing output is an error, before any training.
    #[arg(long)]
    overwrite: bool,
    /// Train the accurate tier: a neural parser (hashed and character-aware word vectors, a
    /// windowed convolution over the sentence, an MLP over stack and buffer items) in place
    /// of the linear one, with the same transition system, dynamic oracle and exploration;
    /// --tagger and --tokenizer train the analysis and tokenizer as for a linear model.
    #[arg(long)]
    neural: bool,
    /// --neural: passes over the training data (at least 1); by default as many as make about
    /// 9,000 steps, at least 10 and at most 90 (en_ewt: 23, hu_szeged: 88).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    neural_epochs: Option<u32>,
    /// --neural: sentences per training step; by default 32, or fewer (down to 8) for a
    /// training set under 3,200 sentences (a step per 100th of it).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    neural_batch: Option<usize>,
    /// --neural: Adam's learning rate.
    #[arg(long, default_value_t = NeuralOptions::default().learning_rate)]
    neural_learning_rate: f64,
    /// --neural: share of the input and contextual values dropped in training.
    #[arg(long, default_value_t = NeuralOptions::default().dropout.values)]
    neural_dropout: f32,
    /// --neural: share of words whose form embedding is dropped in training (as an unseen
    /// form's is at parse time).
    #[arg(long, default_value_t = NeuralOptions::default().dropout.words)]
    neural_word_dropout: f32,
    /// --neural: the architecture's size: `base`, or `small` (seconds to train, for tests and
    /// trials; far less accurate).
    #[arg(long, value_enum, default_value = "base")]
    neural_size: NeuralSize,
    /// --neural: the contextual encoder over the sentence: `bilstm` (two residual
    /// bidirectional LSTM layers, each word seeing the whole sentence) or `conv` (four residual
    /// dilated convolutions, each word seeing 15 words either way: faster, less accurate).
    #[arg(long, value_enum, default_value = "bilstm")]
    neural_encoder: NeuralEncoder,
    /// --neural: what makes a word's character vector from its characters: `conv` (a
    /// width-3 convolution, max-pooled) or `bilstm` (a bidirectional LSTM, as wide in all).
    #[arg(long, value_enum, default_value = "conv")]
    neural_chars: NeuralChars,
    /// --neural: width of a word's character vector (convolution filters, or both directions'
    /// units of the character BiLSTM; even for it); the size's own by default: base 64, small 16.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=1024))]
    neural_char_width: Option<usize>,
    /// --neural: width of the contextual word vectors (even; the size's own by default:
    /// base 128, small 32).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=4096))]
    neural_dim: Option<usize>,
    /// --neural --tagger: the neural model tags UPOS and XPOS itself, a softmax over the
    /// vectors its parser reads, trained with the parser on the gold tags (the tagger's tag
    /// set its classes): `stacked`, its words reading the analysis's tags and FEATS, which it
    /// corrects; `forms`, its words reading no tag. FEATS and lemmas stay the analysis's,
    /// reading its tags.
    #[arg(long, value_enum, requires_all = ["neural", "tagger"])]
    neural_tagger: Option<NeuralTaggerArg>,
    /// Uptraining (Petrov et al. 2010): this model (an accurate one, of `train --neural`)
    /// parses the --unlabeled text, and its confident parses are trained on beside the
    /// training files, so that the model learns the text's domain.
    #[arg(long, requires = "unlabeled")]
    teacher: Option<PathBuf>,
    /// With --teacher: text of the domain to learn (raw text `.raw`, tokenized `.txt`, CoNLL-U
    /// or CoNLL-X, `.zst` allowed; the trees of CoNLL-U are not read).
    #[arg(long, num_args = 1.., requires = "teacher")]
    unlabeled: Vec<PathBuf>,
    /// With --teacher: a parse is trained on if its `# confidence` (the share of its arcs
    /// expected to be right) is at least this; 0 trains on every parse.
    #[arg(long, default_value_t = train::teacher::DEFAULT_MIN_CONFIDENCE)]
    teacher_min_confidence: f64,
    /// With --teacher: times each kept parse is trained on per epoch.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    teacher_weight: u32,
    /// With --teacher: where the sentences of raw --unlabeled text end, as `parse
    /// --raw-sentences` says: `model` (the teacher's tokenizer) or `lines` (one a line).
    #[arg(long, value_enum, default_value = "model", requires = "teacher")]
    raw_sentences: RawSentencesArg,
}

/// `train --teacher`: the model whose parses of the unlabeled files are trained on.
struct TeacherJob {
    model: PathBuf,
    unlabeled: Vec<PathBuf>,
    min_confidence: f64,
    weight: u32,
    raw_sentences: RawSentencesArg,
}

impl TeacherJob {
    /// Parses the unlabeled files with the teacher on every core: first of all, so that a
    /// missing or malformed file stops the run before any training.
    fn parse(&self) -> Result<TeacherParses> {
        let started = std::time::Instant::now();
        let teacher = spoolparse::parse::files::open_model(&self.model, true)
            .with_context(|| format!("opening the teacher {}", self.model.display()))?;
        let opts = TeacherOptions {
            min_confidence: self.min_confidence,
            threads: spoolparse::base::available_cpus(),
            raw_sentences: self.raw_sentences.into(),
            max_words: None,
        };
        let parses = teacher_parses(&std::sync::Arc::new(teacher), &self.unlabeled, opts)?;
        eprintln!(
            "teacher {}: kept {}, each trained on {}× an epoch; {:.1}s",
            self.model.display(),
            parses.describe(self.min_confidence),
            self.weight,
            started.elapsed().as_secs_f64()
        );
        Ok(parses)
    }
}

/// `--neural-encoder`.
#[derive(Clone, Copy, ValueEnum)]
enum NeuralEncoder {
    Conv,
    Bilstm,
}

/// `--neural-chars`.
#[derive(Clone, Copy, ValueEnum)]
enum NeuralChars {
    Conv,
    Bilstm,
}

/// `--neural-size`.
#[derive(Clone, Copy, ValueEnum)]
enum NeuralSize {
    Base,
    Small,
}

impl NeuralSize {
    fn spec(
        self,
        classes: usize,
        encoder: NeuralEncoder,
        (chars, width): (NeuralChars, Option<usize>),
        dim: Option<usize>,
    ) -> Spec {
        let context = match encoder {
            NeuralEncoder::Conv => NeuralContext::conv(),
            NeuralEncoder::Bilstm => NeuralContext::bilstm(),
        };
        let spec = match self {
            NeuralSize::Base => Spec { context, ..Spec::default_for(classes) },
            NeuralSize::Small => Spec { context: context.small(), ..Spec::small_for(classes) },
        };
        let encoder = match chars {
            NeuralChars::Conv => CharEncoder::Conv,
            NeuralChars::Bilstm => CharEncoder::BiLstm,
        };
        Spec {
            dim: dim.unwrap_or(spec.dim),
            chars: NeuralCharsSpec { encoder, filters: width.unwrap_or(spec.chars.filters), ..spec.chars },
            ..spec
        }
    }
}

/// `train --neural`: how to train, and the architecture.
struct NeuralJob {
    /// Every option but the schedule, which is `epochs` and `batch` where given and
    /// otherwise follows from the training set's size ([`NeuralOptions::schedule`]).
    opts: NeuralOptions,
    epochs: Option<u32>,
    batch: Option<usize>,
    size: NeuralSize,
    encoder: NeuralEncoder,
    /// `--neural-chars` and `--neural-char-width`.
    chars: (NeuralChars, Option<usize>),
    dim: Option<usize>,
    /// `--neural-tagger`: none, or whether its words read the analysis's tags.
    tagger: Option<bool>,
}

/// `--neural-tagger`.
#[derive(Clone, Copy, ValueEnum)]
enum NeuralTaggerArg {
    Stacked,
    Forms,
}

/// `--pseudo-projective`: a scheme, or `none`.
#[derive(Clone, Copy)]
struct ProjectiveArg(Option<Scheme>);

fn parse_projective(text: &str) -> Result<ProjectiveArg, String> {
    match text {
        "none" => Ok(ProjectiveArg(None)),
        _ => text
            .parse()
            .map(|s| ProjectiveArg(Some(s)))
            .map_err(|_| format!("unknown pseudo-projective scheme {text:?}: head, head+path, path or none")),
    }
}

fn parse_learner(name: &str) -> Result<LearnerKind, String> {
    LearnerKind::from_name(name).ok_or_else(|| {
        let names: Vec<_> = LearnerKind::ALL.iter().map(|k| k.name()).collect();
        format!("unknown learner {name:?}; one of {}", names.join(", "))
    })
}

#[derive(Clone, Copy, ValueEnum)]
enum OracleArg {
    Static,
    Dynamic,
}

impl From<OracleArg> for OracleKind {
    fn from(o: OracleArg) -> OracleKind {
        match o {
            OracleArg::Static => OracleKind::Static,
            OracleArg::Dynamic => OracleKind::Dynamic,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum QuantizeArg {
    F32,
    F16,
    I8,
}

impl From<QuantizeArg> for Precision {
    fn from(q: QuantizeArg) -> Precision {
        match q {
            QuantizeArg::F32 => Precision::F32,
            QuantizeArg::F16 => Precision::F16,
            QuantizeArg::I8 => Precision::I8,
        }
    }
}

/// A training run as the library takes it: every argument checked.
struct TrainJob {
    train: Vec<PathBuf>,
    dev: Option<PathBuf>,
    output: ModelOutput,
    opts: TrainOptions,
    write: WriteOptions,
    tagger: Option<TaggerOptions>,
    /// Tokenizer training epochs, if one is trained.
    tokenizer: Option<u32>,
    lifting: Option<Lifting>,
    neural: Option<NeuralJob>,
    teacher: Option<TeacherJob>,
}

impl TryFrom<TrainArgs> for TrainJob {
    type Error = anyhow::Error;

    fn try_from(a: TrainArgs) -> Result<TrainJob> {
        if !(0.0..=1.0).contains(&a.explore_p) {
            bail!("--explore-p must be between 0 and 1, got {}", a.explore_p);
        }
        if !(0.0..=1.0).contains(&a.rollin_alpha) {
            bail!("--rollin-alpha must be between 0 and 1, got {}", a.rollin_alpha);
        }
        if !(a.cw_phi > 0.0 && a.cw_variance > 0.0 && a.pa_c > 0.0) {
            bail!("--cw-phi, --cw-variance and --pa-c must be positive");
        }
        let learner = a.learner;
        let opts = TrainOptions {
            system: a.system,
            learner,
            oracle: a.oracle.into(),
            epochs: a.epochs,
            explore_k: a.explore_k.unwrap_or(learner.default_explore_k()),
            explore_p: a.explore_p,
            seed: a.seed,
            rda: RdaOptions { alpha: a.rda_alpha, rho: a.rda_rho, lambda: a.rda_lambda },
            cw: CwOptions { phi: a.cw_phi, variance: a.cw_variance },
            pa_c: a.pa_c,
            rollin_alpha: a.rollin_alpha,
            min_feature_count: a.min_feature_count.unwrap_or(learner.default_min_feature_count()),
            // `train` reads one treebank: there is no user's text to augment.
            domain_features: false,
        };
        if !(0.0..1.0).contains(&a.neural_dropout)
            || !(0.0..=1.0).contains(&a.neural_word_dropout)
            || a.neural_learning_rate <= 0.0
            || a.neural_learning_rate.is_nan()
        {
            bail!(
                "--neural-dropout must be in [0, 1), --neural-word-dropout in [0, 1], --neural-learning-rate positive"
            );
        }
        if matches!(a.neural_encoder, NeuralEncoder::Bilstm) && a.neural_dim.is_some_and(|d| d % 2 == 1) {
            bail!("--neural-dim must be even with --neural-encoder bilstm (half of it runs each way)");
        }
        if matches!(a.neural_chars, NeuralChars::Bilstm) && a.neural_char_width.is_some_and(|w| w % 2 == 1) {
            bail!("--neural-char-width must be even with --neural-chars bilstm (half of it runs each way)");
        }
        let neural = a.neural.then_some(NeuralJob {
            opts: NeuralOptions {
                system: a.system,
                epochs: 0,
                batch: 0,
                learning_rate: a.neural_learning_rate,
                dropout: Dropout { values: a.neural_dropout, words: a.neural_word_dropout },
                explore_k: a.explore_k.unwrap_or(NeuralOptions::default().explore_k),
                explore_p: a.explore_p,
                seed: a.seed,
            },
            epochs: a.neural_epochs,
            batch: a.neural_batch,
            size: a.neural_size,
            encoder: a.neural_encoder,
            chars: (a.neural_chars, a.neural_char_width),
            dim: a.neural_dim,
            tagger: a.neural_tagger.map(|t| matches!(t, NeuralTaggerArg::Stacked)),
        });
        if !(0.0..=1.0).contains(&a.teacher_min_confidence) {
            bail!("--teacher-min-confidence must be between 0 and 1, got {}", a.teacher_min_confidence);
        }
        let teacher = a.teacher.map(|model| TeacherJob {
            model,
            unlabeled: a.unlabeled,
            min_confidence: a.teacher_min_confidence,
            weight: a.teacher_weight,
            raw_sentences: a.raw_sentences,
        });
        let max_table_bytes = (a.max_table_mb > 0.0).then_some((a.max_table_mb * 1e6) as u64);
        let lift_min_count = a.lift_min_count;
        Ok(TrainJob {
            train: a.train,
            dev: a.dev,
            output: ModelOutput { path: a.output, overwrite: a.overwrite },
            opts,
            write: WriteOptions { precision: a.quantize.into(), prune_below: a.prune, max_table_bytes },
            tagger: a.tagger.then_some(TaggerOptions { epochs: a.tagger_epochs, jackknife: a.jackknife }),
            tokenizer: a.tokenizer.then_some(a.tokenizer_epochs),
            lifting: a.pseudo_projective.0.map(|scheme| Lifting { scheme, min_count: lift_min_count }),
            neural,
            teacher,
        })
    }
}

impl TrainJob {
    /// Every file the run reads but the dev file: the model must not be written over one.
    fn inputs(&self) -> Vec<PathBuf> {
        let teacher = self.teacher.iter().flat_map(|t| std::iter::once(&t.model).chain(&t.unlabeled));
        self.train.iter().chain(teacher).cloned().collect()
    }
}

/// Where `train` writes its model, and whether it may replace an existing file.
struct ModelOutput {
    path: PathBuf,
    overwrite: bool,
}

impl ModelOutput {
    /// Never over a training or dev file, over an existing file only with `overwrite`, and
    /// into a directory that exists. Checked before training, which may take hours, and again
    /// before writing.
    fn check(&self, train: &[PathBuf], dev: Option<&Path>) -> Result<()> {
        let path = &self.path;
        for input in train.iter().map(PathBuf::as_path).chain(dev) {
            if spoolparse::base::io::same_file(path, input) {
                bail!("{}: the model cannot be written over the input {}", path.display(), input.display());
            }
        }
        if !self.overwrite && std::fs::symlink_metadata(path).is_ok() {
            bail!("{} exists; --overwrite replaces it", path.display());
        }
        let dir = spoolparse::base::io::parent_dir(path);
        if !dir.is_dir() {
            bail!("{}: no directory {} to write the model in", path.display(), dir.display());
        }
        Ok(())
    }
}

/// The commonest forms of the training files, which the input check tells their language by.
fn frequent_forms(train: &[PathBuf]) -> Result<Option<FrequentForms>> {
    let mut counter = FormCounter::default();
    for path in train {
        for sent in Reader::open(path, Format::from_path(path))? {
            sent?.words().for_each(|w| counter.add(w.get(Column::Form)));
        }
    }
    Ok(counter.finish())
}

/// Trains the tokenizer on the raw text of `train`, scored on that of `dev`.
fn train_tokenizer(
    train: &[PathBuf],
    dev: Option<&Path>,
    epochs: u32,
    seed: u64,
) -> Result<(TokenizerModel, Option<Scores>)> {
    let started = std::time::Instant::now();
    let mut corpus = tokenizer::load_raw(train)?;
    let chars: usize = corpus.paragraphs.iter().map(|p| p.chars.len()).sum();
    let mwt = corpus.mwt_dict();
    let model = tokenizer::train_tokenizer(&corpus.paragraphs, mwt, epochs, seed);
    let scores = match dev {
        None => None,
        Some(dev) => {
            let dev = tokenizer::load_raw(&[dev.to_path_buf()])?;
            Some(tokenizer::evaluate(&mut Tokenizer::from_model(&model), &dev.paragraphs))
        }
    };
    eprintln!(
        "tokenizer: {} paragraphs, {chars} characters, {} multiword forms, {} weights, {:.1}s{}",
        corpus.paragraphs.len(),
        model.mwt.len(),
        model.weights.nonzero(),
        started.elapsed().as_secs_f64(),
        scores.map_or(String::new(), |s| format!("; dev tokens F1 {:.2}, sentences F1 {:.2}", s.tokens, s.sentences))
    );
    Ok((model, scores))
}

/// Trains the neural parser of `train --neural`, reporting each epoch: the model (with an empty
/// linear table) and the neural model's sections.
fn train_neural_parser(
    set: &train::TrainingSet,
    dev: Option<&[train::DevSentence]>,
    job: &NeuralJob,
    info: TrainingInfo,
    dev_tags: &str,
    tags: Option<&TagSet>,
) -> Result<(Model, Sections)> {
    let classes = Transition::count(set.labels.as_ref().map_or(1, |l| l.len()));
    let mut spec = job.size.spec(classes, job.encoder, job.chars, job.dim);
    let tags = tags.filter(|_| job.tagger.is_some());
    if let (Some(tags), Some(over_analysis)) = (tags, job.tagger) {
        spec = spec.tagging(tags.len(), over_analysis);
    }
    eprintln!("neural parser: {}", spec.summary());
    let sentences = set.sentences.iter().map(|s| s.copies as usize).sum();
    let schedule = NeuralOptions::schedule(sentences);
    let opts = NeuralOptions {
        batch: job.batch.unwrap_or(schedule.batch),
        epochs: job.epochs.unwrap_or(schedule.epochs),
        ..job.opts
    };
    eprintln!("neural training: {} epochs of batches of {} sentences", opts.epochs, opts.batch);
    let mut report = |e: &NeuralEpoch| {
        let dev = match e.dev {
            None => String::new(),
            Some(DevScore { las, tags: None }) => format!("dev ({dev_tags}) LAS {las:.2}, "),
            Some(DevScore { las, tags: Some(tags) }) => format!("dev LAS {las:.2}, tags {tags:.2}, "),
        };
        eprintln!(
            "epoch {:2}: {dev}loss {:.4}, {:.0} words/s, {} of {} decisions wrong",
            e.epoch,
            e.loss,
            e.words as f64 / e.seconds,
            e.errors,
            e.decisions
        );
    };
    let (model, neural) = train::train_neural(set, dev, Some(spec), tags, &opts, info, &mut report)?;
    Ok((model, neural.sections()))
}

/// Runs `spoolparse train`.
pub fn exec(args: TrainArgs) -> Result<()> {
    let job = TrainJob::try_from(args)?;
    let TrainJob { train, dev, output, opts, write, tagger, tokenizer, lifting, neural, teacher } = &job;
    let (train, dev, opts, write) = (train.as_slice(), dev.as_deref(), opts, *write);
    output.check(&job.inputs(), dev)?;
    let taught = teacher.as_ref().map(TeacherJob::parse).transpose()?;
    let tokenizer = tokenizer.map(|epochs| train_tokenizer(train, dev, epochs, opts.seed)).transpose()?;
    let mut prepared = train::prepare(train, dev, *tagger, *lifting, opts.seed)?;
    if let (Some(t), Some(a)) = (tagger, prepared.dev_analysis) {
        eprintln!(
            "analysis: dev UPOS {:.2} XPOS {:.2} UFeats {:.2} Lemmas {:.2} (gold tokens); parser trained on {}",
            a.upos,
            a.xpos,
            a.ufeats,
            a.lemmas,
            if t.jackknife >= 2 {
                format!("{}-fold jackknifed tags, FEATS and lemmas", t.jackknife)
            } else {
                "gold tags, FEATS and lemmas".to_string()
            }
        );
    }
    if let (Some(teacher), Some(parses)) = (teacher, &taught) {
        prepared.set.add_all(&parses.sentences, teacher.weight, train::Domain::Base)?;
    }
    let set = &prepared.set;
    let lifted = match set.projective {
        Some(scheme) => format!(
            "{} non-projective lifted ({} lifts, {scheme}; {} rare encoded labels left unmarked)",
            set.lifted_sentences, set.lifts, set.stripped_rare_lifts
        ),
        None => format!("{} non-projective skipped", set.skipped_nonprojective),
    };
    eprintln!(
        "training on {} sentences, {} words ({lifted}, {} not single-rooted skipped); {}, oracle {}",
        set.sentences.len(),
        set.words,
        set.skipped_root,
        opts.system,
        opts.oracle.name()
    );
    if set.sentences.is_empty() {
        bail!("no usable training sentence in {train:?}");
    }
    let (dev_upos, dev_xpos) = prepared.dev_analysis.map_or((0.0, 0.0), |a| (a.upos, a.xpos));
    let info = TrainingInfo {
        train_files: train.iter().map(|p| p.display().to_string()).collect(),
        dev_file: dev.map(|p| p.display().to_string()),
        jackknife: tagger.map_or(0, |t| if t.jackknife >= 2 { t.jackknife as u32 } else { 0 }),
        dev_upos,
        dev_xpos,
        ..TrainingInfo::default()
    };
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(set.sentences.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("epoch {prefix} [{bar:40}] {pos}/{len} sentences {per_sec} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    // With a tagger, dev is tagged by it (as tokenized text would be) and scores lower than a
    // parse of the same file with its gold tags: every dev figure says which it used.
    let dev_tags = if tagger.is_some() { "predicted tags" } else { "gold tags" };
    let mut on_progress = |p: Progress| match p {
        Progress::Sentences { epoch, done, .. } => {
            if let Some(bar) = &bar {
                bar.set_prefix(epoch.to_string());
                bar.set_position(done as u64);
            }
        }
        Progress::Epoch(r) => {
            let line = match &r.dev {
                Some(d) => format!(
                    "epoch {:2}: dev ({dev_tags}) UAS {:.2} LAS {:.2} (no punct UAS {:.2} LAS {:.2}), {:.0} words/s, {} of {} transitions wrong",
                    r.epoch, d.uas, d.las, d.uas_no_punct, d.las_no_punct,
                    r.words as f64 / r.seconds, r.errors, r.transitions
                ),
                None => format!(
                    "epoch {:2}: {:.0} words/s, {} of {} transitions wrong",
                    r.epoch, r.words as f64 / r.seconds, r.errors, r.transitions
                ),
            };
            match &bar {
                Some(bar) => bar.println(line),
                None => eprintln!("{line}"),
            }
        }
    };
    let (mut model, mut sections) = match neural {
        None => (train::train(set, prepared.dev.as_deref(), opts, info, &mut on_progress), Vec::new()),
        Some(job) => {
            let tags = prepared.analysis.as_ref().map(|a| &a.tagger.tags);
            train_neural_parser(set, prepared.dev.as_deref(), job, info, dev_tags, tags)?
        }
    };
    if let Some(a) = prepared.analysis {
        model.tagger = Some(a.tagger);
        model.feats = a.feats;
        model.lemmatizer = a.lemmatizer;
    }
    model.tokenizer = tokenizer;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let recipe = Recipe {
        learner: opts.learner.name().to_string(),
        rda_alpha: opts.rda.alpha,
        rda_rho: opts.rda.rho,
        rda_lambda: opts.rda.lambda,
        precision: write.precision,
        prune_below: write.prune_below,
        max_table_bytes: write.max_table_bytes,
        lift_min_count: lifting.map(|l| l.min_count),
        cw_phi: Some(opts.cw.phi),
        cw_variance: Some(opts.cw.variance),
        pa_c: Some(opts.pa_c),
        rollin_alpha: Some(opts.rollin_alpha),
        min_feature_count: Some(opts.min_feature_count),
    };
    if let Some(frequent) = frequent_forms(train)? {
        sections.push((model_file::LANGMETA, serde_json::to_vec(&frequent)?));
    }
    let extras = model_file::Extras { recipe: Some(&recipe), tagger_from: None, sections: &sections };
    // Again: the output may have appeared while training.
    output.check(&job.inputs(), dev)?;
    let path = output.path.as_path();
    let meta = model_file::write_with(&model, path, write, extras)
        .with_context(|| format!("writing the model to {}", path.display()))?;
    // The whole pipeline's confidence is fitted on dev parsed by the model as written (its
    // stored, possibly quantized weights), then the file is written again with it.
    if let Some(dev) = dev {
        let file = std::sync::Arc::new(ModelFile::open(path)?);
        let fitted = fit_pipeline_confidence(&file, dev)
            .with_context(|| format!("fitting the confidence on {}", dev.display()))?;
        if let Some(confidence) = fitted {
            eprintln!("confidence: {}", super::calibrate::describe(&confidence));
            eprintln!("min precision: {}", super::calibrate::describe_precisions(&confidence));
            model_file::write_with_confidence(&file, &confidence, path)
                .with_context(|| format!("writing the model to {}", path.display()))?;
        }
    }
    // Without --dev there is no dev LAS: the last epoch is kept.
    let chosen = match dev {
        Some(_) => format!("dev LAS {:.2}, {dev_tags}", model.info.dev_las),
        None => "the last; no --dev to choose by".to_string(),
    };
    if neural.is_some() {
        let file = ModelFile::open(path)?;
        let values = file.neural().map_or(0, |net| net.len());
        eprintln!(
            "kept epoch {} ({chosen}); {values} neural weights (f32); wrote {}",
            model.info.best_epoch,
            path.display()
        );
        return Ok(());
    }
    eprintln!(
        "kept epoch {} ({chosen}); {} non-zero weights over {} features, {} stored; wrote {}",
        model.info.best_epoch,
        model.weights.nonzero(),
        model.weights.features(),
        meta.weights,
        path.display()
    );
    // The dev scores above are those of the full-precision weights: say what was stored scores.
    if let Some(dev) =
        prepared.dev.as_deref().filter(|_| meta.table.precision != Precision::F32 || meta.pruned_below > 0.0)
    {
        let file = ModelFile::open(path)?;
        let s = train::evaluate_dev(file.encoding(), dev, file.weights(), &file.meta().labels, file.meta().fallback);
        eprintln!(
            "as stored ({:?}, pruned below {}): dev ({dev_tags}) UAS {:.2} LAS {:.2} (no punct UAS {:.2} LAS {:.2})",
            meta.table.precision, meta.pruned_below, s.uas, s.las, s.uas_no_punct, s.las_no_punct
        );
    }
    Ok(())
}

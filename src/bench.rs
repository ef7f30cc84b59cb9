//! In-memory parse-speed measurement (`spoolparse bench`): the file is read once, then parsed
//! repeatedly, so only feature extraction, scoring and writing HEAD/DEPREL are timed.

use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;

use crate::corpus::{CorpusError, Format, Reader, Sentence};
use crate::model_file::ModelFile;
use crate::parser::Parser;
use crate::pipeline::PipelineError;

/// What a measurement saw.
#[derive(Debug, Clone, Copy)]
pub struct BenchResult {
    /// Words per round.
    pub words: usize,
    pub rounds: usize,
    pub seconds: f64,
}

impl BenchResult {
    /// Throughput over all rounds.
    pub fn words_per_second(&self) -> f64 {
        (self.words * self.rounds) as f64 / self.seconds
    }
}

/// Parses the sentences of `file` again and again for at least `seconds` with `threads`
/// threads (each a parser of its own over the shared model).
pub fn run(model: &ModelFile, file: &Path, threads: usize, seconds: f64) -> Result<BenchResult, PipelineError> {
    let mut sentences: Vec<Sentence> =
        Reader::open(file, Format::from_path(file))?.collect::<Result<_, CorpusError>>()?;
    let words = sentences.iter().map(Sentence::len).sum();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| PipelineError::Pool(e.to_string()))?;
    let chunk = sentences.len().div_ceil(threads.max(1) * 16).max(1);
    let round = |sentences: &mut [Sentence]| {
        if threads <= 1 {
            let mut parser = Parser::new(model);
            sentences.iter_mut().for_each(|s| parser.parse(s));
        } else {
            pool.install(|| {
                sentences
                    .par_chunks_mut(chunk)
                    .for_each_init(|| Parser::new(model), |parser, part| part.iter_mut().for_each(|s| parser.parse(s)))
            });
        }
    };
    round(&mut sentences); // warm-up: page in the model
    let started = Instant::now();
    let mut rounds = 0;
    while rounds == 0 || started.elapsed().as_secs_f64() < seconds {
        round(&mut sentences);
        rounds += 1;
    }
    Ok(BenchResult { words, rounds, seconds: started.elapsed().as_secs_f64() })
}

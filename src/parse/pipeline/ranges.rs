//! One big file parsed as independent shards, each by its own one-thread pipeline, their
//! outputs joined in order: where that beats the shared pipeline, and how the outputs are
//! joined.

use std::io::{self, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use crate::model::file::ModelFile;

use super::{parse_inputs_split, Input, Outputs, ParseStats, PipelineError, PipelineOptions};

/// A plain file below this size is parsed by the shared pipeline, whatever the threads.
const MIN_PARALLEL_BYTES: u64 = 1 << 20;

/// With several threads and one whole plain file of at least [`MIN_PARALLEL_BYTES`]: the
/// file's sentence-aligned byte ranges, one per thread.
pub(super) fn parallel_ranges(inputs: &[Input], opts: &PipelineOptions) -> Option<Vec<Range<u64>>> {
    let [input] = inputs else { return None };
    // Raw text is never split (`shard_ranges` says why): the shared pipeline tokenizes its
    // pieces on every thread (`crate::parse::raw::split`).
    if opts.threads <= 1 || input.range.is_some() {
        return None;
    }
    let meta = std::fs::metadata(&input.path).ok()?;
    if !meta.is_file() || meta.len() < MIN_PARALLEL_BYTES {
        return None;
    }
    let share = meta.len().div_ceil(opts.threads as u64);
    // A file that cannot be split is parsed by the shared pipeline, which reports what is wrong.
    let ranges = crate::corpus::shard::shard_ranges(&input.path, opts.format_of(&input.path), share).ok()??;
    (ranges.len() > 1).then_some(ranges)
}

/// Parses the ranges of `path` at once, each by its own one-thread pipeline: the first writes
/// to `out` as it goes, the others to anonymous temporary files (in `TMPDIR`), appended to
/// `out` in order once the first is done. The output is the same bytes as one pipeline's.
///
/// Why: the shared pipeline's threads take turns on one reader and one writer, and two of them
/// reach 1.75× one thread on en_ewt dev ×24, where two pipelines over the two halves of the
/// file reach 2.0–2.1× (measured through the Python package's `parse_file(byte_range=…)`, the
/// closing note of issue 13). The price is disk: all but the first share of the output is
/// held in `TMPDIR` until the first share is written. On bad input the error is the first
/// range's, else the next one's; the output then holds the first range's parses only.
pub(super) fn parse_ranges_in_parallel(
    model: &Arc<ModelFile>,
    path: &Path,
    ranges: Vec<Range<u64>>,
    mut spills: Vec<Spill>,
    mut out: Outputs<'_>,
    opts: PipelineOptions,
) -> Result<ParseStats, PipelineError> {
    let opts = PipelineOptions { threads: 1, ..opts };
    let cancel = out.cancel;
    let job = |range: &Range<u64>| Input { path: path.to_path_buf(), range: Some(range.clone()) };
    let (first, results) = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges[1..]
            .iter()
            .zip(spills.iter_mut())
            .map(|(range, (accepted, rejected))| {
                let input = [job(range)];
                scope.spawn(move || {
                    let rejected = rejected.as_mut().map(|r| r as &mut (dyn Write + Send));
                    let out = Outputs { accepted, rejected, cancel, confidences: None };
                    parse_inputs_split(model, &input, out, opts)
                })
            })
            .collect();
        // `&mut &mut dyn Write` is itself a writer: a borrow of `out` for this scope only.
        let first_out = Outputs {
            accepted: &mut out.accepted,
            rejected: out.rejected.as_mut().map(|r| r as &mut (dyn Write + Send)),
            cancel,
            confidences: None,
        };
        let first = parse_inputs_split(model, &[job(&ranges[0])], first_out, opts);
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(PipelineError::Pool("a parsing thread panicked".into()))))
            .collect();
        (first, results)
    });
    let mut stats = first?;
    for result in results {
        stats.add(result?);
    }
    stats.shards = ranges.len();
    for (accepted, rejected) in spills {
        append(accepted, out.accepted)?;
        if let (Some(spill), Some(out)) = (rejected, out.rejected.as_deref_mut()) {
            append(spill, out)?;
        }
    }
    Ok(stats)
}

/// Where a range other than the first writes: its accepted and, if asked, rejected output.
type Spill = (io::BufWriter<std::fs::File>, Option<io::BufWriter<std::fs::File>>);

/// `n` spills, each with a rejected stream if `rejected`.
pub(super) fn spills(n: usize, rejected: bool) -> io::Result<Vec<Spill>> {
    let spill = || crate::base::io::anonymous_temporary().map(io::BufWriter::new);
    (0..n).map(|_| Ok((spill()?, if rejected { Some(spill()?) } else { None }))).collect()
}

/// Copies what was written to `spill` to the end of `out`.
fn append(spill: io::BufWriter<std::fs::File>, out: &mut (dyn Write + Send)) -> Result<(), PipelineError> {
    use std::io::Seek;
    let mut file = spill.into_inner().map_err(|e| PipelineError::Write(e.into_error()))?;
    file.rewind().map_err(PipelineError::Write)?;
    io::copy(&mut file, out).map_err(PipelineError::Write)?;
    Ok(())
}

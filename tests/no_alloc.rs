//! Reading, parsing and writing allocate nothing per sentence once the reused buffers have
//! grown: a counting global allocator watches a second pass over the same input.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Cursor;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use spoolparse::corpus::{Format, Reader, Sentence};
use spoolparse::model::analysis::Analyze;
use spoolparse::model::file::{ModelFile, WriteOptions};
use spoolparse::model::TrainingInfo;
use spoolparse::parse::annotate::{Annotator, Steps};
use spoolparse::parse::parser::Parser;
use spoolparse::train::{load_training, train, TrainOptions};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Only the measuring thread counts: the test harness allocates on its own threads.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations of read-annotate-write passes over `reps` copies of `text`, for 50 and 200
/// copies after a warm-up pass, and the words of the larger pass.
fn allocations(text: &[u8], mut annotate: impl FnMut(&mut Sentence)) -> (usize, usize, usize) {
    let mut sent = Sentence::default();
    let mut out = Vec::new();
    let mut pass = |reps: usize| -> (usize, usize) {
        let input = text.repeat(reps);
        out.clear();
        out.reserve(input.len() * 2);
        COUNTING.with(|c| c.set(true));
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let mut reader = Reader::new(Cursor::new(&input), Path::new("mem"), Format::Conllu);
        let mut words = 0;
        while let Some(r) = reader.read_next(&mut sent) {
            r.unwrap();
            annotate(&mut sent);
            sent.write_to(&mut out).unwrap();
            words += sent.len();
        }
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
        COUNTING.with(|c| c.set(false));
        (allocations, words)
    };
    pass(50);
    let (small, _) = pass(50);
    let (large, words) = pass(200);
    (small, large, words)
}

#[test]
fn steady_state_parsing_does_not_allocate() {
    let fixture = common::fixture("special.conllu");
    let set = load_training(std::slice::from_ref(&fixture)).unwrap();
    let model =
        train(&set, None, &TrainOptions { epochs: 2, ..TrainOptions::default() }, TrainingInfo::default(), &mut |_| {});
    let text = std::fs::read(&fixture).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.model");
    spoolparse::model::file::write(&model, &path, WriteOptions::default()).unwrap();
    let file = ModelFile::open(&path).unwrap();

    let mut parser = Parser::from_parts(model.encoding(), &model.weights, &model.labels, model.fallback);
    let bare = allocations(&text, |s| parser.parse(s));
    // The default path of `spoolparse parse`: mapped model, confidence computed and written.
    let mut annotator = Annotator::new(&file, true);
    let steps = Steps { analyze: Analyze::NONE, write_confidence: true, mark_below: Some(0.9), mark_deps: true };
    let default = allocations(&text, |s| annotator.annotate(s, steps).unwrap());
    for (name, (small, large, words)) in [("parser", bare), ("annotator with confidence", default)] {
        assert!(words > 2000);
        // Only per-file setup (the reader and its line buffer) may allocate, never per sentence.
        assert_eq!(small, large, "{name}: allocations grow with the input: {small} for 50 copies, {large} for 200");
        assert!(large <= 4, "{name}: {large} allocations for one file");
    }
}

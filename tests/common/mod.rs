//! Helpers shared by the integration tests: locating the shared treebanks (tests that need them
//! skip with a visible message where `../shared` is absent).

#![allow(dead_code)]

use std::path::PathBuf;

/// The shared UD folder, if present.
pub fn ud_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/ud");
    if dir.is_dir() {
        Some(dir)
    } else {
        skip(&format!("{} not found; this test needs the shared treebanks", dir.display()));
        None
    }
}

/// Says that a test is skipped, and why, where it is seen.
pub fn skip(why: &str) {
    // Written to the stream itself, not through `eprintln!`, which the test harness captures
    // and hides for passing tests: a skip must be visible.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// The treebanks the project works with.
pub const TREEBANKS: [&str; 3] = ["en_ewt", "el_gdt", "hu_szeged"];

/// Every shared treebank file (train and dev of each treebank).
pub fn all_treebank_files() -> Vec<PathBuf> {
    let Some(dir) = ud_dir() else {
        return Vec::new();
    };
    TREEBANKS
        .iter()
        .flat_map(|tb| ["train", "dev"].map(|split| dir.join(tb).join(format!("{split}.conllu.zst"))))
        .collect()
}

/// A seeded source of random numbers below its argument (xorshift), for inputs made up by tests.
pub fn random(seed: u64) -> impl FnMut(u64) -> usize {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n) as usize
    }
}

/// A fixture file of `tests/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Runs the `spoolparse` binary built for these tests.
pub fn spoolparse(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_spoolparse")).args(args).output().expect("run spoolparse")
}

/// Runs `spoolparse train --train TRAIN --output MODEL ARGS...`.
pub fn train(train: &std::path::Path, model: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["train", "--train", train.to_str().unwrap(), "--output", model.to_str().unwrap()];
    all.extend_from_slice(args);
    spoolparse(&all)
}

/// Runs `spoolparse parse --model MODEL INPUT --output OUTPUT ARGS...`.
pub fn parse(
    model: &std::path::Path,
    input: &std::path::Path,
    output: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    let mut all = vec![
        "parse",
        "--model",
        model.to_str().unwrap(),
        input.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    spoolparse(&all)
}

/// The fixture `special.conllu` with every XPOS replaced by `zz` (a tag set no model saw),
/// `times` over.
pub fn foreign_tags(times: usize) -> String {
    let text = std::fs::read_to_string(fixture("special.conllu")).unwrap();
    let blanked: String = text
        .lines()
        .map(|l| {
            let mut cols: Vec<&str> = l.split('\t').collect();
            if cols.len() == 10 && cols[0].parse::<u32>().is_ok() {
                cols[4] = "zz";
            }
            cols.join("\t") + "\n"
        })
        .collect();
    blanked.repeat(times)
}

/// Runs the UD validator at level 2 on `path`, if the test venv has it (skipping visibly if not).
pub fn validate(path: &std::path::Path, lang: &str) {
    let validator = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/python-venv/bin/udvalidate");
    if !validator.exists() {
        skip(&format!("{} not found (scripts/python-test.sh builds it)", validator.display()));
        return;
    }
    let out = std::process::Command::new(validator)
        .args(["--lang", lang, "--level", "2", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

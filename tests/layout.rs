//! The layering of `src/` that `src/lib.rs` documents: a module imports only modules of its own
//! folder and of lower layers. Imports are read from the source (`crate::LAYER` outside
//! comments), so a new upward import fails here before it becomes a circle.

use std::fs;
use std::path::{Path, PathBuf};

/// Top-level modules, lowest layer first; modules of one layer do not import each other.
const LAYERS: &[&[&str]] = &[
    &["base"],
    &["corpus"],
    &["transition", "learn"],
    &["model"],
    &["neural"],
    &["parse"],
    &["train"],
    &["retrain"],
    &["daemon"],
    &["workbench"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules `text` names as `crate::NAME`, outside `//` comments.
fn imported(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

#[test]
fn every_module_imports_only_its_own_or_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        // The binary (main.rs and its subcommands) stands above every layer and names the
        // library as `spoolparse::`.
        if top == "main.rs" || top == "lib.rs" || top == "commands" {
            continue;
        }
        let own = layer(&top).unwrap_or_else(|| panic!("src/{top} is in no layer of tests/layout.rs"));
        for name in imported(&fs::read_to_string(file).unwrap()) {
            let Some(theirs) = layer(&name) else { panic!("{}: crate::{name} is in no layer", rel.display()) };
            checked += 1;
            if name != top && theirs >= own {
                wrong.push(format!("{} imports crate::{name}", rel.display()));
            }
        }
    }
    assert!(checked > 100, "only {checked} imports found: is the scan broken?");
    assert!(wrong.is_empty(), "imports against the layering:\n{}", wrong.join("\n"));
}

/// Each subcommand has a room of its own, `src/commands/NAME.rs` (its arguments, their checks
/// and its run), and `main.rs` stays a dispatcher.
#[test]
fn every_subcommand_has_its_own_file_and_main_only_dispatches() {
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_spoolparse")).arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .expect("--help lists the commands")
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&name| name != "help")
        .collect();
    assert!(commands.len() >= 8, "too few commands found in --help: {help}");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for name in &commands {
        let file = src.join("commands").join(format!("{name}.rs"));
        assert!(file.is_file(), "`spoolparse {name}` has no file {}", file.display());
    }
    let main = fs::read_to_string(src.join("main.rs")).unwrap();
    let lines = main.lines().count();
    assert!(lines < 120, "src/main.rs has {lines} lines: a subcommand's code belongs in src/commands/");
}

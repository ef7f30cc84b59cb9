//! `spoolparse eval` across tokenizations gives the figures of the official CoNLL 2018
//! evaluator (`../shared/tools/conll18_ud_eval.py -v`) on gold dev files whose tokens,
//! multiword tokens and sentences a deterministic perturbation merged and split (and whose
//! tags, labels and heads it changed), to 0.01 for every metric both print.

mod common;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use spoolparse::corpus::{is_space_separator, Column, Format, Reader, TokenKind};

/// A word of the perturbed treebank: `head` is an index into [`Treebank::words`].
#[derive(Clone)]
struct Word {
    form: String,
    upos: String,
    deprel: String,
    head: Option<usize>,
}

/// A token: one word, or a multiword token of several.
#[derive(Clone)]
enum Token {
    Plain(usize),
    Multi(String, Vec<usize>),
}

impl Token {
    fn words(&self) -> Vec<usize> {
        match self {
            Token::Plain(w) => vec![*w],
            Token::Multi(_, ws) => ws.clone(),
        }
    }
}

/// Sentences of tokens over an arena of words.
struct Treebank {
    words: Vec<Word>,
    sentences: Vec<Vec<Token>>,
}

/// A linear congruential generator: the perturbation is the same in every run.
struct Lcg(u64);

impl Lcg {
    /// Whether an event of probability `p` happens.
    fn chance(&mut self, p: f64) -> bool {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

impl Treebank {
    fn read(path: &Path) -> Treebank {
        let mut tb = Treebank { words: Vec::new(), sentences: Vec::new() };
        for sentence in Reader::open(path, Format::from_path(path)).unwrap() {
            let sentence = sentence.unwrap();
            let base = tb.words.len();
            let mut tokens = Vec::new();
            let mut open: Option<(usize, usize)> = None; // (token index, last word ID)
            let mut id = 0;
            for line in sentence.token_lines() {
                match line.kind() {
                    TokenKind::Empty => {}
                    TokenKind::Range => {
                        let end = line.get(Column::Id).split_once('-').unwrap().1.parse().unwrap();
                        tokens.push(Token::Multi(line.get(Column::Form).to_string(), Vec::new()));
                        open = Some((tokens.len() - 1, end));
                    }
                    TokenKind::Word => {
                        id += 1;
                        let head: usize = line.get(Column::Head).parse().unwrap();
                        tb.words.push(Word {
                            form: line.get(Column::Form).to_string(),
                            upos: line.get(Column::Upos).to_string(),
                            deprel: line.get(Column::Deprel).to_string(),
                            head: (head > 0).then(|| base + head - 1),
                        });
                        match open {
                            Some((t, end)) if id <= end => {
                                if let Token::Multi(_, ws) = &mut tokens[t] {
                                    ws.push(tb.words.len() - 1)
                                }
                            }
                            _ => tokens.push(Token::Plain(tb.words.len() - 1)),
                        }
                    }
                }
            }
            tb.sentences.push(tokens);
        }
        tb
    }

    /// Points every head in `sentence` at `from` to `to`.
    fn redirect(&mut self, sentence: &[Token], from: usize, to: usize) {
        for w in sentence.iter().flat_map(Token::words) {
            if self.words[w].head == Some(from) {
                self.words[w].head = Some(to);
            }
        }
    }

    fn ancestors_meet(&self, w: usize, set: &[usize]) -> bool {
        let mut at = self.words[w].head;
        while let Some(h) = at {
            if set.contains(&h) {
                return true;
            }
            at = self.words[h].head;
        }
        false
    }

    /// Merges tokens (only along an arc, so no cycle can arise), splits words into two tokens
    /// or into a multiword token, and collapses multiword tokens into one word.
    fn perturb_tokens(&mut self, rng: &mut Lcg) {
        for s in 0..self.sentences.len() {
            let old = std::mem::take(&mut self.sentences[s]);
            let mut out: Vec<Token> = Vec::new();
            let mut i = 0;
            while i < old.len() {
                let token = old[i].clone();
                i += 1;
                match token {
                    Token::Multi(form, ws) if rng.chance(0.3) => {
                        // The member no other member dominates keeps its head; the rest go.
                        let top = *ws.iter().find(|&&w| !self.ancestors_meet(w, &ws)).unwrap();
                        self.words[top].form = form;
                        let all = old.iter().chain(&out).cloned().collect::<Vec<_>>();
                        for &w in ws.iter().filter(|&&w| w != top) {
                            self.redirect(&all, w, top);
                        }
                        out.push(Token::Plain(top));
                    }
                    Token::Plain(a) if i < old.len() && rng.chance(0.05) => match old[i] {
                        Token::Plain(b) if self.words[a].head == Some(b) || self.words[b].head == Some(a) => {
                            i += 1;
                            let (keep, gone) = if self.words[a].head == Some(b) { (b, a) } else { (a, b) };
                            self.words[keep].form = format!("{}{}", self.words[a].form, self.words[b].form);
                            let all = old.iter().chain(&out).cloned().collect::<Vec<_>>();
                            self.redirect(&all, gone, keep);
                            out.push(Token::Plain(keep));
                        }
                        _ => out.push(Token::Plain(a)),
                    },
                    Token::Plain(a)
                        if self.words[a].form.chars().count() >= 4
                            && !self.words[a].form.chars().any(is_space_separator)
                            && rng.chance(0.06) =>
                    {
                        let chars: Vec<char> = self.words[a].form.chars().collect();
                        let (left, right) = chars.split_at(chars.len() / 2);
                        let first = Word {
                            form: left.iter().collect(),
                            upos: self.words[a].upos.clone(),
                            deprel: "dep".into(),
                            head: Some(a),
                        };
                        self.words.push(first);
                        let n = self.words.len() - 1;
                        let whole = self.words[a].form.clone();
                        self.words[a].form = right.iter().collect();
                        // Every other split becomes a multiword token, in another case.
                        if rng.chance(0.5) {
                            self.words[n].form = self.words[n].form.to_uppercase();
                            out.push(Token::Multi(whole, vec![n, a]));
                        } else {
                            out.extend([Token::Plain(n), Token::Plain(a)]);
                        }
                    }
                    // A kept multiword token in another case: its words align all the same.
                    Token::Multi(form, ws) if rng.chance(0.3) => {
                        self.words[ws[0]].form = self.words[ws[0]].form.to_uppercase();
                        out.push(Token::Multi(form, ws));
                    }
                    other => out.push(other),
                }
            }
            self.sentences[s] = out;
        }
    }

    /// Changes tags, labels and heads (to the sentence's root: never a cycle).
    fn perturb_labels(&mut self, rng: &mut Lcg) {
        for s in &self.sentences {
            let words: Vec<usize> = s.iter().flat_map(Token::words).collect();
            let root = *words.iter().find(|&&w| self.words[w].head.is_none()).unwrap();
            for &w in &words {
                let word = &mut self.words[w];
                if rng.chance(0.05) {
                    word.upos = "X".into();
                }
                if rng.chance(0.08) {
                    word.deprel = "dep".into();
                }
                if w != root && rng.chance(0.05) {
                    word.head = Some(root);
                }
            }
        }
    }

    /// Makes the words of `tokens` one tree: those whose head is outside (or the root) go
    /// under the first of them, which becomes the root.
    fn reroot(&mut self, tokens: &[Token]) {
        let words: Vec<usize> = tokens.iter().flat_map(Token::words).collect();
        let outside: Vec<usize> =
            words.iter().copied().filter(|&w| self.words[w].head.is_none_or(|h| !words.contains(&h))).collect();
        for (k, &w) in outside.iter().enumerate() {
            if k == 0 {
                self.words[w].head = None;
                self.words[w].deprel = "root".into();
            } else {
                self.words[w].head = Some(outside[0]);
            }
        }
    }

    /// Merges sentences with the next one and splits sentences in two.
    fn perturb_sentences(&mut self, rng: &mut Lcg) {
        let old = std::mem::take(&mut self.sentences);
        let mut i = 0;
        while i < old.len() {
            let mut s = old[i].clone();
            i += 1;
            if i < old.len() && rng.chance(0.07) {
                s.extend(old[i].iter().cloned());
                i += 1;
                self.reroot(&s);
                self.sentences.push(s);
            } else if s.len() >= 6 && rng.chance(0.07) {
                let second = s.split_off(s.len() / 2);
                self.reroot(&s);
                self.reroot(&second);
                self.sentences.extend([s, second]);
            } else {
                self.sentences.push(s);
            }
        }
    }

    fn write(&self, path: &Path) {
        let mut text = String::new();
        for s in &self.sentences {
            let ids: HashMap<usize, usize> =
                s.iter().flat_map(Token::words).enumerate().map(|(i, w)| (w, i + 1)).collect();
            let mut n = 0;
            for t in s {
                if let Token::Multi(form, ws) = t {
                    writeln!(text, "{}-{}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_", n + 1, n + ws.len()).unwrap();
                }
                for w in t.words() {
                    n += 1;
                    let word = &self.words[w];
                    let head = word.head.map_or(0, |h| ids[&h]);
                    writeln!(text, "{n}\t{}\t_\t{}\t_\t_\t{head}\t{}\t_\t_", word.form, word.upos, word.deprel)
                        .unwrap();
                }
            }
            text.push('\n');
        }
        std::fs::write(path, text).unwrap();
    }
}

/// The F1 (and precision, recall) of each metric in `conll18_ud_eval.py -v`'s table.
fn official(script: &Path, gold: &Path, system: &Path) -> HashMap<String, [f64; 3]> {
    let out = Command::new("python3").arg(script).arg("-v").arg(gold).arg(system).output().expect("run python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(2)
        .map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            (cols[0].to_string(), [1, 2, 3].map(|i| cols[i].parse::<f64>().unwrap()))
        })
        .collect()
}

#[test]
fn perturbed_tokenizations_score_as_the_official_evaluator() {
    let Some(ud) = common::ud_dir() else { return };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/conll18_ud_eval.py");
    if Command::new("python3").arg("--version").output().is_err() {
        common::skip("python3 is not installed; the official evaluator needs it");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (k, tb) in common::TREEBANKS.iter().enumerate() {
        let mut bank = Treebank::read(&ud.join(tb).join("dev.conllu.zst"));
        let gold = dir.path().join(format!("{tb}.gold.conllu"));
        bank.write(&gold);
        let mut rng = Lcg(k as u64 + 31);
        bank.perturb_labels(&mut rng);
        bank.perturb_tokens(&mut rng);
        bank.perturb_sentences(&mut rng);
        let system = dir.path().join(format!("{tb}.system.conllu"));
        bank.write(&system);

        let expected = official(&script, &gold, &system);
        let out = common::spoolparse(&["eval", gold.to_str().unwrap(), system.to_str().unwrap(), "--json"]);
        assert!(out.status.success(), "{tb}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for (metric, key) in [
            ("Tokens", "tokens"),
            ("Sentences", "sentences"),
            ("Words", "words"),
            ("UPOS", "upos"),
            ("UAS", "uas"),
            ("LAS", "las"),
        ] {
            let ours = ["precision", "recall", "f1"].map(|f| v["aligned"][key][f].as_f64().unwrap());
            for (o, e) in ours.iter().zip(expected[metric]) {
                assert!((o - e).abs() <= 0.01, "{tb} {metric}: spoolparse {ours:?}, official {:?}", expected[metric]);
            }
        }
        // The perturbation changed every level, so the alignment was put to work.
        for metric in ["Tokens", "Sentences", "Words", "LAS"] {
            assert!(expected[metric][2] < 99.9, "{tb} {metric} unchanged: {:?}", expected[metric]);
        }
        eprintln!("{tb}: {:?}", ["Tokens", "Sentences", "Words", "UPOS", "UAS", "LAS"].map(|m| expected[m][2]));
    }
}

//! Tokens the tokenizer keeps whole whatever its weights say: URLs (`https://…`, `www.…`),
//! e-mail addresses, file paths (`/usr/share/doc`, `~/.config/x`, `./a`, `../a`) and
//! command-line options (`--min-confidence`, `--sort=WORD`, `-j`, `-j4`). A treebank holds few
//! of them, so a classifier trained on one splits them at their hyphens, dots and slashes (a
//! URL became four tokens, `jean-pierre@example.org` three); their shape is unambiguous enough
//! to decide without weights.
//!
//! URLs and e-mail addresses are found anywhere in a whitespace-delimited chunk (`(see
//! https://x.org/a).`, `mailto:a@b.org`); paths and options only as a whole chunk but for the
//! punctuation around it, because their shape is a word's elsewhere (`and/or` is not a path,
//! `-for` in `this -for now- is` is not an option): a path starts with `/`, `~/`, `./` or
//! `../`; a long option is lowercase (`--Sally` signs a letter); a short one is one lowercase
//! letter, or a capital with digits (`-O2`), not `-M` (a signature in en_ewt). Punctuation
//! after them still splits off (`see https://x.org/a.` → the URL and `.`), but for a closing
//! bracket whose opening one is inside (`https://en.wikipedia.org/wiki/A_(B)`) and a run of
//! dots (`https://x.org/some-title-...`, a URL cut short, one token in en_ewt).
//!
//! Measured on the treebanks' raw text (train and dev of en_ewt, el_gdt, hu_szeged): every
//! chunk these rules match but one is one gold token already (131 URLs and 89 addresses in
//! en_ewt's train, 38 and 22 in its dev; hu_szeged's `-e`); a wider option rule (any
//! `-word`) would have matched 24 en_ewt chunks that are a dash and a word.
//!
//! This module owns the shapes; [`crate::model::tokenizer`] applies them to its decisions.

use std::ops::Range;

/// Punctuation that may come before a whole token in its chunk.
const LEADING: &[char] = &['(', '[', '{', '<', '"', '\'', '“', '‘', '«'];
/// Punctuation that may come after one.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '>', '"', '\'', '”', '’', '»'];

/// Whether all of `form` is one whole token (a word the tokenizer kept whole is its own lemma).
pub fn is_whole(form: &str) -> bool {
    // Only forms with one of these can be one; the others are not looked at further.
    if !(form.contains(['/', '@']) || form.starts_with('-') || form.contains("www.")) {
        return false;
    }
    let chars: Vec<char> = form.chars().collect();
    let mut spans = Vec::new();
    find(&chars, &mut spans);
    matches!(spans.as_slice(), [only] if *only == (0..chars.len()))
}

/// Appends to `out` the whole tokens of `chunk` (a run of characters without whitespace), as
/// ranges of its indices, in order and without overlap.
pub fn find(chunk: &[char], out: &mut Vec<Range<usize>>) {
    out.clear();
    // Every chunk of a raw text comes here: most hold none of what each kind needs.
    let www = ['w', 'w', 'w', '.'];
    if !(chunk.iter().any(|c| matches!(c, '/' | '@' | '-')) || chunk.windows(4).any(|w| w == www)) {
        return;
    }
    if let Some(core) = path_or_option(chunk) {
        out.push(core);
        return;
    }
    let mut s = 0;
    while s < chunk.len() {
        if let Some(url) = url_at(chunk, s) {
            s = url.end;
            out.push(url);
        } else {
            s += 1;
        }
    }
    let mut a = 0;
    while let Some(at) = chunk[a..].iter().position(|&c| c == '@').map(|p| p + a) {
        match email_around(chunk, at) {
            Some(mail) if out.iter().all(|r| r.end <= mail.start || mail.end <= r.start) => {
                a = mail.end;
                let k = out.partition_point(|r| r.end <= mail.start);
                out.insert(k, mail);
            }
            _ => a = at + 1,
        }
    }
}

/// The chunk but for the punctuation around it, if it is a path or an option.
fn path_or_option(chunk: &[char]) -> Option<Range<usize>> {
    let first = chunk.iter().position(|c| !LEADING.contains(c))?;
    if !matches!(chunk[first], '/' | '~' | '.' | '-') {
        return None;
    }
    let core = first..trim_end(chunk, first, chunk.len());
    let c = &chunk[core.clone()];
    (is_path(c) || is_option(c)).then_some(core)
}

/// `/usr/share/doc`, `~/.config/x`, `./configure`, `../lib/*.so`.
fn is_path(c: &[char]) -> bool {
    let body = match c {
        ['/', next, ..] if next.is_alphanumeric() || matches!(next, '.' | '_' | '-') => c,
        ['~', '/', ..] | ['.', '/', ..] | ['.', '.', '/', ..] => c,
        _ => return false,
    };
    let path_char = |ch: &char| ch.is_alphanumeric() || "._-/~+@%=:*,".contains(*ch);
    body.iter().all(path_char) && body.iter().any(|ch| ch.is_alphanumeric())
}

/// `--min-confidence`, `--sort=WORD`, `--color[=WHEN]`, `-j`, `-j4`, `-O2`.
fn is_option(c: &[char]) -> bool {
    let lower_name = |ch: &char| ch.is_ascii_lowercase() || ch.is_ascii_digit() || matches!(ch, '-' | '_');
    match c {
        ['-', '-', first, rest @ ..] if first.is_ascii_lowercase() || first.is_ascii_digit() => {
            let name = rest.iter().position(|ch| matches!(ch, '=' | '[')).unwrap_or(rest.len());
            rest[..name].iter().all(lower_name)
        }
        ['-', letter, digits @ ..] if letter.is_ascii_lowercase() => digits.iter().all(char::is_ascii_digit),
        ['-', letter, digits @ ..] if letter.is_ascii_uppercase() => {
            !digits.is_empty() && digits.iter().all(char::is_ascii_digit)
        }
        _ => false,
    }
}

/// The URL that starts at `s` (not inside a word): a scheme and `://`, or `www.`, and at least
/// one character after it.
fn url_at(chunk: &[char], s: usize) -> Option<Range<usize>> {
    if s > 0 && chunk[s - 1].is_alphanumeric() || !chunk[s].is_ascii_alphabetic() {
        return None;
    }
    let scheme = chunk[s..].iter().position(|c| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-')));
    let after = match scheme.map(|p| s + p) {
        Some(colon) if chunk[colon..].starts_with(&[':', '/', '/']) => colon + 3,
        _ if chunk[s..].iter().take(4).map(char::to_ascii_lowercase).eq("www.".chars()) => s + 4,
        _ => return None,
    };
    // The URL runs to the chunk's end, or to a bracket it did not open, or to `<`, `>`, `"`.
    let mut depth = [0i32; 3];
    let mut end = after;
    while let Some(&c) = chunk.get(end) {
        let k = ["()", "[]", "{}"].iter().position(|p| p.contains(c));
        match k {
            Some(k) if c == ['(', '[', '{'][k] => depth[k] += 1,
            Some(k) if depth[k] == 0 => break,
            Some(k) => depth[k] -= 1,
            None if matches!(c, '<' | '>' | '"') => break,
            None => {}
        }
        end += 1;
    }
    let end = trim_end(chunk, after, end);
    (end > after).then_some(s..end)
}

/// The e-mail address around the `@` at `at`: a local part of letters, digits and `._%+-`
/// (after `mailto:`, which is part of it), and a domain of at least two labels, the last of
/// letters only.
fn email_around(chunk: &[char], at: usize) -> Option<Range<usize>> {
    let local = |c: &char| c.is_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-');
    let mut start = at - chunk[..at].iter().rev().take_while(|c| local(c)).count();
    while start < at && !chunk[start].is_alphanumeric() {
        start += 1;
    }
    let scheme = chunk[..start].iter().rev().take(7).rev().map(char::to_ascii_lowercase).eq("mailto:".chars());
    let local_start = start;
    if scheme {
        start -= 7;
    }
    let domain = |c: &char| c.is_alphanumeric() || matches!(c, '.' | '-');
    let mut end = at + 1 + chunk[at + 1..].iter().take_while(|c| domain(c)).count();
    while end > at + 1 && !chunk[end - 1].is_alphanumeric() {
        end -= 1;
    }
    let host = &chunk[(at + 1).min(end)..end];
    let tld = host.iter().rposition(|&c| c == '.').map(|dot| &host[dot + 1..])?;
    let valid = local_start < at && host.first().is_some_and(|c| c.is_alphanumeric()) && tld.len() >= 2;
    (valid && tld.iter().all(|c| c.is_alphabetic())).then_some(start..end)
}

/// Where a token that starts at `start` and may run to `end` ends once the punctuation after it
/// is left out: a closing bracket it opens stays, and so does a run of dots.
fn trim_end(chunk: &[char], start: usize, mut end: usize) -> usize {
    while end > start && TRAILING.contains(&chunk[end - 1]) {
        let c = chunk[end - 1];
        let body = &chunk[start..end];
        let count = |x: char| body.iter().filter(|&&b| b == x).count();
        let opened = match c {
            ')' => count('(') >= count(')'),
            ']' => count('[') >= count(']'),
            '}' => count('{') >= count('}'),
            _ => false,
        };
        let dots = c == '.' && end - start >= 2 && chunk[end - 2] == '.';
        if opened || dots {
            break;
        }
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(chunk: &str) -> Vec<String> {
        let chars: Vec<char> = chunk.chars().collect();
        let mut out = Vec::new();
        find(&chars, &mut out);
        out.into_iter().map(|r| chars[r].iter().collect()).collect()
    }

    #[test]
    fn urls_addresses_paths_and_options_are_found_without_the_punctuation_around_them() {
        assert_eq!(tokens("https://www.debian.org/doc/."), ["https://www.debian.org/doc/"]);
        assert_eq!(tokens("(www.example.com/a-b?x=1),"), ["www.example.com/a-b?x=1"]);
        assert_eq!(tokens("[apt](https://tracker.debian.org/pkg/apt))"), ["https://tracker.debian.org/pkg/apt"]);
        assert_eq!(tokens("https://en.wikipedia.org/wiki/A_(B)."), ["https://en.wikipedia.org/wiki/A_(B)"]);
        assert_eq!(tokens("http://x.org/some-techniques-to-..."), ["http://x.org/some-techniques-to-..."]);
        assert_eq!(
            tokens("<jean-pierre.dupont+list@debian-fr.example.org>."),
            ["jean-pierre.dupont+list@debian-fr.example.org"]
        );
        assert_eq!(tokens("(mailto:deity@lists.debian.org)"), ["mailto:deity@lists.debian.org"]);
        assert_eq!(tokens("a@b.org,c-d@e.net"), ["a@b.org", "c-d@e.net"]);
        assert_eq!(tokens("/usr/share/doc."), ["/usr/share/doc"]);
        assert_eq!(tokens("(~/.config/spoolparse/x.toml)"), ["~/.config/spoolparse/x.toml"]);
        assert_eq!(tokens("../lib/*.so,"), ["../lib/*.so"]);
        assert_eq!(tokens("--min-confidence,"), ["--min-confidence"]);
        assert_eq!(tokens("'--block-size=M';"), ["--block-size=M"]);
        assert_eq!(tokens("-j"), ["-j"]);
        assert_eq!(tokens("-O2."), ["-O2"]);
    }

    #[test]
    fn words_with_slashes_dashes_and_at_signs_are_not_whole_tokens() {
        for chunk in [
            "and/or", "-for", "--Sally", "-M", "-between", "a@b", "@home", "x@y.z1", "1/2/2003", "/", "--", "e.g.",
            "wwwx",
        ] {
            assert_eq!(tokens(chunk), Vec::<String>::new(), "{chunk}");
        }
    }
}

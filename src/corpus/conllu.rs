//! CoNLL-U specifics: which IDs a token line may carry, and which comment is a sentence's id.
//!
//! Words have integer IDs `1, 2, …`; multiword tokens carry ranges `n-m`; empty nodes of the
//! enhanced graph carry decimals `n.k`. Only words are parsed; the other lines pass through.

use super::TokenKind;

/// Classifies a CoNLL-U ID, or `None` if it is none of the three forms.
pub fn token_kind(id: &str) -> Option<TokenKind> {
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if all_digits(id) {
        return Some(TokenKind::Word);
    }
    if let Some((a, b)) = id.split_once('-') {
        if all_digits(a) && all_digits(b) {
            return Some(TokenKind::Range);
        }
    }
    if let Some((a, b)) = id.split_once('.') {
        if all_digits(a) && all_digits(b) {
            return Some(TokenKind::Empty);
        }
    }
    None
}

/// Whether a comment line is a `# sent_id = …`, as the UD validator reads one (spaces around
/// `sent_id` and `=` are optional).
pub fn is_sent_id(comment: &str) -> bool {
    comment
        .strip_prefix('#')
        .and_then(|c| c.trim_start().strip_prefix("sent_id"))
        .is_some_and(|c| c.trim_start().starts_with('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_ids() {
        assert_eq!(token_kind("12"), Some(TokenKind::Word));
        assert_eq!(token_kind("1-2"), Some(TokenKind::Range));
        assert_eq!(token_kind("8.1"), Some(TokenKind::Empty));
        assert_eq!(token_kind("x"), None);
        assert_eq!(token_kind("1-"), None);
        assert_eq!(token_kind(""), None);
    }
}

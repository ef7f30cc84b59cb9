//! CoNLL-X (CoNLL 2006/2007 shared tasks) specifics: integer IDs only, no comment lines;
//! columns 4–5 are CPOSTAG/POSTAG and 9–10 PHEAD/PDEPREL, which pass through untouched.

use super::TokenKind;

/// Classifies a CoNLL-X ID: only positive integers are allowed.
pub fn token_kind(id: &str) -> Option<TokenKind> {
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then_some(TokenKind::Word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_integers() {
        assert_eq!(token_kind("3"), Some(TokenKind::Word));
        assert_eq!(token_kind("1-2"), None);
        assert_eq!(token_kind("1.1"), None);
    }
}

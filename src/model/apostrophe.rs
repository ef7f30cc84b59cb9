//! The curly apostrophe (’ U+2019, what word processors and much edited prose write) read as
//! the straight one (' U+0027) by every stage that reads forms: the tokenizer's characters,
//! the tagger's and the FEATS classifier's hashed forms and affixes, the lemmatizer's forms
//! and lemmas, and the multiword-token dictionary's keys. Treebanks write the straight one
//! almost everywhere (en_ewt's train split has 137 lines with a curly one against thousands
//! with `'`), so what a model learned of `'s`, `n't` and `package's` then serves `’s`, `n’t`
//! and `package’s`. A FORM keeps the character its text had; a lemma is written as the
//! straight form's would be (en_ewt's gold lemma of `’s` is `'s`).
//!
//! This module owns which characters are read as which.

use std::borrow::Cow;

/// The right single quotation mark, read as an apostrophe.
pub const CURLY: char = '\u{2019}';

/// `c` as the stages read it.
#[inline]
pub fn read_as(c: char) -> char {
    if c == CURLY {
        '\''
    } else {
        c
    }
}

/// `form` as the stages read it (borrowed when it holds no curly apostrophe).
pub fn read_form(form: &str) -> Cow<'_, str> {
    if form.contains(CURLY) {
        Cow::Owned(form.chars().map(read_as).collect())
    } else {
        Cow::Borrowed(form)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curly_apostrophe_is_read_as_a_straight_one_and_nothing_else_changes() {
        assert_eq!(read_form("package’s"), "package's");
        assert_eq!(read_form("n’t"), "n't");
        assert!(matches!(read_form("‘quoted’ don't"), Cow::Owned(s) if s == "‘quoted' don't"));
        assert!(matches!(read_form("plain"), Cow::Borrowed("plain")));
    }
}

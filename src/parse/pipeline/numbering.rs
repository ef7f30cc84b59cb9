//! The identity of output sentences: every CoNLL-U output sentence has a `# sent_id`, the
//! input's or else `NAME-N`. Nothing here reads or parses.

use std::path::Path;

/// Numbers the sentences of one input, malformed ones included, so that every CoNLL-U output
/// sentence has a `# sent_id`: one without gets `NAME-N`, NAME the input's file name (its
/// whitespace and slashes, which the UD validator refuses in an id, as `_`) and N its place in
/// the file from 1. The same file thus gets the same ids at every parse, whole or in shards (a
/// shard counts the sentences before it), by `parse`, the daemon or the Python package alike.
#[derive(Debug)]
pub struct Numbering {
    /// `None` where the output is not CoNLL-U (CoNLL-X has no comments).
    prefix: Option<String>,
    /// The place of the next sentence, from 1.
    next: u64,
    id: String,
}

impl Numbering {
    /// Numbering for the input `path` (named by its file name), whose first sentence is number
    /// `first`; no ids unless `conllu`.
    pub fn new(path: &Path, first: u64, conllu: bool) -> Numbering {
        let name = match path.file_name().map(|n| n.to_string_lossy()) {
            Some(n) if n != crate::base::io::STDIO => n.into_owned(),
            _ => "stdin".to_string(),
        };
        let name: String = name.chars().map(|c| if c.is_whitespace() || c == '/' { '_' } else { c }).collect();
        Numbering { prefix: conllu.then_some(name), next: first, id: String::new() }
    }

    /// The id of the next sentence, which it takes; `None` without ids.
    pub(super) fn take(&mut self) -> Option<&str> {
        use std::fmt::Write as _;
        let n = self.next;
        self.next += 1;
        let prefix = self.prefix.as_deref()?;
        self.id.clear();
        let _ = write!(self.id, "{prefix}-{n}");
        Some(&self.id)
    }
}

//! Feature extraction: the rich non-local templates of Zhang & Nivre (2011), as used in the
//! experiments of Goldberg & Nivre (2012), plus unigrams over the UD columns (lemma, FEATS,
//! UPOS, lowercased form).
//!
//! Token attributes are hashed once per sentence ([`encode_sentence`]); each template instance
//! is then a few integer mixes of those hashes into one 64-bit feature ([`Extractor::extract`]),
//! written into a reused buffer, so extraction never allocates. The set is versioned
//! ([`feature_set`]): a model records the version it was trained with. This module reads
//! configurations; it knows nothing of weights.
//!
//! The templates were written for arc-eager, where the stack top may have a head and arcs
//! join the stack top and the buffer front. In arc-hybrid, stack words never have a head and
//! RIGHT-ARC joins the two top stack words, so for it the templates of the stack top's head
//! and grandparent read the second and third stack words instead, and the three that would
//! read the stack top's (always absent) label read the second stack word's rightmost
//! dependent and its distance to the stack top.
//!
//! Every group of templates earns its lookups. This was measured for issue 17: parsing costs
//! about as much per template as per lookup, so dropping a group would buy speed. Each group
//! was left out in turn (its features made constant), en_ewt was trained with the default
//! options, and the stored model's dev LAS was compared with 88.09 for the full set:
//!
//! | group left out | templates | LAS change |
//! | --- | ---: | ---: |
//! | third-order tags (64, 65, 67) | 3 | −0.07 |
//! | label sets | 6 | −0.17 |
//! | valency | 6 | −0.19 |
//! | head and grandparent | 6 | −0.19 |
//! | distance | 6 | −0.22 |
//! | word pairs | 7 | −0.26 |
//! | UD buffer unigrams | 4 | −0.27 |
//! | three words | 5 | −0.44 |
//! | buffer tag n-grams (21, 22) | 2 | −0.47 |
//! | second children | 9 | −0.52 |
//! | UD stack | 7 | −0.53 |
//! | second stack word (83–85, 88) | 4 | −0.58 |
//! | first children | 9 | −1.24 |
//!
//! Speed was measured without the features, with the full model's weights (whole process, one
//! thread, `scripts/compare-speed.sh`). Of the 72 templates looked up at every step (the
//! buffer's 16 are reused while it stays), removing the two cheapest groups (9) parsed 1.08×
//! as fast, for about 0.24 LAS; removing the five cheapest (27), 1.34×, for losses that add up
//! to about 0.8 LAS. Training
//! is deterministic, but a changed feature set moves dev LAS by about ±0.1 on its own.
//!
//! Caching the templates that read one node was also tried. A parser kept, for the sentence,
//! the sum of each role's templates (stack top, its children, …) per node, and looked up the
//! missing sums in one pass with the other features. It made 29% fewer lookups and was no
//! faster. The lookups it saved were of frequent features whose lines are in cache
//! anyway; the rare ones, which miss, are the pairs that no node fixes.

use crate::base::hash::{combine, fnv_byte, hash_str, mix, FNV_OFFSET};
use crate::corpus::{Column, Sentence};
use crate::transition::{Configuration, System, NONE};

/// Name and version of the template set for `system`, as the parser reads `morphology`; stored
/// in models and checked on load ([`Morphology::of_stored`]).
pub fn feature_set(system: System, morphology: Morphology) -> String {
    let templates = match system {
        System::ArcEager => "zhang-nivre-2011+ud/1",
        System::ArcHybrid => "zhang-nivre-2011+ud+hybrid/1",
    };
    match morphology {
        Morphology::Suffixes => format!("{templates}{SUFFIXES}"),
        Morphology::Analysis => format!("{templates}{ANALYSIS}"),
        Morphology::Columns | Morphology::Unspecified => templates.to_string(),
    }
}

/// What a feature set's name ends with when its LEMMA and FEATS features read suffixes.
const SUFFIXES: &str = "+suffixes";
/// What a feature set's name ends with when its LEMMA and FEATS features read the model's own
/// analysis.
const ANALYSIS: &str = "+analysis";

/// What the templates over LEMMA and FEATS read.
///
/// Tagger output has neither column, and without them a parser loses much in languages whose
/// case endings say a word's role. Measured on hu_szeged (`train`, default options, gold UPOS,
/// dev LAS of the stored model): 78.40 with its LEMMA and FEATS, 70.01 with both `_`, 76.27
/// with the suffixes below in their place: three quarters of what the gold morphology gives,
/// from the form alone. (Found by rewriting the columns of the files, before this mode
/// existed.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Morphology {
    /// The LEMMA and FEATS columns as given (gold, or another tool's).
    #[default]
    Columns,
    /// Neither: read as unspecified (models for tagger output trained before [`Self::Suffixes`]).
    Unspecified,
    /// A stand-in from the form, for tagger output: LEMMA reads its last three characters
    /// lowercased, FEATS its last two (unspecified for a form of two characters or fewer).
    Suffixes,
    /// The columns as the model's own analysis predicts them (trained on jackknifed
    /// predictions): the LEMMA and FEATS that tagging writes.
    Analysis,
}

impl Morphology {
    /// The mode of a stored model: whether it reads the columns, and its feature set's name
    /// (`None` if that name is not one of `system`'s).
    pub fn of_stored(system: System, columns: bool, feature_set: &str) -> Option<Morphology> {
        let plain = self::feature_set(system, Morphology::Columns);
        match (columns, feature_set.strip_prefix(plain.as_str())) {
            (true, Some("")) => Some(Morphology::Columns),
            (false, Some("")) => Some(Morphology::Unspecified),
            (false, Some(SUFFIXES)) => Some(Morphology::Suffixes),
            (true, Some(ANALYSIS)) => Some(Morphology::Analysis),
            _ => None,
        }
    }

    /// Whether the LEMMA and FEATS columns are read (what model files store).
    pub fn reads_columns(self) -> bool {
        matches!(self, Morphology::Columns | Morphology::Analysis)
    }
}

/// Hashed attributes of one token (or of the root, or of an absent position).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenAttrs {
    pub form: u64,
    pub lower: u64,
    pub upos: u64,
    pub xpos: u64,
    /// UPOS and XPOS together: the "p" of the templates.
    pub tag: u64,
    pub lemma: u64,
    pub feats: u64,
}

impl TokenAttrs {
    const fn uniform(h: u64) -> TokenAttrs {
        TokenAttrs { form: h, lower: h, upos: h, xpos: h, tag: h, lemma: h, feats: h }
    }
}

/// Attributes of node 0.
pub const ROOT_ATTRS: TokenAttrs = TokenAttrs::uniform(0x5ee1_da7a_0000_0001);
/// Attributes of a position that does not exist (empty stack slot, no child, …).
pub const ABSENT_ATTRS: TokenAttrs = TokenAttrs::uniform(0x5ee1_da7a_0000_0002);
/// The value of an unspecified (`_`) column.
const UNSPECIFIED: u64 = 0x5ee1_da7a_0000_0003;

fn hash_column(s: &str) -> u64 {
    if s == "_" {
        UNSPECIFIED
    } else {
        hash_str(s)
    }
}

/// FNV-1a of the lowercased string, without allocating.
fn hash_lowercase(s: &str) -> u64 {
    let mut h = FNV_OFFSET;
    let mut buf = [0u8; 4];
    for c in s.chars().flat_map(char::to_lowercase) {
        h = c.encode_utf8(&mut buf).as_bytes().iter().fold(h, |h, &b| fnv_byte(h, b));
    }
    mix(h)
}

/// Hashes the attributes of one token from its column values.
pub fn token_attrs(form: &str, lemma: &str, upos: &str, xpos: &str, feats: &str) -> TokenAttrs {
    let upos_h = hash_column(upos);
    let xpos_h = hash_column(xpos);
    TokenAttrs {
        form: hash_str(form),
        lower: hash_lowercase(form),
        upos: upos_h,
        xpos: xpos_h,
        tag: combine(upos_h, xpos_h),
        lemma: hash_column(lemma),
        feats: hash_column(feats),
    }
}

/// The key of template `id`'s instance with the values `vals`: what a weight table is looked up
/// by. Template ids are hashed in, so they never change.
#[inline(always)]
pub fn template_key(id: u64, vals: &[u64]) -> u64 {
    let mut h = mix(id.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    for &v in vals {
        h = combine(h, v);
    }
    h
}

/// [`TokenAttrs::tag`] of a word tagged `upos` and `xpos`.
pub fn tag_hash(upos: &str, xpos: &str) -> u64 {
    combine(hash_column(upos), hash_column(xpos))
}

/// The key of the feature "the buffer's first word has this UPOS and XPOS" (template 7): a
/// parser's weight table holds it for every tag pair it was trained on (unless pruned).
pub fn tag_key(upos: &str, xpos: &str) -> u64 {
    attrs_tag_key(&token_attrs("_", "_", upos, xpos, "_"))
}

/// [`tag_key`] of a word's attributes.
pub fn attrs_tag_key(attrs: &TokenAttrs) -> u64 {
    template_key(7, &[attrs.tag])
}

/// The key of the feature "the buffer's first word is this FORM" (template 6): a parser's
/// weight table holds it for the forms it was trained on (unless pruned).
pub fn form_key(form: &str) -> u64 {
    form_key_of_hash(hash_str(form))
}

/// [`form_key`] of the form whose [`hash_str`] is `form_hash`.
pub fn form_key_of_hash(form_hash: u64) -> u64 {
    template_key(6, &[form_hash])
}

/// Fills `out` with the attributes of node 0 followed by those of each word of `sent`, LEMMA and
/// FEATS read as `morphology` says.
pub fn encode_sentence(sent: &Sentence, morphology: Morphology, out: &mut Vec<TokenAttrs>) {
    out.clear();
    out.push(ROOT_ATTRS);
    out.extend(sent.words().map(|w| {
        let form = w.get(Column::Form);
        let (upos, xpos) = (w.get(Column::Upos), w.get(Column::Xpos));
        match morphology {
            Morphology::Columns | Morphology::Analysis => {
                token_attrs(form, w.get(Column::Lemma), upos, xpos, w.get(Column::Feats))
            }
            Morphology::Unspecified => token_attrs(form, "_", upos, xpos, "_"),
            Morphology::Suffixes => {
                let mut attrs = token_attrs(form, "_", upos, xpos, "_");
                attrs.lemma = hash_lowercase(last_chars(form, 3));
                if form.chars().nth(2).is_some() {
                    attrs.feats = hash_lowercase(last_chars(form, 2));
                }
                attrs
            }
        }
    }));
}

/// The last `n` characters of `s` (all of it if shorter).
fn last_chars(s: &str, n: usize) -> &str {
    s.char_indices().rev().nth(n - 1).map_or(s, |(i, _)| &s[i..])
}

/// Distance buckets as in Zhang & Nivre (2011), capped so that long arcs share statistics.
fn distance_bucket(d: u32) -> u64 {
    u64::from(match d {
        0..=5 => d,
        6..=7 => 6,
        8..=10 => 7,
        11..=15 => 8,
        _ => 9,
    })
}

/// Extracts features of configurations into a reused buffer.
#[derive(Debug)]
pub struct Extractor {
    feats: [u64; FEATURES_PER_CONFIGURATION],
    hybrid: bool,
}

/// Number of features every configuration yields (one per template instance).
pub const FEATURES_PER_CONFIGURATION: usize = 88;

/// The first this many features of a configuration depend only on the first three buffer
/// words (and a constant bias): they stay the same until the buffer moves, so a parser can
/// reuse their sum over the transitions that leave it in place (REDUCE, LEFT-ARC).
pub const BUFFER_FEATURES: usize = 16;

impl Extractor {
    /// An extractor for configurations of `system`.
    pub fn new(system: System) -> Extractor {
        Extractor { feats: [0; FEATURES_PER_CONFIGURATION], hybrid: system == System::ArcHybrid }
    }

    /// The features of `c` over a sentence with attributes `attrs` (from [`encode_sentence`]).
    pub fn extract(&mut self, c: &Configuration, attrs: &[TokenAttrs]) -> &[u64] {
        let f = &mut self.feats;
        // A fixed array written in place: pushing onto a vector checks its capacity each time.
        let mut next = 0;
        let at = |node: u32| -> &TokenAttrs {
            if node == NONE {
                &ABSENT_ATTRS
            } else {
                &attrs[node as usize]
            }
        };
        let opt = |n: Option<u32>| n.unwrap_or(NONE);
        let s0n = opt(c.stack(0));
        let s1n = opt(c.stack(1));
        let n0n = opt(c.buffer(0));
        let n1n = opt(c.buffer(1));
        let n2n = opt(c.buffer(2));
        let head_of = |n: u32| if n == NONE { NONE } else { c.head(n) };
        // In arc-hybrid, the node that RIGHT-ARC would make the stack top's head, and the one
        // below it (see the module comment).
        let (s0hn, s0h2n) = if self.hybrid {
            (s1n, opt(c.stack(2)))
        } else {
            let h = head_of(s0n);
            (h, head_of(h))
        };
        let label_of = |n: u32| -> u64 {
            if n == NONE || c.head(n) == NONE {
                0x5ee1_da7a_0000_0004
            } else {
                c.label(n).index() as u64
            }
        };
        let (s0l, s0l2, s0r, s0r2, s0vl, s0vr, s0sl, s0sr) = if s0n == NONE {
            (NONE, NONE, NONE, NONE, 0, 0, 0, 0)
        } else {
            let (l, r) = (c.left(s0n), c.right(s0n));
            (l.outer, l.second, r.outer, r.second, l.count, r.count, l.labels, r.labels)
        };
        let (n0l, n0l2, n0vl, n0sl) = if n0n == NONE {
            (NONE, NONE, 0, 0)
        } else {
            let l = c.left(n0n);
            (l.outer, l.second, l.count, l.labels)
        };
        let (s0, s1, n0, n1, n2) = (at(s0n), at(s1n), at(n0n), at(n1n), at(n2n));
        let (s0h, s0h2) = (at(s0hn), at(s0h2n));
        let (s0lt, s0l2t, s0rt, s0r2t) = (at(s0l), at(s0l2), at(s0r), at(s0r2));
        let (n0lt, n0l2t) = (at(n0l), at(n0l2));
        let dist = if s0n != NONE && n0n != NONE { distance_bucket(n0n - s0n) } else { 10 };
        let s1r = if self.hybrid && s1n != NONE { c.right(s1n).outer } else { NONE };
        let s1_dist = if self.hybrid && s1n != NONE && s0n != NONE { distance_bucket(s0n - s1n) } else { 10 };
        let set = |bits: u128| mix(bits as u64) ^ mix((bits >> 64) as u64 ^ 0x9e37_79b9);

        // Each template: its id (hashed in, so ids never change) and up to three values.
        // The first BUFFER_FEATURES depend only on the buffer's first three words.
        let mut push = |id: u64, vals: &[u64]| {
            f[next] = template_key(id, vals);
            next += 1;
        };
        push(1, &[]); // bias
        push(5, &[n0.form, n0.tag]);
        push(6, &[n0.form]);
        push(7, &[n0.tag]);
        push(8, &[n1.form, n1.tag]);
        push(9, &[n1.form]);
        push(10, &[n1.tag]);
        push(11, &[n2.form, n2.tag]);
        push(12, &[n2.form]);
        push(13, &[n2.tag]);
        push(21, &[n0.tag, n1.tag]);
        push(22, &[n0.tag, n1.tag, n2.tag]);
        push(75, &[n0.lemma]);
        push(76, &[n1.lemma]);
        push(78, &[n0.lower]);
        push(80, &[n0.upos, n0.feats]);
        // Single words (Zhang & Clark 2008 baseline).
        push(2, &[s0.form, s0.tag]);
        push(3, &[s0.form]);
        push(4, &[s0.tag]);
        // Word pairs.
        push(14, &[s0.form, s0.tag, combine(n0.form, n0.tag)]);
        push(15, &[s0.form, s0.tag, n0.form]);
        push(16, &[s0.form, n0.form, n0.tag]);
        push(17, &[s0.form, s0.tag, n0.tag]);
        push(18, &[s0.tag, n0.form, n0.tag]);
        push(19, &[s0.form, n0.form]);
        push(20, &[s0.tag, n0.tag]);
        // Three words.
        push(23, &[s0.tag, n0.tag, n1.tag]);
        push(24, &[s0h.tag, s0.tag, n0.tag]);
        push(25, &[s0.tag, s0lt.tag, n0.tag]);
        push(26, &[s0.tag, s0rt.tag, n0.tag]);
        push(27, &[s0.tag, n0.tag, n0lt.tag]);
        // Distance (Zhang & Nivre 2011).
        push(28, &[s0.form, dist]);
        push(29, &[s0.tag, dist]);
        push(30, &[n0.form, dist]);
        push(31, &[n0.tag, dist]);
        push(32, &[s0.form, n0.form, dist]);
        push(33, &[s0.tag, n0.tag, dist]);
        // Valency.
        let (s0vl, s0vr, n0vl) = (u64::from(s0vl), u64::from(s0vr), u64::from(n0vl));
        push(34, &[s0.form, s0vr]);
        push(35, &[s0.tag, s0vr]);
        push(36, &[s0.form, s0vl]);
        push(37, &[s0.tag, s0vl]);
        push(38, &[n0.form, n0vl]);
        push(39, &[n0.tag, n0vl]);
        // Unigrams of heads, children and labels.
        push(40, &[s0h.form]);
        push(41, &[s0h.tag]);
        if self.hybrid {
            push(42, &[s1.tag, at(s1r).tag, s0.tag]);
        } else {
            push(42, &[label_of(s0n)]);
        }
        push(43, &[s0lt.form]);
        push(44, &[s0lt.tag]);
        push(45, &[label_of(s0l)]);
        push(46, &[s0rt.form]);
        push(47, &[s0rt.tag]);
        push(48, &[label_of(s0r)]);
        push(49, &[n0lt.form]);
        push(50, &[n0lt.tag]);
        push(51, &[label_of(n0l)]);
        // Third order.
        push(52, &[s0h2.form]);
        push(53, &[s0h2.tag]);
        if self.hybrid {
            push(54, &[s1.tag, s0.tag, s1_dist]);
        } else {
            push(54, &[label_of(s0hn)]);
        }
        push(55, &[s0l2t.form]);
        push(56, &[s0l2t.tag]);
        push(57, &[label_of(s0l2)]);
        push(58, &[s0r2t.form]);
        push(59, &[s0r2t.tag]);
        push(60, &[label_of(s0r2)]);
        push(61, &[n0l2t.form]);
        push(62, &[n0l2t.tag]);
        push(63, &[label_of(n0l2)]);
        push(64, &[s0.tag, s0lt.tag, s0l2t.tag]);
        push(65, &[s0.tag, s0rt.tag, s0r2t.tag]);
        push(66, &[s0.tag, s0h.tag, s0h2.tag]);
        push(67, &[n0.tag, n0lt.tag, n0l2t.tag]);
        // Label sets.
        push(68, &[s0.form, set(s0sr)]);
        push(69, &[s0.tag, set(s0sr)]);
        push(70, &[s0.form, set(s0sl)]);
        push(71, &[s0.tag, set(s0sl)]);
        push(72, &[n0.form, set(n0sl)]);
        push(73, &[n0.tag, set(n0sl)]);
        // UD columns and the second stack element.
        push(74, &[s0.lemma]);
        push(77, &[s0.lower]);
        push(79, &[s0.upos, s0.feats]);
        push(81, &[s0.upos, n0.upos]);
        push(82, &[s0.feats, n0.feats]);
        push(83, &[s1.form, s1.tag]);
        push(84, &[s1.tag]);
        push(85, &[s1.tag, s0.tag, n0.tag]);
        push(86, &[s0.lemma, n0.lemma]);
        push(87, &[s0.upos, n0.upos, dist]);
        if self.hybrid {
            push(88, &[label_of(s1r), s1.tag, s0.tag]);
        } else {
            push(88, &[label_of(s0n), s0.tag, n0.tag]);
        }

        debug_assert_eq!(next, FEATURES_PER_CONFIGURATION);
        &self.feats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_hash_folds_case() {
        assert_eq!(hash_lowercase("ÉCOLE"), hash_lowercase("école"));
        assert_ne!(hash_lowercase("a"), hash_lowercase("b"));
    }

    #[test]
    fn suffixes_stand_in_for_lemma_and_feats_and_the_columns_are_read_only_in_columns_mode() {
        use crate::corpus::{Format, Reader};
        let text = "1\tHázban\tház\tNOUN\t_\tCase=Ine\t0\troot\t_\t_\n\
                    2\tkapuBAN\tkapu\tNOUN\t_\tCase=Ine\t1\tconj\t_\t_\n\
                    3\tHan\tHan\tPROPN\t_\t_\t1\tconj\t_\t_\n\
                    4\tés\tés\tCCONJ\t_\t_\t1\tcc\t_\t_\n\n";
        let sent =
            Reader::new(text.as_bytes(), std::path::Path::new("t.conllu"), Format::Conllu).next().unwrap().unwrap();
        let attrs = |m| {
            let mut out = Vec::new();
            encode_sentence(&sent, m, &mut out);
            out
        };
        let (columns, none, suffixes) =
            (attrs(Morphology::Columns), attrs(Morphology::Unspecified), attrs(Morphology::Suffixes));
        assert_eq!(columns[1].feats, columns[2].feats, "Case=Ine both");
        assert_ne!(columns[1].lemma, none[1].lemma);
        assert!(none[1..].iter().all(|a| a.lemma == UNSPECIFIED && a.feats == UNSPECIFIED));
        // "-ban" and "-BAN": the same suffixes, case folded; "Han": the same last two letters.
        assert_eq!((suffixes[1].lemma, suffixes[1].feats), (suffixes[2].lemma, suffixes[2].feats));
        assert_eq!(suffixes[1].lemma, hash_lowercase("ban"));
        assert_eq!(suffixes[1].feats, suffixes[3].feats);
        assert_ne!(suffixes[1].lemma, suffixes[3].lemma);
        // A form of two characters has no FEATS stand-in; its LEMMA stand-in is the form.
        assert_eq!(suffixes[4].feats, UNSPECIFIED);
        assert_eq!(suffixes[4].lemma, hash_lowercase("és"));
        assert_eq!((suffixes[1].form, suffixes[1].upos), (columns[1].form, columns[1].upos));
    }

    #[test]
    fn a_stored_feature_set_says_what_the_morphology_features_read() {
        for system in System::ALL {
            for m in [Morphology::Columns, Morphology::Unspecified, Morphology::Suffixes] {
                assert_eq!(Morphology::of_stored(system, m.reads_columns(), &feature_set(system, m)), Some(m));
            }
            // Suffixes with the columns read, or another name, are not a model of this build.
            assert_eq!(Morphology::of_stored(system, true, &feature_set(system, Morphology::Suffixes)), None);
            assert_eq!(Morphology::of_stored(system, false, "zhang-nivre-2011+ud/0"), None);
        }
    }

    #[test]
    fn extraction_has_fixed_arity_and_varies_with_configuration() {
        use crate::base::label::Label;
        use crate::transition::{Transition, TransitionSystem};
        let attrs =
            vec![ROOT_ATTRS, token_attrs("The", "the", "DET", "DT", "_"), token_attrs("dog", "dog", "NOUN", "NN", "_")];
        for system in System::ALL {
            let mut c = Configuration::new(2);
            let mut x = Extractor::new(system);
            let a = x.extract(&c, &attrs).to_vec();
            assert_eq!(a.len(), FEATURES_PER_CONFIGURATION);
            system.apply(&mut c, Transition::Shift);
            let b = x.extract(&c, &attrs).to_vec();
            assert_eq!(a[0], b[0], "bias is constant");
            assert_ne!(a, b);
            // LEFT-ARC changes the stack, not the buffer.
            system.apply(&mut c, Transition::LeftArc(Label::from_index(1)));
            let d = x.extract(&c, &attrs).to_vec();
            assert_eq!(b[..BUFFER_FEATURES], d[..BUFFER_FEATURES], "{system}");
            assert_ne!(b[BUFFER_FEATURES..], d[BUFFER_FEATURES..], "{system}");
        }
    }
}

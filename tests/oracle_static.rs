//! The static oracle rebuilds every projective gold tree of the shared treebanks exactly, and
//! every transition it takes has zero cost under the dynamic oracle.

mod common;

use spoolparse::train::load_training;
use spoolparse::transition::arc_eager::Configuration;
use spoolparse::transition::oracle::{cost, static_oracle};

#[test]
fn static_oracle_rebuilds_every_projective_gold_tree() {
    let files = common::all_treebank_files();
    for path in files {
        let set = load_training(std::slice::from_ref(&path)).unwrap();
        assert!(set.sentences.len() > 100, "{}", path.display());
        let mut c = Configuration::new(0);
        for (i, s) in set.sentences.iter().enumerate() {
            c.reset(s.gold.len());
            while let Some(t) = static_oracle(&c, &s.gold) {
                assert!(c.legal().allows(t), "{}: sentence {i}: illegal {t:?}", path.display());
                assert_eq!(cost(&c, &s.gold, t), 0, "{}: sentence {i}: {t:?} costs", path.display());
                c.apply(t);
            }
            for w in 1..=s.gold.len() as u32 {
                assert_eq!(c.head(w), s.gold.head(w), "{}: sentence {i}, word {w}", path.display());
                assert_eq!(Some(c.label(w)), s.gold.label(w), "{}: sentence {i}, word {w}", path.display());
            }
        }
        eprintln!(
            "{}: {} projective trees rebuilt, {} non-projective skipped",
            path.display(),
            set.sentences.len(),
            set.skipped_nonprojective
        );
    }
}

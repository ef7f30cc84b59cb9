//! Each system's static oracle rebuilds every projective gold tree of the shared treebanks
//! exactly, every transition it takes is legal and has zero cost under the dynamic oracle, and
//! it ends in a terminal configuration.

mod common;

use spoolparse::train::load_training;
use spoolparse::transition::{Configuration, System, TransitionSystem};

#[test]
fn static_oracle_rebuilds_every_projective_gold_tree() {
    let files = common::all_treebank_files();
    for path in files {
        let set = load_training(std::slice::from_ref(&path)).unwrap();
        assert!(set.sentences.len() > 100, "{}", path.display());
        let mut c = Configuration::new(0);
        for sys in System::ALL {
            let at = |i: usize| format!("{sys}: {}: sentence {i}", path.display());
            for (i, s) in set.sentences.iter().enumerate() {
                c.reset(s.gold.len());
                while let Some(t) = sys.static_oracle(&c, &s.gold) {
                    assert!(sys.legal(&c).allows(t), "{}: illegal {t:?}", at(i));
                    assert_eq!(sys.cost(&c, &s.gold, t), 0, "{}: {t:?} costs", at(i));
                    sys.apply(&mut c, t);
                }
                assert!(sys.is_terminal(&c), "{}: the oracle stopped before the end", at(i));
                for w in 1..=s.gold.len() as u32 {
                    assert_eq!(c.head(w), s.gold.head(w), "{}, word {w}", at(i));
                    assert_eq!(Some(c.label(w)), s.gold.label(w), "{}, word {w}", at(i));
                }
            }
            eprintln!(
                "{sys}: {}: {} projective trees rebuilt, {} non-projective skipped",
                path.display(),
                set.sentences.len(),
                set.skipped_nonprojective
            );
        }
    }
}

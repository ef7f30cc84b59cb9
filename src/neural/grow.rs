//! A trained model's output layer grown for labels it lacks, so that fine-tuning on the user's
//! corrections can learn them ([`grow_labels`]). A label's transitions are classes of the
//! parser's softmax and its vector is added to a dependent item's, so a model's labels are
//! fixed by its shape; a user's text has labels the base treebank's model never saw (en_atis
//! labels 1.9% of its dev arcs `nmod:tmod` or `obl:tmod`, which en_ewt writes
//! `obl:unmarked`). Growing appends each new label's two classes (LEFT-ARC and RIGHT-ARC, at
//! the end in [`crate::transition::Transition::index`] order) and its vector; every other
//! weight is copied, so the grown model scores the old classes exactly as before.
//!
//! A new label starts as its parent (the universal relation it subtypes, `obl` for `obl:tmod`,
//! where the model has it): its vector and its classes' weights are the parent's, their bias
//! [`NEW_LABEL_OFFSET`] lower. The model then parses as before (the parent always wins) and the
//! new label needs only learn how it differs. A label without a parent in the model starts
//! with zero weights and the lowest bias less the offset. This module reshapes weights; it
//! decides neither which labels to grow nor how they are learned.

use crate::base::label::Label;
use crate::model::neural::{NeuralModel, Spec};
use crate::transition::Transition;

/// How far below its parent's (in log-odds) a new label's classes start: e^-2.3, a tenth of
/// the parent's probability, so the grown model's parse is the model's and its confidences
/// barely move (the parent keeps 10/11 of what it had where the two compete). ln 100 did no
/// better on en_atis through an en_ewt model (fine-tuned on 500 and 2,000 corrected arcs:
/// full-label LAS 81.97 and 86.45 against 82.00 and 86.53; docs/annotation.md, "New labels
/// grown into a neural model").
pub const NEW_LABEL_OFFSET: f32 = std::f32::consts::LN_10;

/// `model` with a label appended for each of `parents` (in order, after the model's own):
/// each new label starts as its parent in the model, or from nothing where it has none.
pub fn grow_labels(model: &NeuralModel, parents: &[Option<Label>]) -> NeuralModel {
    let old = &model.spec;
    let labels = old.labels();
    let spec = Spec { classes: Transition::count(labels + parents.len()), ..old.clone() };
    let (from, _) = old.layout();
    let (to, len) = spec.layout();
    let mut data = vec![0.0; len];
    // Per new label, its classes and its parent's.
    let pairs: Vec<(Classes, Option<Classes>)> =
        parents.iter().enumerate().map(|(k, p)| (classes(Label::from_index(labels + k)), p.map(classes))).collect();
    for ((t, new), (&a, &b)) in old.tensors().iter().zip(spec.tensors()).zip(from.iter().zip(&to)) {
        let src = &model.data()[a..a + t.len()];
        let dst = &mut data[b..b + new.len()];
        match t.name.as_str() {
            // Labels by rows of `dim`.
            "label" => {
                let dim = spec.dim;
                dst[..src.len()].copy_from_slice(src);
                for (k, parent) in parents.iter().enumerate() {
                    if let Some(p) = parent {
                        let row = &src[p.index() * dim..(p.index() + 1) * dim];
                        dst[(labels + k) * dim..(labels + k + 1) * dim].copy_from_slice(row);
                    }
                }
            }
            // Hidden units by rows of classes: each row gains the new classes at its end.
            "mlp.w2" => {
                for (s, d) in src.chunks_exact(old.classes).zip(dst.chunks_exact_mut(spec.classes)) {
                    d[..s.len()].copy_from_slice(s);
                    for &((left, right), parent) in &pairs {
                        if let Some((pl, pr)) = parent {
                            (d[left], d[right]) = (s[pl], s[pr]);
                        }
                    }
                }
            }
            "mlp.b2" => {
                dst[..src.len()].copy_from_slice(src);
                let lowest = src.iter().copied().fold(f32::INFINITY, f32::min);
                for &((left, right), parent) in &pairs {
                    let (l, r) = parent.map_or((lowest, lowest), |(pl, pr)| (src[pl], src[pr]));
                    (dst[left], dst[right]) = (l - NEW_LABEL_OFFSET, r - NEW_LABEL_OFFSET);
                }
            }
            _ => dst.copy_from_slice(src),
        }
    }
    NeuralModel::new(spec, data).expect("laid out by its own spec")
}

/// The class indices of a label's LEFT-ARC and RIGHT-ARC.
type Classes = (usize, usize);

/// A label's [`Classes`].
fn classes(l: Label) -> Classes {
    (Transition::LeftArc(l).index(), Transition::RightArc(l).index())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::features::ROOT_ATTRS;
    use crate::neural::kernels::{Encoder, Mlp};
    use crate::neural::network::Network;
    use crate::transition::{Configuration, System, TransitionSystem};
    use candle_core::DType;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The logits of each configuration of an arc-eager parse of a four-word sentence that
    /// attaches each word to the one before (the arcs labelled `arc_labels` in turn), under
    /// `model`.
    fn logits_along(model: &NeuralModel, arc_labels: &[Label]) -> Vec<Vec<f32>> {
        let net = model.net();
        let (mut encoder, mut mlp) = (Encoder::default(), Mlp::default());
        mlp.prepare_labels(&net);
        let forms = ["the", "cat", "sat", "down"];
        encoder.encode(&net, &[ROOT_ATTRS; 5], &forms);
        mlp.prepare(&net, encoder.vectors());
        let mut config = Configuration::new(forms.len());
        let mut next = arc_labels.iter().cycle();
        let mut out = Vec::new();
        while !System::ArcEager.is_terminal(&config) {
            out.push(mlp.logits(&net, &config).to_vec());
            let legal = System::ArcEager.legal(&config);
            let t = match (legal.right, legal.right_root) {
                (true, _) => Transition::RightArc(*next.next().unwrap()),
                (false, true) => Transition::RightArc(Label::ROOT),
                _ => Transition::Reduce,
            };
            System::ArcEager.apply(&mut config, t);
        }
        out
    }

    /// Whether `a` and `b` are equal but for rounding.
    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
    }

    #[test]
    fn a_grown_model_scores_the_old_classes_as_before_and_each_new_label_below_its_parent() {
        let labels = 4;
        let spec = Spec::small_for(Transition::count(labels));
        let model = Network::new(spec, DType::F32, &mut ChaCha8Rng::seed_from_u64(7)).unwrap().model().unwrap();
        let parent = Label::from_index(2);
        let grown = grow_labels(&model, &[Some(parent), None]);
        assert_eq!(grown.spec.classes, Transition::count(labels + 2));
        assert_eq!(grown.spec.labels(), labels + 2);
        let old_arcs: Vec<Label> = (1..labels).map(Label::from_index).collect();
        let (before, after) = (logits_along(&model, &old_arcs), logits_along(&grown, &old_arcs));
        assert!(before.len() > 3, "{before:?}");
        let (child, orphan) = (classes(Label::from_index(labels)), classes(Label::from_index(labels + 1)));
        let (pl, pr) = classes(parent);
        for (b, a) in before.iter().zip(&after) {
            assert!(close(&a[..b.len()], b), "the old classes score as before: {a:?} {b:?}");
            assert!((a[child.0] - (b[pl] - NEW_LABEL_OFFSET)).abs() < 1e-5, "{a:?}");
            assert!((a[child.1] - (b[pr] - NEW_LABEL_OFFSET)).abs() < 1e-5, "{a:?}");
            // The orphan's classes read nothing: the same score everywhere, below every bias.
            assert_eq!(a[orphan.0], a[orphan.1]);
            assert!(a[orphan.0] < model.net().b2().iter().copied().fold(f32::INFINITY, f32::min));
        }
        // An arc of the new label reads as one of its parent: the configurations after it
        // score as after the parent's.
        let (as_parent, as_child) =
            (logits_along(&grown, &[parent]), logits_along(&grown, &[Label::from_index(labels)]));
        let orphaned = logits_along(&grown, &[Label::from_index(labels + 1)]);
        for (p, c) in as_parent.iter().zip(&as_child) {
            assert!(close(p, c), "{p:?} {c:?}");
        }
        assert!(as_parent.iter().zip(&orphaned).any(|(p, o)| !close(p, o)), "an orphan's arc reads as no parent's");
    }
}

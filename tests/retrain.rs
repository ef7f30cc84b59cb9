//! The annotation loop: annotations are checked, stored and deduplicated; the models directory
//! promotes, rolls back step by step and prunes; a retraining cycle promotes a candidate
//! trained on good annotations and refuses one trained on corrupted trees; the daemon follows
//! `models/current` between files.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use spoolparse::corpus::{Column, Format, Reader, Sentence};
use spoolparse::model::registry::{Event, Registry};
use spoolparse::retrain::reference::Reference;
use spoolparse::retrain::store::Store;
use spoolparse::retrain::{Report, Settings};

fn word(id: usize, form: &str, head: &str, deprel: &str) -> String {
    format!("{id}\t{form}\t{form}\tNOUN\tNN\t_\t{head}\t{deprel}\t_\t_\n")
}

/// A three-word sentence with `heads` (as written in HEAD).
/// A three-word sentence `a b c` with the given heads (`dep` arcs), confirmed by a person: the
/// small models of these tests disagree with any such tree, and would set it aside as suspect
/// (the suspect check has tests of its own).
fn sentence(id: Option<&str>, heads: [&str; 3]) -> String {
    let mut s = id.map_or(String::new(), |id| format!("# sent_id = {id}\n"));
    s.push_str("# confirmed = yes\n");
    let deprel = |h: &str| match h {
        "0" => "root",
        "_" => "_",
        _ => "dep",
    };
    for (i, (form, h)) in ["a", "b", "c"].iter().zip(heads).enumerate() {
        s.push_str(&word(i + 1, form, h, deprel(h)));
    }
    s.push('\n');
    s
}

fn drop_in(dir: &Path, name: &str, text: &str) {
    fs::create_dir_all(dir).unwrap();
    let tmp = dir.join(format!(".{name}"));
    fs::write(&tmp, text).unwrap();
    fs::rename(&tmp, dir.join(name)).unwrap();
}

#[test]
fn annotations_are_checked_stored_and_a_later_correction_replaces_the_earlier() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(&dir.path().join("annotated"));
    let good = sentence(Some("s1"), ["2", "0", "2"]);
    let partial = sentence(Some("s2"), ["_", "0", "_"]);
    let no_id = sentence(None, ["0", "1", "2"]);
    let cycle = sentence(Some("s3"), ["2", "3", "1"]);
    let two_roots = sentence(Some("s4"), ["0", "0", "2"]);
    let nothing = sentence(Some("s5"), ["_", "_", "_"]);
    let out_of_range = sentence(Some("s6"), ["9", "0", "2"]);
    drop_in(&store.incoming, "first.conllu", &format!("{good}{partial}{no_id}"));
    drop_in(&store.incoming, "bad.conllu", &format!("{good}{cycle}{two_roots}{nothing}{out_of_range}"));
    drop_in(&store.incoming, "notes.txt", "not CoNLL-U\n");
    let r = store.ingest().unwrap();
    assert_eq!((r.files, r.sentences), (3, 4), "{r:?}");
    // Each problem names the file and the line of the word at fault.
    let error = fs::read_to_string(store.rejected.join("bad.conllu.error")).unwrap();
    let lines =
        ["(line 9 of bad.conllu)", "(line 16 of bad.conllu)", "(line 21 of bad.conllu)", "(line 27 of bad.conllu)"];
    for expected in lines.into_iter().chain(["1 other sentences"]) {
        assert!(error.contains(expected), "{expected} not in:\n{error}");
    }
    assert!(error.contains("cycle") && error.contains("no annotated arc"), "{error}");
    assert!(fs::read_to_string(store.rejected.join("notes.txt.error")).unwrap().contains("must be CoNLL-U"));
    // Nothing lost: the bad sentences are in rejected/, the good one stored; inputs left annotated/.
    assert_eq!(fs::read_to_string(store.rejected.join("bad.conllu")).unwrap().matches("sent_id").count(), 4);
    assert!(!store.incoming.join("bad.conllu").exists());
    assert!(!store.incoming.join("first.conllu").exists());

    // A correction of s1 and the same id-less sentence again: they replace, not add.
    drop_in(&store.incoming, "second.conllu", &format!("{}{}", sentence(Some("s1"), ["0", "1", "1"]), no_id));
    store.ingest().unwrap();
    let contents = store.read().unwrap();
    let ids: Vec<&str> = contents.annotations.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert_eq!(&ids[..2], ["s1", "s2"]);
    assert!(ids[2].starts_with("hash:"));
    assert_eq!(contents.appended, 6, "every sentence ever stored counts in `appended`");
    let s1 = &contents.annotations[0].sentence;
    assert_eq!(s1.word(1).get(spoolparse::corpus::Column::Head), "0", "the later correction won");
}

/// The store of `config`'s daemon, checking against the model it serves and its `[retrain]`.
fn checked_store(config: &Path) -> (Store, Registry) {
    let config = spoolparse::daemon::config::Config::load(config).unwrap();
    let registry = Registry::new(config.paths.models());
    registry.serve(&config.paths.model).unwrap();
    let reference = Reference::new(&registry, &config.retrain).unwrap();
    let store = Store::new(&config.paths.annotated()).with_reference(reference);
    store.create().unwrap();
    (store, registry)
}

#[test]
fn labels_the_model_does_not_know_and_copies_of_held_out_sentences_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 1);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir.path());
    let fixed = |s: String| s.replace("\tdep\t", "\tobj\t");
    let typo = sentence(Some("typo"), ["2", "0", "2"]).replace("\tdep\t", "\tfoobarlabel\t");
    // A UD relation the model has not seen is no typo: taken either way.
    let tmod = sentence(Some("tmod"), ["2", "0", "2"]).replace("\tdep\t", "\tobl:tmod\t");
    // A held-out sentence, corrected, under another id: refused by its words.
    let mut copy = sentences(&heldout).remove(0);
    copy.set_comment("sent_id", "not-the-heldout-id");
    let mut copy_text = Vec::new();
    copy.write_to(&mut copy_text).unwrap();
    let copy_text = String::from_utf8(copy_text).unwrap();
    let text = format!("{}{typo}{tmod}{copy_text}", fixed(sentence(Some("ok"), ["2", "0", "2"])));
    for (allow, stored) in [(false, 2), (true, 3)] {
        let config = write_config(dir.path(), &model, &fixture, &heldout, &format!("allow_new_labels = {allow}\n"));
        let (store, _) = checked_store(&config);
        drop_in(&store.incoming, "a.conllu", &text);
        let r = store.ingest().unwrap();
        assert_eq!(r.sentences, stored, "allow_new_labels = {allow}: {r:?}");
        let held_out = r.rejected.iter().find(|w| w.contains("retrain.heldout")).expect("the held-out copy refused");
        assert!(held_out.contains(&format!("{}:", heldout.display())), "{held_out}");
        if !allow {
            let why = "DEPREL foobarlabel is neither a UD relation nor a label of the serving model";
            assert!(r.rejected.iter().any(|w| w.contains(why)), "{r:?}");
            assert!(!r.rejected.iter().any(|w| w.contains("obl:tmod")), "{r:?}");
        }
    }
}

/// A base of the first 1,500 `train` sentences (en_ewt's), a held-out file of 300 of `dev`'s, and a model
/// with a tagger trained in seconds on the base (`calibrated`: with the held-out file as its
/// dev set, which fits its confidence), in `dir`: `(base, heldout, model)`.
fn small_en_ewt_model(
    train: &[Sentence],
    dev: &[Sentence],
    dir: &Path,
    calibrated: bool,
) -> (PathBuf, PathBuf, PathBuf) {
    let (base, heldout, model) = (dir.join("base.conllu"), dir.join("heldout.conllu"), dir.join("init.model"));
    write(&base, &train[..1500]);
    write(&heldout, &dev[..300]);
    let mut args = vec!["--epochs", "3", "--tagger", "--jackknife", "0", "--tagger-epochs", "2"];
    let dev_arg = heldout.to_str().unwrap().to_string();
    if calibrated {
        args.extend(["--dev", &dev_arg]);
    }
    let out = common::train(&base, &model, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (base, heldout, model)
}

#[test]
fn files_in_another_language_are_refused_and_random_trees_set_aside_until_confirmed() {
    let Some(ud) = common::ud_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let train = sentences(&ud.join("en_ewt/train.conllu.zst"));
    let dev = sentences(&ud.join("en_ewt/dev.conllu.zst"));
    let (base, heldout, model) = small_en_ewt_model(&train, &dev, dir.path(), false);
    let config = write_config(dir.path(), &model, &base, &heldout, "");
    let (store, _) = checked_store(&config);
    // Gold English: stored.
    let english = dir.path().join("en.conllu");
    write(&english, &dev[300..500]);
    fs::rename(&english, store.incoming.join("en.conllu")).unwrap();
    // Greek: refused whole, each sentence saying why.
    let greek = sentences(&ud.join("el_gdt/dev.conllu.zst"));
    write(&store.incoming.join("el.conllu"), &greek[..100]);
    // Valid random trees with the model's labels.
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut random: Vec<Sentence> = train[2000..].iter().filter(|s| s.len() >= 10).take(200).cloned().collect();
    for s in &mut random {
        corrupt(s, &mut rng);
    }
    write(&store.incoming.join("random.conllu"), &random);
    // Short ones, with random labels: the model is sure of too few of their arcs to judge by
    // those; their disagreement with its parse sets them aside.
    let labels = ["nsubj", "obj", "obl", "nmod", "amod", "det", "case", "advmod", "conj", "cc", "punct", "mark"];
    let mut short: Vec<Sentence> =
        train[2000..].iter().filter(|s| (3..=6).contains(&s.len())).take(100).cloned().collect();
    for s in &mut short {
        for w in 1..=s.len() {
            let head = if w == 1 { 0 } else { rng.gen_range(1..w) };
            s.set_attachment(w, head, if head == 0 { "root" } else { labels[rng.gen_range(0..labels.len())] });
        }
    }
    write(&store.incoming.join("short.conllu"), &short);
    // Corrections of another domain: en_atis's gold arcs where the model is unsure (below 0.8),
    // the rest left open, as a person corrects its low-confidence arcs. They differ from its
    // parse where its confidences expect it to: stored (a rule by agreement alone, head and
    // label on 2/3 of the arcs, set aside 542 of 571 such sentences of en_atis dev).
    let atis = sentences(&ud.join("en_atis/dev.conllu.zst"));
    let served = spoolparse::model::file::ModelFile::open(&model).unwrap();
    let mut annotator = spoolparse::parse::annotate::Annotator::new(&served, true);
    let mut corrections = Vec::new();
    for gold in atis.iter().take(200) {
        let mut parsed = gold.clone();
        annotator.annotate(&mut parsed, Default::default()).unwrap();
        let mut partial = gold.clone();
        for (w, &c) in annotator.arc_confidence().iter().enumerate().skip(1) {
            if c >= 0.8 {
                partial.set_column(w, Column::Head, "_");
                partial.set_column(w, Column::Deprel, "_");
            }
        }
        if partial.words().any(|w| w.get(Column::Head) != "_") {
            corrections.push(partial);
        }
    }
    assert!(corrections.len() >= 150, "{} of 200 en_atis sentences have an unsure arc", corrections.len());
    write(&store.incoming.join("atis.conllu"), &corrections);
    let r = store.ingest().unwrap();
    let by = |name: &str| r.by_file.iter().find(|f| f.name == name).unwrap().clone();
    let (en, el, rnd) = (by("en.conllu"), by("el.conllu"), by("random.conllu"));
    let (short_report, atis_report) = (by("short.conllu"), by("atis.conllu"));
    eprintln!("{en}\n{el}\n{rnd}\n{short_report}\n{atis_report}");
    assert!(short_report.suspect >= 85, "{short_report}");
    // This small model, trained without a dev set, has no calibration: 20 of 179 set aside (0
    // of 571 through a calibrated model trained on all of en_ewt, examples/suspect_rates.rs).
    assert!(atis_report.suspect * 6 <= corrections.len(), "{atis_report}");
    // A small model (1,500 sentences): a few gold sentences use labels it never saw, or
    // disagree with it where it is sure (about 1 in 10 here; 4% through a model trained on all
    // of en_ewt train), far fewer than random trees.
    assert!(en.sentences >= 170 && en.suspect <= 25, "{en}");
    assert_eq!((el.sentences, el.rejected), (0, 100), "{el}");
    assert!(r.rejected.iter().any(|w| w.starts_with("el.conllu:") && w.contains("unknown to the serving model")));
    assert!(rnd.suspect >= 170 && rnd.rejected == 0, "{rnd}");
    assert!(store.suspect.join("random.conllu").exists() && store.suspect.join("random.conllu.error").exists());
    // A person confirms them and moves them back: stored.
    let aside = fs::read_to_string(store.suspect.join("random.conllu")).unwrap();
    let confirmed = aside.replace("# sent_id", "# confirmed = yes\n# sent_id");
    fs::remove_file(store.suspect.join("random.conllu")).unwrap();
    drop_in(&store.incoming, "random.conllu", &confirmed);
    let r = store.ingest().unwrap();
    assert_eq!((r.sentences, r.suspect.len()), (rnd.suspect, 0), "{r:?}");
    // The short trees again, as sentences the workbench sampled and had reviewed whole: never
    // trained on, they are not judged against the model, and are stored.
    for (i, s) in short.iter_mut().enumerate() {
        s.set_comment("sent_id", &format!("sampled-{i}"));
        s.set_comment("reviewed", "all");
        s.set_comment("workbench_sample", "uniform");
    }
    write(&store.incoming.join("sampled.conllu"), &short);
    let r = store.ingest().unwrap();
    assert_eq!((r.sentences, r.suspect.len()), (short.len(), 0), "{r:?}");
}

/// Random spanning trees over sentences of a domain the serving model was not trained on (en_atis
/// through a model of 1,500 en_ewt sentences) are set aside, while the gold trees of the same
/// sentences are stored: the check that catches them ranks each arc among the model's choices
/// and counts crossing arcs, which holds where the model is sure of nothing. Before it, 39 of
/// the 100 random trees of the issue were stored on en_ewt, all 100 on en_atis.
#[test]
fn random_trees_over_a_new_domain_are_set_aside_and_its_gold_trees_stored() {
    let Some(ud) = common::ud_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let train = sentences(&ud.join("en_ewt/train.conllu.zst"));
    let dev = sentences(&ud.join("en_ewt/dev.conllu.zst"));
    let (base, heldout, model) = small_en_ewt_model(&train, &dev, dir.path(), true);
    let config = write_config(dir.path(), &model, &base, &heldout, "");
    let (store, _) = checked_store(&config);
    let atis: Vec<Sentence> = sentences(&ud.join("en_atis/train.conllu.zst")).into_iter().take(100).collect();
    write(&store.incoming.join("gold.conllu"), &atis);
    let served = spoolparse::model::file::ModelFile::open(&model).unwrap();
    let labels: Vec<String> =
        served.meta().labels.names().filter(|n| !n.contains(['↑', '↓']) && *n != "root").map(str::to_string).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut random = atis.clone();
    for s in &mut random {
        random_spanning_tree(s, &labels, &mut rng);
    }
    write(&store.incoming.join("random.conllu"), &random);
    let r = store.ingest().unwrap();
    let by = |name: &str| r.by_file.iter().find(|f| f.name == name).unwrap().clone();
    let (gold, rnd) = (by("gold.conllu"), by("random.conllu"));
    eprintln!("{gold}\n{rnd}");
    assert!(gold.sentences >= 95, "{gold}");
    assert!(rnd.suspect >= 95 && rnd.sentences <= 5, "{rnd}");
    assert!(r.suspect.iter().any(|w| w.starts_with("random.conllu:") && w.contains("ranks below its first")), "{r:?}");
}

/// A uniformly random spanning tree over `sent`'s words: each word, in a random order, hangs
/// from a random word already in the tree (the first from the root), with a random label of
/// `labels`.
fn random_spanning_tree(sent: &mut Sentence, labels: &[String], rng: &mut ChaCha8Rng) {
    let mut order: Vec<usize> = (1..=sent.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.gen_range(0..=i));
    }
    for (k, &w) in order.iter().enumerate() {
        match k {
            0 => sent.set_attachment(w, 0, "root"),
            _ => sent.set_attachment(w, order[rng.gen_range(0..k)], &labels[rng.gen_range(0..labels.len())]),
        }
    }
}

/// A DEPREL whose subtype neither the serving model nor UD knows (`obl:tmodx`, a typo of
/// `obl:tmod`; `dislocated:foo`) would become a class of its own: refused, naming the label
/// and the known ones close to it. A documented subtype the model lacks (`obl:tmod`) is taken.
#[test]
fn subtype_typos_are_refused_naming_the_labels_close_to_them() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 1);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir.path());
    let with = |id: &str, label: &str| sentence(Some(id), ["2", "0", "2"]).replace("\tdep\t", &format!("\t{label}\t"));
    let text = [with("tmodx", "obl:tmodx"), with("foo", "dislocated:foo"), with("tmod", "obl:tmod")].concat();
    let config = write_config(dir.path(), &model, &fixture, &heldout, "");
    let (store, _) = checked_store(&config);
    drop_in(&store.incoming, "a.conllu", &text);
    let r = store.ingest().unwrap();
    assert_eq!((r.sentences, r.rejected.len()), (1, 2), "{r:?}");
    let why = |label: &str| r.rejected.iter().find(|w| w.contains(&format!("DEPREL {label} is a subtype"))).cloned();
    let tmodx = why("obl:tmodx").expect("obl:tmodx refused");
    assert!(tmodx.contains("close to it: obl:tmod"), "{tmodx}");
    let foo = why("dislocated:foo").expect("dislocated:foo refused");
    assert!(foo.contains("close to it: dislocated"), "{foo}");
}

/// A lemma with a control or separator character (U+2028 here, a line break to editors and
/// JavaScript) or of 100,000 characters is refused with the line and why; it was stored.
#[test]
fn lemmas_with_control_characters_or_of_runaway_length_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(&dir.path().join("annotated"));
    let with_lemma = |id: &str, lemma: &str| {
        let good = sentence(Some(id), ["2", "0", "2"]);
        good.replacen("\tb\tb\t", &format!("\tb\t{lemma}\t"), 1)
    };
    let long = "x".repeat(100_000);
    let text = [
        with_lemma("sep", "b\u{2028}c"),
        with_lemma("bell", "b\u{7}"),
        with_lemma("long", &long),
        with_lemma("ok", "bee"),
    ]
    .concat();
    drop_in(&store.incoming, "a.conllu", &text);
    let r = store.ingest().unwrap();
    assert_eq!((r.sentences, r.rejected.len()), (1, 3), "{r:?}");
    assert!(r.rejected[0].contains("LEMMA contains the control or separator character U+2028"), "{r:?}");
    assert!(r.rejected[1].contains("U+0007"), "{r:?}");
    assert!(r.rejected[2].contains("LEMMA is 100000 characters long (at most 256)"), "{r:?}");
    assert!(r.rejected.iter().all(|w| w.len() < 1000), "the message does not repeat the lemma");
}

/// A sentence copied out of a file the daemon held back as another language (`# held_back` at
/// the head of its lowconf output) is refused however short: the share of unknown words only
/// judges files of 50 words or more, so short ones were stored.
#[test]
fn sentences_of_a_file_the_daemon_held_back_as_another_language_are_refused_at_any_length() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(&dir.path().join("annotated"));
    let marked = format!("# held_back = another language\n{}", sentence(Some("s1"), ["2", "0", "2"]));
    drop_in(&store.incoming, "short.conllu", &format!("{marked}{}", sentence(Some("s2"), ["0", "1", "2"])));
    let r = store.ingest().unwrap();
    assert_eq!((r.sentences, r.rejected.len()), (0, 2), "{r:?}");
    assert!(r.rejected.iter().all(|w| w.contains("held this file back as another language")), "{r:?}");
}

#[test]
fn a_removed_segment_does_not_hide_new_annotations_and_list_shows_where_each_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 2);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir.path());
    let config = write_config(dir.path(), &model, &fixture, &heldout, "max_las_drop = 100\nepochs = 1\n");
    let store = Store::new(&dir.path().join("spool/annotated"));
    let obj = |id: &str| sentence(Some(id), ["2", "0", "2"]).replace("\tdep\t", "\tobj\t");
    let by_ann = format!("# annotator = ann\n{}{}{}", obj("1"), obj("2"), obj("3"));
    drop_in(&store.incoming, "ann.conllu", &by_ann);
    let cfg = config.to_str().unwrap();
    let report = retrain(&config);
    assert_eq!(report.annotations_new, 3, "{report:#?}");
    let list = common::spoolparse(&["annotations", "list", "--config", cfg]);
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(list.lines().any(|l| l.contains("ann.conllu (ann)") && l.contains(" 3 ")), "{list}");
    let shown = common::spoolparse(&["annotations", "show", "1", "--config", cfg]);
    assert!(String::from_utf8_lossy(&shown.stdout).matches("# sent_id").count() == 3);
    let removed = common::spoolparse(&["annotations", "remove", "1", "--config", cfg]);
    assert!(removed.status.success(), "{}", String::from_utf8_lossy(&removed.stderr));
    assert!(store.read().unwrap().annotations.is_empty());
    assert!(store.segments.join("removed/00000001.conllu").exists(), "nothing lost");
    // One new sentence: the next scheduled cycle (min_new_sentences = 1) trains.
    drop_in(&store.incoming, "more.conllu", &obj("4"));
    let out = common::spoolparse(&["retrain", "--config", cfg, "--json"]);
    let report: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.annotations_new, 1, "{report:#?}");
    assert_ne!(report.decision, Some(spoolparse::retrain::Decision::Skipped), "{report:#?}");
    let list =
        String::from_utf8_lossy(&common::spoolparse(&["annotations", "list", "--config", cfg]).stdout).into_owned();
    assert!(
        list.lines().any(|l| l.trim_start().starts_with("2 ") && l.contains("more.conllu")),
        "numbers are not reused: {list}"
    );
}

/// A small model trained on the fixture with `epochs` (different epochs: different files).
fn small_model(dir: &Path, epochs: u32) -> PathBuf {
    let path = dir.join(format!("m{epochs}.model"));
    let out = common::train(&common::fixture("special.conllu"), &path, &["--epochs", &epochs.to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    path
}

#[test]
fn rollback_steps_back_through_promotions_and_pruning_keeps_the_serving_model() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(dir.path().join("models"));
    let [a, b, c] = [1, 2, 3].map(|e| small_model(dir.path(), e));
    let name = |m: &spoolparse::model::file::ModelFile| m.path().file_name().unwrap().to_string_lossy().into_owned();
    let served_a = name(&registry.serve(&a).unwrap());
    // The same configured model again: nothing changes.
    assert_eq!(name(&registry.serve(&a).unwrap()), served_a);
    let b_name = name(&registry.install(&b).unwrap());
    registry.switch(Event::Promoted, &b_name).unwrap();
    let c_name = name(&registry.install(&c).unwrap());
    registry.switch(Event::Promoted, &c_name).unwrap();
    // Restarting with the same configured model keeps the promoted one.
    assert_eq!(name(&registry.serve(&a).unwrap()), c_name);
    assert_eq!(registry.rollback().unwrap().model, b_name);
    assert_eq!(registry.rollback().unwrap().model, served_a, "a second rollback goes a step further back");
    assert!(registry.rollback().unwrap_err().to_string().contains("first model served"));
    assert_eq!(registry.current_name().unwrap().as_deref(), Some(served_a.as_str()));
    // Keep 1: the serving (and configured) model stays, the others go.
    let removed = registry.prune(1).unwrap();
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert!(registry.dir().join(&served_a).exists());
    let events: Vec<Event> = registry.history().unwrap().iter().map(|c| c.event).collect();
    assert_eq!(events, [Event::Configured, Event::Promoted, Event::Promoted, Event::Rollback, Event::Rollback]);
}

#[test]
fn rollback_retraces_the_models_served_when_one_was_configured_twice() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(dir.path().join("models"));
    let [a, b] = [1, 2].map(|e| small_model(dir.path(), e));
    let name = |m: &spoolparse::model::file::ModelFile| m.path().file_name().unwrap().to_string_lossy().into_owned();
    // Configured A, then B, then A again: served A, B, A.
    let (a_name, b_name) = (name(&registry.serve(&a).unwrap()), name(&registry.serve(&b).unwrap()));
    assert_eq!(name(&registry.serve(&a).unwrap()), a_name);
    assert_eq!(registry.rollback().unwrap().model, b_name);
    assert_eq!(registry.rollback().unwrap().model, a_name, "back to the first A, not forth to B");
    assert!(registry.rollback().unwrap_err().to_string().contains("first model served"));
}

#[test]
fn what_serves_survives_the_loss_of_the_history_and_pruning_spares_files_of_other_names() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    let registry = Registry::new(&models);
    let [a, b, c] = [1, 2, 3].map(|e| small_model(dir.path(), e));
    let name = |m: &spoolparse::model::file::ModelFile| m.path().file_name().unwrap().to_string_lossy().into_owned();
    // The configured model may live in the models directory, beside a user's backup.
    let (configured, backup) = (models.join("en.model"), models.join("backup-of-prod.model"));
    fs::create_dir_all(&models).unwrap();
    fs::copy(&a, &configured).unwrap();
    fs::copy(&a, &backup).unwrap();
    registry.serve(&configured).unwrap();
    for promoted in [&b, &c] {
        let promoted = name(&registry.install(promoted).unwrap());
        registry.switch(Event::Promoted, &promoted).unwrap();
    }
    let serving = registry.current_name().unwrap().unwrap();
    // A directory from before `configured`: the history stands in, and the link is made.
    fs::remove_file(models.join("configured")).unwrap();
    assert_eq!(name(&registry.serve(&configured).unwrap()), serving);
    assert!(models.join("configured").exists());
    // Log rotation, or a clean-up: a restart still serves the promoted model.
    fs::remove_file(models.join("history.jsonl")).unwrap();
    assert_eq!(name(&registry.serve(&configured).unwrap()), serving);
    let removed = registry.prune(1).unwrap();
    assert_eq!(removed.len(), 1, "{removed:?}: only the copy of B");
    assert!(configured.exists() && backup.exists(), "files of other names are the user's");
}

#[test]
fn a_candidate_is_not_promoted_over_a_model_that_started_serving_during_its_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(dir.path().join("models"));
    let [a, b] = [1, 2].map(|e| small_model(dir.path(), e));
    let a_name = registry.serve(&a).unwrap().path().file_name().unwrap().to_string_lossy().into_owned();
    let b_name = registry.install(&b).unwrap().path().file_name().unwrap().to_string_lossy().into_owned();
    let store = Store::new(&dir.path().join("annotated"));
    store.create().unwrap();
    let fixture = common::fixture("special.conllu");
    drop_in(&store.incoming, "a.conllu", &fs::read_to_string(&fixture).unwrap());
    let settings = spoolparse::retrain::Settings {
        base: vec![fixture.clone()],
        heldout: Some(heldout_beside(&fixture, dir.path())),
        max_las_drop: 100.0,
        epochs: Some(1),
        ..Default::default()
    };
    // While the candidate trains, an operator configures (or rolls back to) another model.
    let mut switched = false;
    let mut progress = |message: &str| {
        if message.starts_with("epoch") && !switched {
            registry.switch(Event::Configured, &b_name).unwrap();
            switched = true;
        }
    };
    let report = spoolparse::retrain::run_cycle(
        &settings,
        &registry,
        &store,
        &spoolparse::retrain::CycleOptions { force: true, ..Default::default() },
        &mut progress,
    )
    .unwrap();
    assert!(switched, "the cycle trained");
    assert_eq!(report.decision, Some(spoolparse::retrain::Decision::Rejected), "{report:#?}");
    assert!(
        report.reasons.iter().any(|r| r.contains(&format!("{b_name} serves since the cycle started"))),
        "{report:#?}"
    );
    assert_eq!(registry.current_name().unwrap(), Some(b_name.clone()));
    assert_eq!(registry.history().unwrap().last().map(|c| c.model.clone()), Some(b_name));
    assert_ne!(a_name, registry.current_name().unwrap().unwrap());
}

/// `retrain.heldout` as a copy of a `retrain.base` file under another name (here compressed),
/// which the configuration's same-file check cannot see: the cycle refuses it before training,
/// as the gate would measure training data. A held-out file of other sentences passes.
#[test]
fn a_held_out_file_whose_sentences_are_in_the_base_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 1);
    let registry = Registry::new(dir.path().join("models"));
    registry.serve(&model).unwrap();
    let store = Store::new(&dir.path().join("annotated"));
    store.create().unwrap();
    let fixture = common::fixture("special.conllu");
    let compressed = dir.path().join("base.conllu.zst");
    fs::write(&compressed, zstd::encode_all(fs::read(&fixture).unwrap().as_slice(), 3).unwrap()).unwrap();
    let settings = |heldout: PathBuf| spoolparse::retrain::Settings {
        base: vec![compressed.clone()],
        heldout: Some(heldout),
        max_las_drop: 100.0,
        epochs: Some(1),
        ..Default::default()
    };
    let e = spoolparse::retrain::run_cycle(
        &settings(fixture.clone()),
        &registry,
        &store,
        &spoolparse::retrain::CycleOptions { force: true, ..Default::default() },
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("retrain.heldout: 3 of the 3 sentences of ") && e.contains("also in retrain.base"), "{e}");
    let other = heldout_beside(&fixture, dir.path());
    spoolparse::retrain::run_cycle(
        &settings(other),
        &registry,
        &store,
        &spoolparse::retrain::CycleOptions { force: true, ..Default::default() },
        &mut |_| {},
    )
    .unwrap();
}

#[test]
fn annotations_are_checked_against_the_root_label_of_the_serving_model() {
    let dir = tempfile::tempdir().unwrap();
    // A treebank whose root label is TOP (CoNLL-X style), and a model trained on it.
    let top = dir.path().join("top.conllu");
    fs::write(&top, fs::read_to_string(common::fixture("special.conllu")).unwrap().replace("\troot\t", "\tTOP\t"))
        .unwrap();
    let model = dir.path().join("top.model");
    let out = common::train(&top, &model, &["--epochs", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let registry = Registry::new(dir.path().join("models"));
    let store = Store::new(&dir.path().join("annotated"));
    assert_eq!(store.reference.root_label, "root", "no model serves yet: the UD label");
    registry.serve(&model).unwrap();
    let store = store.with_reference(Reference::new(&registry, &Settings::default()).unwrap());
    assert_eq!(store.reference.root_label, "TOP");
    // `obj`: a label of the fixture, so that only the root label decides.
    let with_top = sentence(Some("t"), ["2", "0", "2"]).replace("\troot\t", "\tTOP\t").replace("\tdep\t", "\tobj\t");
    let with_root = sentence(Some("r"), ["2", "0", "2"]).replace("\tdep\t", "\tobj\t");
    drop_in(&store.incoming, "a.conllu", &format!("{with_top}{with_root}"));
    let r = store.ingest().unwrap();
    assert_eq!((r.sentences, r.rejected.len()), (1, 1), "{:?}", r.rejected);
}

/// Writes the sentences of `fixture` into `dir/heldout.conllu` with every FORM changed: a
/// held-out file of the same shape whose sentences are not the fixture's, for a `retrain.base`
/// that is the fixture (a copy would be refused as training data in disguise).
fn heldout_beside(fixture: &Path, dir: &Path) -> PathBuf {
    let text: String = fs::read_to_string(fixture)
        .unwrap()
        .lines()
        .map(|line| {
            let mut cols: Vec<String> = line.split('\t').map(str::to_string).collect();
            if cols.len() == 10 && cols[1] != "_" {
                cols[1].push_str("-h");
            }
            cols.join("\t") + "\n"
        })
        .collect();
    let path = dir.join("heldout.conllu");
    fs::write(&path, text).unwrap();
    path
}

/// Writes `dir/spoolparse.toml`: spool, output and models under `dir`, `model` configured,
/// `[retrain]` with `base` and `heldout`, then the lines `extra` (more `[retrain]` keys, or
/// further tables).
fn write_config(dir: &Path, model: &Path, base: &Path, heldout: &Path, extra: &str) -> PathBuf {
    let config = dir.join("spoolparse.toml");
    let root = dir.display();
    fs::write(
        &config,
        format!(
            "[paths]\nspool = \"{root}/spool\"\noutput = \"{root}/out\"\nmodel = \"{}\"\n\
             [retrain]\nbase = [\"{}\"]\nheldout = \"{}\"\n{extra}",
            model.display(),
            base.display(),
            heldout.display()
        ),
    )
    .unwrap();
    config
}

/// What the daemon of `write_config(dir, …)` (logging into `log`) publishes for `text` dropped
/// into its spool as `name`: its accepted and then its lowconf sentences.
fn published(dir: &Path, log: &Path, name: &str, text: &str) -> String {
    drop_in(&dir.join("spool/incoming"), name, text);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !dir.join("spool/done").join(name).exists() {
        assert!(Instant::now() < deadline, "{name} not parsed: {}", fs::read_to_string(log).unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut text = String::new();
    for split in ["accepted", "lowconf"] {
        let out = dir.join("out").join(split).join(format!("{name}.zst"));
        text += &String::from_utf8(zstd::decode_all(fs::File::open(&out).unwrap()).unwrap()).unwrap();
    }
    text
}

/// The model name of the `# model` line of published text.
fn served_by(text: &str) -> String {
    let label = text.lines().find_map(|l| l.strip_prefix("# model = ")).expect("a # model line");
    label.split(' ').next().unwrap_or_default().to_string()
}

/// `spoolparse daemon --config CONFIG`, logging into `log`.
fn start_daemon(config: &Path, log: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_spoolparse"))
        .args(["daemon", "--config", config.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// Sentences of an en_ewt file.
fn sentences(path: &Path) -> Vec<Sentence> {
    Reader::open(path, Format::Conllu).unwrap().map(|s| s.unwrap()).collect()
}

fn write(path: &Path, sents: &[Sentence]) {
    let mut out = Vec::new();
    for s in sents {
        s.write_to(&mut out).unwrap();
    }
    fs::write(path, out).unwrap();
}

/// Random heads that still make a valid tree: word 1 hangs from the root, every other word
/// from a random earlier word, with DEPREL `nmod` (a label of every en_ewt model).
fn corrupt(sent: &mut Sentence, rng: &mut ChaCha8Rng) {
    for w in 1..=sent.len() {
        let head = if w == 1 { 0 } else { rng.gen_range(1..w) };
        sent.set_attachment(w, head, if head == 0 { "root" } else { "nmod" });
    }
}

/// An en_ewt subset in `dir` ready for retraining: the first `base` train sentences as
/// `retrain.base` and as the initial model's training data (`epochs` epochs, with the held-out
/// file as dev if `with_dev`), the first `heldout` dev sentences as `retrain.heldout`, and a
/// configuration with those and the `[retrain]` lines `extra`. Returns all train sentences and
/// the configuration's path.
fn en_ewt_setup(
    ud: &Path,
    dir: &Path,
    base: usize,
    heldout: usize,
    epochs: u32,
    with_dev: bool,
    extra: &str,
) -> (Vec<Sentence>, PathBuf) {
    let train = sentences(&ud.join("en_ewt/train.conllu.zst"));
    let dev = sentences(&ud.join("en_ewt/dev.conllu.zst"));
    let (base_path, heldout_path) = (dir.join("base.conllu"), dir.join("heldout.conllu"));
    write(&base_path, &train[..base]);
    write(&heldout_path, &dev[..heldout]);
    let model = dir.join("init.model");
    let epochs = epochs.to_string();
    let mut args = vec!["--epochs", epochs.as_str()];
    if with_dev {
        args.extend(["--dev", heldout_path.to_str().unwrap()]);
    }
    let out = common::train(&base_path, &model, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (train, write_config(dir, &model, &base_path, &heldout_path, extra))
}

/// A forced `spoolparse retrain --json`, whose exit status must say its decision.
fn retrain(config: &Path) -> Report {
    let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--json", "--force"]);
    let report: Report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(exit_status(&report)), "{}", String::from_utf8_lossy(&out.stderr));
    report
}

/// The exit status `spoolparse retrain` documents for a report's decision.
fn exit_status(report: &Report) -> i32 {
    match report.decision {
        Some(spoolparse::retrain::Decision::Promoted) => 0,
        Some(spoolparse::retrain::Decision::Rejected) => 3,
        _ => 4,
    }
}

#[test]
fn retrain_exits_0_when_it_promotes_and_4_when_it_has_nothing_to_train_on() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 2);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir.path());
    // Nothing but the model's own data, as it was trained: the same model, which the gate
    // promotes (without annotations, no loss is allowed).
    let config = write_config(dir.path(), &model, &fixture, &heldout, "epochs = 2\n");
    let args = ["retrain", "--config", config.to_str().unwrap()];
    let skipped = common::spoolparse(&args);
    assert_eq!(skipped.status.code(), Some(4), "{}", String::from_utf8_lossy(&skipped.stderr));
    assert!(String::from_utf8_lossy(&skipped.stdout).starts_with("skipped"));
    let promoted = common::spoolparse(&[&args[..], &["--force"]].concat());
    assert_eq!(promoted.status.code(), Some(0), "{}", String::from_utf8_lossy(&promoted.stderr));
    assert!(String::from_utf8_lossy(&promoted.stdout).starts_with("promoted"));
}

/// `kill -9` at the worst moment of a promotion: the candidate installed (and its report
/// written), `current` not moved yet. The history must not say the candidate serves.
#[test]
fn kill_9_between_installing_a_candidate_and_moving_current_leaves_the_history_saying_what_serves() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 2);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir.path());
    // As trained: the same model, promoted.
    let config = write_config(dir.path(), &model, &fixture, &heldout, "epochs = 2\n");
    let registry = Registry::new(dir.path().join("spool/models"));
    let out = Command::new(env!("CARGO_BIN_EXE_spoolparse"))
        .args(["retrain", "--config", config.to_str().unwrap(), "--force"])
        .env(spoolparse::model::registry::KILL_BEFORE_SWITCH_ENV, "promoted")
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(9), "killed at the switch: {}", String::from_utf8_lossy(&out.stderr));
    let serving = registry.current_name().unwrap().expect("a serving model");
    let history = registry.history().unwrap();
    assert_eq!(history.last().map(|c| c.model.as_str()), Some(serving.as_str()), "{history:?}");
    assert!(history.iter().all(|c| c.event != Event::Promoted), "the history says a promotion served: {history:?}");
    // The next cycle promotes, and the history follows.
    let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--force"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let serving = registry.current_name().unwrap().expect("a serving model");
    let history = registry.history().unwrap();
    assert_eq!(history.last().map(|c| (c.event, c.model.as_str())), Some((Event::Promoted, serving.as_str())));
    assert!(!registry.dir().join("history.pending").exists());
}

/// A `Change` pending when `current` already moved (killed between the link and the log) is
/// in the history as read, and written to it by the next lock.
#[test]
fn a_switch_killed_after_the_link_moved_is_in_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(dir.path().join("models"));
    let [a, b] = [1, 2].map(|e| small_model(dir.path(), e));
    registry.serve(&a).unwrap();
    let b_name = registry.install(&b).unwrap().path().file_name().unwrap().to_string_lossy().into_owned();
    let from = registry.current_name().unwrap();
    let change = spoolparse::model::registry::Change { time: 1, event: Event::Promoted, model: b_name.clone(), from };
    fs::write(registry.dir().join("history.pending"), serde_json::to_string(&change).unwrap()).unwrap();
    std::os::unix::fs::symlink(&b_name, registry.dir().join(".current.new")).unwrap();
    fs::rename(registry.dir().join(".current.new"), registry.dir().join("current")).unwrap();
    assert_eq!(registry.history().unwrap().last(), Some(&change));
    registry.prune(5).unwrap(); // takes the lock
    assert!(!registry.dir().join("history.pending").exists());
    let log = fs::read_to_string(registry.dir().join("history.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    assert_eq!(registry.rollback().unwrap().event, Event::Rollback);
}

#[test]
fn retraining_promotes_good_annotations_and_the_gate_refuses_corrupted_trees() {
    let Some(ud) = common::ud_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (train, config) = en_ewt_setup(&ud, dir.path(), 1500, 800, 3, true, "");
    let annotated = dir.path().join("spool/annotated");

    // 3,000 more gold sentences: a better parser.
    let mut more = dir.path().join("more.conllu");
    write(&more, &train[1500..4500]);
    fs::create_dir_all(&annotated).unwrap();
    fs::rename(&more, annotated.join("more.conllu")).unwrap();
    let good = retrain(&config);
    let candidate = good.candidate.clone().expect("a candidate");
    assert_eq!(good.decision, Some(spoolparse::retrain::Decision::Promoted), "{good:#?}");
    assert!(candidate.heldout_las > good.current.heldout_las, "{good:#?}");
    assert!(good.annotations_heldout > 0 && good.annotations_heldout < 600, "about 10% held out: {good:#?}");
    let registry = Registry::new(dir.path().join("spool/models"));
    assert_eq!(registry.current_name().unwrap(), Some(candidate.model.clone()));

    // 6,000 sentences with random heads: the candidate is worse and refused.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut bad: Vec<Sentence> = train[4500..10500].to_vec();
    for s in &mut bad {
        corrupt(s, &mut rng);
        // Confirmed by a person (unconfirmed, they would be set aside as suspect): the gate is
        // what is tested here.
        s.set_comment("confirmed", "yes");
    }
    more = dir.path().join("corrupted.conllu");
    write(&more, &bad);
    fs::rename(&more, annotated.join("corrupted.conllu")).unwrap();
    let refused = retrain(&config);
    assert_eq!(refused.decision, Some(spoolparse::retrain::Decision::Rejected), "{refused:#?}");
    assert!(refused.reasons.iter().any(|r| r.contains("is below the serving model")), "{:?}", refused.reasons);
    assert_eq!(registry.current_name().unwrap(), Some(candidate.model.clone()), "the old model still serves");
    let report: Report = serde_json::from_slice(&fs::read(refused.report_file.as_ref().unwrap()).unwrap()).unwrap();
    assert_eq!(report.decision, refused.decision, "the report beside the model says the same");
    let rejected_model = refused.candidate.unwrap().model;
    assert!(!registry.dir().join(rejected_model).exists(), "a refused candidate is removed");
}

#[test]
fn the_daemon_switches_to_a_promoted_or_rolled_back_model_between_files() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 2);
    let fixture = common::fixture("special.conllu");
    // A file of its own: a held-out file also in retrain.base is refused.
    let heldout = heldout_beside(&fixture, dir.path());
    let extra = "max_las_drop = 100\nepochs = 1\n[watch]\nrescan_seconds = 0.2\n";
    let config = write_config(dir.path(), &model, &fixture, &heldout, extra);
    let log = dir.path().join("daemon.log");
    let mut daemon = start_daemon(&config, &log);
    let text = fs::read_to_string(&fixture).unwrap();
    let parsed_with = |name: &str| served_by(&published(dir.path(), &log, name, &text));
    let first = parsed_with("one.conllu");
    // A promotion, here by a foreground cycle whose gate lets anything through.
    drop_in(&dir.path().join("spool/annotated"), "a.conllu", &text);
    let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("promoted"), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_millis(1500));
    let second = parsed_with("two.conllu");
    assert!(second.starts_with("retrained-") && second != first, "{first} then {second}");
    let out = common::spoolparse(&["models", "rollback", "--config", config.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(parsed_with("three.conllu"), first, "rolled back");
    let listing = common::spoolparse(&["models", "list", "--config", config.to_str().unwrap()]);
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    assert_eq!(listing.lines().count(), 3, "{listing}");
    assert!(listing.lines().last().unwrap().starts_with('*') && listing.contains("promoted"), "{listing}");
    let _ = daemon.kill();
    let _ = daemon.wait();
    let log = fs::read_to_string(&log).unwrap();
    assert_eq!(log.matches("now serving model").count(), 2, "{log}");
}

#[test]
fn kill_9_during_retraining_and_promotion_leaves_a_serving_model_and_every_annotation() {
    let Some(ud) = common::ud_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    // The gate lets every candidate through, so that kills also land in promotions.
    // New labels allowed: the 800-sentence model has not seen every label of en_ewt.
    let extra =
        "enabled = true\nevery = \"1s\"\nmax_las_drop = 100\nepochs = 2\nkeep_models = 2\nallow_new_labels = true\n";
    let (train, config) = en_ewt_setup(&ud, dir.path(), 800, 300, 2, false, extra);
    let store = Store::new(&dir.path().join("spool/annotated"));
    let registry = Registry::new(dir.path().join("spool/models"));
    let start = |log: &Path| start_daemon(&config, log);
    // The ids in the .conllu files of `dir`.
    let ids_in = |dir: &Path| -> std::collections::BTreeSet<String> {
        let names = fs::read_dir(dir).map(|d| d.map(|e| e.unwrap().file_name().into_string().unwrap()).collect());
        let names: Vec<String> = names.unwrap_or_default();
        let files = names.into_iter().filter(|n| n.ends_with(".conllu") && !n.starts_with('.'));
        files.flat_map(|n| sentences(&dir.join(n))).map(|s| spoolparse::retrain::store::identity(&s)).collect()
    };
    // Every id ever dropped is stored, still waiting in annotated/, or set aside (a sentence of
    // the held-out file's words, or a gold one that disagrees with the small model).
    let check = |trial: usize, dropped: &[String]| {
        let mut have: std::collections::BTreeSet<String> =
            store.read().unwrap().annotations.into_iter().map(|a| a.id).collect();
        for dir in [&store.incoming, &store.rejected, &store.suspect] {
            have.extend(ids_in(dir));
        }
        for id in dropped {
            assert!(have.contains(id), "trial {trial}: annotation {id} lost");
        }
        let current = registry.current_name().unwrap().expect("a serving model");
        let served = spoolparse::model::file::ModelFile::open(&registry.dir().join(&current));
        served.and_then(|m| m.verify()).unwrap_or_else(|e| panic!("trial {trial}: current is not a whole model: {e}"));
    };
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut dropped = Vec::new();
    let mut in_cycle = 0;
    let trials = 12;
    for trial in 0..trials {
        let batch = &train[1000 + 60 * trial..1060 + 60 * trial];
        dropped.extend(batch.iter().map(spoolparse::retrain::store::identity));
        let file = dir.path().join(format!("t{trial}.conllu"));
        write(&file, batch);
        fs::create_dir_all(&store.incoming).unwrap();
        fs::rename(&file, store.incoming.join(format!("t{trial}.conllu"))).unwrap();
        let log = dir.path().join(format!("daemon-{trial}.log"));
        let mut daemon = start(&log);
        std::thread::sleep(Duration::from_millis(rng.gen_range(300..4000)));
        daemon.kill().unwrap(); // SIGKILL
        daemon.wait().unwrap();
        let log = fs::read_to_string(&log).unwrap();
        in_cycle += usize::from(log.matches("a cycle is due").count() > log.matches("retraining: candidate").count());
        check(trial, &dropped);
    }
    // A last, uninterrupted run takes everything in and promotes.
    let log = dir.path().join("daemon-final.log");
    let mut daemon = start(&log);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !fs::read_to_string(&log).unwrap().contains("retraining: candidate") {
        assert!(Instant::now() < deadline, "no cycle finished: {}", fs::read_to_string(&log).unwrap());
        std::thread::sleep(Duration::from_millis(200));
    }
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    check(trials, &dropped);
    let aside: std::collections::BTreeSet<String> =
        ids_in(&store.rejected).into_iter().chain(ids_in(&store.suspect)).collect();
    let expected = dropped.iter().filter(|id| !aside.contains(*id)).count();
    assert!(aside.len() * 10 < dropped.len(), "{} of {} set aside", aside.len(), dropped.len());
    assert_eq!(store.read().unwrap().annotations.len(), expected, "every annotation stored, once");
    let leftovers: Vec<String> = fs::read_dir(registry.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporaries left: {leftovers:?}");
    eprintln!("{trials} kills, {in_cycle} during a retraining cycle");
    assert!(in_cycle > 0, "no kill landed during a cycle: the trials did not test anything");
}

/// `kill -9` of a `spoolparse retrain` while it writes its candidate leaves
/// `models/candidate.model.tmpPID` (megabytes); cron-only users never start a daemon, whose
/// start sweeps such files. The next foreground cycle removes the temporaries of dead processes
/// once it holds the retraining lock, and never one of a live process (a daemon installing a
/// model at that moment).
#[test]
fn a_foreground_cycle_removes_temporaries_of_killed_runs_and_keeps_those_of_live_ones() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 2);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir.path());
    let config = write_config(dir.path(), &model, &fixture, &heldout, "epochs = 1\n");
    let models = dir.path().join("spool/models");
    fs::create_dir_all(&models).unwrap();
    // A pid above the kernel's pid_max is never alive; this test's own process is.
    let dead = ["candidate.model.tmp4999999", ".install0.model.tmp4999999", "retrain-state.json.tmp4999999"];
    let live =
        [format!("candidate.model.tmp{}", std::process::id()), format!(".install0.model.tmp{}", std::process::id())];
    for name in dead.iter().map(|s| s.to_string()).chain(live.clone()) {
        fs::write(models.join(name), b"partial").unwrap();
    }
    let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--force"]);
    // Promoted (0) or rejected (3): the cycle ran either way.
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&out.stderr));
    for name in dead {
        assert!(!models.join(name).exists(), "{name} was left");
    }
    for name in &live {
        assert!(models.join(name).exists(), "{name}, of a live process, was removed");
    }
}

/// The workbench's "retrain now" (a request file in `annotated/`) makes the daemon run a cycle
/// at once, as `retrain --force` would, though too few annotations are new for the schedule.
#[test]
fn a_retraining_request_runs_the_daemons_own_cycle_once() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 2);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir.path());
    let extra = "enabled = true\nevery = \"1s\"\nmin_new_sentences = 1000000\nmax_las_drop = 100\nepochs = 1\n";
    let config = write_config(dir.path(), &model, &fixture, &heldout, extra);
    let log = dir.path().join("daemon.log");
    let mut daemon = start_daemon(&config, &log);
    let annotated = dir.path().join("spool/annotated");
    drop_in(&annotated, "a.conllu", &fs::read_to_string(&fixture).unwrap());
    let listing = || {
        let out = common::spoolparse(&["models", "list", "--config", config.to_str().unwrap()]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Scheduled cycles skip (too few new annotations): nothing is promoted by itself.
    std::thread::sleep(Duration::from_secs(7));
    assert!(!listing().contains("promoted"), "{}", fs::read_to_string(&log).unwrap());
    fs::write(annotated.join(spoolparse::retrain::RETRAIN_REQUEST), "admin").unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !listing().contains("promoted") {
        assert!(Instant::now() < deadline, "no cycle ran: {}", fs::read_to_string(&log).unwrap());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(!annotated.join(spoolparse::retrain::RETRAIN_REQUEST).exists(), "the request is taken once");
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert_eq!(fs::read_to_string(&log).unwrap().matches("a cycle was asked for").count(), 1);
}

/// One forced cycle on the fixture's model with partial annotations (only the root word of
/// 20 three-word sentences annotated), every annotation trained on, and the `[retrain]` lines
/// `extra`.
fn cycle_on_partial_annotations(extra: &str) -> Report {
    cycle_on_corrected_roots(20, 0.0, extra)
}

/// A cycle over `n` three-word sentences whose root alone is annotated (the two other words left
/// to the model), `annotation_heldout` of them held out.
fn cycle_on_corrected_roots(n: usize, annotation_heldout: f64, extra: &str) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 1);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir.path());
    let settings = format!(
        "max_las_drop = 100\nepochs = 2\nannotation_heldout = {annotation_heldout:?}\nbootstrap_samples = 50\n{extra}"
    );
    let config = write_config(dir.path(), &model, &fixture, &heldout, &settings);
    let text: String = (0..n).map(|i| sentence(Some(&format!("p{i}")), ["_", "0", "_"])).collect();
    drop_in(&dir.path().join("spool/annotated"), "partial.conllu", &text);
    retrain(&config)
}

#[test]
fn completion_and_weighting_change_what_a_cycle_trains_on() {
    // By default each of the 20 annotated sentences five times an epoch, the base's once.
    let plain = cycle_on_partial_annotations("");
    assert_eq!((plain.completion.as_str(), plain.annotation_weight), ("none", 5));
    assert_eq!((plain.completed_arcs, plain.refreshed_arcs), (0, 0));
    assert_eq!(plain.train_partial_sentences, 20, "{plain:#?}");
    assert_eq!(plain.train_examples, plain.train_sentences + 4 * 20);
    let once = cycle_on_partial_annotations("annotation_weight = 1\n");
    assert_eq!(once.train_sentences, plain.train_sentences);
    assert_eq!(once.train_examples, plain.train_sentences);
    // Completion gives the two unannotated words of each sentence the serving model's arcs,
    // or leaves them open; a refresh completes again with the candidate.
    let serving = cycle_on_partial_annotations("completion = \"serving\"\n");
    assert_eq!(serving.completed_arcs + serving.completion_left_open, 2 * 20, "{serving:#?}");
    assert!(serving.completed_arcs > 0 && serving.completed_sentences > 0, "{serving:#?}");
    assert_eq!(serving.refreshed_arcs, 0);
    let refresh = cycle_on_partial_annotations("completion = \"refresh\"\n");
    assert_eq!(refresh.completed_arcs, serving.completed_arcs, "the first completion is the serving model's");
    assert!(refresh.refreshed_arcs > 0, "{refresh:#?}");
    // The gate's bootstrap is in the report.
    let gate = refresh.gate.expect("gate figures");
    assert_eq!(gate.heldout.samples, 50);
    assert!(gate.annotations.is_none() && !gate.annotations_judge);
}

/// The gate reads the user's text as a whole: each word of a held-out annotated sentence is
/// scored (corrected, or the serving model sure of it) or counted as one nobody can score.
#[test]
fn every_word_of_the_held_out_annotated_sentences_is_scored_or_counted_as_unscored() {
    let report = cycle_on_corrected_roots(60, 0.9, "");
    let held = report.annotations_heldout;
    assert!(held > 40 && held < 60, "{report:#?}");
    let gate = report.gate.as_ref().expect("gate figures");
    let (asked, whole) = (gate.annotations.as_ref().unwrap(), gate.annotations_whole.as_ref().unwrap());
    let uncertain = gate.uncertain.expect("the unscored arcs counted");
    assert_eq!((asked.words, asked.sentences, whole.sentences), (held as u64, held, held), "{gate:#?}");
    assert_eq!(whole.words + uncertain.arcs, 3 * held as u64, "{gate:#?}");
    assert!(uncertain.changed <= uncertain.arcs);
    if uncertain.arcs > 0 {
        let line = format!("not scored: {} arcs", uncertain.arcs);
        assert!(report.reasons.iter().any(|r| r.contains(&line)), "{:?}", report.reasons);
    }
    assert!(report.reasons.iter().any(|r| r.contains("on your text as a whole")), "{:?}", report.reasons);
}

/// A cycle over six sentences the workbench sampled and had reviewed whole (18 words) and ten
/// partial annotations, with `retrain.calibration_min_arcs` at `min_words`.
fn cycle_on_sampled_annotations(dir: &Path, min_words: usize) -> Report {
    let model = small_model(dir, 1);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir);
    let settings = format!(
        "max_las_drop = 100\nepochs = 2\nannotation_heldout = 0.0\nbootstrap_samples = 50\ncalibration_min_arcs = {min_words}\n"
    );
    let config = write_config(dir, &model, &fixture, &heldout, &settings);
    let sampled = |i: usize| {
        let marks = "# confirmed = yes\n# reviewed = all\n# workbench_sample = uniform\n";
        sentence(Some(&format!("u{i}")), ["2", "0", "2"]).replacen("# confirmed = yes\n", marks, 1)
    };
    let partial = |i: usize| sentence(Some(&format!("p{i}")), ["_", "0", "_"]);
    let text: String = (0..6).map(sampled).chain((0..10).map(partial)).collect();
    drop_in(&dir.join("spool/annotated"), "mixed.conllu", &text);
    retrain(&config)
}

/// Sentences the workbench drew uniformly from what was published and had reviewed whole are
/// never trained on, and once they hold `calibration_min_arcs` words, `--min-precision` chooses
/// the candidate's threshold on them: its calibration sentences are theirs, kept in a file beside
/// the cycle's report, which the model names; below that, on `retrain.heldout` as before.
#[test]
fn sampled_sentences_are_never_trained_on_and_once_enough_the_precision_is_chosen_on_them() {
    let dir = tempfile::tempdir().unwrap();
    let report = cycle_on_sampled_annotations(dir.path(), 12);
    assert_eq!(report.train_partial_sentences, 10, "the sampled sentences are not trained on: {report:#?}");
    assert_eq!(report.annotations_heldout, 6, "{report:#?}");
    assert_eq!(report.precision_sentences, 6, "{report:#?}");
    let on = PathBuf::from(report.precision_on.clone().expect("where the precision is chosen"));
    assert!(on.starts_with(dir.path().join("spool/models")), "{}", on.display());
    let kept = sentences(&on);
    assert_eq!(kept.len(), 6);
    assert!(kept.iter().all(|s| s.comment("workbench_sample") == Some("uniform")));
    assert_eq!(report.decision, Some(spoolparse::retrain::Decision::Promoted), "{report:#?}");
    let registry = Registry::new(dir.path().join("spool/models"));
    let served = registry.open(&registry.current_name().unwrap().unwrap()).unwrap();
    let confidence = served.confidence().expect("a fitted confidence");
    assert_eq!(confidence.sentences_source(), on.display().to_string());
    assert_eq!(confidence.sentences.len(), 6);
    assert_eq!(confidence.sentences.iter().map(|r| r.words).sum::<u32>(), 18);
    assert!(confidence.fitted_on.ends_with("heldout.conllu"), "the confidence itself is fitted as before");

    let fewer = tempfile::tempdir().unwrap();
    let report = cycle_on_sampled_annotations(fewer.path(), 19);
    assert_eq!((report.train_partial_sentences, report.precision_sentences), (10, 0), "{report:#?}");
    assert!(report.precision_on.as_deref().is_some_and(|p| p.ends_with("heldout.conllu")), "{report:#?}");
}

/// A model with a tagger (and the analysis it brings) trained on the fixture, in `dir`.
fn tagger_model(dir: &Path) -> PathBuf {
    let model = dir.join("tagger.model");
    let args = ["--epochs", "1", "--tagger", "--jackknife", "0", "--tagger-epochs", "2"];
    let out = common::train(&common::fixture("special.conllu"), &model, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    model
}

/// The columns of the words "Sue likes tea" as `model` analyzes them as text (a file in `dir`).
fn words_of(model: &Path, dir: &Path) -> Vec<Vec<String>> {
    let text = dir.join("sue.txt");
    fs::write(&text, "Sue likes tea\n").unwrap();
    let out = common::spoolparse(&["parse", "--model", model.to_str().unwrap(), text.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// The columns of the words "Sue likes tea" as the model serving in `dir` analyzes them as text.
fn served_words(dir: &Path) -> Vec<Vec<String>> {
    words_of(&dir.join("spool/models/current"), dir)
}

/// The UPOS and XPOS that the model serving in `dir` gives the words "Sue likes tea" as text.
fn served_tags(dir: &Path) -> Vec<String> {
    served_words(dir).iter().map(|w| w[3..5].join(" ")).collect()
}

/// One cycle (`retrain_tagger` as given) on 20 annotated "Sue likes tea" sentences whose words
/// all have tags no treebank sentence has (SYM ZZ), each with the comment `tags_comment`; the
/// report, and the tags the promoted model then gives the words.
/// A cycle on 20 annotations whose words show SYM ZZ, with `retrain_tagger` set to this TOML
/// value (the default if empty) and `tags_comment` in each.
fn cycle_on_tag_annotations(retrain_tagger: &str, tags_comment: &str) -> (spoolparse::retrain::Report, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = common::fixture("special.conllu");
    let model = tagger_model(dir.path());
    let heldout = heldout_beside(&fixture, dir.path());
    let settings = format!(
        "max_las_drop = 100\nepochs = 1\nannotation_heldout = 0.0\ntagger_epochs = 3\nannotation_weight = 5\n{}",
        if retrain_tagger.is_empty() { String::new() } else { format!("retrain_tagger = {retrain_tagger}\n") }
    );
    let config = write_config(dir.path(), &model, &fixture, &heldout, &settings);
    // Words of the fixture (a file of unknown words would be refused).
    let text: String = (0..20)
        .map(|i| {
            let words = [("Sue", "2", "nsubj"), ("likes", "0", "root"), ("tea", "2", "obj")];
            let mut s = format!("# sent_id = t{i}\n# confirmed = yes\n{tags_comment}\n");
            for (w, (form, head, deprel)) in words.iter().enumerate() {
                s.push_str(&format!("{}\t{form}\t{form}\tSYM\tZZ\t_\t{head}\t{deprel}\t_\t_\n", w + 1));
            }
            s + "\n"
        })
        .collect();
    drop_in(&dir.path().join("spool/annotated"), "tags.conllu", &text);
    let report = retrain(&config);
    assert_eq!(report.decision, Some(spoolparse::retrain::Decision::Promoted), "{report:#?}");
    assert_eq!(report.annotations, 20, "{report:#?}");
    let tags = served_tags(dir.path());
    assert_eq!(tags.len(), 3);
    (report, tags)
}

#[test]
fn reviewed_tags_retrain_the_tagger_only_when_asked() {
    for retrain_tagger in [false, true] {
        let (report, tags) = cycle_on_tag_annotations(&retrain_tagger.to_string(), "# tags = reviewed");
        assert_eq!(report.tagger_retrained, retrain_tagger);
        assert_eq!(report.tagger_annotations, if retrain_tagger { 20 } else { 0 }, "{report:#?}");
        // Kept, the tagger gives the parser its own tags: so the parser trains on those.
        assert_eq!(report.annotations_retagged, if retrain_tagger { 0 } else { 20 }, "{report:#?}");
        assert_eq!(report.heldout_upos_candidate.is_some(), retrain_tagger);
        assert_eq!(tags.iter().all(|t| t == "SYM ZZ"), retrain_tagger, "{tags:?}");
    }
}

#[test]
fn checked_tags_retrain_the_tagger_on_those_words_only() {
    // Only "tea" (word 3) had its tag checked; "Sue" and "likes" show SYM ZZ unchecked.
    let (report, tags) = cycle_on_tag_annotations("true", "# tags_checked = 3");
    assert_eq!((report.tagger_annotations, report.tagger_annotated_words), (20, 20), "{report:#?}");
    assert_eq!(tags[2], "SYM ZZ", "the checked tag was learned: {tags:?}");
    assert!(tags[..2].iter().all(|t| t != "SYM ZZ"), "an unchecked tag was trained on: {tags:?}");
}

#[test]
fn by_default_the_tagger_is_retrained_when_and_only_when_annotations_hold_checked_tags() {
    let (report, tags) = cycle_on_tag_annotations("", "# tags_checked = 3");
    assert!(report.tagger_retrained, "{report:#?}");
    assert_eq!(tags[2], "SYM ZZ", "{tags:?}");
    let (report, tags) = cycle_on_tag_annotations("\"auto\"", "# checked_by = nobody");
    assert!(!report.tagger_retrained, "{report:#?}");
    assert_eq!(report.tagger_annotations, 0);
    assert!(tags.iter().all(|t| t != "SYM ZZ"), "{tags:?}");
}

/// One cycle (default settings) on 20 annotated "Sue likes tea" sentences whose "likes" has the
/// lemma "likefixed", checked or not (`lemmas_comment`), and whose "Sue" has the lemma "suewrong",
/// never checked; the report, and the lemmas the promoted model then gives the words.
fn cycle_on_lemma_annotations(lemmas_comment: &str) -> (spoolparse::retrain::Report, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = common::fixture("special.conllu");
    let model = tagger_model(dir.path());
    let heldout = heldout_beside(&fixture, dir.path());
    let settings =
        "max_las_drop = 100\nepochs = 1\nannotation_heldout = 0.0\ntagger_epochs = 3\nannotation_weight = 5\n";
    let config = write_config(dir.path(), &model, &fixture, &heldout, settings);
    let before: Vec<String> = words_of(&model, dir.path()).into_iter().map(|w| w[3].clone()).collect();
    let text: String = (0..20)
        .map(|i| {
            let words =
                [("Sue", "suewrong", "2", "nsubj"), ("likes", "likefixed", "0", "root"), ("tea", "tea", "2", "obj")];
            let mut s = format!("# sent_id = l{i}\n# confirmed = yes\n{lemmas_comment}\n");
            for (w, ((form, lemma, head, deprel), upos)) in words.iter().zip(&before).enumerate() {
                s.push_str(&format!("{}\t{form}\t{lemma}\t{upos}\t_\t_\t{head}\t{deprel}\t_\t_\n", w + 1));
            }
            s + "\n"
        })
        .collect();
    drop_in(&dir.path().join("spool/annotated"), "lemmas.conllu", &text);
    let report = retrain(&config);
    assert_eq!(report.decision, Some(spoolparse::retrain::Decision::Promoted), "{report:#?}");
    let lemmas = served_words(dir.path()).iter().map(|w| w[2].clone()).collect();
    (report, lemmas)
}

#[test]
fn checked_lemmas_retrain_the_lemmatizer_on_those_words_only() {
    let (report, lemmas) = cycle_on_lemma_annotations("# lemmas_checked = 2");
    assert!(report.lemmatizer_retrained, "{report:#?}");
    assert_eq!((report.lemmatizer_annotations, report.lemmatizer_annotated_words), (20, 20), "{report:#?}");
    assert!(report.heldout_lemmas_serving.is_some() && report.heldout_lemmas_candidate.is_some());
    assert_eq!(lemmas[1], "likefixed", "the checked lemma was learned: {lemmas:?}");
    assert_ne!(lemmas[0], "suewrong", "an unchecked lemma was trained on: {lemmas:?}");
    // Without a checked lemma, the serving lemmatizer is kept.
    let (report, lemmas) = cycle_on_lemma_annotations("# checked_by = nobody");
    assert!(!report.lemmatizer_retrained, "{report:#?}");
    assert_ne!(lemmas[1], "likefixed", "{lemmas:?}");
}

#[test]
fn self_training_adds_the_most_confident_accepted_sentences_only() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(dir.path(), 1);
    let fixture = common::fixture("special.conllu");
    let heldout = heldout_beside(&fixture, dir.path());
    // The daemon's output: sentences of confidence 0.99, 0.97 and 0.5.
    let accepted = dir.path().join("accepted");
    fs::create_dir_all(&accepted).unwrap();
    let parsed = |i: usize, confidence: &str| {
        let words = [("Sue", "2", "nsubj"), ("likes", "0", "root"), ("tea", "2", "obj")];
        let mut s = format!("# sent_id = a{i}\n# confidence = {confidence}\n");
        for (w, (form, head, deprel)) in words.iter().enumerate() {
            s.push_str(&format!("{}\t{form}\t{form}\tNOUN\tNN\t_\t{head}\t{deprel}\t_\tConf=0.9\n", w + 1));
        }
        s + "\n"
    };
    let text: String = (0..9).map(|i| parsed(i, ["0.99", "0.97", "0.5"][i % 3])).collect();
    fs::write(accepted.join("night.conllu"), text).unwrap();
    let cycle = |extra: &str| {
        let sub = tempfile::tempdir_in(dir.path()).unwrap();
        let settings = format!("max_las_drop = 100\nepochs = 1\n{extra}");
        let config = write_config(sub.path(), &model, &fixture, &heldout, &settings);
        retrain(&config)
    };
    let without = cycle("");
    assert_eq!(without.self_training_sentences, 0);
    let at = |min: f64, max: usize| {
        let extra = format!(
            "self_training = \"{}\"\nself_training_min_conf = {min}\nself_training_max = {max}\n",
            accepted.display()
        );
        let report = cycle(&extra);
        assert_eq!(report.train_sentences, without.train_sentences + report.self_training_sentences, "{report:#?}");
        report.self_training_sentences
    };
    assert_eq!(at(0.95, 100), 6);
    assert_eq!(at(0.98, 100), 3);
    assert_eq!(at(0.0, 4), 4, "the most confident first, up to the maximum");
}

/// One cycle on 20 annotated "Sue likes tea" sentences, half held out, whose words carry the
/// columns the model `model` (trained on the fixture, with a tagger) writes for them but the
/// tags `tags` gives (`None`: the model's own); the report, and the directory whose
/// `spool/models/current` is the candidate (promoted whatever its scores).
fn cycle_on_tagged_annotations(tags: Option<(&str, &str)>) -> (Report, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = common::fixture("special.conllu");
    let model = tagger_model(dir.path());
    let heldout = heldout_beside(&fixture, dir.path());
    let settings = "max_las_drop = 100\nepochs = 1\nannotation_heldout = 0.5\nbootstrap_samples = 50\n";
    let config = write_config(dir.path(), &model, &fixture, &heldout, settings);
    let served = words_of(&model, dir.path());
    assert_eq!(served.len(), 3);
    let text: String = (0..20)
        .map(|i| {
            let mut s = format!("# sent_id = x{i}\n# confirmed = yes\n");
            for (w, (head, deprel)) in [("2", "nsubj"), ("0", "root"), ("2", "obj")].iter().enumerate() {
                let c = &served[w];
                let (upos, xpos) = tags.unwrap_or((&c[3], &c[4]));
                s.push_str(&format!(
                    "{}\t{}\t{}\t{upos}\t{xpos}\t{}\t{head}\t{deprel}\t_\t_\n",
                    w + 1,
                    c[1],
                    c[2],
                    c[5]
                ));
            }
            s + "\n"
        })
        .collect();
    drop_in(&dir.path().join("spool/annotated"), "tagged.conllu", &text);
    fs::write(dir.path().join("foreign.conllu"), &text).unwrap();
    (retrain(&config), dir)
}

#[test]
fn annotations_with_tags_the_parser_does_not_know_train_and_are_scored_as_the_tagger_tags_them() {
    let (own, _) = cycle_on_tagged_annotations(None);
    let (foreign, dir) = cycle_on_tagged_annotations(Some(("X", "ZZ")));
    assert!(own.annotations_heldout > 0 && own.annotations_heldout < 20, "{own:#?}");
    // Retagged as the daemon would retag a file of them, for training and for the gate alike:
    // the same cycle as on the tagger's own tags.
    assert_eq!(foreign.annotations_retagged, 20 - foreign.annotations_heldout, "{foreign:#?}");
    let scores = |r: &Report| {
        let c = r.candidate.as_ref().expect("a candidate");
        [r.current.heldout_las, r.current.annotations_las, c.heldout_las, c.annotations_las]
    };
    assert_eq!(scores(&foreign), scores(&own), "{foreign:#?}");
    // Nor did the candidate learn the pair X ZZ, which the tagger never gives: a file of the
    // annotations, tags and all, is still one it retags.
    let current = dir.path().join("spool/models/current");
    let file = dir.path().join("foreign.conllu");
    let out = common::spoolparse(&["parse", "--model", current.to_str().unwrap(), file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.contains("tagged by the model's tagger under the file's own tags"),
        "{stderr}"
    );
}

/// `dir/base.conllu` of `n` sentences of [`common::tagged_corpus`], a small neural model
/// trained on it (no analysis: the annotations keep their tags) and a held-out file beside it:
/// the base, the model and the held-out file.
fn small_neural_setup(dir: &Path, n: usize) -> (PathBuf, PathBuf, PathBuf) {
    let base = dir.join("base.conllu");
    fs::write(&base, common::tagged_corpus(n)).unwrap();
    let model = dir.join("neural.model");
    let args = ["--neural", "--neural-size", "small", "--neural-epochs", "8", "--dev", base.to_str().unwrap()];
    let out = common::train(&base, &model, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let heldout = heldout_beside(&base, dir);
    (base, model, heldout)
}

/// [`common::head_final`]'s domain with its words' arcs labelled `obl:tmod`, a label the base
/// lacks (it has `dep` and `root`).
fn head_final_tmod(n: usize, blank_first: bool) -> String {
    common::head_final(n, blank_first).replace("\tdep\t", "\tobl:tmod\t")
}

#[test]
fn a_neural_model_is_fine_tuned_from_its_weights_and_learns_a_new_domain_and_its_new_label() {
    let dir = tempfile::tempdir().unwrap();
    let (base, model, heldout) = small_neural_setup(dir.path(), 200);
    // The tiny model's weights move slowly at the default rate, made for a real one.
    let keys = "fine_tune_steps = 200\nfine_tune_learning_rate = 0.005\n";
    let config = write_config(dir.path(), &model, &base, &heldout, keys);
    drop_in(&dir.path().join("spool/annotated"), "domain.conllu", &head_final_tmod(300, true));

    let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--json", "--force"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(report.decision, Some(spoolparse::retrain::Decision::Promoted), "{report:#?}\n{stderr}");
    assert_eq!((report.neural_from.as_deref(), report.fine_tune_steps), (Some("serving"), 200), "{report:#?}");
    assert!(stderr.contains("from its weights: 200 steps of 32 sentences, 50% from the base"), "{stderr}");
    // The model is grown for the label it lacks, which has no parent there (no `obl`).
    assert_eq!(report.new_labels, ["obl:tmod"], "{report:#?}");
    assert!(stderr.contains("; new labels obl:tmod)"), "{stderr}");
    let candidate = report.candidate.as_ref().unwrap();
    // The serving model parses the new domain as its own, each word on the one before; the
    // candidate learned it, its label included, and kept the base.
    assert!(report.current.annotations_las < 50.0 && candidate.annotations_las > 95.0, "{report:#?}");
    assert!(candidate.heldout_las >= report.current.heldout_las - 0.3, "{report:#?}");
    // The whole text: the corrected words of the held-out sentences and the first words
    // (nobody corrected them) the serving model is sure of, against its parse, which is thus
    // right there; here it is sure of every one.
    let figures = report.gate.as_ref().unwrap();
    let (asked, whole) = (figures.annotations.as_ref().unwrap(), figures.annotations_whole.as_ref().unwrap());
    assert_eq!(whole.words, asked.words + report.annotations_heldout as u64, "{figures:#?}");
    let serving_right = asked.serving_las * asked.words as f64 / 100.0 + (whole.words - asked.words) as f64;
    assert!((whole.serving_las - 100.0 * serving_right / whole.words as f64).abs() < 1e-6, "{figures:#?}");
    assert!(whole.delta < asked.delta, "the first words the candidate moved cost it there: {figures:#?}");
    assert!(
        report.reasons.iter().any(|r| r.contains("that nobody corrected and the serving model is sure of")),
        "{report:#?}"
    );

    // The promoted model is neural, and `parse` gives the domain head-final from its file.
    let registry = Registry::new(dir.path().join("spool/models"));
    let promoted = registry.dir().join(registry.current_name().unwrap().unwrap());
    assert!(spoolparse::model::file::ModelFile::open(&promoted).unwrap().neural().is_some());
    let unseen = dir.path().join("unseen.conllu");
    let domain = head_final_tmod(330, false);
    let from = domain.find("# sent_id = xs300\n").unwrap();
    fs::write(&unseen, &domain[from..]).unwrap();
    let parsed = dir.path().join("unseen.out.conllu");
    assert!(common::parse(&promoted, &unseen, &parsed, &[]).status.success());
    let arcs = |p: &Path| common::heads(p).into_iter().zip(common::column(p, Column::Deprel)).collect::<Vec<_>>();
    let (gold, system) = (arcs(&unseen), arcs(&parsed));
    let right = gold.iter().zip(&system).filter(|(g, s)| g == s).count();
    assert!(right as f64 >= 0.9 * gold.len() as f64, "{right} of {} arcs", gold.len());
}

/// The daemon serving a neural model: its scheduled cycle fine-tunes it on the annotations
/// dropped in, promotes the candidate, and the next file is parsed by the promoted neural model
/// (its name in `# model`, the new domain's trees), which the daemon mapped without a restart.
#[test]
fn a_daemon_serving_a_neural_model_fine_tunes_promotes_and_parses_with_the_new_model() {
    let dir = tempfile::tempdir().unwrap();
    let (base, model, heldout) = small_neural_setup(dir.path(), 200);
    let keys = "enabled = true\nevery = \"1s\"\nfine_tune_steps = 200\nfine_tune_learning_rate = 0.005\n\
                [watch]\nrescan_seconds = 0.2\n";
    let config = write_config(dir.path(), &model, &base, &heldout, keys);
    let log = dir.path().join("daemon.log");
    let mut daemon = start_daemon(&config, &log);
    let domain = common::head_final(330, false);
    let unseen = &domain[domain.find("# sent_id = xs300\n").unwrap()..];
    let right = |text: &str| {
        let parsed = dir.path().join("parsed.conllu");
        fs::write(&parsed, text).unwrap();
        let unseen_file = dir.path().join("unseen.conllu");
        fs::write(&unseen_file, unseen).unwrap();
        let (gold, system) = (common::heads(&unseen_file), common::heads(&parsed));
        assert_eq!(gold.len(), system.len());
        gold.iter().zip(&system).filter(|(g, s)| g == s).count() as f64 / gold.len() as f64
    };
    let before = published(dir.path(), &log, "before.conllu", unseen);
    assert!(served_by(&before).starts_with("neural-") && right(&before) < 0.5, "{}", served_by(&before));

    drop_in(&dir.path().join("spool/annotated"), "domain.conllu", &common::head_final(300, true));
    let deadline = Instant::now() + Duration::from_secs(300);
    while !fs::read_to_string(&log).unwrap().contains("now serving model retrained-") {
        assert!(Instant::now() < deadline, "nothing promoted: {}", fs::read_to_string(&log).unwrap());
        std::thread::sleep(Duration::from_millis(200));
    }
    let after = published(dir.path(), &log, "after.conllu", unseen);
    let _ = daemon.kill();
    let _ = daemon.wait();
    let log = fs::read_to_string(&log).unwrap();
    assert!(log.contains("fine-tun") && log.contains("promoted"), "{log}");
    assert!(served_by(&after).starts_with("retrained-") && right(&after) >= 0.9, "{}\n{log}", served_by(&after));
    let promoted = dir.path().join("spool/models").join(served_by(&after));
    assert!(spoolparse::model::file::ModelFile::open(&promoted).unwrap().neural().is_some());
}

#[test]
fn settings_only_a_linear_model_reads_are_refused_for_a_neural_one_and_scratch_retrains() {
    let dir = tempfile::tempdir().unwrap();
    let (base, model, heldout) = small_neural_setup(dir.path(), 60);
    for (key, value) in [("completion", "\"serving\""), ("domain_features", "true")] {
        let config = write_config(dir.path(), &model, &base, &heldout, &format!("{key} = {value}\n"));
        let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--force"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains(&format!("retrain.{key} needs a linear serving model")), "{stderr}");
    }
    let config = write_config(dir.path(), &model, &base, &heldout, "neural_from = \"scratch\"\nepochs = 2\n");
    let report = retrain(&config);
    assert_eq!((report.neural_from.as_deref(), report.epochs), (Some("scratch"), 2), "{report:#?}");
    assert!(report.candidate.is_some(), "{report:#?}");
}

/// `[retrain] teacher` over a folder of unlabeled text: the cycle trains the linear candidate on
/// the teacher's parses of the text, except of sentences annotated or held out, and the
/// promoted model parses the text's domain as the teacher does, which nothing else taught it.
#[test]
fn a_teacher_s_parses_of_unlabeled_text_teach_the_linear_candidate_its_domain() {
    let dir = tempfile::tempdir().unwrap();
    let (base, teacher) = common::teacher_setup(dir.path());
    let model = dir.path().join("fast.model");
    let out = common::train(&base, &model, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let heldout = heldout_beside(&base, dir.path());
    // The domain's text, then copies of annotated and of held-out sentences, which the cycle
    // must not train on as the teacher parsed them.
    let unlabeled = dir.path().join("unlabeled");
    fs::create_dir(&unlabeled).unwrap();
    // (The corpus repeats every 30 sentences: these are words of no other sentence here.)
    let domain = common::head_final_from(150, 180);
    let from = domain.find("# sent_id = xs170\n").unwrap();
    let held: String = fs::read_to_string(&heldout).unwrap().split_inclusive("\n\n").take(5).collect();
    fs::write(unlabeled.join("a.conllu"), common::without_trees(&domain[..from])).unwrap();
    fs::write(unlabeled.join("b.conllu"), common::without_trees(&domain[from..]) + &common::without_trees(&held))
        .unwrap();
    // A person's trees of the last ten, as the base draws them: the domain is learnt from the
    // teacher alone, and where the two disagree the person wins.
    let base_text = common::tagged_corpus(180);
    let annotated =
        base_text[base_text.find("# sent_id = s170\n").unwrap()..].replace("# sent_id", "# confirmed = yes\n# sent_id");
    let keys = format!(
        "teacher = \"{}\"\nunlabeled = [\"{}\"]\nteacher_min_confidence = 0.0\n",
        teacher.display(),
        unlabeled.display()
    );
    let config = write_config(dir.path(), &model, &base, &heldout, &keys);
    drop_in(&dir.path().join("spool/annotated"), "domain.conllu", &annotated);

    let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--json", "--force"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!((report.teacher_parsed, report.teacher_sentences), (35, 20), "{report:#?}\n{stderr}");
    assert!(stderr.contains("teacher: kept 35 of 35 sentences"), "{stderr}");
    assert_eq!(report.decision, Some(spoolparse::retrain::Decision::Promoted), "{report:#?}\n{stderr}");
    let registry = Registry::new(dir.path().join("spool/models"));
    let promoted = registry.dir().join(registry.current_name().unwrap().unwrap());
    let unseen = dir.path().join("unseen.conllu");
    fs::write(&unseen, common::head_final_from(300, 330)).unwrap();
    for (model, at_least) in [(&model, 0.0), (&promoted, 0.9)] {
        let parsed = dir.path().join(format!("unseen.{at_least}.conllu"));
        let out = common::parse(model, &unseen, &parsed, &[]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let (gold, system) = (common::heads(&unseen), common::heads(&parsed));
        let right = gold.iter().zip(&system).filter(|(g, s)| g == s).count() as f64 / gold.len() as f64;
        // The serving model parses the domain as the base, each word on the one before.
        assert!(if at_least > 0.0 { right >= at_least } else { right < 0.5 }, "{}: {right}", model.display());
    }
}

/// `[retrain] teacher` without `unlabeled`: the daemon's published output (`accepted/`,
/// `lowconf/`) is the teacher's text, newest file first, up to `unlabeled_max_words` words.
#[test]
fn without_unlabeled_the_teacher_parses_the_newest_published_output_up_to_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let (base, teacher) = common::teacher_setup(dir.path());
    let model = dir.path().join("fast.model");
    assert!(common::train(&base, &model, &[]).status.success());
    let heldout = heldout_beside(&base, dir.path());
    let keys = format!("teacher = \"{}\"\nunlabeled_max_words = 84\n", teacher.display());
    let config = write_config(dir.path(), &model, &base, &heldout, &keys);
    // Before the daemon has made its output folders, the cycle says what it looked for.
    let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--force"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("out/accepted does not exist (without `unlabeled`"), "{stderr}");
    let now = std::time::SystemTime::now();
    let day = std::time::Duration::from_secs(86_400);
    // Words: 29 (newest), 55, 51 (oldest).
    for (folder, name, first, n, days_old) in [
        ("lowconf", "c.conllu", 170, 175, 0),
        ("accepted", "b.conllu", 160, 170, 1),
        ("accepted", "a.conllu", 150, 160, 2),
    ] {
        let path = dir.path().join("out").join(folder).join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, common::without_trees(&common::head_final_from(first, n))).unwrap();
        fs::File::options().write(true).open(&path).unwrap().set_modified(now - day * days_old).unwrap();
    }

    let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--json", "--force"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    // The two newest files kept whole (84 words); the oldest parsed, and its first sentence
    // past the bound.
    assert_eq!((report.teacher_parsed, report.teacher_sentences), (25, 15), "{report:#?}\n{stderr}");
    assert!(stderr.contains("teacher: kept 15 of 25 sentences") && stderr.contains("bound of 84 words"), "{stderr}");
}

/// With a teacher, new text alone makes a cycle run: `retrain` without `--force` (as the
/// daemon's schedule runs it) trains once the unlabeled files changed since the last cycle that
/// trained hold `unlabeled_min_new_words` words, counted across the looks that skipped.
#[test]
fn with_a_teacher_a_cycle_runs_on_enough_new_text_alone_counted_since_the_last_that_trained() {
    let dir = tempfile::tempdir().unwrap();
    let (base, teacher) = common::teacher_setup(dir.path());
    let model = dir.path().join("fast.model");
    assert!(common::train(&base, &model, &[]).status.success());
    let heldout = heldout_beside(&base, dir.path());
    let unlabeled = dir.path().join("unlabeled");
    fs::create_dir(&unlabeled).unwrap();
    let keys = |min_words: usize| {
        format!(
            "teacher = \"{}\"\nunlabeled = [\"{}\"]\nunlabeled_min_new_words = {min_words}\n",
            teacher.display(),
            unlabeled.display()
        )
    };
    let config = write_config(dir.path(), &model, &base, &heldout, &keys(100));
    let publish = |name: &str, first: usize, n: usize| {
        fs::write(unlabeled.join(name), common::without_trees(&common::head_final_from(first, n))).unwrap();
    };
    let cycle = |config: &Path| {
        let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--json"]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let report: Report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
        assert_eq!(out.status.code(), Some(exit_status(&report)), "{stderr}");
        (report, stderr)
    };
    let skipped = |report: &Report, words: usize| {
        assert_eq!(report.decision, Some(spoolparse::retrain::Decision::Skipped), "{report:#?}");
        assert_eq!(report.unlabeled_new_words, words, "{report:#?}");
        let why = format!(
            "0 new annotated sentences since the last cycle, fewer than retrain.min_new_sentences = 1, and {words} \
             words of new unlabeled text, fewer than retrain.unlabeled_min_new_words = 100"
        );
        assert_eq!(report.reasons, [why]);
    };

    publish("a.conllu", 150, 160); // 51 words
    skipped(&cycle(&config).0, 51);
    publish("b.conllu", 160, 170); // 55 words
    let (report, stderr) = cycle(&config);
    assert!(report.candidate.is_some() && report.teacher_sentences > 0, "{report:#?}\n{stderr}");
    // Counted up to the setting, no further.
    assert_eq!(report.unlabeled_new_words, 100, "{report:#?}");
    assert!(stderr.contains("but new unlabeled text for the teacher: 100 words or more"), "{stderr}");
    // What that cycle read is not new; what arrives after it is, across skipped looks.
    skipped(&cycle(&config).0, 0);
    // Times are compared by the second: c is published in a later one than that cycle's start.
    std::thread::sleep(Duration::from_millis(1100));
    publish("c.conllu", 170, 175); // 29 words
    skipped(&cycle(&config).0, 29);
    // d alone is too little (80 words): c still counts, as the look that skipped did not train.
    publish("d.conllu", 175, 190);
    let (report, stderr) = cycle(&config);
    assert!(report.candidate.is_some() && report.unlabeled_new_words == 100, "{report:#?}\n{stderr}");
    // With the setting 0, new text alone never makes a cycle run.
    publish("e.conllu", 190, 200);
    let config = write_config(dir.path(), &model, &base, &heldout, &keys(0));
    let (report, _) = cycle(&config);
    assert_eq!(report.decision, Some(spoolparse::retrain::Decision::Skipped), "{report:#?}");
    assert_eq!(
        report.reasons,
        ["0 new annotated sentences since the last cycle, fewer than retrain.min_new_sentences = 1"]
    );
}

#[test]
fn teacher_settings_are_checked_and_refused_for_a_neural_serving_model() {
    let dir = tempfile::tempdir().unwrap();
    let (base, model, heldout) = small_neural_setup(dir.path(), 60);
    let text = dir.path().join("text.raw");
    fs::write(&text, "a few words.\n").unwrap();
    let (t, u) = (model.display(), text.display());
    for (keys, error) in [
        (format!("teacher = \"{t}\"\nunlabeled = [\"{u}\"]\n"), "retrain.teacher needs a linear serving model"),
        // Without `unlabeled`, the daemon's published output is the teacher's text.
        (format!("teacher = \"{t}\"\n"), "retrain.teacher needs a linear serving model"),
        (format!("unlabeled = [\"{u}\"]\n"), "retrain.unlabeled: needs retrain.teacher"),
        (format!("teacher = \"{t}\"\nunlabeled = [\"\"]\n"), "retrain.unlabeled: must not list an empty path"),
        (
            format!("teacher = \"{t}\"\nunlabeled = [\"{u}\"]\nteacher_min_confidence = 1.5\n"),
            "must be in [0, 1] (got 1.5)",
        ),
        (
            format!("teacher = \"{t}\"\nunlabeled = [\"{u}\"]\nteacher_weight = 0\n"),
            "retrain.teacher_weight: must be at least 1",
        ),
    ] {
        let config = write_config(dir.path(), &model, &base, &heldout, &keys);
        let out = common::spoolparse(&["retrain", "--config", config.to_str().unwrap(), "--force"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(error), "{keys}: {stderr}");
    }
}

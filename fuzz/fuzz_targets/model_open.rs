//! Fuzzes opening a whole model file: header, section table, metadata (bincode), table bounds,
//! checksums, then parsing a sentence with whatever weights survived. Any byte string must
//! give an error or a model that parses without panicking. Start it from a real model as seed
//! (`scripts/fuzz.sh` writes one), so that mutations reach past the header checks.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use spoolparse::model::file::ModelFile;
use spoolparse::parse::parser::Parser;

fuzz_target!(|data: &[u8]| {
    let Ok(mut file) = tempfile::NamedTempFile::new() else { return };
    if file.write_all(data).is_err() {
        return;
    }
    if let Ok(model) = ModelFile::open(file.path()) {
        let _ = model.verify();
        let attrs = [
            spoolparse::model::features::ROOT_ATTRS,
            spoolparse::model::features::token_attrs("a", "_", "X", "_", "_"),
            spoolparse::model::features::token_attrs("b", "_", "Y", "_", "_"),
        ];
        let mut parser = Parser::new(&model);
        parser.parse_attrs(&attrs);
        assert!(parser.heads()[1..].iter().all(|&h| h <= 2));
    }
});

//! Fuzzes the model-file header and section-table parser: any byte string must yield a
//! section list or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(sections) = spoolparse::model::file::parse_header(data) {
        for s in sections {
            // Accepted sections must lie inside the input.
            assert!(s.offset.checked_add(s.len).is_some_and(|end| end <= data.len() as u64));
        }
    }
});

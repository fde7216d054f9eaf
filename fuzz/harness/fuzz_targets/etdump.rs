//! cargo-fuzz target `etdump`: see `etscope_fuzz_targets::etdump`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| etscope_fuzz_targets::etdump(data));

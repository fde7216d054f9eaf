//! cargo-fuzz target `wire`: see `etscope_fuzz_targets::wire`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| etscope_fuzz_targets::wire(data));

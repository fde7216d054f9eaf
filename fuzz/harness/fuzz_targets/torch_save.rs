//! cargo-fuzz target `torch_save`: see `etscope_fuzz_targets::torch_save`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| etscope_fuzz_targets::torch_save(data));

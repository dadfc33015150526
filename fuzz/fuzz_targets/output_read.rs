#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_core::output::fuzzing::output_read(data));

#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_core::wire::fuzzing::wire_reader(data));

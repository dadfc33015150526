#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_wire::fuzzing::wire_reader(data));

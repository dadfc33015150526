#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_core::frame::fuzzing::line_decoder(data));

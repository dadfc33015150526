#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_core::paging::fuzzing::paging_cursor(data));

#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| musewire_core::blocks::fuzzing::fuzz_classify_blocks(data)
);

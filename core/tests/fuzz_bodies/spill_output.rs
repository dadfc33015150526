//! The spill and output-read fuzz bodies (SPILL-01..05, OUT-03..05, OUT-07) run on stable over
//! seeds and random bytes, so a broken body shows in `cargo test --features fuzzing`.
#![cfg(feature = "fuzzing")]

use musewire_core::output::fuzzing::output_read;
use musewire_core::spill::fuzzing::spill_policy;
use proptest::prelude::*;

const SEEDS: &[&[u8]] = &[
    b"",
    b"\x01\x00",
    b"\x03\x01hello world, this is long enough\x01\x05\x00\x01\x00",
    "\u{1}\u{1}éééééééééééééééééé\u{1}\u{7}\u{0}\u{0}\u{1}s\u{1}\u{0}L\u{0}".as_bytes(),
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
];

/// SPILL-01..05, SPILL-07
#[test]
fn spill_policy_body_on_seeds() {
    for seed in SEEDS {
        spill_policy(seed);
    }
}

/// OUT-03..05, OUT-07, OUT-09
#[test]
fn output_read_body_on_seeds() {
    for seed in SEEDS {
        output_read(seed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// SPILL-01..05, SPILL-07
    #[test]
    fn spill_policy_body_on_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        spill_policy(&data);
    }

    /// OUT-03..05, OUT-07, OUT-09
    #[test]
    fn output_read_body_on_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        output_read(&data);
    }
}

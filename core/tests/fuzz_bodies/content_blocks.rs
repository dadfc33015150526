//! The blocks fuzz bodies (BLOCK-04, BLOCK-05, BLOCK-06) run on stable over seeds and random
//! bytes, so a broken body shows in `cargo test --features fuzzing`.
#![cfg(feature = "fuzzing")]

/// Named `blocks::…` so that `cargo test -p musewire-core blocks` selects these tests.
mod blocks {

    use musewire_core::blocks::fuzzing::{fuzz_classify_blocks, fuzz_credential_uri};
    use proptest::prelude::*;

    const SEEDS: &[&str] = &[
        "",
        "https://b.s3.amazonaws.com/k?X-Amz-Signature=abc",
        "https://site.example/_next/image?url=https%253A%252F%252Fb%252F%253Fsig%253Dx",
        "\t//user:pw@h.example/#/reset?token=a",
        "%%%25%2525%252525",
        "data:,x",
        r#"{"content":[{"type":"resource_link","name":"a\ud800","uri":"https://x.example/?token=a"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}"#,
        r#"{"data":{"a":[{"type":"resource_link","uri":"file:///x"}]},"dataIsContent":false}"#,
    ];

    #[test]
    fn block_04_fuzz_bodies_on_seeds() {
        for seed in SEEDS {
            fuzz_credential_uri(seed.as_bytes());
            fuzz_classify_blocks(seed.as_bytes());
        }
    }

    proptest! {
        #[test]
        fn block_04_fuzz_bodies_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..300)) {
            fuzz_credential_uri(&data);
            fuzz_classify_blocks(&data);
        }
    }
}

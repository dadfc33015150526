//! Deterministic inputs for running the fuzz bodies under `cargo test`.

/// `count` byte strings of up to `max_len` bytes from a xorshift generator started at `seed`,
/// so the same seeds come out on every run.
pub fn seeds(seed: u64, count: usize, max_len: usize) -> Vec<Vec<u8>> {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|_| {
            let len = (next() as usize) % max_len;
            (0..len).map(|_| next() as u8).collect()
        })
        .collect()
}

//! The wire model (`musewire_wire`), one module per topic over the shared samples (`wire_samples`).

mod api;
mod login_subagents_entries;
mod props;
mod reader;
mod roundtrip;
mod surrogates;
mod wire_samples;

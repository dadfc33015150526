//! Spilled tool output (`musewire_core::spill`) and stored-output reads (`musewire_core::output`).

mod output;
mod spill;

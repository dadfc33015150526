//! The smol driver of musewire (arrives with the drivers issue).

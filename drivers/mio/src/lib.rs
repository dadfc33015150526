//! The mio driver of musewire (arrives with the drivers issue).

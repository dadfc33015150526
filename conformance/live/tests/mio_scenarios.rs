//! Live scenarios on the blocking driver (`musewire_mio::AgentProcess`); the bodies, with the rules
//! each covers, are in `musewire_live::scenario`.

musewire_live::live_scenarios!(musewire_live::support::Driver::Mio);

//! Live scenarios on the async driver (`musewire_smol::AgentProcess`); the bodies, with the rules
//! each covers, are in `musewire_live::scenario`.

musewire_live::live_scenarios!(musewire_live::support::Driver::Smol);

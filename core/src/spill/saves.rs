//! The spill writes a core waits on, numbered and answered: one table for the agent (its
//! tools' results) and the client (the host's tool results).

use std::collections::BTreeMap;

use super::{PendingSpill, SaveFailure, Saved, Settled, SpillId, SpillWrite};
use crate::output::StoredOutput;

/// Spill writes asked of the driver and not yet answered, each with what its core keeps
/// beside it (`T`: the call to answer, say). Ids count from 1, so runs are reproducible.
#[derive(Debug, Clone)]
pub struct Saves<T> {
    next: u64,
    waiting: BTreeMap<SpillId, (PendingSpill, T)>,
}

impl<T> Default for Saves<T> {
    fn default() -> Self {
        Saves {
            next: 0,
            waiting: BTreeMap::new(),
        }
    }
}

impl<T> Saves<T> {
    /// Waits on `pending`'s save, keeping `with` beside it: the id and the write to ask the
    /// driver for.
    pub fn start(&mut self, pending: PendingSpill, with: T) -> (SpillId, SpillWrite) {
        self.next += 1;
        let id = SpillId(self.next);
        let write = pending.write.clone();
        self.waiting.insert(id, (pending, with));
        (id, write)
    }

    /// The driver's answer to `id`: the settled result ([`PendingSpill::settle`]), the
    /// stored output when spilled, and what was kept beside it; `None` for an id that is not
    /// waited on (answered already, or never asked).
    pub fn finish(
        &mut self,
        id: SpillId,
        saved: Result<Saved, SaveFailure>,
    ) -> Option<(Settled, Option<StoredOutput>, T)> {
        let (pending, with) = self.waiting.remove(&id)?;
        let (settled, stored) = pending.settle(saved);
        Some((settled, stored, with))
    }

    /// What is kept beside each waiting save.
    pub(crate) fn kept_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.waiting.values_mut().map(|(_, with)| with)
    }

    /// How many saves are waited on.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Forgets every waiting save (a later answer is then dropped).
    pub(crate) fn clear(&mut self) {
        self.waiting.clear();
    }
}

//! The drivers' front end for stored outputs (OUT-04, OUT-09, OUT-10), written once for both:
//! an [`OutputFetch`] runs a [`ReaderWalk`] through `read_output` pages, and a driver only
//! makes each call it asks for and hands back the answer:
//!
//! ```text
//! while let Some(call) = fetch.next_call() {
//!     fetch.page(self.request(call), &mut sink)?;   // .await in the async driver
//! }
//! fetch.finish()
//! ```
//!
//! Each page is asked at the offset the previous one ended (advancing by the returned
//! `byteLen`, never the requested length) until `eof`; a page that does not fit the walk is
//! refused (OUT-09), and one that goes past the output's known length too. Each page's bytes go
//! to the sink as they come, so an output is never held whole.

use thiserror::Error;

use super::{Call, CallError};
use crate::output::{
    Availability, OutputError, OutputRef, ReadParams, ReadResult, ReaderWalk, StoredOutput,
    WalkError, DEFAULT_READ_BYTES,
};
use crate::wire::{Command, ReadOutput};

/// How far a fetch has come, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FetchProgress {
    /// Bytes received so far (handed to the sink).
    pub received: u64,
    /// The output's length, when known (from its [`StoredOutput`]).
    pub total: Option<u64>,
    /// Pages received so far.
    pub pages: u64,
}

/// A fetch that reached `eof`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The output's length: every byte the sink got.
    pub byte_len: u64,
    /// How many pages it took.
    pub pages: u64,
    /// The output's media type, as the last page gave it (`None` for an empty walk, which
    /// can't happen: a walk has at least one page).
    pub media_type: Option<String>,
}

/// Why a fetch stopped. Whatever the sink got before stays with the sink.
#[derive(Debug, Error)]
pub enum FetchError {
    /// The fetch's params are out of range (OUT-03), or the output can't be read
    /// (its `availability`, OUT-07); nothing was asked.
    #[error("{0}")]
    Invalid(OutputError),
    /// A page's call failed: refused by the client (OUT-10: not offered), failed by the agent
    /// (its typed code: [`CallError::output_code`]), no answer in time, or the session ended.
    #[error("read_output at offset {offset}: {error}")]
    Call {
        /// Where the page was to start.
        offset: u64,
        /// Why it failed.
        error: CallError,
    },
    /// A page that does not fit the walk (OUT-04, OUT-09).
    #[error("read_output at offset {offset}: a page refused: {error}")]
    Page {
        /// Where the page was to start.
        offset: u64,
        /// What was wrong with it.
        error: WalkError,
    },
    /// The pages go past the output's known length, or end before it.
    #[error("the output is {expected} bytes, but its pages {}", describe_length(*got, *eof))]
    Length {
        /// The output's known length.
        expected: u64,
        /// Where the pages got to.
        got: u64,
        /// Whether they ended there (`eof`).
        eof: bool,
    },
    /// The sink failed.
    #[error("writing the output: {0}")]
    Sink(#[source] std::io::Error),
}

fn describe_length(got: u64, eof: bool) -> String {
    if eof {
        format!("end at {got}")
    } else {
        format!("go on to {got}")
    }
}

/// A whole-output fetch (OUT-04, OUT-10): it asks for each page with
/// [`OutputFetch::next_call`], takes the answer with [`OutputFetch::page`], and is done with
/// [`OutputFetch::finish`] (the loop is in the `client::fetch` module docs).
#[derive(Debug, Clone)]
pub struct OutputFetch {
    walk: ReaderWalk,
    total: Option<u64>,
    pages: u64,
    media_type: Option<String>,
}

impl OutputFetch {
    /// A fetch of the output `output_ref` of `item_id` in `session_id`, `page_bytes` a page
    /// (1..=1,048,576; within the agent's `maxLengthBytes`, or the client refuses the first
    /// page: OUT-10).
    pub fn new(
        session_id: impl Into<String>,
        item_id: impl Into<String>,
        output_ref: OutputRef,
        page_bytes: u64,
    ) -> Result<Self, FetchError> {
        let walk = ReaderWalk::new(session_id, item_id, output_ref, page_bytes)
            .map_err(FetchError::Invalid)?;
        Ok(OutputFetch {
            walk,
            total: None,
            pages: 0,
            media_type: None,
        })
    }

    /// A fetch of a stored output a tool result named (`details.storedOutput`, OUT-02): its
    /// length is known, so the pages are checked against it and progress has a total. An
    /// expired or unavailable output is refused as such (OUT-07) before anything is asked.
    pub fn stored(stored: &StoredOutput, page_bytes: u64) -> Result<Self, FetchError> {
        match stored.availability {
            Availability::Available => {}
            Availability::Expired => return Err(FetchError::Invalid(OutputError::Expired)),
            Availability::Unavailable => return Err(FetchError::Invalid(OutputError::Unavailable)),
        }
        Ok(Self::new(
            stored.session_id.clone(),
            stored.item_id.clone(),
            stored.output_ref.clone(),
            page_bytes,
        )?
        .expecting(stored.byte_len))
    }

    /// Checks the pages against a known length: a page past it, or an `eof` before it, is
    /// refused ([`FetchError::Length`]).
    pub fn expecting(mut self, byte_len: u64) -> Self {
        self.total = Some(byte_len);
        self
    }

    /// The params of the next page, `None` once the walk has reached `eof`.
    pub fn next_params(&self) -> Option<ReadParams> {
        self.walk.next_params()
    }

    /// The call that asks for the next page (`read_output`, OUT-10), `None` once the walk has
    /// reached `eof`.
    pub fn next_call(&self) -> Option<Call> {
        self.next_params()
            .map(|params| Call::Send(Command::from(ReadOutput::from(&params))))
    }

    /// Takes the answer to [`OutputFetch::next_call`]: checks the page (OUT-04, OUT-09, the
    /// known length) and hands its bytes and the progress to `sink`. A failure stops the
    /// fetch (asking on would ask the same page again).
    pub fn page<S>(
        &mut self,
        answer: Result<ReadResult, CallError>,
        sink: &mut S,
    ) -> Result<(), FetchError>
    where
        S: FnMut(&[u8], FetchProgress) -> std::io::Result<()> + ?Sized,
    {
        let offset = self.walk.offset();
        let page = answer.map_err(|error| FetchError::Call { offset, error })?;
        if let Some(expected) = self.total {
            let end = page.offset_bytes.saturating_add(page.byte_len);
            if end > expected || (page.eof && end != expected) {
                return Err(FetchError::Length {
                    expected,
                    got: end,
                    eof: page.eof,
                });
            }
        }
        let bytes = self
            .walk
            .handle(&page)
            .map_err(|error| FetchError::Page { offset, error })?;
        self.pages += 1;
        self.media_type = Some(page.media_type);
        sink(&bytes, self.progress()).map_err(FetchError::Sink)
    }

    /// How far the fetch has come.
    pub(crate) fn progress(&self) -> FetchProgress {
        FetchProgress {
            received: self.walk.offset(),
            total: self.total,
            pages: self.pages,
        }
    }

    /// Whether the walk has reached `eof`.
    pub fn is_done(&self) -> bool {
        self.walk.is_done()
    }

    /// What the fetch got, once [`OutputFetch::next_call`] gives `None` (before that, what it
    /// got so far).
    pub fn finish(self) -> Fetched {
        Fetched {
            byte_len: self.walk.offset(),
            pages: self.pages,
            media_type: self.media_type,
        }
    }
}

/// The page size a fetch asks when none is given: the OUT-03 default, which every agent
/// offering `read_output` takes and which stays well within a v1 line once encoded.
pub const FETCH_PAGE_BYTES: u64 = DEFAULT_READ_BYTES;

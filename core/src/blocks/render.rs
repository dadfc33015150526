//! The two copies of a result (BLOCK-06): the text history stores and the content the model
//! reads, both made from one classification.

use serde::Serialize;

use super::classify::{BlockClass, ShownAs};
use super::label::cut_chars;

/// The cap a live copy's text is cut at when none is given, in characters.
pub const DEFAULT_CAP_CHARS: usize = 50_000;

/// One block of the copy sent to the model, in MCP's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LiveBlock {
    /// A text block: beside an image, one text block's text (cut at the cap) or the stub,
    /// line or marker another block is shown as; otherwise the whole stored copy, cut at the
    /// cap, as the only block.
    Text {
        /// What the model reads; a text cut at the cap ends with a line saying so.
        text: String,
    },
    /// A native image.
    Image {
        /// The base64 data.
        data: String,
        /// The media type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

/// Both copies of one result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Copies {
    /// The text history stores: each block's stored text, one per line, in order.
    pub stored: String,
    /// The content the model reads.
    pub live: Vec<LiveBlock>,
    /// Whether the live copy went as native blocks beside an image: only when the
    /// result holds an image and its links' lines and markers fit within the cap.
    pub native: bool,
}

/// Whether the live copy goes as native blocks: only when the result holds an image and its
/// links' lines and markers, together, fit within `cap` characters.
pub(crate) fn goes_native(blocks: &[BlockClass], cap: usize) -> bool {
    let has_image = blocks.iter().any(|b| b.shown_as() == ShownAs::Image);
    if !has_image {
        return false;
    }
    let mut counted = 0usize;
    for block in blocks {
        if block.shown_as() == ShownAs::Counted {
            counted += block.stored_text().chars().count();
            if counted > cap {
                return false;
            }
        }
    }
    true
}

/// Cuts `text` at `cap` characters; a cut text ends with a line saying so.
pub(crate) fn cut_at_cap(text: &str, cap: usize) -> String {
    if text.chars().count() <= cap {
        return text.to_owned();
    }
    let mut cut = cut_chars(text.chars(), cap.saturating_add(1));
    cut.pop();
    cut.push_str(&format!("\n[Output cut at {cap} characters.]"));
    cut
}

/// The stored copy: each block's stored text, joined by a newline.
pub(crate) fn stored_text(blocks: &[BlockClass]) -> String {
    let mut out = String::new();
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(block.stored_text());
    }
    out
}

/// Makes both copies from one classification. Going native (an image, and links and markers within
/// `cap`), the live copy
/// sends each image natively, each text block cut at `cap`, every stub and withheld line
/// whole, and every link line and marker as it is; otherwise it is the stored text, cut at
/// `cap`, as one text block.
pub(crate) fn render(blocks: &[BlockClass], cap: usize) -> Copies {
    let stored = stored_text(blocks);
    let native = goes_native(blocks, cap);
    let live = if native {
        blocks
            .iter()
            .map(|block| match block {
                BlockClass::Image {
                    data, mime_type, ..
                } => LiveBlock::Image {
                    data: data.clone(),
                    mime_type: mime_type.clone(),
                },
                BlockClass::Text { text } => LiveBlock::Text {
                    text: cut_at_cap(text, cap),
                },
                other => LiveBlock::Text {
                    text: other.stored_text().to_owned(),
                },
            })
            .collect()
    } else {
        vec![LiveBlock::Text {
            text: cut_at_cap(&stored, cap),
        }]
    };
    Copies {
        stored,
        live,
        native,
    }
}

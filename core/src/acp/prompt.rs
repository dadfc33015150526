//! A `session/prompt`'s ACP content blocks as the agent's RPC `prompt {message, images}`
//! (ACP-14, ACP-15, ACP-16): text as itself, images (and embedded image blobs) as the
//! prompt's `images`, embedded text resources inlined as marked context, resource links as
//! mentions, and what the RPC prompt cannot carry (audio, other blobs) said so in the turn.

use agent_client_protocol_schema::v1::{ContentBlock, EmbeddedResourceResource, Error};
use serde_json::json;

use super::bound::cut_to_bytes;
use crate::blocks::uri_may_carry_credential;
use crate::client::AgentKind;
use crate::wire::ContentBlock as WireBlock;

/// The most images one prompt carries (ACP-14); more is refused.
pub const MAX_PROMPT_IMAGES: usize = 20;

/// The most image bytes (decoded) one prompt carries (ACP-14): 10 MiB; more is refused.
pub(crate) const MAX_PROMPT_IMAGE_BYTES: usize = 10 * 1024 * 1024;

/// The most bytes of embedded context one prompt inlines (ACP-15): 4 MiB, markers included;
/// past it the rest is left out with [`CONTEXT_CUT_NOTICE`].
pub const MAX_CONTEXT_BYTES: usize = 4 * 1024 * 1024;

/// What the prompt says where embedded context was cut (ACP-15); the editor is told too.
pub const CONTEXT_CUT_NOTICE: &str =
    "[… embedded context cut: this prompt's resources are over 4 MiB; the rest is not included]";

/// The note an audio block leaves in the turn (ACP-16): the RPC prompt carries no audio.
pub const AUDIO_NOTE: &str = "[audio not sent: this agent's prompts carry text and images only]";

/// The note an image leaves in the turn when the agent takes no images (ACP-14).
pub const IMAGE_NOT_TAKEN_NOTE: &str = "[image not sent: this agent takes no images]";

/// The error code word of a prompt with more than [`MAX_PROMPT_IMAGES`] images (ACP-14).
pub const TOO_MANY_IMAGES: &str = "too_many_images";

/// The error code word of a prompt with more than 10 MiB of images.
pub const IMAGES_TOO_LARGE: &str = "images_too_large";

/// A prompt for the agent, from the editor's blocks.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PromptContent {
    /// The prompt's text: the text blocks, mentions and inlined context in order, joined by
    /// newlines.
    pub message: String,
    /// The images, as the RPC prompt's `images` (`{type:"image", data, mimeType}`).
    pub images: Vec<WireBlock>,
    /// Notes for the editor's turn: what was not sent, or cut.
    pub notes: Vec<String>,
}

/// What [`convert`] does with a prompt's images (ACP-14), by whether the agent takes images
/// (what `initialize` advertised).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PromptImages {
    /// The agent takes images: each is sent, within [`MAX_PROMPT_IMAGES`] and
    /// [`MAX_PROMPT_IMAGE_BYTES`].
    Sent,
    /// The agent takes none: each leaves [`IMAGE_NOT_TAKEN_NOTE`] in the turn instead.
    Noted,
}

impl PromptImages {
    /// What an agent of this kind is sent ([`AgentKind::takes_images`]).
    pub(crate) fn for_agent(agent: AgentKind) -> Self {
        if agent.takes_images() {
            PromptImages::Sent
        } else {
            PromptImages::Noted
        }
    }
}

/// Converts a prompt's blocks (ACP-14..16), its images as `images` says. Too many images,
/// or too many image bytes, is an invalid-params error with `data {code, message, limit}`
/// and nothing is sent.
pub(crate) fn convert(
    blocks: &[ContentBlock],
    images: PromptImages,
) -> Result<PromptContent, Error> {
    let mut out = PromptContent::default();
    let mut parts: Vec<String> = Vec::new();
    let mut context_bytes = 0usize;
    let mut context_cut = false;
    let mut image_bytes = 0usize;
    let mut image = |data: &str, mime: &str, out: &mut PromptContent| -> Result<(), Error> {
        if images == PromptImages::Noted {
            note(&mut out.notes, IMAGE_NOT_TAKEN_NOTE.to_owned());
            return Ok(());
        }
        if out.images.len() >= MAX_PROMPT_IMAGES {
            return Err(refused(
                TOO_MANY_IMAGES,
                format!("a prompt carries at most {MAX_PROMPT_IMAGES} images"),
                MAX_PROMPT_IMAGES,
            ));
        }
        image_bytes = image_bytes.saturating_add(crate::formats::base64_decoded_len(data));
        if image_bytes > MAX_PROMPT_IMAGE_BYTES {
            return Err(refused(
                IMAGES_TOO_LARGE,
                format!("a prompt carries at most {MAX_PROMPT_IMAGE_BYTES} bytes of images"),
                MAX_PROMPT_IMAGE_BYTES,
            ));
        }
        out.images.push(WireBlock::image(data, mime));
        Ok(())
    };
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::Image(img) => image(&img.data, &img.mime_type, &mut out)?,
            ContentBlock::Audio(_) => note(&mut out.notes, AUDIO_NOTE.to_owned()),
            ContentBlock::ResourceLink(link) => parts.push(mention(
                &link.name,
                &link.uri,
                link.title.as_deref(),
                link.size,
            )),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(text) => {
                    if context_cut {
                        continue;
                    }
                    let marked = context(&text.uri, text.mime_type.as_deref(), &text.text);
                    // Each part counted with the newline that joins it; the cut part
                    // also with the one before its notice.
                    let room = MAX_CONTEXT_BYTES - CONTEXT_CUT_NOTICE.len() - 2;
                    if context_bytes + marked.len() < room {
                        context_bytes += marked.len() + 1;
                        parts.push(marked);
                    } else {
                        context_cut = true;
                        let head = cut_to_bytes(&marked, room - context_bytes);
                        parts.push(format!("{head}\n{CONTEXT_CUT_NOTICE}"));
                        note(&mut out.notes, CONTEXT_CUT_NOTICE.to_owned());
                    }
                }
                EmbeddedResourceResource::BlobResourceContents(blob) => {
                    match blob.mime_type.as_deref().filter(|m| is_image_type(m)) {
                        Some(mime) => image(&blob.blob, mime, &mut out)?,
                        None => {
                            let note = format!(
                                "[embedded resource not sent: {} ({}) is binary]",
                                shown_uri(&blob.uri),
                                label(blob.mime_type.as_deref().unwrap_or("no type")),
                            );
                            parts.push(note.clone());
                            self::note(&mut out.notes, note);
                        }
                    }
                }
                _ => note(
                    &mut out.notes,
                    "[embedded resource not sent: of a kind this adapter does not know]".into(),
                ),
            },
            _ => note(
                &mut out.notes,
                "[content not sent: of a kind this adapter does not know]".into(),
            ),
        }
    }
    out.message = parts.join("\n");
    Ok(out)
}

/// Adds a note for the turn once (the same note twice is said once).
fn note(notes: &mut Vec<String>, line: String) {
    if !notes.contains(&line) {
        notes.push(line);
    }
}

fn is_image_type(mime: &str) -> bool {
    mime.len() > 6 && mime[..6].eq_ignore_ascii_case("image/")
}

fn refused(code: &str, message: String, limit: usize) -> Error {
    Error::invalid_params().data(json!({"code": code, "message": message, "limit": limit}))
}

/// A resource link as a mention the model can act on (ACP-15): `[@NAME](URI)`, then the
/// title and size when given.
fn mention(name: &str, uri: &str, title: Option<&str>, size: Option<i64>) -> String {
    let mut text = format!("[@{}]({})", label(name), shown_uri(uri));
    let mut extra = Vec::new();
    if let Some(title) = title.filter(|t| !t.is_empty()) {
        extra.push(format!("\"{}\"", label(title)));
    }
    if let Some(size) = size.filter(|s| *s >= 0) {
        extra.push(format!("{size} bytes"));
    }
    if !extra.is_empty() {
        text.push_str(&format!(" ({})", extra.join(", ")));
    }
    text
}

/// An embedded text resource as context (ACP-15):
/// `<context uri="URI" mimeType="TYPE">\nTEXT\n</context>`.
fn context(uri: &str, mime: Option<&str>, text: &str) -> String {
    let mut open = format!("<context uri=\"{}\"", attribute(&shown_uri(uri)));
    if let Some(mime) = mime.filter(|m| !m.is_empty()) {
        open.push_str(&format!(" mimeType=\"{}\"", attribute(&label(mime))));
    }
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{open}>\n{text}{newline}</context>")
}

/// A uri as the model sees it: withheld when it may carry a credential (BLOCK-04).
fn shown_uri(uri: &str) -> String {
    if uri_may_carry_credential(uri) {
        "uri withheld: it may carry a credential".to_owned()
    } else {
        label(uri)
    }
}

/// A label without control characters, at most 4 KiB.
fn label(text: &str) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    cut_to_bytes(&clean, 4096).to_owned()
}

fn attribute(text: &str) -> String {
    text.replace('&', "&amp;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp_16_the_same_note_is_said_once() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
            {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
            {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
        ]))
        .unwrap();
        let content = convert(&blocks, PromptImages::Noted).unwrap();
        assert_eq!(content.notes, [IMAGE_NOT_TAKEN_NOTE, AUDIO_NOTE]);
        assert!(content.images.is_empty());
    }
}

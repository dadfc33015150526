//! Extension UI: the dialogs and display updates the agent asks for
//! (`extension_ui_request`, tagged by `method`) and the host's answer
//! (`extension_ui_response`), HOST-06.

use serde_json::Number;

use super::codec::{wire_enum, wire_struct};

wire_struct! {
    /// `select {id, title, options, optionDetails?, timeout?}`.
    pub struct SelectRequest {
        /// The dialog's id: the host's `extension_ui_response` echoes it.
        req id: String = "id",
        /// What the user is asked, shown as the dialog's heading.
        req title: String = "title",
        /// The choices, in order; the answer's `value` is one of them.
        req options: Vec<String> = "options",
        /// Per-option details, as sent.
        opt option_details: Vec<serde_json::Value> = "optionDetails",
        /// Timeout in milliseconds.
        opt timeout: Number = "timeout",
    }
}

wire_struct! {
    /// `confirm {id, title, message, timeout?}`.
    pub struct ConfirmRequest {
        /// The dialog's id: the host's `extension_ui_response` echoes it.
        req id: String = "id",
        /// What the user is asked, shown as the dialog's heading.
        req title: String = "title",
        /// Text shown under the title.
        opt message: String = "message",
        /// Timeout in milliseconds.
        opt timeout: Number = "timeout",
    }
}

wire_struct! {
    /// `input {id, title, placeholder?, timeout?}`.
    pub struct InputRequest {
        /// The dialog's id: the host's `extension_ui_response` echoes it.
        req id: String = "id",
        /// What the user is asked, shown as the dialog's heading.
        req title: String = "title",
        /// Hint text shown in the empty field.
        opt placeholder: String = "placeholder",
        /// Timeout in milliseconds.
        opt timeout: Number = "timeout",
    }
}

wire_struct! {
    /// `editor {id, title, prefill?, promptStyle?}`.
    pub struct EditorRequest {
        /// The dialog's id: the host's `extension_ui_response` echoes it.
        req id: String = "id",
        /// What the user is asked, shown as the dialog's heading.
        req title: String = "title",
        /// Initial text.
        opt prefill: String = "prefill",
        /// Show it as a prompt editor rather than a document.
        opt prompt_style: bool = "promptStyle",
        /// Timeout in milliseconds.
        opt timeout: Number = "timeout",
    }
}

wire_struct! {
    /// `cancel {id, targetId}`: withdraws a dialog.
    pub struct CancelRequest {
        /// The request's own id (no answer is expected).
        req id: String = "id",
        /// The dialog withdrawn.
        req target_id: String = "targetId",
    }
}

wire_struct! {
    /// `notify {id, message, notifyType?}`.
    pub struct NotifyRequest {
        /// The request's own id (no answer is expected).
        req id: String = "id",
        /// The text of the notification.
        req message: String = "message",
        /// `info`, `warning`, `error`.
        opt notify_type: String = "notifyType",
    }
}

wire_struct! {
    /// `setStatus {id, statusKey, statusText?}` (absent text clears).
    pub struct SetStatusRequest {
        /// The request's own id (no answer is expected).
        req id: String = "id",
        /// Which status entry to set: one per key, a later one replaces it.
        req status_key: String = "statusKey",
        /// The status text (absent: the entry is removed).
        opt status_text: String = "statusText",
    }
}

wire_struct! {
    /// `setWidget {id, widgetKey, widgetLines?, widgetPlacement?}`.
    pub struct SetWidgetRequest {
        /// The request's own id (no answer is expected).
        req id: String = "id",
        /// Which widget to set: one per key, a later one replaces it.
        req widget_key: String = "widgetKey",
        /// Lines (absent clears).
        opt widget_lines: Vec<String> = "widgetLines",
        /// `aboveEditor` or `belowEditor`.
        opt widget_placement: String = "widgetPlacement",
    }
}

wire_struct! {
    /// `setTitle {id, title}`.
    pub struct SetTitleRequest {
        /// The request's id (no answer is expected).
        req id: String = "id",
        /// The window or terminal title to show.
        req title: String = "title",
    }
}

wire_struct! {
    /// `set_editor_text {id, text}`.
    pub struct SetEditorTextRequest {
        /// The request's own id (no answer is expected).
        req id: String = "id",
        /// The text to put in the host's input editor, replacing what is there.
        req text: String = "text",
    }
}

wire_struct! {
    /// `open_url {id, url, launchUrl?, instructions?}`.
    pub struct OpenUrlRequest {
        /// The request's own id (no answer is expected).
        req id: String = "id",
        /// The address the user should open (a login page, say).
        req url: String = "url",
        /// Short loopback URL redirecting to `url`, preferred as the copy target.
        opt launch_url: String = "launchUrl",
        /// What to tell the user to do there.
        opt instructions: String = "instructions",
    }
}

wire_enum! {
    /// An `extension_ui_request`, tagged by `method`.
    pub enum UiRequest tag "method" {
        /// Pick one option (dialog).
        "select" => Select(SelectRequest),
        /// Yes or no (dialog).
        "confirm" => Confirm(ConfirmRequest),
        /// One line of text (dialog).
        "input" => Input(InputRequest),
        /// Multi-line text (dialog).
        "editor" => Editor(EditorRequest),
        /// Withdraw a dialog.
        "cancel" => Cancel(CancelRequest),
        /// Show a notification.
        "notify" => Notify(NotifyRequest),
        /// Set a status line.
        "setStatus" => SetStatus(SetStatusRequest),
        /// Set a widget.
        "setWidget" => SetWidget(SetWidgetRequest),
        /// Set the title.
        "setTitle" => SetTitle(SetTitleRequest),
        /// Replace the editor's text.
        "set_editor_text" => SetEditorText(SetEditorTextRequest),
        /// Open a URL.
        "open_url" => OpenUrl(OpenUrlRequest),
    }
}

impl UiRequest {
    /// A dialog's `timeout` in milliseconds, when it has one that is a finite number; `None`
    /// for a notice (HOST-06).
    pub fn timeout_ms(&self) -> Option<f64> {
        let timeout = match self {
            UiRequest::Select(r) => &r.timeout,
            UiRequest::Confirm(r) => &r.timeout,
            UiRequest::Input(r) => &r.timeout,
            UiRequest::Editor(r) => &r.timeout,
            _ => return None,
        };
        timeout.as_ref()?.as_f64().filter(|ms| ms.is_finite())
    }

    /// The `method`.
    pub fn method(&self) -> Option<&str> {
        self.tag()
    }

    /// The request id.
    pub fn id(&self) -> Option<&str> {
        Some(match self {
            UiRequest::Select(r) => &r.id,
            UiRequest::Confirm(r) => &r.id,
            UiRequest::Input(r) => &r.id,
            UiRequest::Editor(r) => &r.id,
            UiRequest::Cancel(r) => &r.id,
            UiRequest::Notify(r) => &r.id,
            UiRequest::SetStatus(r) => &r.id,
            UiRequest::SetWidget(r) => &r.id,
            UiRequest::SetTitle(r) => &r.id,
            UiRequest::SetEditorText(r) => &r.id,
            UiRequest::OpenUrl(r) => &r.id,
            UiRequest::Unknown(v) => return v.get("id").and_then(serde_json::Value::as_str),
        })
    }

    /// Whether the agent waits for an `extension_ui_response` (select, confirm, input,
    /// editor).
    pub fn is_dialog(&self) -> bool {
        matches!(
            self,
            UiRequest::Select(_)
                | UiRequest::Confirm(_)
                | UiRequest::Input(_)
                | UiRequest::Editor(_)
        )
    }
}

wire_struct! {
    /// `extension_ui_response`: `{id, value}`, `{id, confirmed}` or
    /// `{id, cancelled:true, timedOut?}` (HOST-06).
    pub struct UiResponse {
        /// The dialog's id.
        req id: String = "id",
        /// The chosen option or entered text.
        opt value: String = "value",
        /// The confirm answer.
        opt confirmed: bool = "confirmed",
        /// The dialog was dismissed.
        opt cancelled: bool = "cancelled",
        /// The dismissal was a timeout.
        opt timed_out: bool = "timedOut",
    }
}

impl UiResponse {
    /// `{id, value}`.
    pub fn value(id: impl Into<String>, value: impl Into<String>) -> Self {
        UiResponse {
            id: id.into(),
            value: Some(value.into()),
            ..Default::default()
        }
    }

    /// `{id, confirmed:true}`: the user said yes.
    pub fn confirm(id: impl Into<String>) -> Self {
        UiResponse {
            id: id.into(),
            confirmed: Some(true),
            ..Default::default()
        }
    }

    /// `{id, confirmed:false}`: the user said no.
    pub fn decline(id: impl Into<String>) -> Self {
        UiResponse {
            id: id.into(),
            confirmed: Some(false),
            ..Default::default()
        }
    }

    /// `{id, cancelled:true}`: the user dismissed the dialog.
    pub fn cancelled(id: impl Into<String>) -> Self {
        UiResponse {
            id: id.into(),
            cancelled: Some(true),
            ..Default::default()
        }
    }

    /// `{id, cancelled:true, timedOut:true}`: the dialog was dismissed because its time ran
    /// out.
    pub fn timed_out(id: impl Into<String>) -> Self {
        UiResponse {
            timed_out: Some(true),
            ..UiResponse::cancelled(id)
        }
    }
}

//! One error type for everything core does.
//!
//! The UI and the CLI switch on [`ErrorCode`], never on message text; messages are
//! written for the person reading them and never contain a secret.

use serde::Serialize;
use std::fmt;
use ts_rs::TS;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A stable, machine-readable reason. Serialized in snake_case; the UI switches on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The service rejected the key, or no key is stored.
    Unauthorized,
    /// The service kept answering 429 after the retries we allow.
    RateLimited,
    /// The request body would exceed the service's 12 MB limit.
    TooLarge,
    /// A value the user typed or passed is not acceptable.
    InvalidInput,
    /// The file is empty.
    EmptyFile,
    /// The bytes are not an Office document at all.
    NotADocument,
    /// A Word 97-2003 or PowerPoint 97-2003 binary file.
    LegacyFormat,
    /// A password-protected Office document (an OLE container around the real package).
    EncryptedDocument,
    /// A .docm/.pptm: the services accept only macro-free documents.
    MacroEnabled,
    /// A .dotx/.potx/.ppsx: a template or show, not a document to cite.
    TemplateOrShow,
    /// An Office package of another kind (a spreadsheet, say).
    UnsupportedDocument,
    /// A zip that cannot be read, or an Office package missing its main part.
    CorruptDocument,
    /// A package whose XML declares a DTD (the XXE attack shape); Office never writes one.
    UnsafeDocument,
    /// Reading or writing a local file failed.
    Io,
    /// No Secret Service (keyring) answered.
    KeyringUnavailable,
    /// The connection failed.
    Network,
    /// The service did not answer in time.
    Timeout,
    /// The service answered 5xx.
    Server,
    /// The service answered something the contract does not allow.
    Protocol,
    /// Asked for something that does not exist (a session, a key).
    NotFound,
    /// The request conflicts with the current state (no active turn to cancel).
    Conflict,
    /// The user cancelled.
    Cancelled,
    /// Casebook itself failed (a task that died, a bug): not the user's input, the
    /// file, the network or the service.
    Internal,
}

impl fmt::Display for ErrorCode {
    /// The serde name, so the UI, the CLI and logs all see one spelling.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(s)) => f.write_str(&s),
            _ => write!(f, "{self:?}"),
        }
    }
}

/// What went wrong, for a person (`message`) and for code (`code`).
#[derive(Debug, Clone, PartialEq, Serialize, TS, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
#[error("{message}")]
// Fields are read through methods outside core, so an error's words and code are
// set where it is made and nowhere else (and a key scrubbed from them stays out).
pub struct Error {
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
    /// Seconds until a retry is allowed, when the service said so.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub(crate) retry_after_secs: Option<u64>,
    /// The HTTP status the service answered with, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub(crate) status: Option<u16>,
    /// The service's own code for the failure (eve's `code`: `session_not_ready`,
    /// `session_not_active`, ...), when it gave one. Casebook decides on `code`; this is
    /// shown, and tells apart failures that share a status.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub(crate) service_code: Option<String>,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retry_after_secs: None,
            status: None,
            service_code: None,
        }
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn retry_after_secs(&self) -> Option<u64> {
        self.retry_after_secs
    }

    pub fn status(&self) -> Option<u16> {
        self.status
    }

    pub fn service_code(&self) -> Option<&str> {
        self.service_code.as_deref()
    }

    pub fn with_service_code(mut self, code: impl Into<String>) -> Self {
        self.service_code = Some(code.into());
        self
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    pub fn with_retry_after(mut self, secs: u64) -> Self {
        self.retry_after_secs = Some(secs);
        self
    }

    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }

    pub fn io(context: &str, err: &std::io::Error) -> Self {
        Self::new(ErrorCode::Io, format!("{context}: {err}"))
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    pub fn is_unauthorized(&self) -> bool {
        self.code == ErrorCode::Unauthorized
    }

    pub fn is_rate_limited(&self) -> bool {
        self.code == ErrorCode::RateLimited
    }

    /// True for the kinds of failure that say something about the user's file
    /// rather than about the service or the connection.
    pub fn is_bad_document(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::EmptyFile
                | ErrorCode::NotADocument
                | ErrorCode::LegacyFormat
                | ErrorCode::EncryptedDocument
                | ErrorCode::MacroEnabled
                | ErrorCode::TemplateOrShow
                | ErrorCode::UnsupportedDocument
                | ErrorCode::CorruptDocument
                | ErrorCode::UnsafeDocument
                | ErrorCode::TooLarge
        )
    }

    pub fn is_network(&self) -> bool {
        matches!(self.code, ErrorCode::Network | ErrorCode::Timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_code_and_message_for_the_ui() {
        let err = Error::new(ErrorCode::RateLimited, "Slow down").with_retry_after(7);
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"code": "rate_limited", "message": "Slow down", "retryAfterSecs": 7}),
            "the UI reads code, message and retryAfterSecs by these names"
        );
    }

    #[test]
    fn codes_display_as_their_serde_names() {
        assert_eq!(ErrorCode::UnsafeDocument.to_string(), "unsafe_document");
        assert_eq!(ErrorCode::Internal.to_string(), "internal");
        assert_eq!(
            serde_json::to_value(ErrorCode::KeyringUnavailable).unwrap(),
            "keyring_unavailable"
        );
    }
}

//! The one shape every error of the API has, `{"error": {"code", "message"}}`, and the
//! extractors that answer in it when a request cannot be read: a JSON body that is not JSON, not
//! labelled JSON or of the wrong shape, and a session id that cannot be read from the path.
//!
//! `code` is a word a program can test, `message` a sentence for the person. An answer's
//! refusals carry `answers::ErrorCode`'s codes, with the status each has; every other error names
//! its own code here, where the responses are made (docs/api.md lists them).

use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::answers::{ErrorCode, RespondError};
use crate::engine::FindError;

/// A JSON error response in the one shape every error of the API has:
/// `{"error": {"code": "…", "message": "…"}}`. `code` is a word a program can test (an answer's
/// refusals are `answers::ErrorCode`'s), `message` a sentence for the person.
pub fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = json!({ "error": { "code": code, "message": message.into() } });
    (status, Json(body)).into_response()
}

/// The code of a refusal that comes with its status only (an extractor's rejection).
fn code_of(status: StatusCode) -> &'static str {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::UNPROCESSABLE_ENTITY => "invalid",
        status if status.is_server_error() => "internal",
        _ => "bad_request",
    }
}

/// An answer's refusal, with the status its code has (`answers::ErrorCode::status`).
pub fn respond_error(refusal: RespondError) -> Response {
    let status =
        StatusCode::from_u16(refusal.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    error(status, refusal.code.as_str(), refusal.message)
}

/// A JSON request body. When the body is not JSON, is not labelled JSON, or is JSON of the
/// wrong shape, the answer has the `{"error": {"code", "message"}}` shape every other error has,
/// not axum's plain text.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => {
                let status = rejection.status();
                let message = match status {
                    StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                        "send the body as JSON, with `Content-Type: application/json`".to_string()
                    }
                    StatusCode::UNPROCESSABLE_ENTITY => format!(
                        "the body is not what this endpoint takes: {}",
                        innermost(&rejection)
                    ),
                    _ => format!("the body is not valid JSON: {}", innermost(&rejection)),
                };
                Err(error(status, code_of(status), message))
            }
        }
    }
}

/// A session id from the path, answered like `JsonBody` when it cannot be read (an id that is
/// not UTF-8 once decoded).
pub struct SessionIdPath(pub String);

impl<S: Send + Sync> FromRequestParts<S> for SessionIdPath {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(id)) => Ok(SessionIdPath(id)),
            Err(rejection) => Err(error(
                rejection.status(),
                code_of(rejection.status()),
                format!("the session id cannot be read: {}", innermost(&rejection)),
            )),
        }
    }
}

/// The deepest cause of an error: the parser's own words, without axum's wrapping sentences.
fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    std::iter::successors(Some(error), |error| error.source())
        .last()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The answer for an id that names no single session: a 400 for an id too short to name one,
/// a 404 otherwise, with `engine::pick`'s words.
pub fn unfound(err: FindError) -> Response {
    let code = match err {
        FindError::Empty | FindError::TooShort(_) => ErrorCode::BadRequest,
        FindError::NotFound(_) | FindError::Ambiguous { .. } => ErrorCode::UnknownSession,
    };
    respond_error(RespondError::new(code, err.to_string()))
}

/// What a path the API does not have gets.
pub async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

/// What a method an endpoint does not take gets.
pub async fn method_not_allowed() -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method",
    )
}

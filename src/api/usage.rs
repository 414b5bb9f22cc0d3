//! `GET /usage?by=session|project|agent|day&since=…`: the live list's usage summed as `slate
//! usage` sums it (`policy::usage`), with the price table's date and sources, and the UTC day's
//! total the window shows. Like every route that shows sessions, it needs the token or this
//! user's socket.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use slate_core::policy::spend::day_of;
use slate_core::policy::usage::{since, summarize, By, Item};
use slate_core::usage::prices::Table;

use super::errors::error;
use super::AppState;

#[derive(serde::Deserialize)]
pub struct UsageQuery {
    by: Option<String>,
    since: Option<String>,
}

pub async fn usage(State(state): State<AppState>, Query(query): Query<UsageQuery>) -> Response {
    let now = crate::clock::system_clock();
    let by = match query.by.as_deref().map(By::parse) {
        None => By::Session,
        Some(Some(by)) => by,
        Some(None) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid",
                "by is one of session, project, agent, day",
            )
        }
    };
    let since = match query
        .since
        .as_deref()
        .map(|text| since(text, now))
        .transpose()
    {
        Ok(since) => since,
        Err(message) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid",
                format!("since {message}"),
            )
        }
    };
    let sessions: Vec<_> = state
        .handle
        .live_sessions()
        .into_iter()
        .filter(|session| since.is_none_or(|since| session.row_time.is_some_and(|at| at >= since)))
        .collect();
    let (rows, total) = summarize(sessions.iter().map(Item::from), by);
    let today = day_of(now);
    let (_, day) = summarize(
        sessions
            .iter()
            .filter(|session| day_of(session.row_time.unwrap_or(now)) == today)
            .map(Item::from),
        By::Day,
    );
    let table = Table::shipped();
    Json(json!({
        "by": by,
        "since": since,
        "rows": rows,
        "total": total,
        "today": day,
        "prices": {"date": table.date, "sources": table.sources},
    }))
    .into_response()
}

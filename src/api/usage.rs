//! `GET /usage?by=session|project|agent|day&since=…`: the live list's usage summed as `slate
//! usage` sums it (`policy::usage`), with the price table's date and sources, and the UTC day's
//! total, with the totals the store kept of sessions no longer on the list (`store::usage`). Like
//! every route that shows sessions, it needs the token or this user's socket.

use std::collections::HashSet;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use slate_core::model::{Session, SessionKey};
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
    let sessions = state.handle.live_sessions();
    // The store's totals of sessions no longer on the live list count too, once: a closed
    // session's cost stays, and the day's total survives a restart.
    let listed: HashSet<SessionKey> = sessions.iter().map(Session::key).collect();
    let stored = state.handle.stored_usage();
    let kept = stored
        .iter()
        .filter(|row| !listed.contains(&row.key))
        .map(|row| Item {
            id: row.key.id.as_str(),
            project: row.project.as_deref(),
            agent: row.key.agent.as_str(),
            at: Some(row.at),
            usage: Some(&row.usage),
        });
    let items: Vec<Item> = sessions.iter().map(Item::from).chain(kept).collect();
    let after = |item: &&Item| since.is_none_or(|since| item.at.is_some_and(|at| at >= since));
    let (rows, total) = summarize(items.iter().filter(after).copied(), by);
    let today = day_of(now);
    let (_, day) = summarize(
        items
            .iter()
            .filter(|item| day_of(item.at.unwrap_or(now)) == today)
            .copied(),
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

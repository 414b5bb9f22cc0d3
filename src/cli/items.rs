//! `slate item add|list|done`, `slate claim` and `slate release`: work items and the claims
//! sessions hold on them, kept in this HOME's store, after which a running Slate is nudged to
//! re-read. Only `claim` runs the engine, to find the session; a session on a remote machine is
//! refused, since its claims live in that machine's store.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;
use slate::model::{SessionKey, Timestamp};
use slate::tracker::{ItemStatus, WorkItemInfo};
use slate::{report, store};

use super::remote;
use super::setup::{Context, Setup};

#[derive(Debug, Subcommand)]
pub enum ItemCommand {
    /// Add (or replace) a work item.
    Add {
        id: String,
        #[arg(long)]
        title: String,
        #[arg(long, default_value = "ready")]
        status: ItemStatus,
        /// An item this one waits for; repeat for several.
        #[arg(long = "dep")]
        deps: Vec<String>,
    },
    /// List the work items, who holds them and who acts next.
    List,
    /// Mark an item done and release the claims on it.
    Done { id: String },
}

/// `slate item add|list|done`.
pub fn item(command: &ItemCommand, setup: &Setup, now: Timestamp) -> anyhow::Result<ExitCode> {
    let store = setup.open_store()?;
    let mut out = std::io::stdout().lock();
    match command {
        ItemCommand::Add {
            id,
            title,
            status,
            deps,
        } => {
            let graph = store
                .work_items()?
                .into_iter()
                .map(|item| (item.id, item.deps))
                .collect();
            slate::limits::work_item(id, title, deps, &graph)?;
            let created = store.work_item(id)?.map_or(now, |item| item.created);
            store.put_work_item(&store::WorkItem {
                id: id.clone(),
                title: title.clone(),
                status: *status,
                deps: deps.clone(),
                created,
            })?;
            let said = format!("item {id} ({})", status.as_str());
            writeln!(out, "{}", report::terminal_text(&said))?;
        }
        ItemCommand::Done { id } => {
            let mut item = store
                .work_item(id)?
                .with_context(|| format!("no work item `{id}`"))?;
            item.status = ItemStatus::Done;
            store.put_work_item(&item)?;
            // Finished work protects nobody: its claims are released with it.
            for claim in store.claims_on(id)? {
                if claim.released.is_none() {
                    store.release_claim(claim.id, now)?;
                }
            }
            writeln!(out, "item {} done", report::terminal_text(id))?;
        }
        ItemCommand::List => {
            let mut items = BTreeMap::new();
            let mut holders = BTreeMap::new();
            for item in store.work_items()? {
                for claim in store.claims_on(&item.id)? {
                    if claim.released.is_none() {
                        holders.insert(item.id.clone(), claim.key);
                    }
                }
                let info = WorkItemInfo {
                    status: item.status,
                    id: item.id,
                    title: item.title,
                    deps: item.deps,
                };
                items.insert(info.id.clone(), info);
            }
            write!(out, "{}", report::items(&items, &holders))?;
        }
    }
    setup.nudge_server();
    Ok(ExitCode::SUCCESS)
}

/// `slate release <item>`: releases every claim held on it.
pub fn release(item: &str, setup: &Setup, now: Timestamp) -> anyhow::Result<ExitCode> {
    let store = setup.open_store()?;
    let mut out = std::io::stdout().lock();
    let mut released = 0;
    for claim in store.claims_on(item)? {
        if claim.released.is_none() {
            store.release_claim(claim.id, now)?;
            released += 1;
        }
    }
    // The id is as typed, so it is shown, never obeyed, like every other echoed text.
    let item = report::terminal_text(item);
    if released == 0 {
        writeln!(out, "no claim held on item {item}")?;
    } else {
        writeln!(out, "released item {item}")?;
    }
    setup.nudge_server();
    Ok(ExitCode::SUCCESS)
}

/// `slate claim <item> --session <id>`: records that the session holds a work claim on the item.
pub fn claim(context: &Context, item: &str, session: &str) -> anyhow::Result<ExitCode> {
    let setup = &context.setup;
    let options = context.options()?;
    remote::refuse_remote(&setup.config, session, "claim")?;
    let engine = context.engine(options, false)?;
    slate::limits::item_id(item)?;
    let session = engine.find(session)?;
    let key = SessionKey::new(session.agent, session.id.as_str());
    let store = setup.open_store()?;
    if store.work_item(item)?.is_none() {
        anyhow::bail!("no work item `{item}` (add it with `slate item add {item} --title …`)");
    }
    let held = store.claims_on(item)?;
    if let Some(other) = held
        .iter()
        .find(|claim| claim.released.is_none() && claim.key != key)
    {
        anyhow::bail!(
            "item `{item}` is already claimed by {}; release it first",
            other.key
        );
    }
    if !held.iter().any(|claim| claim.released.is_none()) {
        store.claim(item, &key, context.now)?;
    }
    setup.nudge_server();
    let said = format!("{key} holds a work claim on item {item}");
    writeln!(std::io::stdout().lock(), "{}", report::terminal_text(&said))?;
    Ok(ExitCode::SUCCESS)
}

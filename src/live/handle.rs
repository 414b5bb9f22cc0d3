//! The [`Handle`]: a cheap, cloneable view of the live service for the API, the CLI and the
//! desktop shell. It reads the published snapshot and the store, and sends the loop its events.

use tokio::sync::broadcast;

use super::{Detail, Event, Handle, Health, IntentError, Published, Update};
use crate::config::RemoteEntry;
use crate::engine::FindError;
use crate::remote::{self, LinkOptions};
use crate::settings::Settings;
use slate_core::model::{Intent, Machine, Session, SessionKey, Status, Timestamp};
use slate_core::report;
use slate_core::tracker::Evidence;

impl Handle {
    /// The live list, Needs you first.
    pub fn live_sessions(&self) -> Vec<Session> {
        let published = self.shared.published.read().expect("lock poisoned");
        live_list(&published)
    }

    /// The live list and a receiver for every change after it, taken together so no change
    /// falls between the two.
    pub fn subscribe(&self) -> (Vec<Session>, broadcast::Receiver<Update>) {
        let published = self.shared.published.read().expect("lock poisoned");
        let receiver = self.shared.updates.subscribe();
        (live_list(&published), receiver)
    }

    /// One session by id (or unique prefix), live or closed, with evidence and transitions.
    pub fn session(&self, id: &str) -> Option<Detail> {
        self.find(id).ok()
    }

    /// Like `session`, but says why `id` names no single session (`engine::pick`'s rules).
    /// `NAME:ID` names a session on the remote machine `NAME`; a bare id, one on this machine.
    pub fn find(&self, id: &str) -> Result<Detail, FindError> {
        let published = self.shared.published.read().expect("lock poisoned");
        if let Some((machine, rest)) = remote_reference(id, &published.health.remotes) {
            let keys = published
                .remote
                .keys()
                .filter(|key| key.machine.as_ref() == Some(&machine));
            let key = crate::engine::pick(keys, rest).map_err(|err| match err {
                FindError::NotFound(_) => FindError::NotFound(id.to_string()),
                other => other,
            })?;
            let session = published.remote[key].clone();
            return Ok(Detail {
                session,
                evidence: Vec::new(),
                transitions: Vec::new(),
                answers: Vec::new(),
                needs_you_ms: None,
            });
        }
        let keys = published.sessions.keys().chain(published.closed.keys());
        let key = crate::engine::pick(keys, id)?;
        let (session, evidence) = match published.sessions.get(key) {
            Some(session) => (
                session.clone(),
                published.evidence.get(key).cloned().unwrap_or_default(),
            ),
            None => published
                .closed
                .get(key)
                .ok_or_else(|| FindError::NotFound(id.to_string()))?
                .session(key, &published.policy),
        };
        Ok(self.detail(key, session, evidence))
    }

    fn detail(&self, key: &SessionKey, session: Session, evidence: Vec<Evidence>) -> Detail {
        let now = (self.shared.clock)();
        let store = self
            .shared
            .store
            .as_ref()
            .and_then(|store| store.lock().ok());
        let transitions = store
            .as_ref()
            .and_then(|store| store.transitions(key, 20).ok())
            .unwrap_or_default();
        let needs_you_ms = store
            .as_ref()
            .and_then(|store| store.time_in_status(key, Status::Waiting, now).ok())
            .map(|total| u64::try_from(total.as_millis()).unwrap_or(u64::MAX));
        let answers = store
            .as_ref()
            .and_then(|store| store.answers(key, 20).ok())
            .unwrap_or_default();
        Detail {
            session,
            evidence,
            transitions,
            answers,
            needs_you_ms,
        }
    }

    /// The time on the service's clock.
    pub fn now(&self) -> Timestamp {
        (self.shared.clock)()
    }

    /// The folder of the answers' locks (`answers::lock_folder`), beside this Slate's store;
    /// `None` without a store file.
    pub fn answer_locks(&self) -> Option<std::path::PathBuf> {
        let store = self.shared.store.as_ref()?.lock().ok()?;
        crate::answers::lock_folder(store.path())
    }

    /// The terminals the engine looks in: an answer typed here looks for its pane there too.
    pub fn terminals(&self) -> slate_terminals::terminals::Backends {
        self.shared.terminals
    }

    /// Records one answer to a session's dialog in the store, whatever its outcome.
    pub fn record_answer(
        &self,
        key: &SessionKey,
        record: &slate_core::protocol::Record,
    ) -> Result<(), String> {
        let store = self
            .shared
            .store
            .as_ref()
            .ok_or_else(|| "this slate runs without a store".to_string())?;
        let store = store
            .lock()
            .map_err(|_| "the store is unusable".to_string())?;
        store
            .record_answer(key, record)
            .map_err(|error| error.to_string())
    }

    pub fn health(&self) -> Health {
        let mut health = self
            .shared
            .published
            .read()
            .expect("lock poisoned")
            .health
            .clone();
        if health.settings.config.push.is_on() {
            health.push = Some(self.shared.pushed.report());
        }
        health
    }

    /// Where the push worker (`push`) counts what it sent, failed and dropped.
    pub fn push_stats(&self) -> std::sync::Arc<super::PushStats> {
        self.shared.pushed.clone()
    }

    /// The settings in force and the config file's problem, if any.
    pub fn settings(&self) -> Settings {
        self.shared.settings_changed.borrow().clone()
    }

    /// Where each remote machine's link stands.
    pub fn remotes(&self) -> Vec<remote::Report> {
        self.shared.remotes_changed.borrow().clone()
    }

    /// The config entry of the remote `machine` and how its link runs, to forward an answer to
    /// it; `None` when this service runs no links or does not follow that machine.
    pub fn forwarding(&self, machine: &Machine) -> Option<(RemoteEntry, LinkOptions)> {
        let options = self.shared.link_options.clone()?;
        let settings = self.shared.settings_changed.borrow();
        let entry = settings
            .config
            .remotes
            .iter()
            .find(|entry| &entry.name == machine)?
            .clone();
        Some((entry, options))
    }

    /// A receiver that wakes whenever a remote's link changes (connected, lost, configured), for
    /// the tray, which names an unreachable machine even when it has no sessions.
    pub fn watch_remotes(&self) -> tokio::sync::watch::Receiver<Vec<remote::Report>> {
        self.shared.remotes_changed.subscribe()
    }

    /// A receiver that wakes whenever the settings change (an edit applied, or a broken edit
    /// kept out), for the desktop shell's pause and tooltip.
    pub fn watch_settings(&self) -> tokio::sync::watch::Receiver<Settings> {
        self.shared.settings_changed.subscribe()
    }

    /// Asks the loop to re-read everything now, without waiting.
    pub fn refresh(&self) {
        self.ask_refresh();
    }

    /// Asks for a refresh and returns its number: the loop has published it once it has
    /// published that many refreshes. Refreshes are counted before they are sent, so the n-th
    /// refresh the loop handles was sent after the n-th number was taken, and so after whatever
    /// its asker did before asking.
    fn ask_refresh(&self) -> u64 {
        let ticket = self
            .shared
            .refreshes_asked
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        let _ = self.shared.events.send(Event::Refresh);
        ticket
    }

    /// Asks the loop to re-read everything and waits until it has published the result.
    pub async fn refresh_and_wait(&self) {
        let mut done = self.shared.refreshes_done.subscribe();
        let ticket = self.ask_refresh();
        while *done.borrow_and_update() < ticket {
            if done.changed().await.is_err() {
                return;
            }
        }
    }

    /// Sends any event to the loop (hosted-session signals, a watcher hint).
    pub fn send(&self, event: Event) {
        let _ = self.shared.events.send(event);
    }

    /// Sets (or, with `IntentState::None`, clears) the user's intent on a session: writes it to
    /// the store and asks the loop to read intents again. This is what `POST /sessions/{id}/intent`
    /// calls; the change reaches the snapshot and subscribers on the loop's next round (await
    /// `refresh_and_wait` to see it published).
    pub fn set_intent(&self, key: &SessionKey, intent: &Intent) -> Result<(), IntentError> {
        let store = self.shared.store.as_ref().ok_or(IntentError::NoStore)?;
        {
            let store = store.lock().map_err(|_| IntentError::NoStore)?;
            store.set_intent(key, intent, (self.shared.clock)())?;
        }
        let _ = self.shared.events.send(Event::IntentsChanged);
        Ok(())
    }

    /// Mutes or unmutes a session: writes it to the store and asks the loop to read the store
    /// again, as `set_intent` does. This is what `POST /sessions/{id}/mute` calls.
    pub fn set_muted(&self, key: &SessionKey, muted: bool) -> Result<(), IntentError> {
        let store = self.shared.store.as_ref().ok_or(IntentError::NoStore)?;
        {
            let store = store.lock().map_err(|_| IntentError::NoStore)?;
            store.set_muted(key, muted, (self.shared.clock)())?;
        }
        let _ = self.shared.events.send(Event::IntentsChanged);
        Ok(())
    }

    /// Every session's usage totals the store kept (`store::usage`): what `/usage` adds for the
    /// sessions no longer on the live list. None without a store, or when it cannot be read.
    pub fn stored_usage(&self) -> Vec<crate::store::StoredUsage> {
        let store = self.shared.store.as_ref();
        let store = store.and_then(|store| store.lock().ok());
        store
            .and_then(|store| store.usages().ok())
            .unwrap_or_default()
    }

    /// Stops the loop before the next event it would handle, whatever is queued.
    pub fn shutdown(&self) {
        self.shared
            .stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.shared.events.send(Event::Shutdown);
    }
}

/// The remote machine and the id in `NAME:ID`, when `NAME` is one of `remotes`.
fn remote_reference<'a>(id: &'a str, remotes: &[remote::Report]) -> Option<(Machine, &'a str)> {
    let (name, rest) = id.split_once(':')?;
    let machine = Machine::new(name).ok()?;
    remotes
        .iter()
        .any(|report| report.name == machine)
        .then_some((machine, rest))
}

fn live_list(published: &Published) -> Vec<Session> {
    let mut sessions: Vec<Session> = published.live.values().cloned().collect();
    report::sort_for_display(&mut sessions);
    sessions
}

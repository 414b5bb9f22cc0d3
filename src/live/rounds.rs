//! The loop's rounds: it waits for the next event or the schedule's next timer, handles the
//! event (a batch of a remote's reports at once) and the tasks that fell due, and ends the round
//! with a publish. Also what a round keeps current besides the engine: the settings, the links
//! to remote machines, custody from the store and the watches.

use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Instant;

use super::{Event, GitRecheck, LoopState, Round, REMOTE_SLICE};
use crate::engine::{merge, Engine};
use crate::remote::link::Link;
use crate::settings::{self, Reload};
use slate_core::agents::ProcessRole;
use slate_core::model::Timestamp;
use slate_core::schedule::Task;
use slate_core::tracker::{Change, Input};
use slate_sources::sources::roots::WatchSpec;
use slate_sources::watch::Hint;

impl LoopState {
    pub(super) fn run(&mut self, inbox: mpsc::Receiver<Event>, ready: mpsc::Sender<()>) {
        let now = (self.clock)();
        self.load_custody(now);
        let started = Instant::now();
        let mut first = self.engine.refresh(now);
        first = merge(first, self.processes_scanned(now));
        first = merge(first, self.drain_hooks(now));
        let done = Instant::now();
        self.schedule.scanned(done);
        self.schedule.walked(done, done - started);
        self.publish(first, Round::First);
        self.refresh_watches();
        let _ = ready.send(());
        // The links start once this machine's own list is out: a slow remote never delays it.
        self.follow_remotes(now);

        loop {
            let event = match self.schedule.next_wake() {
                Some(wake) => {
                    match inbox.recv_timeout(wake.saturating_duration_since(Instant::now())) {
                        Ok(event) => Some(event),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
                None => match inbox.recv() {
                    Ok(event) => Some(event),
                    Err(_) => return,
                },
            };
            if self
                .shared
                .stopping
                .load(std::sync::atomic::Ordering::SeqCst)
            {
                return;
            }
            self.wakeups += 1;
            let mut refreshed = matches!(event, Some(Event::Refresh));
            let from_remote = matches!(event, Some(Event::Remote { .. }));
            let mut lines = match &event {
                Some(Event::Remote { event, .. }) => event.lines(),
                _ => 0,
            };
            let mut changes = match event {
                Some(Event::Shutdown) => return,
                Some(event) => self.handle(event),
                None => Vec::new(),
            };
            // The remote reports already queued are handled in the same round, up to a slice of
            // `REMOTE_SLICE` lines, so a busy remote costs one publish per slice rather than one
            // per line, and a backlog of any length never holds the loop for long. The slice
            // ends at the first other event (handled too), and a shutdown still stops it at once.
            while from_remote && lines < REMOTE_SLICE {
                let Ok(next) = inbox.try_recv() else {
                    break;
                };
                if matches!(next, Event::Shutdown)
                    || self
                        .shared
                        .stopping
                        .load(std::sync::atomic::Ordering::SeqCst)
                {
                    return;
                }
                if let Event::Remote { event, .. } = &next {
                    lines += event.lines();
                }
                refreshed |= matches!(next, Event::Refresh);
                let more = matches!(next, Event::Remote { .. });
                changes = merge(changes, self.handle(next));
                if !more {
                    break;
                }
            }
            for task in self.schedule.due(Instant::now()) {
                changes = merge(changes, self.work(task));
            }
            let repositories = self.git.len();
            self.publish(changes, Round::Next);
            if refreshed {
                self.shared.refreshes_done.send_modify(|done| *done += 1);
            }
            if self.git.len() != repositories {
                self.refresh_watches();
            }
        }
    }

    /// Handles one event and returns the changes it made.
    fn handle(&mut self, event: Event) -> Vec<Change> {
        let now = (self.clock)();
        match event {
            // A hook's event that missed the API is read at once, not after a file's delay.
            Event::Hint(Hint::Changed(path)) if self.spool.as_ref() == Some(&path) => {
                self.drain_hooks(now)
            }
            Event::Hint(Hint::Changed(path)) => {
                self.schedule.changed(path, Instant::now());
                Vec::new()
            }
            Event::Hint(Hint::Rescan) => {
                // A new folder may be the config's, created with the file already in it.
                let changes = self.reload_settings(now);
                let changes = merge(changes, self.drain_hooks(now));
                let changes = merge(changes, self.engine.scan_files(now));
                self.refresh_watches();
                changes
            }
            Event::Refresh => {
                self.git.invalidate_all();
                self.git_recheck = GitRecheck::All;
                let mut changes = self.reload_settings(now);
                changes = merge(changes, self.load_custody(now));
                changes = merge(changes, self.engine.refresh(now));
                changes = merge(changes, self.processes_scanned(now));
                self.refresh_watches();
                self.schedule.refreshed(Instant::now());
                changes
            }
            Event::Hosted { key, signals } => {
                self.engine.apply(Input::Hosted { key, signals }, now)
            }
            Event::Remote {
                machine,
                event,
                credit,
            } => {
                let touched = self.remotes.apply(&machine, event, now);
                drop(credit);
                self.remote_touched.extend(touched);
                for problem in self.remotes.take_problems() {
                    self.engine.record_problem(problem);
                }
                Vec::new()
            }
            Event::IntentsChanged => self.load_custody(now),
            Event::Hook { report, at } => self.engine.hook(&report, at, now),
            Event::Decision { key, waiting } => {
                self.engine.apply(Input::Decision { key, waiting }, now)
            }
            Event::HostedProcess { pid, signals } => {
                let changes = self
                    .engine
                    .apply(Input::HostedProcess { pid, signals }, now);
                let seen = can_vouch(&self.engine, pid);
                self.schedule.hosted_report(pid, seen, Instant::now());
                changes
            }
            Event::Exited => {
                let changes = self.engine.scan_processes(now);
                self.schedule.scanned(Instant::now());
                let changes = merge(changes, self.processes_scanned(now));
                merge(changes, self.drain_hooks(now))
            }
            Event::Terminals(delivery) => {
                let Some(sensing) = &mut self.sensing else {
                    return Vec::new();
                };
                let (inputs, problems) = sensing.delivered(delivery, Instant::now());
                for problem in problems {
                    self.engine.record_problem(problem);
                }
                self.engine.apply_all(inputs, now)
            }
            // `run` stops before handing this over.
            Event::Shutdown => Vec::new(),
        }
    }

    /// Does one task the schedule says is due and returns the changes it made.
    fn work(&mut self, task: Task) -> Vec<Change> {
        let now = (self.clock)();
        match task {
            Task::Read(paths) => {
                let mut changes = Vec::new();
                for path in paths {
                    // The config file is read after the same delay as a transcript, so an editor
                    // that truncates it before writing is read once, whole.
                    if self.settings.file.as_deref() == Some(path.as_path()) {
                        changes = merge(changes, self.reload_settings(now));
                        continue;
                    }
                    if self.git_head_changed(&path) {
                        continue;
                    }
                    changes = merge(changes, self.engine.read_path(&path, now));
                }
                self.refresh_watches();
                changes
            }
            Task::Scan => {
                let changes = self.engine.scan_processes(now);
                let changes = merge(changes, self.processes_scanned(now));
                // Without a watcher (or with one that missed it), the spool is read here.
                merge(changes, self.drain_hooks(now))
            }
            Task::ReadPanes => {
                let Some(sensing) = &mut self.sensing else {
                    return Vec::new();
                };
                let wanted = self.engine.tracker().terminals_wanted();
                sensing.set_hosted(self.engine.tracker().hosted_controls());
                sensing.set_calls(self.engine.tracker().open_calls());
                sensing.set_marks(&self.engine.tracker().terminals_marked(), Instant::now());
                let inputs = sensing.read_due(&wanted, Instant::now());
                self.engine.apply_all(inputs, now)
            }
            Task::Rewalk => {
                let started = Instant::now();
                let changes = self.engine.scan_files(now);
                self.schedule.walked(Instant::now(), started.elapsed());
                self.refresh_watches();
                changes
            }
            Task::Tick => self.engine.tick(now),
            // The publish that follows takes off the sessions whose time is up.
            Task::Leave => Vec::new(),
        }
    }

    /// The hook events spooled while no Slate took them in time (`hooks::drain`), from the last
    /// hour: at the start, whenever the watcher says the spool changed, and at every process scan
    /// and rescan, each time only when the spool is not empty (one look at its size).
    fn drain_hooks(&mut self, now: Timestamp) -> Vec<Change> {
        let Some(spool) = &self.spool else {
            return Vec::new();
        };
        if !crate::hooks::spool_waiting(spool) {
            return Vec::new();
        }
        let mut changes = Vec::new();
        for (at, report) in crate::hooks::drain(spool, now) {
            changes = merge(changes, self.engine.hook(&report, at, now));
        }
        changes
    }

    /// After a process scan: the processes that may vouch for a session are the ones whose end
    /// brings the next scan forward (`exits`).
    fn watch_exits(&self) {
        let Some(exits) = &self.exits else { return };
        let watched: Vec<_> = self
            .engine
            .processes()
            .iter()
            .filter(|process| {
                matches!(
                    process.recognised.role,
                    ProcessRole::Interactive | ProcessRole::Print
                )
            })
            .map(|process| (process.info.pid, process.info.start_ticks))
            .collect();
        exits.watch(&watched);
    }

    /// After a process scan: new agent processes' terminals are located (off the loop), and the
    /// terminals of processes gone are forgotten.
    fn processes_scanned(&mut self, now: Timestamp) -> Vec<Change> {
        self.watch_exits();
        let Some(sensing) = &mut self.sensing else {
            return Vec::new();
        };
        let inputs = sensing.scanned(self.engine.processes(), Instant::now());
        self.engine.apply_all(inputs, now)
    }

    /// Reads the config file again. What parses applies at once: the tracker's policy (every
    /// live session is decided again under it) and the live list's cleanup delay. A broken file
    /// keeps the last good config; either way the settings are published.
    fn reload_settings(&mut self, now: Timestamp) -> Vec<Change> {
        let reload = self.settings.reload();
        if reload == Reload::Unchanged {
            return Vec::new();
        }
        self.shared
            .settings_changed
            .send_replace(self.settings.clone());
        if reload == Reload::Kept {
            return Vec::new();
        }
        self.follow_remotes(now);
        self.reclaim_after = settings::reclaim_after(&self.settings.config);
        let policy = settings::policy(&self.settings.config, self.engine.tracker().policy());
        if policy == *self.engine.tracker().policy() {
            return Vec::new();
        }
        self.engine.apply(Input::Policy(policy), now)
    }

    /// Starts a link for each configured remote that has none, and stops the links of remotes
    /// taken out of the config or changed (a changed one starts again with its new entry). Their
    /// sessions follow at the next publish.
    fn follow_remotes(&mut self, now: Timestamp) {
        let Some(options) = &self.link_options else {
            return;
        };
        let entries = &self.settings.config.remotes;
        self.links
            .retain(|_, link| entries.iter().any(|entry| entry == link.entry()));
        for entry in entries {
            if self.links.contains_key(&entry.name) {
                continue;
            }
            let events = self.events.clone();
            let machine = entry.name.clone();
            let sink = Box::new(move |event, credit| {
                let _ = events.send(Event::Remote {
                    machine: machine.clone(),
                    event,
                    credit,
                });
            });
            let link = Link::start(entry.clone(), options.clone(), self.clock, sink);
            self.links.insert(entry.name.clone(), link);
        }
        let gone = self.remotes.configure(entries, now);
        self.remote_touched.extend(gone);
    }

    /// Reads intents, work items and claims from the store into the engine. A store that cannot
    /// be read is logged and the previous custody kept.
    fn load_custody(&mut self, now: Timestamp) -> Vec<Change> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        let Ok(store) = store.lock() else {
            return Vec::new();
        };
        match self.engine.load_custody(&store, now) {
            Ok(changes) => changes,
            Err(err) => {
                tracing::warn!("cannot read intents and claims: {err}");
                Vec::new()
            }
        }
    }

    /// Keeps the watcher on every root, on folders that appeared since, on the `.git` folders of
    /// live sessions' checkouts (for their `HEAD`), and on the config file.
    fn refresh_watches(&mut self) {
        if let Some(watcher) = &mut self.watcher {
            let mut specs = self.engine.watch_paths();
            specs.extend(self.git.git_dirs().into_iter().map(|path| WatchSpec {
                path,
                recursive: false,
            }));
            watcher.watch_all(specs);
            if let Some(file) = &self.settings.file {
                watcher.watch_file(file);
            }
            if let Some(spool) = &self.spool {
                watcher.watch_file(spool);
            }
        }
    }

    /// When `path` is the `HEAD` of a checkout a live session works in, schedules a re-read of
    /// that checkout's git facts and returns true.
    fn git_head_changed(&mut self, path: &Path) -> bool {
        if path.file_name().is_none_or(|name| name != "HEAD") {
            return false;
        }
        let Some(git_dir) = path.parent() else {
            return false;
        };
        let folders = self.git.invalidate_repository(git_dir);
        if folders.is_empty() {
            return false;
        }
        self.git_recheck.add_folders(folders);
        true
    }
}

/// True when the last process scan saw an agent process that can vouch for a session and that is
/// the hosted program `pid` or its child (Gemini CLI relaunches itself in a child), as the
/// tracker attaches hosted signals.
fn can_vouch(engine: &Engine, pid: u32) -> bool {
    engine.processes().iter().any(|process| {
        matches!(
            process.recognised.role,
            slate_core::agents::ProcessRole::Interactive | slate_core::agents::ProcessRole::Print
        ) && (process.info.pid == pid || process.info.ppid == Some(pid))
    })
}

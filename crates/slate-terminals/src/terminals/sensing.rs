//! The live loop's side of sensing: [`Sensing`], a worker thread that locates terminals and reads
//! panes off the loop and hands the results back as a [`Delivery`], with the pacing: a pane is
//! read at most once a second (a read still in flight past its second is not asked for again,
//! nor looked at more often), and a terminal that failed is asked again only after a pause, its
//! failure counted once as a problem. One failure of a pane read well the time before is a stumble
//! (a read that ran past its deadline on a loaded machine): the reading held stays, and the pane
//! is read again a second later; only a second failure in a row forgets it and rests the pane.

use super::*;
use slate_core::agents::screens::ScreenKind;
use slate_core::model::PendingCall;
use slate_core::tracker::UNKNOWN_FOR;

use super::pace::Pace;

/// How long the worker keeps what a pane it no longer reads last showed: past the slowest pace,
/// so a pane read less often is not handed back as news at each read.
const REMEMBER_FOR: Duration = Duration::from_secs(30);

/// What the worker hands back to the loop.
#[derive(Debug)]
pub enum Delivery {
    /// Where the terminals of these processes are.
    Located(Vec<(u32, Located)>),
    /// The readings of these panes.
    Read(Vec<Outcome>),
}

enum Request {
    Locate(Vec<u32>),
    /// Panes to read, each with whether the tracker holds no reading of it yet (then its reading
    /// is handed back even when it did not change).
    Read(Vec<(Job, bool)>),
}

/// The worker's side of the reads: it hands back only what changed, so a pane that shows the same
/// title and screen as a second ago costs the loop nothing. A screen its agent's grammar does not
/// know is handed back again every [`UNKNOWN_FOR`] while it stays, so that the tracker sees it
/// stay and counts it (`tracker::signals`).
#[derive(Default)]
struct Reader {
    /// What each session's pane showed at its last reading handed back, and when that was read.
    last: HashMap<SessionKey, (Seen, Timestamp)>,
}

/// What a reading showed: the title, the screen's reading and its dialog.
type Seen = (Option<String>, ScreenSeen, Option<Dialog>);

impl Reader {
    fn read(
        &mut self,
        jobs: Vec<(Job, bool)>,
        clock: fn() -> Timestamp,
        in_flight: &Mutex<HashSet<SessionKey>>,
    ) -> Vec<Outcome> {
        let fresh: HashSet<SessionKey> = jobs
            .iter()
            .filter(|(_, fresh)| *fresh)
            .map(|(job, _)| job.key.clone())
            .collect();
        let keys: HashSet<SessionKey> = jobs.iter().map(|(job, _)| job.key.clone()).collect();
        let outcomes = read(jobs.into_iter().map(|(job, _)| job).collect(), clock);
        if let Ok(mut in_flight) = in_flight.lock() {
            in_flight.retain(|key| !keys.contains(key));
        }
        let now = clock();
        self.last
            .retain(|key, (_, at)| keys.contains(key) || at.elapsed_until(now) < REMEMBER_FOR);
        outcomes
            .into_iter()
            .filter(|outcome| match outcome {
                Outcome::Read { key, sensed, .. } => {
                    let seen = (
                        sensed.title.clone(),
                        sensed.screen.clone(),
                        sensed.dialog.clone(),
                    );
                    let news = match self.last.get(key) {
                        _ if fresh.contains(key) => true,
                        Some((last, at)) if *last == seen => {
                            sensed.unread.is_some() && at.elapsed_until(sensed.at) >= UNKNOWN_FOR
                        }
                        _ => true,
                    };
                    if news {
                        self.last.insert(key.clone(), (seen, sensed.at));
                    }
                    news
                }
                Outcome::Failed { key, .. } => {
                    self.last.remove(key);
                    true
                }
            })
            .collect()
    }
}

/// The live loop's side of sensing: the worker thread, what is located where, the reads in
/// flight and their pacing. Every method takes the time it is called at, so it holds no clock of
/// its own besides the worker's stamp on each reading.
pub struct Sensing {
    requests: mpsc::Sender<Request>,
    /// The terminal backends processes are located in.
    backends: Backends,
    /// Each live agent process's terminal, with its start time (a pid reused by another process
    /// is located again).
    located: HashMap<u32, (Timestamp, Located)>,
    /// Pids sent to be located, not answered yet, with their start times.
    locating: HashMap<u32, Timestamp>,
    /// Pids whose pane could not be proved because a terminal did not answer, and when they are
    /// located again.
    relocate: HashMap<u32, Instant>,
    /// Sessions whose read is in flight; the worker takes them off when it has read them.
    in_flight: Arc<Mutex<HashSet<SessionKey>>>,
    /// Sessions the tracker holds a reading for.
    held: HashSet<SessionKey>,
    /// Sessions held whose last read failed, once: a second failure in a row counts.
    stumbled: HashSet<SessionKey>,
    /// Panes that could not be read, and when they may be asked again.
    resting: HashMap<Address, Instant>,
    /// When reads were last sent.
    last_sent: Option<Instant>,
    /// The hosted sessions whose screens are read through `slate run`'s control socket, with its
    /// address: it comes before wherever their processes' terminals are located.
    hosted: HashMap<SessionKey, Address>,
    /// The open call of each session to read (`Tracker::open_calls`).
    calls: HashMap<SessionKey, PendingCall>,
    /// The agent of each live agent process, to count the sessions that share an application.
    agents: HashMap<u32, AgentKind>,
    /// How often each session's pane is read.
    pace: Pace,
}

impl Sensing {
    /// Starts the worker, which locates processes in `backends`; `deliver` is called on its
    /// thread with each result (the live loop sends it to itself as an event).
    pub fn start(
        backends: Backends,
        clock: fn() -> Timestamp,
        deliver: impl Fn(Delivery) + Send + 'static,
    ) -> Sensing {
        let (requests, inbox) = mpsc::channel::<Request>();
        let in_flight = Arc::new(Mutex::new(HashSet::new()));
        let reading = Arc::clone(&in_flight);
        let spawned = std::thread::Builder::new()
            .name("slate-terminals".to_string())
            .spawn(move || {
                let mut reader = Reader::default();
                for request in inbox {
                    match request {
                        Request::Locate(pids) => deliver(Delivery::Located(backends.locate(&pids))),
                        Request::Read(jobs) => {
                            let outcomes = reader.read(jobs, clock, &reading);
                            if !outcomes.is_empty() {
                                deliver(Delivery::Read(outcomes));
                            }
                        }
                    }
                }
            });
        if let Err(error) = spawned {
            tracing::warn!("cannot start the terminal reader, so no terminal is read: {error}");
        }
        Sensing::over(backends, requests, in_flight)
    }

    /// The loop's side over a worker that takes `requests` and takes sessions off `in_flight`
    /// when it has read them.
    fn over(
        backends: Backends,
        requests: mpsc::Sender<Request>,
        in_flight: Arc<Mutex<HashSet<SessionKey>>>,
    ) -> Sensing {
        Sensing {
            requests,
            backends,
            located: HashMap::new(),
            locating: HashMap::new(),
            relocate: HashMap::new(),
            in_flight,
            held: HashSet::new(),
            stumbled: HashSet::new(),
            resting: HashMap::new(),
            last_sent: None,
            hosted: HashMap::new(),
            calls: HashMap::new(),
            agents: HashMap::new(),
            pace: Pace::default(),
        }
    }

    /// The open calls of the sessions to read (`Tracker::open_calls`), given with
    /// [`Sensing::set_hosted`].
    pub fn set_calls(&mut self, calls: HashMap<SessionKey, PendingCall>) {
        self.calls = calls;
    }

    /// The newest turn record of each session to read (`Tracker::terminals_marked`), at `now`,
    /// given before each [`Sensing::read_due`] and [`Sensing::next_read`]: it sets their pace.
    pub fn set_marks(&mut self, marks: &HashMap<SessionKey, Option<Timestamp>>, now: Instant) {
        self.pace.marks(marks, now);
    }

    /// What tells the tab of session `key` at `address` among its application's, beside the
    /// other sessions `wanted` read.
    fn clues(&self, key: &SessionKey, address: &Address, wanted: &[(SessionKey, u32)]) -> Clues {
        let located = self
            .located
            .iter()
            .map(|(pid, (_, located))| (pid, located));
        let placed = wanted
            .iter()
            .filter_map(|(other, pid)| Some((other, self.address(other, *pid)?)));
        Clues {
            call: self.calls.get(key).cloned(),
            peers: peers(located, &self.agents, key.agent, address),
            others: rivals(key, address, placed, &self.calls),
        }
    }

    /// The control sockets of the hosted sessions to read (`Tracker::hosted_controls`), given
    /// before each [`Sensing::read_due`] and [`Sensing::next_read`].
    pub fn set_hosted(&mut self, controls: HashMap<SessionKey, String>) {
        self.hosted = controls
            .into_iter()
            .map(|(key, socket)| (key, hosted::address(socket)))
            .collect();
    }

    /// Where the terminal of session `key`, vouched for by `pid`, is read.
    fn address(&self, key: &SessionKey, pid: u32) -> Option<&Address> {
        self.hosted
            .get(key)
            .or_else(|| self.located.get(&pid)?.1.address.as_ref())
    }

    /// A process scan saw `processes` at `now`: new agent processes are sent to be located, and
    /// so are those whose pane a terminal that did not answer kept from being proved, once their
    /// pause is over; those gone are forgotten. Returns the tracker's input when the terminals it
    /// knows changed.
    pub fn scanned(&mut self, processes: &[SeenProcess], now: Instant) -> Vec<Input> {
        let live: HashMap<u32, Timestamp> = processes
            .iter()
            .filter(|process| has_terminal(process))
            .map(|process| (process.info.pid, process.info.start_time))
            .collect();
        self.agents = processes
            .iter()
            .filter(|process| has_terminal(process))
            .map(|process| (process.info.pid, process.recognised.agent))
            .collect();
        let before = self.located.len();
        self.located
            .retain(|pid, (started, _)| live.get(pid) == Some(started));
        self.locating
            .retain(|pid, started| live.get(pid) == Some(started));
        self.relocate.retain(|pid, _| live.contains_key(pid));
        let due: HashSet<u32> = self
            .relocate
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(pid, _)| *pid)
            .collect();
        self.relocate.retain(|pid, _| !due.contains(pid));
        let new: Vec<(u32, Timestamp)> = live
            .iter()
            .filter(|(pid, _)| {
                (!self.located.contains_key(pid) || due.contains(pid))
                    && !self.locating.contains_key(pid)
            })
            .map(|(pid, started)| (*pid, *started))
            .collect();
        if !new.is_empty() {
            self.locating.extend(new.iter().copied());
            let pids = new.into_iter().map(|(pid, _)| pid).collect();
            let _ = self.requests.send(Request::Locate(pids));
        }
        if self.located.len() == before {
            return Vec::new();
        }
        vec![self.views()]
    }

    /// The terminals as the tracker should know them.
    fn views(&self) -> Input {
        Input::Terminals(
            self.located
                .iter()
                .map(|(pid, (_, located))| (*pid, located.view.clone()))
                .collect(),
        )
    }

    /// Sends the reads that are due at `now` for the sessions the tracker wants read, and
    /// returns the inputs that forget the readings of sessions no longer read.
    pub fn read_due(&mut self, wanted: &[(SessionKey, u32)], now: Instant) -> Vec<Input> {
        let wanted_keys: HashSet<&SessionKey> = wanted.iter().map(|(key, _)| key).collect();
        let dropped: Vec<SessionKey> = self
            .held
            .iter()
            .filter(|key| !wanted_keys.contains(key))
            .cloned()
            .collect();
        let mut inputs = Vec::new();
        for key in dropped {
            self.held.remove(&key);
            self.stumbled.remove(&key);
            inputs.push(Input::Sensed { key, reading: None });
        }
        if self.last_sent.is_some_and(|sent| now < sent + READ_EVERY) {
            return inputs;
        }
        self.resting.retain(|_, until| now < *until);
        let Ok(mut in_flight) = self.in_flight.lock() else {
            return inputs;
        };
        let jobs: Vec<(Job, bool)> = wanted
            .iter()
            .filter(|(key, _)| !in_flight.contains(key))
            // Paced, but a pane with no reading yet, or one whose last read stumbled, is read
            // at once (at most once a second), as before.
            .filter(|(key, _)| {
                !self.held.contains(key)
                    || self.stumbled.contains(key)
                    || self.pace.due(key, now) <= now
            })
            .filter_map(|(key, pid)| {
                let address = self.address(key, *pid)?.clone();
                let job = Job {
                    key: key.clone(),
                    clues: self.clues(key, &address, wanted),
                    address,
                };
                let fresh = !self.held.contains(key);
                (!self.resting.contains_key(&job.address)).then_some((job, fresh))
            })
            .collect();
        if !jobs.is_empty() {
            in_flight.extend(jobs.iter().map(|(job, _)| job.key.clone()));
            for (job, _) in &jobs {
                self.pace.sent(&job.key, now);
            }
            self.last_sent = Some(now);
            let _ = self.requests.send(Request::Read(jobs));
        }
        drop(in_flight);
        inputs
    }

    /// When the next reads are due: while some session is wanted read, a second after the last
    /// reads were sent; at once when a reading is held for a session no longer wanted, so it is
    /// forgotten; never otherwise. A session whose read is still in flight is not due before a
    /// second from `now`: a read that runs over its second never makes the loop wake at once
    /// over and over (`read_due` would send nothing for it), and the loop looks again at most
    /// once a second until it returns.
    pub fn next_read(&self, wanted: &[(SessionKey, u32)], now: Instant) -> Option<Instant> {
        let stale = self
            .held
            .iter()
            .any(|key| !wanted.iter().any(|(wanted, _)| wanted == key));
        if stale {
            return Some(now);
        }
        let in_flight = self.in_flight.lock().ok()?;
        // Only panes Slate can read count; a pane resting after a failure counts from when its
        // rest ends.
        let ready = wanted
            .iter()
            .filter_map(|(key, pid)| Some((key, self.address(key, *pid)?)))
            .map(|(key, address)| {
                if in_flight.contains(key) {
                    now + READ_EVERY
                } else if !self.held.contains(key) || self.stumbled.contains(key) {
                    self.resting.get(address).copied().unwrap_or(now)
                } else {
                    let paced = self.pace.due(key, now);
                    self.resting
                        .get(address)
                        .map_or(paced, |rest| paced.max(*rest))
                }
            })
            .min()?;
        let paced = self.last_sent.map_or(now, |sent| sent + READ_EVERY);
        Some(ready.max(paced).max(now))
    }

    /// What the worker handed back, as the tracker's inputs and the problems to count.
    pub fn delivered(&mut self, delivery: Delivery, now: Instant) -> (Vec<Input>, Vec<Problem>) {
        let mut inputs = Vec::new();
        let mut problems = Vec::new();
        match delivery {
            Delivery::Located(located) => {
                for (pid, found) in located {
                    // A process that exited while it was located is not kept.
                    let Some(started) = self.locating.remove(&pid) else {
                        continue;
                    };
                    if let Some(problem) = unreadable_at_once(self.backends, pid, &found.view) {
                        problems.push(problem);
                    }
                    if found.retry {
                        self.relocate.insert(pid, now + RETRY_AFTER);
                    }
                    self.located.insert(pid, (started, found));
                }
                inputs.push(self.views());
            }
            Delivery::Read(outcomes) => {
                let mut views_changed = false;
                for outcome in outcomes {
                    match outcome {
                        Outcome::Read {
                            key,
                            address,
                            sensed,
                        } => {
                            self.stumbled.remove(&key);
                            // A pane read again after a failure is seen again.
                            for (_, located) in self.located.values_mut() {
                                if located.address.as_ref() == Some(&address)
                                    && !located.view.sensed
                                {
                                    located.view = address.view();
                                    views_changed = true;
                                }
                            }
                            self.held.insert(key.clone());
                            self.pace
                                .shown(&key, sensed.screen.kind == ScreenKind::Working);
                            inputs.push(Input::Sensed {
                                key,
                                reading: Some(sensed),
                            });
                        }
                        Outcome::Failed { key, address, why } => {
                            // A pane read well the time before keeps its reading and its view,
                            // and is read again at the next second: one slow read on a loaded
                            // machine must not blind Slate to it for a pause, nor forget a dialog
                            // it shows (which would end a Needs you, and start it again a pause
                            // later).
                            if self.held.contains(&key) && self.stumbled.insert(key.clone()) {
                                tracing::debug!(
                                    session = %key,
                                    "cannot read its terminal, read again in a second: {why}"
                                );
                                continue;
                            }
                            self.stumbled.remove(&key);
                            tracing::debug!(session = %key, "cannot read its terminal: {why}");
                            if !self.resting.contains_key(&address) {
                                problems.push(unreadable(&address, &why));
                            }
                            self.resting.insert(address.clone(), now + RETRY_AFTER);
                            for (_, located) in self.located.values_mut() {
                                if located.address.as_ref() == Some(&address) {
                                    views_changed |= located.view.sensed;
                                    located.view = unread_view(&address, &why);
                                }
                            }
                            self.held.remove(&key);
                            inputs.push(Input::Sensed { key, reading: None });
                        }
                    }
                }
                if views_changed {
                    inputs.push(self.views());
                }
            }
        }
        (inputs, problems)
    }
}

#[cfg(test)]
mod paced;

#[cfg(test)]
mod tests {
    use super::*;
    use slate_core::model::TerminalKind;

    /// A `Sensing` whose worker never answers: every read sent stays in flight.
    fn stuck() -> (Sensing, mpsc::Receiver<Request>) {
        let (requests, inbox) = mpsc::channel();
        let sensing = Sensing::over(BUILT_IN, requests, Arc::new(Mutex::new(HashSet::new())));
        (sensing, inbox)
    }

    // See: issue 20, item 5 (a tmux server stopped with SIGSTOP made the loop wake 12,454 times
    // in 10 s).
    #[test]
    fn a_read_in_flight_past_its_second_is_not_due_at_once() {
        let (mut sensing, inbox) = stuck();
        let key = SessionKey::new(AgentKind::CODEX, "stuck-1");
        let socket = "/run/user/1000/slate/4242.sock".to_string();
        sensing.set_hosted(HashMap::from([(key.clone(), socket)]));
        let wanted = [(key, 4242)];
        let start = Instant::now();
        assert!(sensing.read_due(&wanted, start).is_empty());
        assert!(matches!(inbox.try_recv(), Ok(Request::Read(jobs)) if jobs.len() == 1));
        assert_eq!(sensing.next_read(&wanted, start), Some(start + READ_EVERY));
        // The read never comes back: each time the loop is woken, the next read is a second
        // away, never now, and nothing more is sent.
        for step in 1..20 {
            let now = start + READ_EVERY + Duration::from_millis(100 * step);
            sensing.read_due(&wanted, now);
            let next = sensing.next_read(&wanted, now).expect("still wanted");
            assert!(next >= now + READ_EVERY, "due {:?} after now", next - now);
        }
        assert!(inbox.try_recv().is_err(), "a read was sent again");
    }

    fn codex(pid: u32) -> SeenProcess {
        SeenProcess {
            info: slate_core::model::ProcessInfo {
                pid,
                ppid: None,
                name: "codex".to_string(),
                exe: None,
                cmd: vec!["codex".to_string()],
                cwd: None,
                start_time: Timestamp::from_millis(1_000),
                start_ticks: None,
            },
            recognised: slate_core::agents::AgentProcess {
                agent: AgentKind::CODEX,
                role: ProcessRole::Interactive,
                folder_arg: None,
                session_arg: None,
            },
            folder: None,
            newest_child: None,
        }
    }

    fn located(retry: bool) -> Located {
        Located {
            view: TerminalView::unread(TerminalKind::Tmux, None, "no answer"),
            address: None,
            proof: None,
            retry,
        }
    }

    // Two processes of one CLI on one terminal (Gemini CLI relaunches itself in a child) are
    // one session in that application's tabs; another tab, another agent or another application
    // are not.
    #[test]
    fn the_sessions_that_share_an_application_are_counted_by_their_tabs() {
        let tab = |server: &str, pane: &str| Located {
            view: TerminalView::unread(TerminalKind::Accessibility, None, "-"),
            address: Some(Address::new(&accessibility::ACCESSIBILITY, server, pane)),
            proof: None,
            retry: false,
        };
        let app = "gnome-terminal-server:700@unix:path=/run/user/1000/bus";
        let located = HashMap::from([
            (10, tab(app, "/dev/pts/3")),
            (11, tab(app, "/dev/pts/3")),
            (12, tab(app, "/dev/pts/4")),
            (13, tab(app, "/dev/pts/5")),
            (
                14,
                tab(
                    "xfce4-terminal:800@unix:path=/run/user/1000/bus",
                    "/dev/pts/6",
                ),
            ),
        ]);
        let agents = HashMap::from([
            (10, AgentKind::GEMINI_CLI),
            (11, AgentKind::GEMINI_CLI),
            (12, AgentKind::GEMINI_CLI),
            (13, AgentKind::CODEX),
            (14, AgentKind::GEMINI_CLI),
        ]);
        let address = Address::new(&accessibility::ACCESSIBILITY, app, "/dev/pts/3");
        assert_eq!(
            peers(located.iter(), &agents, AgentKind::GEMINI_CLI, &address),
            2
        );
        assert_eq!(
            peers(located.iter(), &agents, AgentKind::CODEX, &address),
            1
        );
        assert_eq!(
            peers(located.iter(), &agents, AgentKind::CLAUDE_CODE, &address),
            0
        );
    }

    // A dialog about a session's call is its own only if it is about none of the others' calls:
    // those of the other sessions of its agent in other tabs of the same application (issue 35:
    // two Codex sessions holding `touch x.txt` open both read the one dialog as theirs).
    #[test]
    fn the_calls_that_rival_a_sessions_are_those_of_its_agent_in_the_other_tabs() {
        let app = "xfce4-terminal:700@unix:path=/run/user/1000/bus";
        let at =
            |server: &str, pane: &str| Address::new(&accessibility::ACCESSIBILITY, server, pane);
        let call = |command: &str| PendingCall {
            id: "call_1".into(),
            name: "exec_command".into(),
            input: Some(command.into()),
            cut: false,
        };
        let codex = |id: &str| SessionKey::new(AgentKind::CODEX, id);
        let placed = [
            (codex("mine"), at(app, "/dev/pts/3")),
            (codex("same-tab"), at(app, "/dev/pts/3")),
            (codex("next-tab"), at(app, "/dev/pts/4")),
            (codex("idle-tab"), at(app, "/dev/pts/5")),
            (
                SessionKey::new(AgentKind::GEMINI_CLI, "gemini"),
                at(app, "/dev/pts/6"),
            ),
            (
                codex("elsewhere"),
                at(
                    "xfce4-terminal:800@unix:path=/run/user/1000/bus",
                    "/dev/pts/7",
                ),
            ),
        ];
        let calls: HashMap<SessionKey, PendingCall> = placed
            .iter()
            .filter(|(key, _)| key.id.as_str() != "idle-tab")
            .map(|(key, _)| (key.clone(), call(&format!("touch {}", key.id.as_str()))))
            .collect();
        let others = placed.iter().map(|(key, address)| (key, address));
        assert_eq!(
            rivals(&codex("mine"), &placed[0].1, others, &calls),
            vec![call("touch next-tab")]
        );
    }

    // CI's run of 2026-12-04: one read of a GNOME Terminal tab failed on the loaded machine (most
    // likely past its deadline), and the session went unread for the 15 s pause that followed.
    #[test]
    fn one_failed_read_keeps_the_reading_and_the_second_in_a_row_counts() {
        let in_flight = Arc::new(Mutex::new(HashSet::new()));
        let (requests, inbox) = mpsc::channel();
        let mut sensing = Sensing::over(BUILT_IN, requests, Arc::clone(&in_flight));
        let start = Instant::now();
        let app = "gnome-terminal-server:700@unix:path=/run/user/1000/bus";
        let address = Address::new(&accessibility::ACCESSIBILITY, app, "/dev/pts/3");
        let key = SessionKey::new(AgentKind::CODEX, "tab-1");
        let wanted = [(key.clone(), 10)];
        sensing.scanned(&[codex(10)], start);
        assert!(matches!(inbox.try_recv(), Ok(Request::Locate(_))));
        let found = Located {
            view: address.view(),
            address: Some(address.clone()),
            proof: None,
            retry: false,
        };
        sensing.delivered(Delivery::Located(vec![(10, found)]), start);
        let read = || Outcome::Read {
            key: key.clone(),
            address: address.clone(),
            sensed: Sensed::read(Timestamp::from_millis(2_000), None, AgentKind::CODEX, ""),
        };
        let failed = || Outcome::Failed {
            key: key.clone(),
            address: address.clone(),
            why: "the accessibility bus did not answer within 500 ms".to_string(),
        };
        let read_again = |sensing: &mut Sensing, at: Instant| {
            in_flight.lock().unwrap().clear();
            sensing.read_due(&wanted, at);
            matches!(inbox.try_recv(), Ok(Request::Read(jobs)) if jobs.len() == 1)
        };
        let forgets = |inputs: &[Input]| {
            inputs
                .iter()
                .any(|input| matches!(input, Input::Sensed { reading: None, .. }))
        };
        let unread = |inputs: &[Input]| {
            inputs.iter().any(|input| {
                matches!(input, Input::Terminals(views)
                    if views.iter().any(|(pid, view)| *pid == 10 && !view.sensed))
            })
        };

        let (inputs, _) = sensing.delivered(Delivery::Read(vec![read()]), start);
        assert!(matches!(
            &inputs[..],
            [Input::Sensed {
                reading: Some(_),
                ..
            }]
        ));
        // One failure: nothing forgotten, nothing counted, and read again a second later.
        let (inputs, problems) = sensing.delivered(Delivery::Read(vec![failed()]), start);
        assert!(
            inputs.is_empty(),
            "one failure changed the tracker: {inputs:?}"
        );
        assert!(problems.is_empty(), "one failure was counted: {problems:?}");
        assert!(
            read_again(&mut sensing, start + READ_EVERY),
            "not read again"
        );
        // The second in a row: forgotten, seen as unread, counted once, and left to rest.
        let second = start + READ_EVERY * 2;
        let (inputs, problems) = sensing.delivered(Delivery::Read(vec![failed()]), second);
        assert!(forgets(&inputs) && unread(&inputs), "{inputs:?}");
        assert_eq!(problems.len(), 1);
        assert!(
            !read_again(&mut sensing, second + READ_EVERY),
            "read during its rest"
        );
        assert!(
            read_again(&mut sensing, second + RETRY_AFTER),
            "not read after its rest"
        );
        // Still failing after the rest: no reading is held, so it counts at once.
        let (inputs, _) = sensing.delivered(Delivery::Read(vec![failed()]), second + RETRY_AFTER);
        assert!(forgets(&inputs), "{inputs:?}");
        // Read well again: seen again, and its next single failure is again a stumble.
        let later = second + RETRY_AFTER * 2;
        assert!(read_again(&mut sensing, later));
        let (inputs, _) = sensing.delivered(Delivery::Read(vec![read()]), later);
        assert!(inputs
            .iter()
            .any(|input| matches!(input, Input::Terminals(views)
            if views.iter().any(|(pid, view)| *pid == 10 && view.sensed))));
        let (inputs, problems) = sensing.delivered(Delivery::Read(vec![failed()]), later);
        assert!(
            inputs.is_empty() && problems.is_empty(),
            "{inputs:?} {problems:?}"
        );
    }

    // A tmux server too slow to answer when a process was located (a loaded machine) must not
    // leave the process unsensed for as long as it lives.
    #[test]
    fn a_process_whose_server_did_not_answer_is_located_again_after_a_pause() {
        let (mut sensing, inbox) = stuck();
        let start = Instant::now();
        let processes = [codex(10), codex(11)];
        sensing.scanned(&processes, start);
        assert!(matches!(inbox.try_recv(), Ok(Request::Locate(pids)) if pids.len() == 2));
        sensing.delivered(
            Delivery::Located(vec![(10, located(true)), (11, located(false))]),
            start,
        );
        // Not before the pause is over, and then only the process that may have a pane.
        sensing.scanned(&processes, start + RETRY_AFTER / 2);
        assert!(inbox.try_recv().is_err(), "located again too soon");
        sensing.scanned(&processes, start + RETRY_AFTER);
        assert!(matches!(inbox.try_recv(), Ok(Request::Locate(pids)) if pids == [10]));
        // Located well this time: no more.
        sensing.delivered(Delivery::Located(vec![(10, located(false))]), start);
        sensing.scanned(&processes, start + RETRY_AFTER * 3);
        assert!(inbox.try_recv().is_err(), "located again without a reason");
    }
}

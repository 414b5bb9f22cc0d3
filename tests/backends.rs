//! A terminal backend defined only here, the way `registry` defines a toy agent: a "board", whose
//! panes are pseudo-terminals this test opens, registered through the same `Backend` trait as
//! tmux, kitty, WezTerm and `slate run`'s hosted terminal, and listed in the engine's options.
//!
//! A stand-in for Codex runs on a board pane's terminal (its controlling terminal, in its
//! foreground) and draws its screen into the pane's screen file; the board reads that file and
//! types by writing the keys' bytes to the pseudo-terminal's master side, so they reach the
//! stand-in's standard input as typed keys do. The product locates the session in the pane by
//! its terminal device, reads its dialog (the session turns Needs you from the screen, once and
//! in the live loop), refuses an answer to a dialog that is no longer on screen and one to an
//! agent that is stopped, and answers through the one answer path, typing the digit once.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use slate::agents::keys::{Action, Key};
use slate::agents::screens::read_screen;
use slate::answers::{self, ErrorCode, Ledger, Record, RespondRequest, Route, Target};
use slate::engine::{Engine, Options};
use slate::focus::strategy::Tools;
use slate::model::SessionDialog;
use slate::model::{
    AgentKind, Can, ReasonCode, Session, SessionKey, TerminalKind, TerminalName, Timestamp,
};
use slate::sources::roots::Env;
use slate::terminals::backend::{PaneTty, Survey};
use slate::terminals::{Address, Backend, Backends, PaneRead, PaneText, Wanted};

use crate::terminals::{codex_rollout_with_id, fixture};
use crate::util::needs;

// ---- The board ----------------------------------------------------------------------------------

/// A terminal that Slate does not build in: a board's panes are pseudo-terminals, each with a
/// screen file its program draws into (`<board>/<pane>.screen`). What it can do is its own to
/// state, as every backend's is.
struct Board {
    can: Can,
}

/// A board Slate reads, types into, proves panes of and answers in; it has no panes of its own
/// to select.
static BOARD: Board = Board {
    can: Can {
        focus: false,
        ..Can::EVERYTHING
    },
};

/// A board whose screens Slate can read but not type into, as a desktop terminal's tabs.
static READ_ONLY_BOARD: Board = Board {
    can: Can {
        read: true,
        ..Can::NOTHING
    },
};

/// The terminals of a machine with only boards on it.
static BOARDS: [&dyn Backend; 1] = [&BOARD];
static READ_ONLY_BOARDS: [&dyn Backend; 1] = [&READ_ONLY_BOARD];

const BOARD_KIND: TerminalKind = TerminalKind::Other(match TerminalName::new("board") {
    Some(name) => name,
    None => panic!("a terminal name"),
});

/// One open board pane: its pseudo-terminal's master side and its terminal device.
struct Pane {
    board: PathBuf,
    pane: String,
    master: File,
    tty: u64,
}

/// Every open board pane, of every test.
static PANES: Mutex<Vec<Pane>> = Mutex::new(Vec::new());

fn screen_file(board: &Path, pane: &str) -> PathBuf {
    board.join(format!("{pane}.screen"))
}

fn screen_of(board: &str, pane: &str) -> Result<String, String> {
    std::fs::read_to_string(screen_file(Path::new(board), pane))
        .map_err(|error| format!("board pane {pane} has no screen: {error}"))
}

impl Backend for Board {
    fn kind(&self) -> TerminalKind {
        BOARD_KIND
    }

    fn can(&self) -> Can {
        self.can
    }

    fn describe(&self, address: &Address) -> String {
        format!("board pane {} of {}", address.pane, address.server)
    }

    fn survey(&self, _named: &[String], _tools: &Tools) -> Survey {
        // An address holds its backend for good: the one of the two boards this is.
        let me: &'static Board = if self.can == BOARD.can {
            &BOARD
        } else {
            &READ_ONLY_BOARD
        };
        let panes = PANES.lock().unwrap();
        Survey {
            panes: panes
                .iter()
                .map(|pane| PaneTty {
                    address: Address::new(me, pane.board.display().to_string(), &pane.pane),
                    tty: pane.tty,
                })
                .collect(),
            unanswered: Vec::new(),
        }
    }

    fn read(&self, board: &str, wanted: &[Wanted], clock: fn() -> Timestamp) -> Vec<PaneRead> {
        wanted
            .iter()
            .map(|want| {
                let screen = screen_of(board, &want.pane)?;
                Ok((
                    PaneText {
                        title: None,
                        screen,
                    },
                    clock(),
                ))
            })
            .collect()
    }

    fn screen(&self, address: &Address, _colours: bool) -> Result<String, String> {
        screen_of(&address.server, &address.pane)
    }

    fn check(&self, address: &Address, tty: u64) -> Result<(), String> {
        let panes = PANES.lock().unwrap();
        let open = panes.iter().any(|pane| {
            pane.board.display().to_string() == address.server
                && pane.pane == address.pane
                && pane.tty == tty
        });
        open.then_some(())
            .ok_or_else(|| format!("board pane {} no longer has that terminal", address.pane))
    }

    fn send(&self, address: &Address, keys: &[Key]) -> Result<(), String> {
        let bytes: String = keys.iter().map(Key::bytes).collect();
        let mut panes = PANES.lock().unwrap();
        let pane = panes
            .iter_mut()
            .find(|pane| {
                pane.board.display().to_string() == address.server && pane.pane == address.pane
            })
            .ok_or_else(|| format!("board pane {} is closed", address.pane))?;
        pane.master
            .write_all(bytes.as_bytes())
            .map_err(|error| error.to_string())
    }
}

/// Opens pane `pane` of `board` and starts `script` on its terminal as its controlling terminal
/// (`setsid -c`), named `codex`, in `folder`, with a clean environment.
fn open_pane(board: &Path, pane: &str, folder: &Path, script: &Path) -> Child {
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let master = File::from(pty.master);
    let slave = File::from(pty.slave);
    let tty = slave.metadata().unwrap().rdev();
    let child = Command::new("setsid")
        .args(["-c", "bash", "-c"])
        .arg(format!(
            "cd '{}' && exec -a codex bash '{}'",
            folder.display(),
            script.display()
        ))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("SCREEN", screen_file(board, pane))
        .env("KEYS", board.join(format!("{pane}.keys")))
        .env(
            "DIALOG",
            fixture("screens/codex/0.171.0/permission-touch.txt"),
        )
        .env(
            "WORKING",
            fixture("screens/codex/0.171.0/working-sleep.txt"),
        )
        .stdin(slave)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("setsid starts");
    PANES.lock().unwrap().push(Pane {
        board: board.to_path_buf(),
        pane: pane.to_string(),
        master,
        tty,
    });
    child
}

/// The stand-in for Codex: it draws the dialog, takes one key from its terminal, notes it, draws
/// its working screen and notes every later key.
const STAND_IN: &str = r#"draw() { cp "$1" "$SCREEN.new" && mv "$SCREEN.new" "$SCREEN"; }
draw "$DIALOG"
IFS= read -r -n 1 key
printf '%s' "$key" >> "$KEYS"
draw "$WORKING"
while IFS= read -r -n 1 more; do printf '%s' "$more" >> "$KEYS"; done
"#;

/// The stand-in and its pane, closed when dropped.
struct Open {
    board: PathBuf,
    child: Child,
}

impl Drop for Open {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        PANES
            .lock()
            .unwrap()
            .retain(|pane| pane.board != self.board);
    }
}

fn signal(name: &str, pid: u32) {
    Command::new("kill")
        .args([name, &pid.to_string()])
        .status()
        .expect("kill runs");
}

/// Keeps every attempt of an answer, as a store would.
#[derive(Default)]
struct Kept(Mutex<Vec<(SessionKey, Record)>>);

impl Ledger for Kept {
    fn now(&self) -> Timestamp {
        slate::live::system_clock()
    }

    fn keep(&self, key: &SessionKey, record: &Record) {
        self.0.lock().unwrap().push((key.clone(), record.clone()));
    }
}

fn ours(sessions: impl IntoIterator<Item = Session>, folder: &Path) -> Option<Session> {
    sessions
        .into_iter()
        .find(|session| session.folder.as_deref() == Some(&*folder.to_string_lossy()))
}

fn wait_for(what: &str, mut until: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !until() {
        assert!(Instant::now() < deadline, "waited 20 s for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---- The board through the product --------------------------------------------------------------

/// A stand-in for Codex at its dialog in board pane "1", with its rollout, in a temporary HOME.
struct Scene {
    temp: tempfile::TempDir,
    home: PathBuf,
    folder: PathBuf,
    screen: PathBuf,
    keys: PathBuf,
    open: Open,
}

fn scene() -> Scene {
    needs(&["setsid", "bash"]);
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().join("home");
    let board = temp.path().join("board");
    let folder = temp.path().join("board-project");
    std::fs::create_dir_all(&board).unwrap();
    std::fs::create_dir_all(&folder).unwrap();
    let folder = std::fs::canonicalize(&folder).unwrap();
    let script = temp.path().join("stand-in.sh");
    std::fs::write(&script, STAND_IN).unwrap();
    let open = Open {
        child: open_pane(&board, "1", &folder, &script),
        board: board.clone(),
    };
    let screen = screen_file(&board, "1");
    let keys = board.join("1.keys");
    wait_for("the stand-in to draw its dialog", || screen.exists());
    std::thread::sleep(Duration::from_millis(300));
    // The rollout is written after the stand-in started, so its process vouches for it.
    codex_rollout_with_id(
        &home,
        &folder,
        slate::live::system_clock(),
        "01a228e1-7d37-7ed1-9043-e56f4039d0b0",
    );
    Scene {
        temp,
        home,
        folder,
        screen,
        keys,
        open,
    }
}

/// An approval of `session`'s `dialog`, through the one answer path, over `backends`.
fn approve_in(
    backends: Backends,
    scene: &Scene,
    session: &Session,
    dialog: &SessionDialog,
    kept: &Kept,
) -> Result<answers::Responded, answers::RespondError> {
    let request = RespondRequest {
        action: Action::Approve,
        option: None,
        text: None,
        dialog: dialog.fingerprint.clone(),
        surface: None,
    };
    let route = Route::Here {
        locks: Some(scene.temp.path().join("state/answers")),
    };
    answers::answer_in(backends, route, &Target::of(session), &request, kept)
}

#[test]
fn a_session_on_a_test_backend_is_located_read_and_answered_once() {
    let scene = scene();
    let Scene {
        home,
        folder,
        screen,
        keys,
        open,
        ..
    } = &scene;
    let mut options = Options::from_env(Env::with_home(home));
    options.terminals = Backends::new(&BOARDS);

    // Located by its terminal device and read once: Needs you, from the board's screen.
    let mut engine = Engine::new(options.clone());
    let now = slate::live::system_clock();
    engine.refresh(now);
    slate::engine::sense_once(&mut engine, now, slate::live::system_clock);
    let session = ours(engine.sessions(), folder).expect("the stand-in's session");
    assert_eq!(session.pid, Some(open.child.id()));
    let terminal = session.terminal.clone().expect("its terminal is said");
    assert_eq!(
        (terminal.kind, terminal.pane.as_deref(), terminal.sensed),
        (BOARD_KIND, Some("1"), true)
    );
    // What it can do is on the wire, as the backend stated it.
    assert_eq!(
        serde_json::to_value(&terminal).unwrap(),
        serde_json::json!({"kind": "board", "pane": "1", "sensed": true, "can": {
            "read": true, "type": true, "focus": false, "prove": true, "answer": true
        }})
    );
    assert_eq!(
        session.session_state.reason.code,
        ReasonCode::PermissionPrompt
    );
    let dialog = session.dialog.clone().expect("the dialog is read");
    assert_eq!(dialog.summary, "Run: touch x.txt");
    assert!(dialog.answerable, "{dialog:?}");

    // The live loop reads the same pane through the same list.
    let (handle, thread) = slate::live::start(slate::live::Service {
        options: options.clone(),
        timing: slate::live::Timing::default(),
        store: None,
        clock: slate::live::system_clock,
        settings: Default::default(),
        remotes: None,
    });
    wait_for("the live loop to read the dialog", || {
        ours(handle.live_sessions(), folder).is_some_and(|live| {
            live.terminal.as_ref().is_some_and(|t| t.kind == BOARD_KIND)
                && live.session_state.reason.code == ReasonCode::PermissionPrompt
        })
    });
    handle.shutdown();
    thread.join().unwrap();

    let target = Target::of(&session);
    let kept = Kept::default();
    let answer = || approve_in(Backends::new(&BOARDS), &scene, &session, &dialog, &kept);

    // Another dialog on screen: refused, and nothing is typed.
    let touch = std::fs::read_to_string(screen).unwrap();
    let curl =
        std::fs::read_to_string(fixture("screens/codex/0.171.0/permission-curl.txt")).unwrap();
    assert_ne!(
        read_screen(AgentKind::CODEX, &curl)
            .dialog()
            .map(|d| &d.summary),
        Some(&dialog.summary)
    );
    std::fs::write(screen, &curl).unwrap();
    let error = answer().expect_err("the dialog changed");
    assert_eq!(error.code, ErrorCode::DialogChanged, "{error:?}");
    std::fs::write(screen, &touch).unwrap();

    // The agent stopped (Ctrl-Z): its terminal's keys would not reach it.
    let pid = open.child.id();
    signal("-STOP", pid);
    wait_for("the stand-in to stop", || {
        slate::terminals::proof::Stat::of(pid).is_some_and(|stat| stat.state == 'T')
    });
    let stopped = answer();
    signal("-CONT", pid);
    let error = stopped.expect_err("a stopped agent");
    assert_eq!(error.code, ErrorCode::CannotType, "{error:?}");
    assert!(error.message.contains("nothing was typed"), "{error:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!keys.exists(), "a refused answer typed something");

    // Answered: the digit once, and the stand-in draws its working screen.
    let answered = answer().expect("the answer is delivered");
    assert_eq!(answered.outcome, "answered");
    assert_eq!(answered.option, Some(1));
    assert_eq!(std::fs::read_to_string(keys).unwrap(), "1");
    let records = kept.0.lock().unwrap();
    assert_eq!(records.len(), 3, "each attempt is recorded once");
    assert!(records.iter().all(|(key, _)| *key == target.key));
}

// What a terminal can do decides, not its name: the same board, stating that it can read but not
// type, shows the dialog and never answers it.
#[test]
fn a_test_backend_that_can_only_read_shows_the_dialog_and_never_answers_it() {
    let scene = scene();
    let mut options = Options::from_env(Env::with_home(&scene.home));
    options.terminals = Backends::new(&READ_ONLY_BOARDS);
    let mut engine = Engine::new(options);
    let now = slate::live::system_clock();
    engine.refresh(now);
    slate::engine::sense_once(&mut engine, now, slate::live::system_clock);
    let session = ours(engine.sessions(), &scene.folder).expect("the stand-in's session");
    let terminal = session.terminal.clone().expect("its terminal is said");
    assert_eq!((terminal.kind, terminal.sensed), (BOARD_KIND, true));
    assert_eq!(
        serde_json::to_value(&terminal).unwrap()["can"],
        serde_json::json!({"read": true, "type": false, "focus": false, "prove": false,
            "answer": false})
    );
    // Needs you, from its screen, with the dialog shown and offered no answer.
    assert_eq!(
        session.session_state.reason.code,
        ReasonCode::PermissionPrompt
    );
    let dialog = session.dialog.clone().expect("the dialog is read");
    assert_eq!(dialog.summary, "Run: touch x.txt");
    assert!(!dialog.answerable, "{dialog:?}");
    assert_eq!(dialog.why_not.as_deref(), Some(slate::model::READ_ONLY));
    assert_eq!(slate::policy::notifications::Offer::of(&session), None);
    // An answer asked for all the same is refused in the same words, recorded, and types nothing.
    let kept = Kept::default();
    let backends = Backends::new(&READ_ONLY_BOARDS);
    let error = approve_in(backends, &scene, &session, &dialog, &kept).expect_err("read only");
    assert_eq!(error.code, ErrorCode::CannotType, "{error:?}");
    assert!(error.message.contains("no safe way to type"), "{error:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!scene.keys.exists(), "a read-only terminal was typed into");
    assert_eq!(kept.0.lock().unwrap().len(), 1, "the attempt is recorded");
}

#[test]
fn a_test_backends_kind_goes_on_the_wire_by_its_name() {
    // The built-in kinds keep their spelling.
    for (kind, wire) in [
        (TerminalKind::Hosted, "hosted"),
        (TerminalKind::Tmux, "tmux"),
        (TerminalKind::Kitty, "kitty"),
        (TerminalKind::Wezterm, "wezterm"),
        (TerminalKind::Accessibility, "accessibility"),
        (TerminalKind::Plain, "plain"),
        (TerminalKind::Unknown, "unknown"),
        (BOARD_KIND, "board"),
    ] {
        assert_eq!(serde_json::to_value(kind).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<TerminalKind>(wire.into()).unwrap(),
            kind
        );
    }
    // A kind only a newer Slate knows is kept by its name; a name that is none is refused.
    let newer: TerminalKind = serde_json::from_value("ghostty".into()).unwrap();
    assert_eq!(newer.as_str(), "ghostty");
    for bad in ["", "Tmux", "two words", "a-name-far-too-long"] {
        assert!(
            serde_json::from_value::<TerminalKind>(bad.into()).is_err(),
            "{bad:?}"
        );
    }
    // The built-in backends are found by their kinds; the board only in its own list.
    assert!(slate::terminals::BUILT_IN.of(BOARD_KIND).is_none());
    assert!(Backends::new(&BOARDS).of(BOARD_KIND).is_some());
    assert!(slate::terminals::BUILT_IN.of(TerminalKind::Tmux).is_some());
}

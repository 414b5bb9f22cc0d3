//! Answering dialogs: the keys against the screens recorded from the real CLIs, then a stand-in
//! agent in a real tmux pane (defined here, shared by the groups that drive it) answered through
//! the terminals, the API and the command line, forwarded to another machine, and never answered
//! where its screen is not the call the transcript records.

mod calls; // a screen answered only where it is the call the transcript records
mod drift; // a dialog drawn in a format Slate does not know: counted, sampled, never answered
mod forwarded; // answers to a session on another machine
mod panes; // which pane is the agent's, and keys only to its foreground
mod recorded; // the keys against every dialog recorded from the real CLIs
mod stand_in; // answers typed into the stand-in, once, and confirmed by its next screen
mod surfaces; // the API and the command line answering the stand-in

use std::path::{Path, PathBuf};

use slate::agents::keys::{self, Action, OptionRef};
use slate::agents::screens::{read_screen, Dialog};
use slate::model::AgentKind;

use std::time::{Duration, Instant};

use slate::answers::{self, Attempt, RespondRequest, Surface, Target};
use slate::model::{PendingCall, SessionKey, Timestamp};

use crate::terminals::{codex_rollout_with_id, fixture};
use crate::util::Tmux;

use axum::body::Body;
use axum::http::Request;

/// The dialog recorded at 120x40 in `folder`, read as sensing reads it (with colours where the
/// agent marks its highlight by colour only).
fn dialog(agent: AgentKind, folder: &Path, stem: &str) -> Dialog {
    let by_colour = slate::agents::screens::grammar(agent).is_some_and(|g| g.markers.is_empty());
    let file = if by_colour {
        folder.join("ansi").join(format!("{stem}.ansi"))
    } else {
        folder.join(format!("{stem}.txt"))
    };
    let text = std::fs::read_to_string(&file).unwrap();
    read_screen(agent, &text)
        .dialog()
        .cloned()
        .unwrap_or_else(|| panic!("{} reads as no dialog", file.display()))
}

/// The text a recorded free answer typed (`lit:TEXT` in its keys).
fn typed(fewest: &[String]) -> Option<String> {
    fewest
        .iter()
        .find_map(|key| key.strip_prefix("lit:").map(str::to_string))
}

/// The stand-in (Python, which the CI machine has): a program named `codex` (so the process scan
/// takes it for Codex) that draws the screen file named in its control file whenever that
/// changes, writes every key it gets to its key log, and, when it reacts, answers `1` (allow) by
/// drawing Codex at work and Escape (deny) or another digit by drawing its composer. One that
/// ignores keys only logs them; one that echoes draws the keys it got on a blank screen, as a
/// program that is not the agent would; one that flips draws its dialog and another (its
/// "working" screen) in turn, 40 ms each.
const STAND_IN: &str = r#"
import os, select, sys, termios, time, tty
control, log, mode, working, idle = sys.argv[1:6]
tty.setraw(0)
shown = None
flip, flip_at = False, 0.0
while True:
    with open(control) as f:
        want = f.read()
    if mode == "flip":
        if time.time() >= flip_at:
            flip, flip_at = not flip, time.time() + 0.04
        if flip:
            want = working
    if want and want != shown:
        with open(want) as f:
            text = f.read()
        os.write(1, b"\x1b[H\x1b[2J" + text.replace("\n", "\r\n").encode())
        shown = want
    ready, _, _ = select.select([0], [], [], 0.05)
    if not ready:
        continue
    keys = os.read(0, 64)
    with open(log, "ab") as f:
        f.write(keys)
    if mode == "echo":
        os.write(1, b"\x1b[H\x1b[2J" + keys)
        shown = None
        with open(control + ".new", "w") as f:
            f.write("")
        os.replace(control + ".new", control)
    if mode == "react":
        last = keys[-1:]
        after = working if last == b"1" else idle if last in (b"\x1b", b"2", b"3") else None
        if after:
            with open(control + ".new", "w") as f:
                f.write(after)
            os.replace(control + ".new", control)
"#;

const SESSION_ID: &str = "01a228e1-7d37-7ed1-9043-e56f4039d0f1";

struct StandIn {
    temp: tempfile::TempDir,
    tmux: Tmux,
    home: PathBuf,
    control: PathBuf,
    log: PathBuf,
    pid: u32,
}

impl StandIn {
    fn start(mode: &str) -> StandIn {
        StandIn::start_with(mode, Launch::Direct, "working-sleep.txt")
    }

    /// A stand-in that reacts or not (`mode`), started in its pane as `launch` says, whose
    /// "working" screen is `working`.
    fn start_with(mode: &str, launch: Launch, working: &str) -> StandIn {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().join("home");
        let folder = temp.path().join("acme-api");
        std::fs::create_dir_all(&folder).unwrap();
        let folder = std::fs::canonicalize(&folder).unwrap();
        let drawer = temp.path().join("stand-in.py");
        std::fs::write(&drawer, STAND_IN).unwrap();
        // The process named `codex` is a shell that waits for the drawer, so the name holds
        // whatever starts Python (a version manager's shim re-executes it).
        let script = temp.path().join("stand-in.sh");
        std::fs::write(
            &script,
            format!("python3 \"{}\" \"$@\"\nexit 0\n", drawer.display()),
        )
        .unwrap();
        let control = temp.path().join("control");
        let log = temp.path().join("keys.log");
        std::fs::write(
            &control,
            screen("permission-touch.txt").display().to_string(),
        )
        .unwrap();
        std::fs::write(&log, "").unwrap();
        // The pane's process execs into the program named `codex`.
        let launcher = temp.path().join("launch.sh");
        std::fs::write(
            &launcher,
            format!(
                "cd \"{}\" && exec -a codex bash \"{}\" \"{}\" \"{}\" {mode} \"{}\" \"{}\"\n",
                folder.display(),
                script.display(),
                control.display(),
                log.display(),
                screen(working).display(),
                screen("idle.txt").display(),
            ),
        )
        .unwrap();
        let line = format!("bash \"{}\"", launcher.display());
        let command = match launch {
            Launch::Direct => line.clone(),
            // No variable says where it runs: not `$TMUX`, not `$TMUX_PANE`.
            Launch::Cleared => format!(
                "env -i PATH='{}' HOME='{}' {line}",
                std::env::var("PATH").unwrap(),
                home.display()
            ),
            Launch::Script => format!("script -qfc '{line}' /dev/null"),
            Launch::Shell => "env PS1='$ ' bash --norc --noprofile -i".to_string(),
        };
        let tmux = Tmux::start_sized(&command, 160, 45);
        if launch == Launch::Shell {
            tmux.wait_for("the shell's prompt", |tmux| tmux.screen().contains('$'));
            tmux.run(&["send-keys", "-t", "%0", "-l", &line]);
            tmux.run(&["send-keys", "-t", "%0", "Enter"]);
        }
        let pane_pid: u32 = tmux
            .run(&["display", "-p", "-t", "%0", "#{pane_pid}"])
            .trim()
            .parse()
            .expect("tmux says the pane's pid");
        let pid = codex_under(pane_pid);
        codex_rollout_with_id(&home, &folder, slate::live::system_clock(), SESSION_ID);
        let stand_in = StandIn {
            temp,
            tmux,
            home,
            control,
            log,
            pid,
        };
        stand_in.wait_showing("permission-touch.txt");
        stand_in
    }

    /// Draws another recorded screen and waits until the pane shows it.
    fn show(&self, file: &str) {
        self.show_path(&screen(file));
    }

    /// Draws the screen in the file at `path` and waits until the pane shows it.
    fn show_path(&self, path: &Path) {
        let new = self.control.with_extension("next");
        std::fs::write(&new, path.display().to_string()).unwrap();
        std::fs::rename(&new, &self.control).unwrap();
        self.wait_showing_path(path);
    }

    fn wait_showing(&self, file: &str) {
        self.wait_showing_path(&screen(file));
    }

    /// Waits until the pane reads as the screen in the file at `path` reads.
    fn wait_showing_path(&self, path: &Path) {
        let file = path.display();
        let want = read_screen(AgentKind::CODEX, &std::fs::read_to_string(path).unwrap());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let now = read_screen(
                AgentKind::CODEX,
                &self.tmux.run(&["capture-pane", "-p", "-t", "%0"]),
            );
            if now == want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the pane never showed {file}: {now:?}\n{}",
                self.tmux.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every key the stand-in got since the last call, and forgets them.
    fn keys(&self) -> String {
        let keys = std::fs::read_to_string(&self.log).unwrap();
        std::fs::write(&self.log, "").unwrap();
        keys
    }

    /// Answers through `answers::respond` at `now`, with the answer locks the command line of
    /// the stand-in's HOME takes.
    fn answer_at(&self, target: &Target, request: &RespondRequest, now: Timestamp) -> Attempt {
        let store = self.home.join(".local/share/slate/slate.db");
        let locks = answers::lock_folder(&store).unwrap();
        answers::respond(target, request, &locks, now)
    }

    /// [`StandIn::answer_at`] now.
    fn answer(&self, request: &RespondRequest) -> Attempt {
        self.answer_at(&self.target(), request, slate::live::system_clock())
    }

    fn target(&self) -> Target {
        Target {
            key: SessionKey::new(AgentKind::CODEX, SESSION_ID),
            pid: Some(self.pid),
            hosted: false,
            control: None,
            machine: None,
            call: Some(first_call()),
            summary: None,
        }
    }

    /// Writes another pending `exec_command` call of `command` into the stand-in's rollout, as
    /// Codex does before it asks, and returns it as the dialog carries it.
    fn add_call(&self, id: &str, command: &str) -> PendingCall {
        let arguments = serde_json::json!({
            "cmd": command,
            "sandbox_permissions": "require_escalated",
        })
        .to_string();
        self.append(serde_json::json!({
            "type": "function_call",
            "name": "exec_command",
            "arguments": arguments,
            "call_id": id,
        }));
        pending_call(id, command)
    }

    /// Writes the result of call `id` into the stand-in's rollout: it waits no more.
    fn finish_call(&self, id: &str) {
        self.append(serde_json::json!({
            "type": "function_call_output",
            "call_id": id,
            "output": "done",
        }));
    }

    /// Appends a `response_item` line with `payload` to the stand-in's rollout.
    fn append(&self, payload: serde_json::Value) {
        use std::io::Write;
        let line = serde_json::json!({
            "timestamp": slate::live::system_clock().to_string(),
            "type": "response_item",
            "payload": payload,
        });
        let rollout = self.home.join(format!(
            ".codex/sessions/2026/12/01/rollout-2026-12-01T00-00-00-{SESSION_ID}.jsonl"
        ));
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(rollout)
            .unwrap();
        writeln!(file, "{line}").unwrap();
    }
}

/// A pending `exec_command` call as the session's dialog carries it.
fn pending_call(id: &str, command: &str) -> PendingCall {
    PendingCall {
        id: id.to_string(),
        name: "exec_command".to_string(),
        input: Some(command.to_string()),
        cut: false,
    }
}

/// The call the stand-in's rollout records when it starts (`codex_rollout_with_id`).
fn first_call() -> PendingCall {
    pending_call("call_1", "touch x.txt")
}

/// How the stand-in is started in its pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Launch {
    /// As the pane's own process.
    Direct,
    /// As the pane's own process, with every variable cleared (`env -i`).
    Cleared,
    /// Under `script`, a pseudo-terminal relay, as the pane's process.
    Script,
    /// From an interactive shell with job control in the pane.
    Shell,
}

/// The process named `codex` at or under `pid`, waited for.
fn codex_under(pid: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut queue = vec![pid];
        while let Some(next) = queue.pop() {
            let cmdline = std::fs::read(format!("/proc/{next}/cmdline")).unwrap_or_default();
            if cmdline.split(|byte| *byte == 0).next() == Some(b"codex") {
                return next;
            }
            let children = std::fs::read_to_string(format!("/proc/{next}/task/{next}/children"))
                .unwrap_or_default();
            queue.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
        assert!(
            Instant::now() < deadline,
            "no process named codex under {pid}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn screen(file: &str) -> PathBuf {
    fixture(&format!("screens/codex/0.171.0/{file}"))
}

/// The fingerprint of a recorded Codex dialog, as a person would have seen it in the stand-in's
/// session, whose rollout records [`first_call`].
fn print_of(file: &str) -> String {
    print_with(file, &first_call())
}

/// The fingerprint of a recorded Codex dialog about `call`.
fn print_with(file: &str, call: &PendingCall) -> String {
    let text = std::fs::read_to_string(screen(file)).unwrap();
    let dialog = read_screen(AgentKind::CODEX, &text)
        .dialog()
        .cloned()
        .unwrap();
    let call = call.clone().about(dialog.kind);
    keys::fingerprint(AgentKind::CODEX, &dialog, Some(&call))
}

fn request(action: Action, option: Option<u32>, dialog: &str) -> RespondRequest {
    RespondRequest {
        action,
        option: option.map(OptionRef::Number),
        text: None,
        dialog: dialog.to_string(),
        surface: Some(Surface::Cli),
    }
}

impl StandIn {
    /// A live service over the stand-in's HOME, with a store, reading the real process table.
    fn service(&self) -> (slate::live::Handle, std::thread::JoinHandle<()>) {
        let env = slate::sources::roots::Env {
            home: Some(self.home.clone()),
            ..slate::sources::roots::Env::default()
        };
        let store = slate::store::open(&self.home.join("slate.db")).unwrap();
        slate::live::start(slate::live::Service {
            options: slate::engine::Options::from_env(env),
            timing: slate::live::Timing::default(),
            store: Some(store),
            clock: slate::live::system_clock,
            settings: Default::default(),
            remotes: None,
        })
    }
}

/// Waits until the service's session shows `until`.
fn wait_session(
    handle: &slate::live::Handle,
    what: &str,
    until: impl Fn(&slate::model::Session) -> bool,
) -> slate::model::Session {
    // Generous: a loaded machine senses slowly; the bound only keeps a broken run from hanging.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let session = handle
            .live_sessions()
            .into_iter()
            .find(|session| session.id.as_str() == SESSION_ID);
        if let Some(session) = session.filter(|session| until(session)) {
            return session;
        }
        assert!(Instant::now() < deadline, "waited 60 s for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits, off the async runtime, until the service's session shows the dialog about call `id`.
async fn dialog_about_call(
    handle: &slate::live::Handle,
    id: &'static str,
) -> slate::model::Session {
    let handle = handle.clone();
    tokio::task::spawn_blocking(move || {
        wait_session(&handle, &format!("the dialog about call {id}"), |s| {
            s.dialog
                .as_ref()
                .and_then(|dialog| dialog.call.as_ref())
                .is_some_and(|call| call.id == id)
        })
    })
    .await
    .unwrap()
}

fn respond_request(id: &str, token: Option<&str>, body: &str) -> Request<Body> {
    let mut request = Request::post(format!("/sessions/{id}/respond"))
        .header("host", "127.0.0.1:7411")
        .header("content-type", "application/json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.body(Body::from(body.to_string())).unwrap()
}

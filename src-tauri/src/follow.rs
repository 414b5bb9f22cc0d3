//! Following the engine: the one task that turns what the engine tells into the tray's recount
//! and into notifications, and finds the engine again when a followed service goes away.
//!
//! [`follow`] reads one [`Followed`] (the receivers a `Source` hands out, the same for the engine
//! in-process and for a followed service): every update recounts the tray and goes through the
//! engine's notification policy (`slate::policy::notifications::decide`), whose deadline wakes the
//! task when a burst window closes; a change of the settings moves the pause when the config's
//! `[notifications]` changed; a remote machine's link coming or going redraws the menu's note.
//! When a followed service stays away for [`SERVICE_GRACE`], it starts the app's own engine (or
//! follows the service again, when it is back) and tells what changed meanwhile, once.

use std::sync::atomic::Ordering;
use std::time::Duration;

use slate::live::{self, Update};
use slate::mirror::follower::Link;
use slate::model::{ServerKind, Session, Timestamp};
use slate::policy::menu::Pause;
use slate::policy::notifications::{self, Decision, Input, Notifier};
use slate::policy::spend::SpendWatch;
use slate::remote::Report;
use slate::settings::Settings;
use tauri::{AppHandle, Manager, Runtime};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

use crate::server::{self, Endpoint};
use crate::shell::Shell;
use crate::source::{self, Found, Source};
use crate::{commands, engine, notify, tray, window};

/// How long a followed Slate service may be away before the app starts an engine of its own.
/// It is longer than the user unit's restart delay (5 s), so a service that restarts (after a
/// crash, an upgrade, `systemctl --user restart slate`) is simply followed again; one that was
/// stopped leaves the app watching on its own, with the changes made meanwhile told then.
pub const SERVICE_GRACE: Duration = Duration::from_secs(10);

/// The receivers `follow` reads, taken from one `Source`: the same for the engine in-process and
/// for a followed service (which also has its link).
pub(crate) struct Followed {
    updates: broadcast::Receiver<Update>,
    settings: watch::Receiver<Settings>,
    remotes: watch::Receiver<Vec<Report>>,
    link: Option<watch::Receiver<Link>>,
}

impl Followed {
    /// The live list of `source` and the receivers of everything after it.
    pub(crate) fn of(source: &Source) -> (Vec<Session>, Followed) {
        let (snapshot, updates) = source.subscribe();
        let followed = Followed {
            updates,
            settings: source.watch_settings(),
            remotes: source.watch_remotes(),
            link: source.watch_link(),
        };
        (snapshot, followed)
    }
}

/// What woke the follower.
enum Woke {
    Update(Result<Update, RecvError>),
    /// The config file was applied, or broke: the pause may follow it, and the tray says it.
    Settings,
    /// A remote machine's link came up or went down: the menu names the unreachable ones.
    Remotes,
    /// The followed service stopped answering, or answers again.
    Link,
    /// The policy's deadline, the end of a timed pause, or the end of the wait for a service that
    /// went away.
    Deadline,
}

/// Follows the engine: every update recounts the tray and goes through the notification policy;
/// the policy's deadline wakes the loop when a burst window closes, and the end of a timed pause
/// wakes it to update the menu. A change of the settings updates the pause when the config's
/// `[notifications]` changed, and the tray's note of a config error; a change of a remote's link
/// updates the menu's note of unreachable machines. When a followed service stops answering, the
/// menu says so; when it is still away after [`SERVICE_GRACE`], the app looks for its engine
/// again (`replace_source`) and follows what it finds from its first list, compared with the last
/// one the service sent, so a session that turned to Needs you meanwhile is notified then.
pub(crate) async fn follow<R: Runtime>(
    app: AppHandle<R>,
    mut notifier: Notifier,
    mut followed: Followed,
) {
    let mut deadline: Option<Timestamp> = None;
    let mut away_until: Option<Timestamp> = None;
    let mut told = followed
        .settings
        .borrow_and_update()
        .config
        .notifications
        .clone();
    // `[budget]`: one notification when a session's or the day's spend crosses its amount.
    let budget = followed.settings.borrow().config.budget;
    let live_now = app.state::<Shell>().source().live_sessions();
    let mut spend = SpendWatch::seed(budget, &live_now, &[], live::system_clock());
    loop {
        let wake_at = [deadline, away_until].into_iter().flatten().min();
        let woke = tokio::select! {
            received = followed.updates.recv() => Woke::Update(received),
            Ok(()) = followed.settings.changed() => Woke::Settings,
            Ok(()) = followed.remotes.changed() => Woke::Remotes,
            () = link_changed(&mut followed.link) => Woke::Link,
            () = slate::clock::sleep_until(wake_at) => Woke::Deadline,
        };
        let shell = app.state::<Shell>();
        let now = live::system_clock();
        let paused = shell.pause.lock().expect("lock poisoned").is_paused(now);
        // Only the reasons the person keeps (`[notifications] reasons`) interrupt them.
        notifier.keep(&told.reasons);
        let decision = match woke {
            Woke::Remotes => {
                followed.remotes.borrow_and_update();
                tray::refresh(&app);
                continue;
            }
            Woke::Settings => {
                let wanted = followed
                    .settings
                    .borrow_and_update()
                    .config
                    .notifications
                    .clone();
                spend.budget(followed.settings.borrow().config.budget);
                if wanted != told {
                    commands::set_pause(&app, &shell, Pause::from_config(&wanted));
                    told = wanted;
                }
                tray::refresh(&app);
                continue;
            }
            Woke::Link => {
                let link = followed
                    .link
                    .as_mut()
                    .map(|link| link.borrow_and_update().clone());
                away_until = match link {
                    Some(Link::Down { since, .. }) => Some(since.plus(SERVICE_GRACE)),
                    _ => None,
                };
                tray::refresh(&app);
                continue;
            }
            Woke::Update(Ok(update)) => {
                tray::refresh(&app);
                let mut decision =
                    notifications::decide(&mut notifier, update.as_notification(), now, paused);
                if let Update::Session { session } = &update {
                    let crossed = spend.observe(session, now).filter(|_| !paused);
                    decision.plans.extend(crossed);
                }
                decision
            }
            Woke::Update(Err(RecvError::Lagged(missed))) => {
                // Too far behind to know which changes were flips: start over from the current
                // list, as at start-up, rather than guess.
                tracing::warn!(missed, "fell behind the engine's updates");
                notifier = Notifier::seed(&shell.source().live_sessions());
                tray::refresh(&app);
                Decision::default()
            }
            Woke::Update(Err(RecvError::Closed)) => return,
            Woke::Deadline => {
                // A timed pause may have just run out; the menu should stop offering Resume.
                tray::refresh(&app);
                let mut decision = notifications::decide(&mut notifier, Input::Tick, now, paused);
                if away_until.is_some_and(|at| at <= now) {
                    away_until = None;
                    let before = shell.source().live_sessions();
                    let replacing = app.clone();
                    let replaced =
                        tauri::async_runtime::spawn_blocking(move || replace_source(&replacing))
                            .await;
                    match replaced {
                        Ok(Ok(source)) => {
                            let (snapshot, fresh) = Followed::of(&source);
                            followed = fresh;
                            told = followed
                                .settings
                                .borrow_and_update()
                                .config
                                .notifications
                                .clone();
                            let now = live::system_clock();
                            notifier.keep(&told.reasons);
                            for caught in catch_up(&mut notifier, &before, &snapshot, now, paused) {
                                merge(&mut decision, caught);
                            }
                            tray::refresh(&app);
                        }
                        Ok(Err(err)) => {
                            tracing::warn!("cannot start an engine of its own: {err:#}");
                            away_until = Some(now.plus(SERVICE_GRACE));
                        }
                        Err(err) => tracing::warn!("{err}"),
                    }
                }
                decision
            }
        };
        // Wake for the burst window, and for the end of a timed pause.
        let pause_ends = match *shell.pause.lock().expect("lock poisoned") {
            Pause::Until(until) if until > now => Some(until),
            _ => None,
        };
        deadline = [decision.next_deadline, pause_ends]
            .into_iter()
            .flatten()
            .min();
        for plan in decision.plans {
            if told.quiet_while_looking {
                if let Some(why) = seen_already(&plan).await {
                    tracing::info!(title = %plan.title, "not notifying, the person is looking: {why}");
                    continue;
                }
            }
            let id = shell.next_notification_id();
            {
                let mut clicks = shell.clicks.lock().expect("lock poisoned");
                // Old notifications are long gone from the screen; keep the latest hundred.
                clicks.retain(|known, _| id.wrapping_sub(*known) < 100);
                clicks.insert(id, (plan.click.clone(), plan.offer.clone()));
            }
            tracing::info!(id, title = %plan.title, "notifying");
            if let Err(err) = notify::show(&app, id, &plan, told.sound.as_deref()) {
                tracing::warn!("cannot show a notification: {err}");
            }
        }
    }
}

/// The decisions for the changes between `before` (the last list of the engine that was
/// followed) and `after` (the first list of the one that replaces it), as if they had arrived as
/// updates: a session that left is removed, and every session of the new list is told as
/// changed, which the policy notifies only when it turned from Working to Needs you.
fn catch_up(
    notifier: &mut Notifier,
    before: &[Session],
    after: &[Session],
    now: Timestamp,
    paused: bool,
) -> Vec<Decision> {
    let kept: std::collections::HashSet<_> = after.iter().map(Session::key).collect();
    let removed = before
        .iter()
        .map(Session::key)
        .filter(|key| !kept.contains(key))
        .map(|key| Update::removed(&key));
    let changed = after.iter().map(|session| Update::Session {
        session: Box::new(session.clone()),
    });
    removed
        .chain(changed)
        .map(|update| notifications::decide(notifier, update.as_notification(), now, paused))
        .collect()
}

/// Adds `more`'s notifications to `into`, which wakes at the earlier deadline.
fn merge(into: &mut Decision, more: Decision) {
    into.plans.extend(more.plans);
    into.next_deadline = [into.next_deadline, more.next_deadline]
        .into_iter()
        .flatten()
        .min();
}

/// Finds the engine again after the followed service stayed away: this user's Slate answers on
/// the address again (followed anew), or the address is free and the app's own engine takes it
/// (or, when something else holds it, a free port). The window, if open, is pointed at the new
/// API. Runs off the async runtime: binding and asking may wait.
fn replace_source<R: Runtime>(app: &AppHandle<R>) -> anyhow::Result<Source> {
    let shell = app.state::<Shell>();
    let own = shell
        .own
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("the demo follows no service"))?;
    // Stop following first: the old follower retries every second, and would otherwise find the
    // engine started below on the same port and follow the app's own API.
    shell.source().stop();
    let token_file = own.places.token_file();
    let api_socket = own.places.api_socket(&own.env);
    let (source, endpoint, engine) = match source::find(own.listen, Some(&api_socket), &token_file)
    {
        Found::Ours(follower) => {
            let kind = follower.identity().kind.unwrap_or(ServerKind::Service);
            let token = slate::token::load_or_create_token(&token_file)?;
            let endpoint = Endpoint::followed(
                follower.client().address(),
                follower.client().socket(),
                token,
                kind,
            );
            (Source::Service(follower), endpoint, None)
        }
        found => {
            let listener = match found {
                Found::Free(listener) => listener,
                _ => server::free_port()?,
            };
            let settings = Settings::load(&own.places.config_file());
            let service = engine::engine_service(&own.env, &own.places, settings);
            tracing::info!("the Slate service is gone: starting an engine of its own");
            engine::start(
                service,
                listener,
                Some(&api_socket),
                &token_file,
                Some(slate::push::Setup::of(&own.places)),
            )?
        }
    };
    *shell.source.write().expect("lock poisoned") = source.clone();
    *shell.endpoint.lock().expect("lock poisoned") = endpoint.clone();
    if let Some(engine) = engine {
        *shell.engine.lock().expect("lock poisoned") = Some(engine);
        shell.took_over.store(true, Ordering::SeqCst);
    }
    window::retarget(app, &endpoint);
    Ok(source)
}

/// Waits for the followed service's link to change; for ever when there is none (the engine
/// in-process), or once the follower is gone.
async fn link_changed(link: &mut Option<watch::Receiver<Link>>) {
    match link {
        Some(link) => {
            if link.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
}

/// How long "quiet while you look" may ask the terminals and the window manager; past it the
/// notification is shown.
const LOOK_WITHIN: Duration = Duration::from_secs(2);

/// `slate::terminals::front::seen_already` off the async runtime, within [`LOOK_WITHIN`].
async fn seen_already(plan: &notifications::NotificationPlan) -> Option<String> {
    let plan = plan.clone();
    let asked =
        tauri::async_runtime::spawn_blocking(move || slate::terminals::front::seen_already(&plan));
    tokio::time::timeout(LOOK_WITHIN, asked).await.ok()?.ok()?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::session;
    use slate::policy::notifications::Click;

    /// When the app replaces the service it followed, the new engine's first list is compared
    /// with the service's last one: a session that turned to Needs you meanwhile is notified
    /// once, one that stayed as it was is not, and one that left is forgotten.
    #[test]
    fn what_changed_while_the_service_was_away_is_notified_once() {
        let before = [
            session("a1", "working"),
            session("b2", "waiting"),
            session("c3", "working"),
        ];
        let after = [session("a1", "waiting"), session("b2", "waiting")];
        let mut notifier = Notifier::seed(&before);
        let now = Timestamp::from_millis(1_764_590_400_000);
        let mut decision = Decision::default();
        for caught in catch_up(&mut notifier, &before, &after, now, false) {
            merge(&mut decision, caught);
        }
        assert!(decision.plans.is_empty(), "the burst window opens first");
        let at = decision.next_deadline.expect("a deadline for the window");
        let told = notifications::decide(&mut notifier, Input::Tick, at, false);
        assert_eq!(told.plans.len(), 1, "{told:?}");
        assert_eq!(told.plans[0].click, Click::Focus(after[0].key()));
        // Nothing more: the same list again is no news.
        let again = catch_up(&mut notifier, &after, &after, at, false);
        assert!(again.iter().all(|decision| decision.plans.is_empty()));
        // While paused, the flip is remembered and never told.
        let mut notifier = Notifier::seed(&before);
        let paused: Vec<Decision> = catch_up(&mut notifier, &before, &after, now, true);
        assert!(paused
            .iter()
            .all(|decision| decision.next_deadline.is_none()));
    }
}

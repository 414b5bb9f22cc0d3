//! What the tray process keeps resident, decided once at start: GTK without OpenGL, and an async
//! runtime of one worker thread.
//!
//! The tray draws no pixels of its own (the icon is a PNG file the status notifier host reads,
//! the menu goes over D-Bus, the window is another process, see `window`), yet GTK opens OpenGL
//! when it starts, which maps Mesa and LLVM into the process: about a third of its memory at rest
//! (docs/performance.md, "The tray app's memory", has the figures of each choice here, and of what
//! did not help). The async runtime only serves the loopback API and the shell's follower task,
//! which one worker does as well as one per core. This module owns those two choices and nothing
//! else.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether [`turn_gl_off`] turned OpenGL off, so the window process can have it back.
static GL_OFF: AtomicBool = AtomicBool::new(false);

/// Turns GTK's OpenGL off in this process, unless the person set `GDK_GL` themselves. It sets an
/// environment variable that GTK reads when it starts, so it must run before GTK starts and
/// before any other thread does.
pub fn turn_gl_off() {
    if std::env::var_os("GDK_GL").is_none() {
        std::env::set_var("GDK_GL", "disable");
        GL_OFF.store(true, Ordering::Relaxed);
    }
}

/// True when [`turn_gl_off`] set `GDK_GL`.
pub fn gl_turned_off() -> bool {
    GL_OFF.load(Ordering::Relaxed)
}

/// Starts the async runtime Tauri and the API run on: one worker thread, instead of Tauri's
/// default of one per core. Tokio's own `TOKIO_WORKER_THREADS` still wins, so the memory bench
/// can compare. The caller keeps the runtime for as long as the app runs.
pub fn start_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(1);
    }
    let runtime = builder.thread_name("slate-async").enable_all().build()?;
    tauri::async_runtime::set(runtime.handle().clone());
    Ok(runtime)
}

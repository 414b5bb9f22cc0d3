//! What a killed install or remove left beside a configuration (`<file>.slate-<pid>`), found
//! and deleted at the next run, unless the process that wrote it still runs.

use std::fs;
use std::path::Path;

/// Deletes what a killed run of `write_whole` left beside `path`: its `<file>.slate-<pid>`, when
/// no process of that id runs any more (one that runs may be writing it now).
pub(super) fn clear_leftovers(path: &Path) {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let Ok(entries) = fs::read_dir(folder) else {
        return;
    };
    let mut prefix = name.to_os_string();
    prefix.push(".slate-");
    let prefix = prefix.to_string_lossy().into_owned();
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|found| found.strip_prefix(prefix.as_str()))
            .filter(|pid| !pid.is_empty() && pid.bytes().all(|byte| byte.is_ascii_digit()))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
        if is_file && (pid == std::process::id() || !runs(pid)) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// True when a process of id `pid` runs (whoever's it is).
fn runs(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        !matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
            Err(Errno::ESRCH)
        )
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

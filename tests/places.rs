//! Slate's own folders on every platform, from an `Env` built by hand, and the files in them.

use std::path::{Path, PathBuf};

use slate::places::{Places, PlacesError, Platform};
use slate::sources::roots::Env;

fn env(home: &str) -> Env {
    Env {
        home: Some(PathBuf::from(home)),
        ..Env::default()
    }
}

#[test]
fn linux_follows_xdg_and_ignores_a_relative_value() {
    let places = Places::on(Platform::Linux, &env("/home/u")).unwrap();
    assert_eq!(places.config_dir, Path::new("/home/u/.config/slate"));
    assert_eq!(places.data_dir, Path::new("/home/u/.local/share/slate"));

    let custom = Env {
        xdg_config_home: Some(PathBuf::from("/cfg")),
        xdg_data_home: Some(PathBuf::from("/data")),
        // Windows' variable means nothing here.
        appdata: Some(PathBuf::from("/appdata")),
        ..env("/home/u")
    };
    let places = Places::on(Platform::Linux, &custom).unwrap();
    assert_eq!(places.config_dir, Path::new("/cfg/slate"));
    assert_eq!(places.data_dir, Path::new("/data/slate"));

    // A relative XDG value is invalid by the XDG spec and ignored.
    let relative = Env {
        xdg_data_home: Some(PathBuf::from("relative")),
        ..env("/home/u")
    };
    let places = Places::on(Platform::Linux, &relative).unwrap();
    assert_eq!(places.data_dir, Path::new("/home/u/.local/share/slate"));
}

#[test]
fn macos_and_windows_have_their_own_folders() {
    let custom = Env {
        xdg_config_home: Some(PathBuf::from("/cfg")),
        appdata: Some(PathBuf::from("/appdata")),
        ..env("/Users/u")
    };
    let mac = Places::on(Platform::MacOs, &custom).unwrap();
    assert_eq!(
        mac.config_dir,
        Path::new("/Users/u/Library/Application Support/slate")
    );
    assert_eq!(mac.data_dir, mac.config_dir);

    let windows = Places::on(Platform::Windows, &custom).unwrap();
    assert_eq!(windows.config_dir, Path::new("/appdata/slate"));
    assert_eq!(windows.data_dir, Path::new("/appdata/slate"));
    let bare = Places::on(Platform::Windows, &env("/home/u")).unwrap();
    assert_eq!(
        bare.config_dir,
        Path::new("/home/u")
            .join("AppData")
            .join("Roaming")
            .join("slate")
    );
}

#[test]
fn the_files_live_in_the_folders_and_no_home_is_an_error() {
    let places = Places::on(Platform::Linux, &env("/home/u")).unwrap();
    assert_eq!(
        places.config_file(),
        Path::new("/home/u/.config/slate/config.toml")
    );
    assert_eq!(
        places.token_file(),
        Path::new("/home/u/.config/slate/token")
    );
    assert_eq!(
        places.store_file(),
        Path::new("/home/u/.local/share/slate/slate.db")
    );
    assert_eq!(
        Places::from_env(&env("/home/u")),
        Places::on(Platform::current(), &env("/home/u"))
    );
    let err = Places::from_env(&Env::default()).unwrap_err();
    assert_eq!(err, PlacesError::NoHome);
    assert!(err.to_string().contains("HOME"), "{err}");
}

//! The one canonical folder: links resolved and trailing separators dropped, folders compared by
//! each platform's rules, and stores and transcripts pairing folders the same way.

use std::fs;

use slate::sources::folders::{canonical_folder, comparable, folder_pair, lexical, Platform};

#[test]
fn canonical_folders_resolve_links_and_drop_trailing_separators() {
    let temp = tempfile::tempdir().expect("temp dir");
    let real = temp.path().join("real");
    fs::create_dir(&real).expect("mkdir");
    let real_canonical = fs::canonicalize(&real).expect("canonicalize");
    let expected = canonical_folder(&real_canonical.display().to_string());
    #[cfg(unix)]
    {
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        assert_eq!(canonical_folder(&link.display().to_string()), expected);
    }
    assert_eq!(canonical_folder(&format!("{}/", real.display())), expected);
    // A folder that no longer exists is normalised without the disk.
    let gone = temp.path().join("gone");
    assert_eq!(
        canonical_folder(&format!("{}/./sub/../", gone.display())),
        canonical_folder(&gone.display().to_string())
    );
    assert!(!canonical_folder("/no/such/folder/").ends_with('/'));
}

#[test]
fn folders_compare_by_each_platforms_rules() {
    assert_eq!(lexical("/a/b/../c/./d/"), "/a/c/d");
    assert_eq!(lexical("/"), "/");
    assert_eq!(lexical("rel/x/"), "rel/x");
    let cases = [
        // macOS: `/tmp`, `/var` and `/etc` resolve into `/private`, which transcripts may not
        // write; the file system ignores case.
        (Platform::MacOs, "/private/tmp/Acme", "/tmp/acme"),
        (Platform::MacOs, "/private/var/folders/x", "/var/folders/x"),
        (Platform::MacOs, "/private/etc", "/etc"),
        (Platform::MacOs, "/private/tmpfile", "/private/tmpfile"),
        (
            Platform::MacOs,
            "/Users/Dev/Acme-API",
            "/users/dev/acme-api",
        ),
        // Windows: the verbatim prefix canonicalize adds is dropped; case is ignored.
        (Platform::Windows, r"\\?\C:\Users\Dev", r"c:\users\dev"),
        (Platform::Windows, r"C:\Work", r"c:\work"),
        // Elsewhere a folder is what it resolved to.
        (Platform::Other, "/home/Dev/acme", "/home/Dev/acme"),
        (Platform::Other, "/private/tmp/x", "/private/tmp/x"),
    ];
    for (platform, resolved, expected) in cases {
        assert_eq!(
            comparable(resolved, platform),
            expected,
            "{platform:?} {resolved}"
        );
    }
}

#[test]
fn stores_and_transcripts_pair_folders_the_same_way() {
    let temp = tempfile::tempdir().expect("temp dir");
    let folder = temp.path().join("acme");
    fs::create_dir(&folder).expect("mkdir");
    let written = format!("{}/", folder.display());
    assert_eq!(
        folder_pair(&written),
        vec![(written.clone(), canonical_folder(&written))]
    );
    // A folder that is gone still gets its lexical spelling, as a transcript's folder does.
    let gone = format!("{}/gone/../gone2/", temp.path().display());
    assert_eq!(
        folder_pair(&gone),
        vec![(gone.clone(), canonical_folder(&gone))]
    );
    assert!(!folder_pair(&gone)[0].1.ends_with('/'));
    assert_eq!(folder_pair(""), Vec::new());
}

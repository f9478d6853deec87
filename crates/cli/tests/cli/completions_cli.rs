//! `routeval completions SHELL`: the scripts clap_complete generates from the binary's parser.

use std::process::Command;

fn completions(shell: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(["completions", shell])
        .output()
        .expect("routeval runs")
}

#[test]
fn bash_completion_registers_routeval() {
    let out = completions("bash");
    assert!(out.status.success(), "{out:?}");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("routeval.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let probe = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p routeval",
            script.display()
        ))
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&probe.stdout);
    assert!(probe.status.success(), "{probe:?}");
    assert!(text.contains("-F _routeval routeval"), "{text}");
    // The subcommands are offered.
    let script = String::from_utf8_lossy(&out.stdout);
    for sub in [
        "trec",
        "compare",
        "rag",
        "crb",
        "gqr",
        "frontier",
        "completions",
    ] {
        assert!(script.contains(sub), "{sub} missing from the bash script");
    }
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_one_is_a_usage_error() {
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let out = completions(shell);
        assert!(out.status.success(), "{shell}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("routeval"),
            "{shell}"
        );
    }
    let out = completions("tcsh");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
}

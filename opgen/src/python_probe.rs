//! Asking a Python interpreter about an installed framework: runs a short
//! script and returns what it printed, or an error naming the framework.

use std::process::Command;

/// What to ask and how to word a failure.
pub struct Probe<'a> {
    /// For messages: `PyTorch`.
    pub framework: &'a str,
    /// The module the script imports, for messages: `torch`.
    pub module: &'a str,
    pub script: &'a str,
    /// Environment variables for the interpreter.
    pub env: &'a [(&'a str, &'a str)],
    /// What the user can do about a failure.
    pub hint: &'a str,
}

/// Runs `python -c script`; its stdout, or an error ending with the hint.
pub fn run(python: &str, probe: &Probe) -> Result<String, String> {
    let Probe {
        framework,
        module,
        script,
        env,
        hint,
    } = probe;
    let output = Command::new(python)
        .args(["-c", script])
        .envs(env.iter().copied())
        .output()
        .map_err(|e| format!("{framework} not found: cannot run `{python}` ({e}); {hint}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or("").trim();
        return Err(format!(
            "{framework} not found: `{python} -c 'import {module}'` failed ({last}); {hint}"
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe<'a>(script: &'a str) -> Probe<'a> {
        Probe {
            framework: "Nothing",
            module: "nothing",
            script,
            env: &[("OPGEN_PROBE_TEST", "42")],
            hint: "install it",
        }
    }

    #[test]
    fn missing_interpreter_is_a_clear_error() {
        let err = run("/nonexistent/python", &probe("print(1)")).unwrap_err();
        assert!(
            err.starts_with("Nothing not found: cannot run `/nonexistent/python`"),
            "{err}"
        );
        assert!(err.ends_with("; install it"), "{err}");
    }

    #[test]
    fn stdout_and_env_reach_the_caller_and_failures_name_the_module() {
        let python = "python3";
        let out = run(
            python,
            &probe("import os; print(os.environ['OPGEN_PROBE_TEST'])"),
        );
        assert_eq!(out.unwrap().trim(), "42");
        let err = run(python, &probe("raise SystemExit('boom')")).unwrap_err();
        assert_eq!(
            err,
            "Nothing not found: `python3 -c 'import nothing'` failed (boom); install it"
        );
    }
}

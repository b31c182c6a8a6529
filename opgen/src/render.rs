//! Rendering a framework's handlebars templates with its context: strict
//! (a field the context lacks is an error, not an empty string) and without
//! HTML escaping (the output is C++, Python, Rust and shell).

use serde::Serialize;

/// One template: the file it renders, its path for messages
/// (`templates/jax/op.cc.hbs`) and its text.
pub struct Template<'a> {
    pub file: String,
    pub path: &'a str,
    pub text: &'a str,
}

/// Partials every framework's templates share: `{{> bridge_cc prefix=...}}`
/// (a C++ op's handle in the runtime bridge), `{{> tools_cc prefix=...}}`
/// (the C entry points of the module's tools) and `{{> tools_py prefix=...}}`
/// (their Python side, over the module's `_tools_library(path)`).
const PARTIALS: [(&str, &str); 3] = [
    (
        "bridge_cc",
        include_str!("../../templates/common/bridge.cc.hbs"),
    ),
    (
        "tools_cc",
        include_str!("../../templates/common/tools.cc.hbs"),
    ),
    (
        "tools_py",
        include_str!("../../templates/common/tools.py.hbs"),
    ),
];

/// The renderer: strict, no escaping, the shared partials registered (an
/// error names the partial that does not parse).
pub fn handlebars() -> Result<handlebars::Handlebars<'static>, String> {
    let mut hb = handlebars::Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    for (name, text) in PARTIALS {
        hb.register_partial(name, text)
            .map_err(|e| format!("templates/common partial {name}: {e}"))?;
    }
    Ok(hb)
}

/// Every template rendered with `ctx`, as (file name, contents).
pub fn render_templates<T: Serialize>(
    ctx: &T,
    templates: Vec<Template>,
) -> Result<Vec<(String, String)>, String> {
    let hb = handlebars()?;
    templates
        .into_iter()
        .map(|t| {
            let text = hb
                .render_template(t.text, ctx)
                .map_err(|e| format!("{}: {e}", t.path))?;
            Ok((t.file, text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_field_names_the_template() {
        #[derive(Serialize)]
        struct Ctx {
            name: &'static str,
        }
        let ok = render_templates(
            &Ctx { name: "a<b" },
            vec![Template {
                file: "x".into(),
                path: "templates/t/x.hbs",
                text: "{{name}}",
            }],
        );
        assert_eq!(ok.unwrap(), vec![("x".to_string(), "a<b".to_string())]);
        let err = render_templates(
            &Ctx { name: "" },
            vec![Template {
                file: "y".into(),
                path: "templates/t/y.hbs",
                text: "{{missing}}",
            }],
        )
        .unwrap_err();
        assert!(err.starts_with("templates/t/y.hbs: "), "{err}");
    }
}

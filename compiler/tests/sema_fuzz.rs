//! Random Triton-C programs (a small grammar driven by a fixed-seed PRNG) go
//! through the front end and `sema::lower_all`: sema never panics, what lowers
//! passes the verifier, every error has a message and a location.
mod sema_support;
use sema_support::*;

struct Gen {
    state: u64,
    vars: Vec<(String, &'static str)>,
    depth: usize,
    in_loop: bool,
    out: String,
}

const SHAPES: [&str; 6] = ["", "[4]", "[8]", "[4, 8]", "[8, 4]", "[1, 8]"];
const TYPES: [&str; 5] = ["int", "float", "half", "bool", "long"];
const BINOPS: [&str; 18] = [
    "+", "-", "*", "/", "%", "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&", "|", "^", "&&",
    "||",
];

impl Gen {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545F4914F6CDD1D)
    }

    fn pick(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn expr(&mut self, depth: usize) -> String {
        let leaf = depth == 0 || self.pick(3) == 0;
        if leaf {
            return match self.pick(7) {
                0 => format!("{}", self.pick(9)),
                1 => "1.5".into(),
                2 => "(0 ... 8)".into(),
                3 => "n".into(),
                4 => "s".into(),
                _ if !self.vars.is_empty() => {
                    let i = self.pick(self.vars.len());
                    self.vars[i].0.clone()
                }
                _ => "r".into(),
            };
        }
        let d = depth - 1;
        match self.pick(12) {
            0..=3 => {
                let op = BINOPS[self.pick(BINOPS.len())];
                format!("({} {op} {})", self.expr(d), self.expr(d))
            }
            4 => format!("(-{})", self.expr(d)),
            5 => format!("(!{})", self.expr(d)),
            6 => format!("({} ? {} : {})", self.expr(d), self.expr(d), self.expr(d)),
            7 => {
                let sub = [
                    "[:, newaxis]",
                    "[newaxis, :]",
                    "[+]",
                    "[max]",
                    "[:, +]",
                    "[+, :]",
                ];
                format!("{}{}", self.expr(d), sub[self.pick(sub.len())])
            }
            8 => format!("*(X + {})", self.expr(d)),
            9 => format!("({} @ {})", self.expr(d), self.expr(d)),
            10 => format!("^{}", self.expr(d)),
            _ => {
                let f = ["exp", "max", "min", "sqrt", "abs"][self.pick(5)];
                if f == "max" || f == "min" {
                    format!("{f}({}, {})", self.expr(d), self.expr(d))
                } else {
                    format!("{f}({})", self.expr(d))
                }
            }
        }
    }

    fn stmt(&mut self) {
        let pad = "  ".repeat(self.depth + 1);
        let nested = self.depth < 2;
        match self.pick(if nested { 9 } else { 6 }) {
            0 | 1 => {
                let name = format!("v{}", self.vars.len());
                let ty = TYPES[self.pick(TYPES.len())];
                let shape = SHAPES[self.pick(SHAPES.len())];
                let e = self.expr(3);
                self.out += &format!("{pad}{ty} {name}{shape} = {e};\n");
                self.vars.push((name, ty));
            }
            2 if !self.vars.is_empty() => {
                let i = self.pick(self.vars.len());
                let op = ["=", "+=", "-=", "*="][self.pick(4)];
                let e = self.expr(2);
                self.out += &format!("{pad}{} {op} {e};\n", self.vars[i].0);
            }
            3 => {
                let (m, e) = (self.expr(1), self.expr(2));
                self.out += &format!("{pad}*?({m}) (X + r) = {e};\n");
            }
            4 => {
                let e = self.expr(2);
                self.out += &format!("{pad}*(X + r) = {e};\n");
            }
            5 if self.in_loop => {
                let j = ["break", "continue"][self.pick(2)];
                let c = self.expr(1);
                self.out += &format!("{pad}if ({c}) {j};\n");
            }
            6 => {
                let c = self.expr(2);
                self.out += &format!("{pad}if ({c}) {{\n");
                self.block();
                self.out += &format!("{pad}}} else {{\n");
                self.block();
                self.out += &format!("{pad}}}\n");
            }
            7 => {
                self.out += &format!("{pad}for (int i{0} = 0; i{0} < n; i{0}++) {{\n", self.depth);
                let was = self.in_loop;
                self.in_loop = true;
                self.block();
                self.in_loop = was;
                self.out += &format!("{pad}}}\n");
            }
            8 => {
                let c = self.expr(1);
                self.out += &format!("{pad}while ({c}) {{\n");
                let was = self.in_loop;
                self.in_loop = true;
                self.block();
                self.in_loop = was;
                self.out += &format!("{pad}}}\n");
            }
            _ => self.out += &format!("{pad};\n"),
        }
    }

    fn block(&mut self) {
        let saved = self.vars.len();
        self.depth += 1;
        for _ in 0..1 + self.pick(3) {
            self.stmt();
        }
        self.depth -= 1;
        self.vars.truncate(saved);
    }
}

fn program(seed: u64) -> String {
    let mut g = Gen {
        state: seed.wrapping_mul(0x9E3779B97F4A7C15) | 1,
        vars: Vec::new(),
        depth: 0,
        in_loop: false,
        out: String::new(),
    };
    g.out += "__global__ void k(float* X, int n, float s) {\n  int r[8] = 0 ... 8;\n";
    for _ in 0..2 + g.pick(5) {
        g.stmt();
    }
    g.out += "}\n";
    g.out
}

#[test]
fn random_programs_never_panic_and_verify() {
    let (mut lowered, mut rejected) = (0, 0);
    for seed in 0..3000 {
        let text = program(seed);
        let (sources, _, parsed) = parse_text("fuzz.tc", &text, &options(&[]));
        let tu = match parsed {
            Ok(tu) => tu,
            Err(d) => panic!("generator wrote unparsable code ({}):\n{text}", d.message),
        };
        match std::panic::catch_unwind(|| tritonc::sema::lower_all(&tu)) {
            Err(_) => panic!("sema panicked on seed {seed}:\n{text}"),
            Ok(Ok(m)) => {
                lowered += 1;
                for f in &m.functions {
                    if let Err(e) = tritonc::ir::verifier::verify_function(f) {
                        panic!("seed {seed}: {}\n{text}", e.message);
                    }
                }
            }
            Ok(Err(errors)) => {
                rejected += 1;
                assert!(!errors.is_empty());
                if std::env::var("SEMA_FUZZ_SHOW").is_ok() {
                    for d in &errors {
                        println!("ERR {}", d.message);
                    }
                }
                for d in errors {
                    assert!(!d.message.is_empty(), "seed {seed}: empty message\n{text}");
                    assert!(d.location(&sources).starts_with("fuzz.tc:"));
                }
            }
        }
    }
    // The grammar is loose, but a good share must be valid programs.
    assert!(
        lowered > 150,
        "only {lowered} of {} lowered",
        lowered + rejected
    );
}

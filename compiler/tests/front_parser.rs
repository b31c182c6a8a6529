//! Parser: precedence, Triton-C operators, types, parameters, statements.
mod front_support;
use front_support::*;
use tritonc::front::ast::{BaseType, ParamAttr, StmtKind};

#[test]
fn range_binds_between_multiplicative_and_additive() {
    assert_eq!(
        expr_of("pm * TM + 0 ... TM", &[]),
        "(+ (* pm TM) (range 0 TM))"
    );
    assert_eq!(expr_of("a ... b * c", &[]), "(range a (* b c))");
    assert_eq!(expr_of("a - 1 ... n < m", &[]), "(< (- a (range 1 n)) m)");
    assert_eq!(expr_of("0...TM", &[]), "(range 0 TM)");
}

#[test]
fn c_precedence_and_associativity() {
    assert_eq!(expr_of("a + b * c - d", &[]), "(- (+ a (* b c)) d)");
    assert_eq!(expr_of("a - b - c", &[]), "(- (- a b) c)");
    assert_eq!(
        expr_of("a || b && c | d ^ e & f", &[]),
        "(|| a (&& b (| c (xor d (& e f)))))"
    );
    assert_eq!(expr_of("a == b < c << d", &[]), "(== a (< b (<< c d)))");
    assert_eq!(expr_of("a != b >= c >> d", &[]), "(!= a (>= b (>> c d)))");
    assert_eq!(expr_of("a % b / c", &[]), "(/ (% a b) c)");
    assert_eq!(expr_of("a = b = c", &[]), "(= a (= b c))");
    assert_eq!(expr_of("a += b -= c", &[]), "(+= a (-= b c))");
    assert_eq!(expr_of("x <<= 1", &[]), "(<<= x 1)");
    assert_eq!(expr_of("x >>= 1", &[]), "(>>= x 1)");
    assert_eq!(expr_of("x *= 2", &[]), "(*= x 2)");
    assert_eq!(expr_of("x /= 2", &[]), "(/= x 2)");
    assert_eq!(expr_of("x %= 2", &[]), "(%= x 2)");
    assert_eq!(expr_of("x &= 2", &[]), "(&= x 2)");
    assert_eq!(expr_of("x |= 2", &[]), "(|= x 2)");
    assert_eq!(expr_of("x ^= 2", &[]), "(xor= x 2)");
    assert_eq!(expr_of("c ? a : b ? d : e", &[]), "(? c a (? b d e))");
    assert_eq!(expr_of("x = c ? a + 1 : b", &[]), "(= x (? c (+ a 1) b))");
}

#[test]
fn matmul_and_transpose() {
    assert_eq!(expr_of("c += a @ b", &[]), "(+= c (@ a b))");
    assert_eq!(expr_of("a @ b * c + d", &[]), "(+ (* (@ a b) c) d)");
    assert_eq!(expr_of("^a @ ^b", &[]), "(@ (trans a) (trans b))");
    // infix `^` stays xor; prefix `^` is transpose
    assert_eq!(expr_of("a ^ ^b", &[]), "(xor a (trans b))");
    assert_eq!(
        expr_of("*py = ^(*px)", &[]),
        "(= (load py) (trans (load px)))"
    );
}

#[test]
fn unary_postfix_and_literals() {
    assert_eq!(
        expr_of("-x + !y + ~z + +w", &[]),
        "(+ (+ (+ (neg x) (! y)) (~ z)) (plus w))"
    );
    assert_eq!(
        expr_of("++i + i++ - --j - j--", &[]),
        "(- (- (+ (pre++ i) (post++ i)) (pre-- j)) (post-- j))"
    );
    assert_eq!(expr_of("**pp", &[]), "(load (load pp))");
    assert_eq!(expr_of("x = true || false", &[]), "(= x (|| true false))");
    assert_eq!(
        expr_of("x = 0x1F + 017 + 10u + 7L", &[]),
        "(= x (+ (+ (+ 31 15) 10) 7))"
    );
    assert_eq!(
        expr_of("x = 1.5 + 2.f + .5 + 1e-3", &[]),
        "(= x (+ (+ (+ 1.5 2f) 0.5) 0.001))"
    );
}

#[test]
fn masked_dereference_load_and_store() {
    assert_eq!(expr_of("*?(m) p = v", &[]), "(= (load? m p) v)");
    assert_eq!(
        expr_of("x = *?(a < b && c) p + 1", &[]),
        "(= x (+ (load? (&& (< a b) c) p) 1))"
    );
    assert_eq!(
        expr_of("*?(checky)py = ^(*?(checkx)px)", &[]),
        "(= (load? checky py) (trans (load? checkx px)))"
    );
}

#[test]
fn subscripts_broadcast_and_reduce() {
    assert_eq!(
        expr_of("x[:, newaxis] + y[newaxis, :]", &[]),
        "(+ x[:,newaxis] y[newaxis,:])"
    );
    assert_eq!(
        expr_of("s = x[:, +] + x[+] + x[:, max] + x[min, :]", &[]),
        "(= s (+ (+ (+ x[:,+] x[+]) x[:,max]) x[min,:]))"
    );
    assert_eq!(
        expr_of("x[:, newaxis][:, :, newaxis]", &[]),
        "x[:,newaxis][:,:,newaxis]"
    );
}

#[test]
fn casts_and_calls() {
    assert_eq!(expr_of("(float)x", &[]), "(cast float x)");
    assert_eq!(
        expr_of("(TYPE*)p + 1", &[("TYPE", "half")]),
        "(+ (cast half* p) 1)"
    );
    assert_eq!(expr_of("(const bf16 **)p", &[]), "(cast const bf16** p)");
    assert_eq!(expr_of("(half)(x * 2)", &[]), "(cast half (* x 2))");
    // a parenthesised expression is not a cast
    assert_eq!(expr_of("(x) * 2", &[]), "(* x 2)");
    assert_eq!(
        expr_of("y = max(a, b) + exp(x) + get_program_id(0) + f()", &[]),
        "(= y (+ (+ (+ (max a b) (exp x)) (get_program_id 0)) (f)))"
    );
}

#[test]
fn base_types() {
    let cases = [
        ("void*", BaseType::Void),
        ("bool", BaseType::Bool),
        ("char", BaseType::Int8),
        ("int8_t", BaseType::Int8),
        ("short", BaseType::Int16),
        ("short int", BaseType::Int16),
        ("int16_t", BaseType::Int16),
        ("int", BaseType::Int32),
        ("signed", BaseType::Int32),
        ("signed int", BaseType::Int32),
        ("int32_t", BaseType::Int32),
        ("long", BaseType::Int64),
        ("long long", BaseType::Int64),
        ("long long int", BaseType::Int64),
        ("int64_t", BaseType::Int64),
        ("half", BaseType::Half),
        ("fp16", BaseType::Half),
        ("bf16", BaseType::BFloat16),
        ("bfloat16", BaseType::BFloat16),
        ("float", BaseType::Float),
        ("double", BaseType::Double),
        ("const float", BaseType::Float),
        ("float const", BaseType::Float),
    ];
    for (ty, base) in cases {
        let tu = parse_ok(&format!("void f() {{ {ty} x; }}"), &[]);
        let StmtKind::Decl(ds) = &tu.functions[0].body.stmts[0].kind else {
            panic!()
        };
        assert_eq!(ds[0].ty.base, base, "{ty}");
        assert_eq!(ds[0].ty.is_const, ty.contains("const"), "{ty}");
    }
}

#[test]
fn declarations_with_several_declarators_and_pointers() {
    let tu = parse_ok(
        "void f() { int a = 1, b[4] = 0; float *p, q; float** pp; TYPE* pa[TM, TK] = A; }",
        &[("TYPE", "half"), ("TM", "8"), ("TK", "4")],
    );
    let lines = stmt_lines(&tu.functions[0].body.stmts);
    assert_eq!(
        lines,
        [
            "decl int a = 1; int b[4] = 0",
            "decl float* p; float q",
            "decl float** pp",
            "decl half* pa[8,4] = A",
        ]
    );
    // tile dimensions stay expressions (sema evaluates them)
    let tu = parse_ok("void f() { int x[N * 2, 4 + M]; }", &[]);
    assert_eq!(
        stmt_lines(&tu.functions[0].body.stmts),
        ["decl int x[(* N 2),(+ 4 M)]"]
    );
}

#[test]
fn statements() {
    let text = "void f(int n) {
        if (n > 0) n = 1; else { n = 2; }
        if (n) ;
        while (n < 10) n++;
        do { n--; } while (n);
        for (;;) break;
        for (n = 0; n < 4; n += 1) continue;
        { int x = n; }
        return;
    }
    int g() { return 1 + 2; }";
    let tu = parse_ok(text, &[]);
    assert_eq!(tu.functions.len(), 2);
    assert_eq!(
        stmt_lines(&tu.functions[0].body.stmts),
        [
            "if (> n 0)",
            "  (= n 1)",
            "else",
            "  {",
            "    (= n 2)",
            "  }",
            "if n",
            "  ;",
            "while (< n 10)",
            "  (post++ n)",
            "do",
            "  {",
            "    (post-- n)",
            "  }",
            "while n",
            "for  ;  ; ",
            "  break",
            "for (= n 0) ; (< n 4) ; (+= n 1)",
            "  continue",
            "{",
            "  decl int x = n",
            "}",
            "return ",
        ]
    );
    assert_eq!(tu.functions[1].return_type.base, BaseType::Int32);
    assert_eq!(stmt_lines(&tu.functions[1].body.stmts), ["return (+ 1 2)"]);
}

#[test]
fn parameters_and_attributes_in_any_position() {
    let tu = parse_ok(
        "__global__ void k(TYPE * A __noalias __readonly __aligned(16), const float * restrict B,
                            int lda __multipleof(8), __readonly int * C, float * __writeonly D, void * E)
         {}",
        &[("TYPE", "float")],
    );
    let f = &tu.functions[0];
    let got: Vec<(String, String, Vec<ParamAttr>)> = f
        .params
        .iter()
        .map(|p| {
            (
                type_str(&p.ty),
                p.name.name.clone(),
                p.attrs.iter().map(|a| a.0.clone()).collect(),
            )
        })
        .collect();
    let want = vec![
        (
            "float*".to_string(),
            "A".to_string(),
            vec![
                ParamAttr::NoAlias,
                ParamAttr::ReadOnly,
                ParamAttr::Aligned(16),
            ],
        ),
        ("const float*".into(), "B".into(), vec![]),
        ("int".into(), "lda".into(), vec![ParamAttr::MultipleOf(8)]),
        ("int*".into(), "C".into(), vec![ParamAttr::ReadOnly]),
        ("float*".into(), "D".into(), vec![ParamAttr::WriteOnly]),
        ("void*".into(), "E".into(), vec![]),
    ];
    assert_eq!(got, want);
    assert!(parse_ok("void f(void) {}", &[]).functions[0]
        .params
        .is_empty());
}

#[test]
fn spans_point_at_source() {
    let text = "void f() { x = a + b; }";
    let tu = parse_ok(text, &[]);
    let stmt = &tu.functions[0].body.stmts[0];
    assert_eq!(&text[stmt.span.range()], "x = a + b;");
    let StmtKind::Expr(e) = &stmt.kind else {
        panic!()
    };
    assert_eq!(&text[e.span.range()], "x = a + b");
    assert_eq!(&text[tu.functions[0].span.range()], text);
    assert_eq!(&text[tu.functions[0].name.span.range()], "f");
}

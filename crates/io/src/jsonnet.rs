//! Jsonnet configs (feature `jsonnet`, rsjsonnet-lang; `routeval route --config X.jsonnet`):
//! evaluation to JSON text, imports read from files (each noted as an input with
//! [`crate::output::note_input`]), and rsjsonnet-lang's structured errors turned into one line
//! `FILE:LINE: jsonnet error: MESSAGE` ([`JsonnetError`]: the span's file and 1-based line; an
//! error inside an imported file names that file).

use rsjsonnet_lang::ast::{BinaryOp, UnaryOp};
use rsjsonnet_lang::lexer::LexError;
use rsjsonnet_lang::parser::{ActualToken, ExpectedToken, ParseError};
use rsjsonnet_lang::program::{
    AnalyzeError, Callbacks, EvalError, EvalErrorKind, EvalErrorValueType, EvalStackTraceItem,
    ImportError, LoadError, NativeError, Program, Thunk, Value as JValue,
};
use rsjsonnet_lang::span::{SpanContextId, SpanId};
use rsjsonnet_lang::token::STokenKind;
use std::path::Path;

/// The sources loaded so far: span context, display name, bytes.
#[derive(Default)]
struct Sources {
    files: Vec<(SpanContextId, String, Vec<u8>)>,
}

impl Sources {
    /// `NAME:LINE` of a span (1-based line), or `None` when its context is unknown.
    fn locate(&self, program: &Program<'_>, span: SpanId) -> Option<String> {
        let (ctx, start, _) = program.span_manager().get_span(span);
        let (_, name, bytes) = self.files.iter().find(|(c, _, _)| *c == ctx)?;
        let start = start.min(bytes.len());
        let line = 1 + bytes[..start].iter().filter(|&&b| b == b'\n').count();
        Some(format!("{name}:{line}"))
    }
}

struct Cb<'d> {
    dir: &'d Path,
    sources: Sources,
    /// Why the last failed import failed.
    import_failure: Option<ImportFailure>,
}

/// Why an import failed: the file could not be read, or it failed to load (a located line).
enum ImportFailure {
    Io(std::io::Error),
    Load(String),
}

impl<'p> Callbacks<'p> for Cb<'_> {
    fn import(
        &mut self,
        program: &mut Program<'p>,
        _from: SpanId,
        path: &str,
    ) -> Result<Thunk<'p>, ImportError> {
        let full = self.dir.join(path);
        crate::output::note_input(&full);
        let bytes = std::fs::read(&full).map_err(|e| {
            self.import_failure = Some(ImportFailure::Io(e));
            ImportError
        })?;
        let (ctx, _) = program
            .span_manager_mut()
            .insert_source_context(bytes.len());
        self.sources
            .files
            .push((ctx, full.display().to_string(), bytes.clone()));
        program.load_source(ctx, &bytes, true, path).map_err(|e| {
            self.import_failure = Some(ImportFailure::Load(load_error_line(
                &self.sources,
                program,
                &e,
            )));
            ImportError
        })
    }
    fn import_str(
        &mut self,
        _program: &mut Program<'p>,
        _from: SpanId,
        path: &str,
    ) -> Result<String, ImportError> {
        std::fs::read_to_string(self.dir.join(path)).map_err(|_| ImportError)
    }
    fn import_bin(
        &mut self,
        _program: &mut Program<'p>,
        _from: SpanId,
        path: &str,
    ) -> Result<Vec<u8>, ImportError> {
        std::fs::read(self.dir.join(path)).map_err(|_| ImportError)
    }
    fn trace(&mut self, _p: &mut Program<'p>, message: &str, _s: &[EvalStackTraceItem]) {
        eprintln!("jsonnet trace: {message}");
    }
    fn native_call(
        &mut self,
        _program: &mut Program<'p>,
        _name: rsjsonnet_lang::interner::InternedStr<'p>,
        _args: &[JValue<'p>],
    ) -> Result<JValue<'p>, NativeError> {
        Err(NativeError)
    }
}

/// Why a Jsonnet program gave no JSON: one line `FILE:LINE: jsonnet error: MESSAGE` (the
/// `Display` and the field), `FILE: jsonnet error: MESSAGE` when the error carries no position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonnetError(pub String);

/// Evaluate the Jsonnet program `source` (shown as `name` in messages; imports resolve
/// relative to `dir` and are read from the file system) to JSON text on one line.
///
/// # Errors
/// [`JsonnetError`] for a lexing, parsing, analysis, evaluation or manifestation error, or an
/// import that cannot be read.
pub fn to_json(source: &[u8], name: &str, dir: &Path) -> Result<String, JsonnetError> {
    to_json_text(source, name, dir).map_err(JsonnetError)
}

/// [`to_json`] with the error line as a `String`.
fn to_json_text(source: &[u8], name: &str, dir: &Path) -> Result<String, String> {
    let arena = rsjsonnet_lang::arena::Arena::new();
    let mut program = Program::new(&arena);
    let mut cb = Cb {
        dir,
        sources: Sources::default(),
        import_failure: None,
    };
    let (ctx, _) = program
        .span_manager_mut()
        .insert_source_context(source.len());
    cb.sources
        .files
        .push((ctx, name.to_string(), source.to_vec()));
    let thunk = program
        .load_source(ctx, source, true, name)
        .map_err(|e| load_error_line(&cb.sources, &program, &e))?;
    let value = program
        .eval_value(&thunk, &mut cb)
        .map_err(|e| eval_error_line(&cb, &program, name, &e))?;
    program
        .manifest_json(&value, false)
        .map_err(|e| eval_error_line(&cb, &program, name, &e))
}

fn located(sources: &Sources, program: &Program<'_>, span: SpanId, fallback: &str) -> String {
    sources
        .locate(program, span)
        .unwrap_or_else(|| fallback.to_string())
}

fn load_error_line(sources: &Sources, program: &Program<'_>, e: &LoadError) -> String {
    let (span, message) = match e {
        LoadError::Lex(e) => lex_message(e),
        LoadError::Parse(e) => parse_message(e),
        LoadError::Analyze(e) => analyze_message(e),
    };
    let fallback = sources
        .files
        .last()
        .map_or_else(String::new, |f| f.1.clone());
    format!(
        "{}: jsonnet error: {message}",
        located(sources, program, span, &fallback)
    )
}

fn lex_message(e: &LexError) -> (SpanId, String) {
    match e {
        LexError::InvalidChar { span, chr } => (*span, format!("invalid character {chr:?}")),
        LexError::InvalidUtf8 { span, seq } => (*span, format!("invalid UTF-8 bytes {seq:02x?}")),
        LexError::UnfinishedMultilineComment { span } => {
            (*span, "unterminated `/*` comment".into())
        }
        LexError::LeadingZeroInNumber { span } => (*span, "leading zero in a number".into()),
        LexError::MissingFracDigits { span } => (*span, "missing digits after `.`".into()),
        LexError::MissingExpDigits { span } => (*span, "missing exponent digits".into()),
        LexError::MissingDigitAfterUnderscore { span } => {
            (*span, "missing digit after `_` in a number".into())
        }
        LexError::ExpOverflow { span } => (*span, "exponent out of range".into()),
        LexError::InvalidEscapeInString { span, chr } => {
            (*span, format!("invalid escape `\\{chr}` in a string"))
        }
        LexError::IncompleteUnicodeEscape { span } => {
            (*span, "incomplete `\\u` escape in a string".into())
        }
        LexError::InvalidUtf16EscapeSequence { span, cu1, cu2 } => (
            *span,
            match cu2 {
                Some(cu2) => format!("invalid UTF-16 escape \\u{cu1:04x}\\u{cu2:04x}"),
                None => format!("invalid UTF-16 escape \\u{cu1:04x}"),
            },
        ),
        LexError::UnfinishedString { span } => (*span, "unterminated string".into()),
        LexError::MissingLineBreakAfterTextBlockStart { span } => {
            (*span, "missing line break after `|||`".into())
        }
        LexError::MissingWhitespaceTextBlockStart { span } => {
            (*span, "text block's first line must be indented".into())
        }
        LexError::InvalidTextBlockTermination { span } => {
            (*span, "text block not terminated by `|||`".into())
        }
    }
}

fn token_text(k: STokenKind) -> &'static str {
    use STokenKind as T;
    match k {
        T::Assert => "assert",
        T::Else => "else",
        T::Error => "error",
        T::False => "false",
        T::For => "for",
        T::Function => "function",
        T::If => "if",
        T::Import => "import",
        T::Importstr => "importstr",
        T::Importbin => "importbin",
        T::In => "in",
        T::Local => "local",
        T::Null => "null",
        T::Tailstrict => "tailstrict",
        T::Then => "then",
        T::Self_ => "self",
        T::Super => "super",
        T::True => "true",
        T::Exclam => "!",
        T::ExclamEq => "!=",
        T::Dollar => "$",
        T::Percent => "%",
        T::Amp => "&",
        T::AmpAmp => "&&",
        T::LeftParen => "(",
        T::RightParen => ")",
        T::Asterisk => "*",
        T::Plus => "+",
        T::PlusColon => "+:",
        T::PlusColonColon => "+::",
        T::PlusColonColonColon => "+:::",
        T::Comma => ",",
        T::Minus => "-",
        T::Dot => ".",
        T::Slash => "/",
        T::Colon => ":",
        T::ColonColon => "::",
        T::ColonColonColon => ":::",
        T::Semicolon => ";",
        T::Lt => "<",
        T::LtLt => "<<",
        T::LtEq => "<=",
        T::Eq => "=",
        T::EqEq => "==",
        T::Gt => ">",
        T::GtEq => ">=",
        T::GtGt => ">>",
        T::LeftBracket => "[",
        T::RightBracket => "]",
        T::Hat => "^",
        T::LeftBrace => "{",
        T::Pipe => "|",
        T::PipePipe => "||",
        T::RightBrace => "}",
        T::Tilde => "~",
    }
}

fn parse_message(e: &ParseError) -> (SpanId, String) {
    let ParseError::Expected {
        span,
        expected,
        instead,
    } = e;
    let found = match instead {
        ActualToken::EndOfFile => "end of file".to_string(),
        ActualToken::Simple(k) => format!("`{}`", token_text(*k)),
        ActualToken::OtherOp(op) => format!("`{op}`"),
        ActualToken::Ident(id) => format!("identifier `{id}`"),
        ActualToken::Number => "a number".into(),
        ActualToken::String => "a string".into(),
        ActualToken::TextBlock => "a text block".into(),
    };
    let wanted: Vec<String> = expected
        .iter()
        .map(|t| match t {
            ExpectedToken::EndOfFile => "end of file".to_string(),
            ExpectedToken::Simple(k) => format!("`{}`", token_text(*k)),
            ExpectedToken::Ident => "an identifier".into(),
            ExpectedToken::Number => "a number".into(),
            ExpectedToken::String => "a string".into(),
            ExpectedToken::TextBlock => "a text block".into(),
            ExpectedToken::Expr => "an expression".into(),
            ExpectedToken::BinaryOp => "a binary operator".into(),
        })
        .collect();
    let message = if wanted.is_empty() {
        format!("unexpected {found}")
    } else if wanted.len() <= 6 {
        format!("expected {}, found {found}", wanted.join(" or "))
    } else {
        // Many continuations (operators, `.`, `[`...): name only the closing/separating ones.
        use STokenKind as T;
        let closers: Vec<String> = expected
            .iter()
            .filter_map(|t| match t {
                ExpectedToken::Simple(
                    k @ (T::Comma
                    | T::Semicolon
                    | T::RightBrace
                    | T::RightBracket
                    | T::RightParen
                    | T::Then
                    | T::Else),
                ) => Some(format!("`{}`", token_text(*k))),
                _ => None,
            })
            .collect();
        if closers.is_empty() {
            format!("unexpected {found}")
        } else {
            format!(
                "unexpected {found} (expected an operator or {})",
                closers.join(" or ")
            )
        }
    };
    (*span, message)
}

fn analyze_message(e: &AnalyzeError) -> (SpanId, String) {
    match e {
        AnalyzeError::UnknownVariable { span, name } => {
            (*span, format!("unknown variable `{name}`"))
        }
        AnalyzeError::SelfOutsideObject { self_span } => {
            (*self_span, "`self` outside an object".into())
        }
        AnalyzeError::SuperOutsideObject { super_span } => {
            (*super_span, "`super` outside an object".into())
        }
        AnalyzeError::DollarOutsideObject { dollar_span } => {
            (*dollar_span, "`$` outside an object".into())
        }
        AnalyzeError::RepeatedLocalName {
            repeated_span,
            name,
            ..
        } => (*repeated_span, format!("local `{name}` defined twice")),
        AnalyzeError::RepeatedFieldName {
            repeated_span,
            name,
            ..
        } => (*repeated_span, format!("field `{name}` defined twice")),
        AnalyzeError::RepeatedParamName {
            repeated_span,
            name,
            ..
        } => (*repeated_span, format!("parameter `{name}` defined twice")),
        AnalyzeError::PositionalArgAfterNamed { arg_span } => {
            (*arg_span, "positional argument after a named one".into())
        }
        AnalyzeError::TextBlockAsImportPath { span } => {
            (*span, "a text block cannot be an import path".into())
        }
        AnalyzeError::ComputedImportPath { span } => {
            (*span, "an import path must be a string literal".into())
        }
    }
}

fn type_name(t: EvalErrorValueType) -> &'static str {
    match t {
        EvalErrorValueType::Null => "null",
        EvalErrorValueType::Bool => "boolean",
        EvalErrorValueType::Number => "number",
        EvalErrorValueType::String => "string",
        EvalErrorValueType::Array => "array",
        EvalErrorValueType::Object => "object",
        EvalErrorValueType::Function => "function",
    }
}

fn unary_text(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Minus => "-",
        UnaryOp::Plus => "+",
        UnaryOp::BitwiseNot => "~",
        UnaryOp::LogicNot => "!",
    }
}

fn binary_text(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Rem => "%",
        BinaryOp::Shl => "<<",
        BinaryOp::Shr => ">>",
        BinaryOp::Lt => "<",
        BinaryOp::Le => "<=",
        BinaryOp::Gt => ">",
        BinaryOp::Ge => ">=",
        BinaryOp::Eq => "==",
        BinaryOp::Ne => "!=",
        BinaryOp::In => "in",
        BinaryOp::BitwiseAnd => "&",
        BinaryOp::BitwiseOr => "|",
        BinaryOp::BitwiseXor => "^",
        BinaryOp::LogicAnd => "&&",
        BinaryOp::LogicOr => "||",
    }
}

/// The message of an evaluation error and the span it carries, if any.
fn eval_message(kind: &EvalErrorKind) -> (Option<SpanId>, String) {
    use EvalErrorKind as K;
    let t = |t: &EvalErrorValueType| type_name(*t);
    match kind {
        K::StackOverflow => (None, "stack overflow".into()),
        K::InfiniteRecursion => (None, "infinite recursion".into()),
        K::InvalidIndexedType { span, got_type } => (
            Some(*span),
            format!("cannot index a value of type {}", t(got_type)),
        ),
        K::InvalidSlicedType { span, got_type } => (
            Some(*span),
            format!("cannot slice a value of type {}", t(got_type)),
        ),
        K::SliceIndexOrStepIsNotNumber { span, got_type } => (
            Some(*span),
            format!("slice index or step must be a number, got {}", t(got_type)),
        ),
        K::StringIndexIsNotNumber { span, got_type } => (
            Some(*span),
            format!("string index must be a number, got {}", t(got_type)),
        ),
        K::ArrayIndexIsNotNumber { span, got_type } => (
            Some(*span),
            format!("array index must be a number, got {}", t(got_type)),
        ),
        K::NumericIndexIsNotValid { span, index } => {
            (Some(*span), format!("invalid index {index}"))
        }
        K::NumericIndexOutOfRange {
            span,
            index,
            length,
        } => (
            Some(*span),
            format!("index {index} out of range (length {length})"),
        ),
        K::ObjectIndexIsNotString { span, got_type } => (
            Some(*span),
            format!("object index must be a string, got {}", t(got_type)),
        ),
        K::RepeatedFieldName { span, name } => {
            (Some(*span), format!("field `{name}` defined twice"))
        }
        K::FieldNameIsNotString { span, got_type } => (
            Some(*span),
            format!("field name must be a string, got {}", t(got_type)),
        ),
        K::UnknownObjectField { span, field_name } => {
            (Some(*span), format!("field `{field_name}` does not exist"))
        }
        K::FieldOfNonObject { span } => (Some(*span), "field access on a non-object".into()),
        K::SuperWithoutSuperObject { span } => {
            (Some(*span), "`super` used without a super object".into())
        }
        K::ForSpecValueIsNotArray { span, got_type } => (
            Some(*span),
            format!("`for` needs an array, got {}", t(got_type)),
        ),
        K::CondIsNotBool { span, got_type } => (
            Some(*span),
            format!("condition must be a boolean, got {}", t(got_type)),
        ),
        K::CalleeIsNotFunction { span, got_type } => (
            *span,
            format!("cannot call a value of type {}", t(got_type)),
        ),
        K::TooManyCallArgs { span, num_params } => (
            *span,
            format!("too many arguments (the function takes {num_params})"),
        ),
        K::UnknownCallParam { span, param_name } => (
            *span,
            format!("the function has no parameter `{param_name}`"),
        ),
        K::RepeatedCallParam { span, param_name } => {
            (*span, format!("argument `{param_name}` given twice"))
        }
        K::CallParamNotBound { span, param_name } => {
            (*span, format!("missing argument `{param_name}`"))
        }
        _ => eval_message_ops(kind),
    }
}

/// [`eval_message`] for the kinds after the calls: operators, numbers, `std` arguments,
/// assertions, imports and comparisons.
fn eval_message_ops(kind: &EvalErrorKind) -> (Option<SpanId>, String) {
    use EvalErrorKind as K;
    let t = |t: &EvalErrorValueType| type_name(*t);
    match kind {
        K::NativeCallFailed => (None, "native functions are not available".into()),
        K::InvalidUnaryOpType { span, op, rhs_type } => (
            Some(*span),
            format!(
                "operator `{}` does not apply to {}",
                unary_text(*op),
                t(rhs_type)
            ),
        ),
        K::InvalidBinaryOpTypes {
            span,
            op,
            lhs_type,
            rhs_type,
        } => (
            *span,
            format!(
                "operator `{}` does not apply to {} and {}",
                binary_text(*op),
                t(lhs_type),
                t(rhs_type)
            ),
        ),
        K::NumberNotBitwiseSafe { span } => {
            (*span, "number too large for a bitwise operation".into())
        }
        K::NumberOverflow { span } => (*span, "number overflow".into()),
        K::NumberNan { span } => (*span, "result is not a number (NaN)".into()),
        K::DivByZero { span } => (*span, "division by zero".into()),
        K::ShiftByNegative { span } => (*span, "shift by a negative amount".into()),
        K::InvalidStdFuncArgType {
            func_name,
            arg_index,
            expected_types,
            got_type,
        } => {
            let want: Vec<&str> = expected_types.iter().map(t).collect();
            (
                None,
                format!(
                    "std.{func_name}: argument {} must be {}, got {}",
                    arg_index + 1,
                    want.join(" or "),
                    t(got_type)
                ),
            )
        }
        K::AssertFailed { span, message } => (
            Some(*span),
            match message {
                Some(m) => format!("assertion failed: {m}"),
                None => "assertion failed".into(),
            },
        ),
        K::AssertEqualFailed { lhs, rhs } => (None, format!("assertion failed: {lhs} != {rhs}")),
        K::ExplicitError { span, message } => (Some(*span), message.clone()),
        K::ImportFailed { span, path } => (Some(*span), format!("cannot import `{path}`")),
        K::UnknownExtVar { name } => (None, format!("unknown external variable `{name}`")),
        K::ManifestFunction => (None, "a function cannot be manifested as JSON".into()),
        K::CompareNullInequality => (None, "null cannot be ordered".into()),
        K::CompareBooleanInequality => (None, "booleans cannot be ordered".into()),
        K::CompareObjectInequality => (None, "objects cannot be ordered".into()),
        K::CompareFunctions => (None, "functions cannot be compared".into()),
        K::CompareDifferentTypesInequality { lhs_type, rhs_type } => (
            None,
            format!("cannot order {} and {}", t(lhs_type), t(rhs_type)),
        ),
        K::PrimitiveEqualsNonPrimitive { got_type } => (
            None,
            format!("std.primitiveEquals: cannot compare {}s", t(got_type)),
        ),
        K::Other { span, message } => (*span, message.clone()),
        // The kinds [`eval_message`] handles itself never reach here.
        other => (None, format!("{other:?}")),
    }
}

/// The span of a stack trace item, if it has one.
fn trace_span(item: &EvalStackTraceItem) -> Option<SpanId> {
    match item {
        EvalStackTraceItem::Expr { span }
        | EvalStackTraceItem::Variable { span, .. }
        | EvalStackTraceItem::Import { span } => Some(*span),
        EvalStackTraceItem::Call { span, .. }
        | EvalStackTraceItem::ArrayItem { span, .. }
        | EvalStackTraceItem::ObjectField { span, .. } => *span,
        _ => None,
    }
}

/// The path of the value being manifested when the error happened (`a.b[2]`), if any.
fn manifest_path(trace: &[EvalStackTraceItem]) -> String {
    let mut path = String::new();
    for item in trace {
        match item {
            EvalStackTraceItem::ManifestObjectField { name } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(name);
            }
            EvalStackTraceItem::ManifestArrayItem { index } => {
                path.push_str(&format!("[{index}]"));
            }
            _ => {}
        }
    }
    path
}

fn eval_error_line(cb: &Cb<'_>, program: &Program<'_>, name: &str, e: &EvalError) -> String {
    // A file that failed to load: its own error, in its own file.
    if let EvalErrorKind::ImportFailed { .. } = e.kind
        && let Some(ImportFailure::Load(inner)) = &cb.import_failure
    {
        return inner.clone();
    }
    let (span, mut message) = eval_message(&e.kind);
    if let EvalErrorKind::ImportFailed { .. } = e.kind
        && let Some(ImportFailure::Io(io)) = &cb.import_failure
    {
        message.push_str(&format!(": {io}"));
    }
    if span.is_none() {
        // No position on the error itself: name the output field being written, if any, and
        // locate the innermost stack frame that has a position.
        let at = manifest_path(&e.stack_trace);
        if !at.is_empty() {
            message.push_str(&format!(" (at `{at}`)"));
        }
    }
    let span = span.or_else(|| e.stack_trace.iter().rev().find_map(trace_span));
    let place = match span {
        Some(s) => located(&cb.sources, program, s, name),
        None => name.to_string(),
    };
    format!("{place}: jsonnet error: {message}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_to_one_line_of_json() {
        let json = to_json(
            b"{a: 1 + 1, b: [std.length('xy')]}",
            "t.jsonnet",
            Path::new("."),
        );
        assert_eq!(json.unwrap(), r#"{"a": 2, "b": [2]}"#);
    }

    #[test]
    fn errors_are_one_located_line() {
        let e = to_json(b"{\n  a: routs,\n}", "t.jsonnet", Path::new(".")).unwrap_err();
        assert_eq!(e.0, "t.jsonnet:2: jsonnet error: unknown variable `routs`");
        let e = to_json(b"{f: function(x) x}", "t.jsonnet", Path::new(".")).unwrap_err();
        assert!(e.0.starts_with("t.jsonnet"), "{e}");
        assert!(e.0.contains("(at `f`)"), "{e}");
    }
}

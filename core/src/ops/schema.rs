//! Operator argument schemas in TorchScript's syntax, as PyTorch's `native_functions.yaml` and
//! ExecuTorch's `functions.yaml` write them: `(Tensor self, int[2] stride=1, *, Scalar
//! alpha=1) -> Tensor`. Parsed once per operator; used to name arguments, fill the defaults a
//! `torch.export` graph leaves out, and check a node's arity.

/// An argument's type, as far as etscope distinguishes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgType {
    Tensor,
    OptionalTensor,
    TensorList,
    OptionalTensorList,
    Int,
    IntList,
    Float,
    FloatList,
    Bool,
    BoolList,
    Str,
    /// `Scalar`: an int, float or bool.
    Scalar,
    ScalarType,
    /// Any other type (layouts, devices, memory formats), kept by name.
    Other(String),
}

/// An argument's default value.
#[derive(Debug, Clone, PartialEq)]
pub enum Default {
    None,
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// An int list; a single int for an `int[N]` argument stands for N copies.
    Ints(Vec<i64>),
}

/// One argument.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgSpec {
    pub name: String,
    pub ty: ArgType,
    /// Whether the type is optional (`int?`, `Tensor?`).
    pub optional: bool,
    /// `int[2]`: the list's fixed length.
    pub fixed_len: Option<usize>,
    pub default: Option<Default>,
    /// After the `*`: passed by keyword only.
    pub keyword_only: bool,
}

/// A parsed schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub args: Vec<ArgSpec>,
    /// Number of returned values (a `Tensor[]` return counts as one).
    pub returns: usize,
    /// Whether it returns a tensor list (`-> Tensor[]`): its out variant writes a list of outs
    /// and returns nothing.
    pub returns_list: bool,
}

impl Schema {
    /// Parses `(args) -> returns`; `None` when the text is not a schema.
    pub fn parse(text: &str) -> Option<Schema> {
        let text = text.trim();
        let open = text.find('(')?;
        let close = matching_paren(text, open)?;
        let inner = &text[open + 1..close];
        let rest = text[close + 1..].trim();
        let returns = match rest.strip_prefix("->") {
            Some(r) => {
                let r = r.trim();
                match r.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
                    Some(list) if list.trim().is_empty() => 0,
                    Some(list) => split_top(list).len(),
                    None => usize::from(!r.is_empty()),
                }
            }
            None => 0,
        };
        let returns_list = rest
            .strip_prefix("->")
            .is_some_and(|r| r.trim().starts_with("Tensor[]"));
        let mut args = Vec::new();
        let mut keyword_only = false;
        for part in split_top(inner) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            if part == "*" {
                keyword_only = true;
                continue;
            }
            let mut arg = parse_arg(part)?;
            arg.keyword_only = keyword_only;
            args.push(arg);
        }
        Some(Schema {
            args,
            returns,
            returns_list,
        })
    }

    /// The index of the argument called `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.args.iter().position(|a| a.name == name)
    }
}

fn matching_paren(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices().skip_while(|&(i, _)| i < open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits on commas outside brackets and parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn parse_arg(part: &str) -> Option<ArgSpec> {
    let (decl, default) = match part.split_once('=') {
        Some((d, v)) => (d.trim(), Some(v.trim())),
        None => (part, None),
    };
    let (ty, name) = decl.rsplit_once(' ')?;
    // alias annotations: `Tensor(a!)` is a Tensor
    let ty = strip_alias(ty.trim());
    let optional = ty.ends_with('?');
    let base = ty.trim_end_matches('?');
    let (elem, list_len, is_list) = match base.find('[') {
        Some(i) => {
            let len = base[i + 1..].trim_end_matches(']').trim();
            (&base[..i], len.parse::<usize>().ok(), true)
        }
        None => (base, None, false),
    };
    let elem_optional = elem.ends_with('?');
    let elem = elem.trim_end_matches('?');
    let ty = match (elem, is_list) {
        ("Tensor", false) if optional => ArgType::OptionalTensor,
        ("Tensor", false) => ArgType::Tensor,
        ("Tensor", true) if elem_optional => ArgType::OptionalTensorList,
        ("Tensor", true) => ArgType::TensorList,
        ("int" | "SymInt", false) => ArgType::Int,
        ("int" | "SymInt", true) => ArgType::IntList,
        ("float", false) => ArgType::Float,
        ("float", true) => ArgType::FloatList,
        ("bool", false) => ArgType::Bool,
        ("bool", true) => ArgType::BoolList,
        ("str", _) => ArgType::Str,
        ("Scalar", _) => ArgType::Scalar,
        ("ScalarType", _) => ArgType::ScalarType,
        (other, _) => ArgType::Other(other.to_string()),
    };
    let default = match default {
        Some(v) => Some(parse_default(v, &ty)?),
        None => None,
    };
    Some(ArgSpec {
        name: name.trim().to_string(),
        ty,
        optional,
        fixed_len: list_len,
        default,
        keyword_only: false,
    })
}

fn strip_alias(ty: &str) -> String {
    match (ty.find('('), ty.find(')')) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &ty[..a], &ty[b + 1..]),
        _ => ty.to_string(),
    }
}

fn parse_default(v: &str, ty: &ArgType) -> Option<Default> {
    Some(match v {
        "None" => Default::None,
        "True" => Default::Bool(true),
        "False" => Default::Bool(false),
        _ if v.starts_with('[') => {
            let inner = v.trim_start_matches('[').trim_end_matches(']');
            Default::Ints(
                inner
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse().ok())
                    .collect::<Option<Vec<i64>>>()?,
            )
        }
        _ if v.starts_with('"') || v.starts_with('\'') => {
            Default::Str(v.trim_matches(|c| c == '"' || c == '\'').to_string())
        }
        _ => match ty {
            ArgType::IntList => Default::Ints(vec![v.parse().ok()?]),
            ArgType::Float => Default::Float(v.parse().ok()?),
            _ => match v.parse::<i64>() {
                Ok(i) => Default::Int(i),
                Err(_) => Default::Float(v.parse().ok()?),
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_with_keyword_arguments_lists_and_aliases_parses() {
        let s = Schema::parse(
            "(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        )
        .expect("parses");
        assert_eq!(s.args.len(), 4);
        assert_eq!(s.args[2].name, "alpha");
        assert!(s.args[2].keyword_only);
        assert_eq!(s.args[2].default, Some(Default::Int(1)));
        assert_eq!(s.args[3].ty, ArgType::Tensor);
        assert_eq!(s.returns, 1);
        let s = Schema::parse("(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, int? divisor_override=None) -> (Tensor, Tensor)").expect("parses");
        assert_eq!(s.args[1].fixed_len, Some(2));
        assert_eq!(s.args[2].default, Some(Default::Ints(vec![])));
        assert_eq!(s.args[3].default, Some(Default::Ints(vec![0])));
        assert_eq!(s.args[5].default, Some(Default::None));
        assert!(s.args[5].optional);
        assert_eq!(s.returns, 2);
        assert!(Schema::parse("no parenthesis").is_none());
        assert!(Schema::parse("(Tensor self, int x=oops) -> Tensor").is_none());
    }
}

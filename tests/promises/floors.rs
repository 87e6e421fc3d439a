//! The modules are floors: each may name only modules on its own floor or
//! below, and modules on one floor never name each other in a circle. The
//! floors are declared once, here ([`FLOORS`]); this test reads every source
//! file under `src/` and fails, naming file and line, on any `crate::` (or
//! `super::` reaching the crate root) reference that points up a floor,
//! joins two peers that must not know each other, or closes a circle. It also
//! checks that `src/lib.rs`'s module doc and README's Layout show the same
//! floors.
//!
//! What is read: code, not comments (a doc link to a higher floor names a
//! reader, it does not depend on it) and not `#[cfg(test)]` blocks (a unit
//! test may build what it checks from anywhere).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every top-level module and its floor, lowest first. A module not listed
/// fails the test: a new module must be given a floor.
const FLOORS: &[(u8, &[&str])] = &[
    (0, &["units", "error", "sys", "interrupt"]),
    (1, &["vocab", "engine", "stats", "probe"]),
    (2, &["result"]),
    (3, &["analysis"]),
    (4, &["safety", "medium"]),
    (5, &["live", "workload", "flash", "import", "cluster"]),
    (6, &["store", "report"]),
    (7, &["cli"]),
    (8, &["output", "commands"]),
];

/// Floors whose modules are peers that never name each other.
const PEERS: &[u8] = &[6];

/// Files that are not a module's production code.
const NOT_MODULES: &[&str] = &["lib.rs", "main.rs"];

fn floor_of(module: &str) -> Option<u8> {
    FLOORS
        .iter()
        .find(|(_, mods)| mods.contains(&module))
        .map(|(f, _)| *f)
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under src/: `a/b/c.rs` is `[a, b, c]`,
/// `a/b/mod.rs` is `[a, b]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

/// The source with comments and the insides of string and char literals
/// blanked (newlines kept, so line numbers hold).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // Raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let mut end = b"\"".to_vec();
            end.extend(std::iter::repeat_n(b'#', hashes));
            out.extend(std::iter::repeat_n(b' ', j + 1 - i));
            i = j + 1;
            while i < b.len() && !b[i..].starts_with(&end) {
                blank(&mut out, b[i]);
                i += 1;
            }
            out.extend(std::iter::repeat_n(b' ', end.len().min(b.len() - i)));
            i += end.len();
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                blank(&mut out, b[i]);
                i += 1;
            }
            out.push(b' ');
            i += 1;
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            out.extend_from_slice(b"   ");
            i += 3;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            // An escaped char literal such as '\n' or '\u{1F600}'.
            let mut j = i + 2;
            while j < b.len() && b[j] != b'\'' {
                j += 1;
            }
            out.extend(std::iter::repeat_n(b' ', j + 1 - i));
            i = j + 1;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The code with every `#[cfg(test)]` item (a `mod … { … }` or any braced
/// item) blanked.
fn without_test_blocks(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    let mark = b"#[cfg(test)]";
    while let Some(pos) = out[from..].windows(mark.len()).position(|w| w == mark) {
        let start = from + pos;
        // The item runs to the end of its first brace block, or to `;`.
        let mut i = start + mark.len();
        let mut depth = 0usize;
        while i < out.len() {
            match out[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        // Every byte of the item, multi-byte characters whole, becomes a
        // space; newlines stay so line numbers hold.
        for byte in &mut out[start..i.min(code.len())] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        from = i;
    }
    String::from_utf8(out).expect("blanking whole characters keeps UTF-8")
}

/// One reference from code to a top-level module.
struct Reference {
    file: String,
    line: usize,
    from: String,
    to: String,
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The top-level modules named after `crate::` (directly, or as the first
/// names of a `crate::{a, b::c}` group), and after `super::` chains that
/// reach the crate root, with their byte offsets.
fn referenced_modules(code: &str, path: &[String]) -> Vec<(usize, String)> {
    let b = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let at_word_start = i == 0 || !is_ident(b[i - 1]);
        if at_word_start && b[i..].starts_with(b"crate::") {
            let after = i + "crate::".len();
            names_at(code, after, &mut found);
            i = after;
        } else if at_word_start && b[i..].starts_with(b"super::") {
            // Count the chain of super:: and see where it lands.
            let mut depth = 0;
            let mut j = i;
            while b[j..].starts_with(b"super::") {
                depth += 1;
                j += "super::".len();
            }
            // A file's own module is `path`; `super` is its parent.
            if depth == path.len() {
                names_at(code, j, &mut found);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    found
}

/// The module name(s) at `at`: one identifier, or the first identifier of
/// each item of a `{…}` group.
fn names_at(code: &str, at: usize, found: &mut Vec<(usize, String)>) {
    let b = code.as_bytes();
    if b.get(at) == Some(&b'{') {
        let mut depth = 0;
        let mut i = at;
        let mut expect_name = true;
        while i < b.len() {
            match b[i] {
                b'{' => {
                    depth += 1;
                    if depth == 1 {
                        expect_name = true;
                    }
                }
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b',' if depth == 1 => expect_name = true,
                c if depth == 1 && expect_name && is_ident(c) => {
                    let end = (i..b.len()).find(|&k| !is_ident(b[k])).unwrap_or(b.len());
                    found.push((i, code[i..end].to_string()));
                    expect_name = false;
                    i = end;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    } else {
        let end = (at..b.len()).find(|&k| !is_ident(b[k])).unwrap_or(b.len());
        if end > at {
            found.push((at, code[at..end].to_string()));
        }
    }
}

fn line_of(code: &str, offset: usize) -> usize {
    code[..offset].bytes().filter(|&c| c == b'\n').count() + 1
}

fn all_references() -> (Vec<Reference>, Vec<String>) {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let test_only = test_only_files(&files);
    let mut refs = Vec::new();
    let mut undeclared = BTreeSet::new();
    for file in files.into_iter().filter(|f| !test_only.contains(f)) {
        let rel = file.strip_prefix(&src).unwrap().to_path_buf();
        if rel.components().count() == 1 && NOT_MODULES.contains(&rel.to_str().unwrap()) {
            continue;
        }
        let path = module_path(&rel);
        let module = path[0].clone();
        if floor_of(&module).is_none() {
            undeclared.insert(module.clone());
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = without_test_blocks(&code_only(&text));
        for (offset, to) in referenced_modules(&code, &path) {
            if to == module || floor_of(&to).is_none() && !is_top_module(&to) {
                continue;
            }
            refs.push(Reference {
                file: format!("src/{}", rel.display()),
                line: line_of(&code, offset),
                from: module.clone(),
                to,
            });
        }
    }
    (refs, undeclared.into_iter().collect())
}

/// Files that are modules declared `#[cfg(test)] mod name;`: test code
/// kept in a file of its own.
fn test_only_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut test_only = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let code = code_only(&text);
        let mut rest = code.as_str();
        while let Some(pos) = rest.find("#[cfg(test)]") {
            rest = &rest[pos + "#[cfg(test)]".len()..];
            let mut item = rest.trim_start();
            // `#[path = "x_tests.rs"]`: the file is beside this one.
            let mut by_path = None;
            if item.starts_with("#[path") {
                let at = code.len() - item.len();
                let end = item.find(']').unwrap_or(item.len());
                let attr = &text[at..at + end];
                by_path = attr.split('"').nth(1).map(str::to_string);
                item = item[end + 1..].trim_start();
            }
            let item = item.strip_prefix("pub(crate)").unwrap_or(item).trim_start();
            let Some(decl) = item.strip_prefix("mod ") else {
                continue;
            };
            let name: String = decl
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !decl[name.len()..].trim_start().starts_with(';') {
                continue;
            }
            if let Some(rel) = by_path {
                test_only.insert(file.parent().unwrap().join(rel));
                continue;
            }
            // `a/mod.rs` and `lib.rs` declare children beside them; `a/b.rs`
            // declares them in `a/b/`.
            let dir = match file.file_name().and_then(|n| n.to_str()) {
                Some("mod.rs" | "lib.rs" | "main.rs") => file.parent().unwrap().to_path_buf(),
                _ => file.with_extension(""),
            };
            test_only.insert(dir.join(format!("{name}.rs")));
            test_only.insert(dir.join(name).join("mod.rs"));
        }
    }
    test_only
}

/// True when `name` is a top-level module (a file or folder under src/).
fn is_top_module(name: &str) -> bool {
    let src = src_dir();
    src.join(format!("{name}.rs")).is_file() || src.join(name).join("mod.rs").is_file()
}

fn describe(r: &Reference) -> String {
    format!(
        "{}:{}: {} (floor {}) names {} (floor {})",
        r.file,
        r.line,
        r.from,
        floor_of(&r.from).unwrap(),
        r.to,
        floor_of(&r.to).map_or("undeclared".into(), |f| f.to_string())
    )
}

#[test]
fn every_module_has_a_floor() {
    let (refs, undeclared) = all_references();
    let unknown: BTreeSet<&str> = refs
        .iter()
        .filter(|r| floor_of(&r.to).is_none())
        .map(|r| r.to.as_str())
        .collect();
    assert!(
        undeclared.is_empty() && unknown.is_empty(),
        "modules without a floor in tests/promises/floors.rs's FLOORS: {undeclared:?} {unknown:?}"
    );
}

#[test]
fn imports_point_down_or_across_never_up() {
    let (refs, _) = all_references();
    let up: Vec<String> = refs
        .iter()
        .filter(|r| matches!((floor_of(&r.from), floor_of(&r.to)), (Some(a), Some(b)) if b > a))
        .map(describe)
        .collect();
    assert!(up.is_empty(), "references up a floor:\n{}", up.join("\n"));
}

#[test]
fn peers_never_name_each_other() {
    let (refs, _) = all_references();
    let across: Vec<String> = refs
        .iter()
        .filter(|r| {
            let (a, b) = (floor_of(&r.from), floor_of(&r.to));
            a == b && a.is_some_and(|f| PEERS.contains(&f))
        })
        .map(describe)
        .collect();
    assert!(
        across.is_empty(),
        "modules on a floor of peers name each other:\n{}",
        across.join("\n")
    );
}

#[test]
fn no_module_imports_close_a_circle() {
    let (refs, _) = all_references();
    // References up a floor are the test above's to report; with none, a
    // circle can only run between modules of one floor.
    let refs: Vec<&Reference> = refs
        .iter()
        .filter(|r| floor_of(&r.from) == floor_of(&r.to))
        .collect();
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in &refs {
        edges.entry(&r.from).or_default().insert(&r.to);
    }
    // An edge a → b closes a circle when b reaches a back.
    let reaches = |from: &str, goal: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(m) = todo.pop() {
            if m == goal {
                return true;
            }
            if seen.insert(m) {
                todo.extend(edges.get(m).into_iter().flatten().copied());
            }
        }
        false
    };
    let circles: Vec<String> = refs
        .iter()
        .filter(|r| reaches(&r.to, &r.from))
        .map(|&r| format!("{} (and {} reaches {} back)", describe(r), r.to, r.from))
        .collect();
    assert!(
        circles.is_empty(),
        "imports that close a circle:\n{}",
        circles.join("\n")
    );
}

/// The floors a table in `text` shows: rows `| N | `a`, `b` | … |`.
fn floors_in_table(text: &str, prefix: &str) -> BTreeMap<u8, BTreeSet<String>> {
    let mut shown: BTreeMap<u8, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines() {
        let Some(row) = line.strip_prefix(prefix) else {
            continue;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(floor), Some(mods)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Ok(floor) = floor.parse::<u8>() else {
            continue;
        };
        let names = mods
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|m| m.trim_end_matches('/').to_string());
        shown.entry(floor).or_default().extend(names);
    }
    shown
}

fn declared() -> BTreeMap<u8, BTreeSet<String>> {
    FLOORS
        .iter()
        .map(|(f, mods)| (*f, mods.iter().map(|m| m.to_string()).collect()))
        .collect()
}

#[test]
fn lib_rs_and_readme_show_the_declared_floors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    assert_eq!(
        floors_in_table(&lib, "//! "),
        declared(),
        "src/lib.rs's floor table differs from tests/promises/floors.rs's FLOORS"
    );
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let layout = readme
        .split("\n## ")
        .find(|section| section.starts_with("Layout"))
        .expect("README has a Layout section");
    assert_eq!(
        floors_in_table(layout, ""),
        declared(),
        "README's Layout floor table differs from tests/promises/floors.rs's FLOORS"
    );
}

#[test]
fn the_reader_sees_what_it_is_meant_to() {
    // The reader itself, on code written to trip it: a comment, a string, a
    // test block and a group must each count (or not) as they should.
    let code = code_only(
        "use crate::{report::x, units};\n// crate::cli\nlet s = \"crate::store\";\n#[cfg(test)]\nmod tests { use crate::output; }\nfn f() { crate::analysis::g(); super::super::probe::h(); }\n",
    );
    let code = without_test_blocks(&code);
    let names: Vec<(usize, String)> =
        referenced_modules(&code, &["a".to_string(), "b".to_string()]);
    let names: Vec<&str> = names.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(names, ["report", "units", "analysis", "probe"]);
    assert_eq!(line_of(&code, code.find("analysis").unwrap()), 6);
}

// ----- Inside a folder: circles between its files, and sizes -----

/// Every module path named after `crate::`, `super::` or `self::`, made
/// absolute (`crate::{a::b, c}` gives `[a, b]` and `[c]`), with its byte
/// offset. `path` is the naming file's own module path.
fn absolute_paths(code: &str, path: &[String]) -> Vec<(usize, Vec<String>)> {
    let b = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b':') {
            i += 1;
            continue;
        }
        let (base, after) = if b[i..].starts_with(b"crate::") {
            (Vec::new(), i + "crate::".len())
        } else if b[i..].starts_with(b"self::") {
            (path.to_vec(), i + "self::".len())
        } else if b[i..].starts_with(b"super::") {
            let mut depth = 0;
            let mut j = i;
            while b[j..].starts_with(b"super::") {
                depth += 1;
                j += "super::".len();
            }
            (path[..path.len().saturating_sub(depth)].to_vec(), j)
        } else {
            i += 1;
            continue;
        };
        let end = tree_paths(code, after, base, &mut found);
        i = end.max(i + 1);
    }
    found
}

/// The paths of one use tree starting at `at` (`a::b`, `a::{b, c::d}`),
/// each prefixed with `base`; returns where the tree ends.
fn tree_paths(
    code: &str,
    mut at: usize,
    mut base: Vec<String>,
    found: &mut Vec<(usize, Vec<String>)>,
) -> usize {
    let b = code.as_bytes();
    let start = at;
    loop {
        while at < b.len() && b[at].is_ascii_whitespace() {
            at += 1;
        }
        if b.get(at) == Some(&b'{') {
            at += 1;
            loop {
                while at < b.len() && (b[at].is_ascii_whitespace() || b[at] == b',') {
                    at += 1;
                }
                if at >= b.len() || b[at] == b'}' {
                    return at + 1;
                }
                let before = at;
                at = tree_paths(code, at, base.clone(), found);
                if at == before {
                    at += 1;
                }
            }
        }
        let end = (at..b.len()).find(|&k| !is_ident(b[k])).unwrap_or(b.len());
        if end == at {
            found.push((start, base));
            return at;
        }
        base.push(code[at..end].to_string());
        at = end;
        if b[at..].starts_with(b"::") {
            at += 2;
        } else {
            found.push((start, base));
            return at;
        }
    }
}

/// The longest prefix of `path` that is a file module under src/ (`a/b.rs`
/// or `a/b/mod.rs`); items and inline modules belong to their file.
fn file_module(path: &[String]) -> Vec<String> {
    let src = src_dir();
    let mut best = Vec::new();
    for n in 1..=path.len() {
        let rel: PathBuf = path[..n].iter().collect();
        if src.join(&rel).with_extension("rs").is_file() || src.join(&rel).join("mod.rs").is_file()
        {
            best = path[..n].to_vec();
        } else {
            break;
        }
    }
    best
}

/// One reference between two files (or subfolders) of one folder.
struct SiblingRef {
    file: String,
    line: usize,
    folder: String,
    from: String,
    to: String,
}

/// Every reference from a file to a sibling in a folder below src/: from
/// `a/b/c.rs` (or anything under `a/b/c/`) to `a/b/d.rs` (or under
/// `a/b/d/`). A folder's `mod.rs` is the folder itself, not a sibling.
fn sibling_references() -> Vec<SiblingRef> {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let test_only = test_only_files(&files);
    let mut refs = Vec::new();
    for file in files.into_iter().filter(|f| !test_only.contains(f)) {
        let rel = file.strip_prefix(&src).unwrap().to_path_buf();
        let from = module_path(&rel);
        let text = std::fs::read_to_string(&file).unwrap();
        let code = without_test_blocks(&code_only(&text));
        for (offset, named) in absolute_paths(&code, &from) {
            let to = file_module(&named);
            let k = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if k == 0 || k >= from.len() || k >= to.len() {
                continue;
            }
            refs.push(SiblingRef {
                file: format!("src/{}", rel.display()),
                line: line_of(&code, offset),
                folder: from[..k].join("/"),
                from: from[k].clone(),
                to: to[k].clone(),
            });
        }
    }
    refs
}

#[test]
fn no_files_of_one_folder_close_a_circle() {
    let refs = sibling_references();
    let mut edges: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for r in &refs {
        edges.entry((&r.folder, &r.from)).or_default().insert(&r.to);
    }
    let reaches = |folder: &str, from: &str, goal: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(m) = todo.pop() {
            if m == goal {
                return true;
            }
            if seen.insert(m) {
                todo.extend(edges.get(&(folder, m)).into_iter().flatten().copied());
            }
        }
        false
    };
    let circles: BTreeSet<String> = refs
        .iter()
        .filter(|r| reaches(&r.folder, &r.to, &r.from))
        .map(|r| {
            format!(
                "{}:{}: {}/{} names {}/{} (and {} reaches {} back)",
                r.file, r.line, r.folder, r.from, r.folder, r.to, r.to, r.from
            )
        })
        .collect();
    let circles: Vec<String> = circles.into_iter().collect();
    assert!(
        circles.is_empty(),
        "files of one folder that close a circle (move the shared piece into a file of its own):\n{}",
        circles.join("\n")
    );
}

/// The most lines a file under src/ may have, tests included.
const MAX_FILE_LINES: usize = 600;
/// The most code lines (not blank, not only a comment) a function may have,
/// from `fn` to its closing brace.
const MAX_FN_LINES: usize = 80;

#[test]
fn no_file_is_over_600_lines() {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(f, n)| format!("src/{}: {n} lines", f.strip_prefix(&src).unwrap().display()))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines (split them by what they hold):\n{}",
        long.join("\n")
    );
}

/// Every function with a body in `code`: its name, first line and number
/// of code lines.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(pos) = code[i..].find("fn ") {
        let at = i + pos;
        i = at + 3;
        if at > 0 && is_ident(b[at - 1]) {
            continue;
        }
        let name_end = (i..b.len()).find(|&k| !is_ident(b[k])).unwrap_or(b.len());
        if name_end == i {
            continue;
        }
        // The body opens at the first `{` outside the signature's brackets;
        // a `;` first is a declaration without one.
        let mut depth = 0i32;
        let mut open = None;
        for (k, &c) in b.iter().enumerate().skip(name_end) {
            match c {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    open = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut depth = 0usize;
        let mut close = b.len();
        for (k, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let first = line_of(code, at);
        let lines = code[at..(close + 1).min(b.len())]
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count();
        found.push((code[i..name_end].to_string(), first, lines));
    }
    found
}

#[test]
fn no_function_is_over_80_lines() {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut long = Vec::new();
    for file in &files {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        for (name, line, n) in functions(&code) {
            if n > MAX_FN_LINES {
                let rel = file.strip_prefix(&src).unwrap().display();
                long.push(format!("src/{rel}:{line}: fn {name}: {n} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} code lines (split them by step):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_folder_reader_sees_what_it_is_meant_to() {
    let path = ["a".to_string(), "b".to_string(), "c".to_string()];
    let code =
        code_only("use super::{d::X, e};\nfn f() { crate::a::{b::g, h}(); self::i::j(); }\n");
    let paths: Vec<Vec<String>> = absolute_paths(&code, &path)
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    let want: Vec<Vec<&str>> = vec![
        vec!["a", "b", "d", "X"],
        vec!["a", "b", "e"],
        vec!["a", "b", "g"],
        vec!["a", "h"],
        vec!["a", "b", "c", "i", "j"],
    ];
    assert_eq!(paths, want);
    let fns = functions(&code_only(
        "fn short() {\n    let x = 1;\n\n    // a comment\n}\ntrait T { fn decl(&self); }\nfn g<F: Fn() -> u8>(f: F) -> [u8; 2] { [f(), 0] }\n",
    ));
    let fns: Vec<(&str, usize, usize)> = fns.iter().map(|(n, l, c)| (n.as_str(), *l, *c)).collect();
    assert_eq!(fns, [("short", 1, 3), ("g", 7, 1)]);
}

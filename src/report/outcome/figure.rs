//! One figure of a command's outcome as the table formats carry it: the
//! section it belongs to (`drop`, `position`), its row within that section
//! when the section has many, its name with its unit's suffix, and its
//! value, typed. CSV writes these rows as they are; Markdown pivots the
//! sections into tables; both from the same list, so that neither format
//! can show a figure the other lacks.

/// The unit of a figure, which names the suffix of its column (the JSON
/// naming rule) and how Markdown words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A byte count: `_bytes`.
    Bytes,
    /// Integer nanoseconds: `_ns`.
    Ns,
    /// Seconds: `_s`.
    S,
    /// 10^6 bytes per second: `_mb_per_s`.
    MbPerS,
    /// Percent: `_pct`.
    Pct,
    /// A count, a ratio or a word: no suffix.
    Plain,
}

impl Unit {
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Bytes => "_bytes",
            Unit::Ns => "_ns",
            Unit::S => "_s",
            Unit::MbPerS => "_mb_per_s",
            Unit::Pct => "_pct",
            Unit::Plain => "",
        }
    }
}

/// A figure's value: a measured number, a count, or a word from a closed
/// set (an outcome, a direction) or a name from outside (an error).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Real(f64),
    Count(u64),
    Word(String),
}

/// One figure of an outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The part of the outcome: `write`, `drop`, `level`, `position`.
    pub section: &'static str,
    /// The row in a section of many (a level, a position), from 0.
    pub index: Option<usize>,
    /// The figure's name, without its unit's suffix.
    pub name: &'static str,
    pub unit: Unit,
    pub value: Value,
}

impl Figure {
    /// The name with its unit's suffix, as a column is named.
    pub fn column(&self) -> String {
        format!("{}{}", self.name, self.unit.suffix())
    }
}

/// Builds the figures of one section, in the order they are added.
#[derive(Default)]
pub struct Rows {
    pub out: Vec<Figure>,
    section: &'static str,
    index: Option<usize>,
}

impl Rows {
    /// The figures that follow belong to `section` (one row of it).
    pub fn section(&mut self, section: &'static str) -> &mut Rows {
        self.section = section;
        self.index = None;
        self
    }

    /// The figures that follow are row `index` of `section`.
    pub fn row(&mut self, section: &'static str, index: usize) -> &mut Rows {
        self.section = section;
        self.index = Some(index);
        self
    }

    pub fn add(&mut self, name: &'static str, unit: Unit, value: Value) -> &mut Rows {
        self.out.push(Figure {
            section: self.section,
            index: self.index,
            name,
            unit,
            value,
        });
        self
    }

    pub fn real(&mut self, name: &'static str, unit: Unit, v: f64) -> &mut Rows {
        self.add(name, unit, Value::Real(v))
    }

    /// A figure that may be absent: no row when it is.
    pub fn maybe(&mut self, name: &'static str, unit: Unit, v: Option<f64>) -> &mut Rows {
        match v {
            Some(v) => self.real(name, unit, v),
            None => self,
        }
    }

    pub fn count(&mut self, name: &'static str, unit: Unit, v: u64) -> &mut Rows {
        self.add(name, unit, Value::Count(v))
    }

    pub fn word(&mut self, name: &'static str, v: impl Into<String>) -> &mut Rows {
        self.add(name, Unit::Plain, Value::Word(v.into()))
    }

    /// Nanoseconds as seconds (`_s`), for the times a person reads in
    /// seconds (a drop 0.56 s in).
    pub fn seconds(&mut self, name: &'static str, ns: u64) -> &mut Rows {
        self.real(name, Unit::S, ns as f64 / 1e9)
    }
}

//! Label vocabularies shared by several benchmarks.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A CommonRouterBench capability tier: the cheapest model class that can do a step.
///
/// Integer ids as in CommonRouterBench (`low=0, mid=1, mid_high=2, high=3`, see
/// `specs/crb.md`); names as its `target_tier` strings. Ordered by capability (and price).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Tier 0 (`low`).
    Low = 0,
    /// Tier 1 (`mid`).
    Mid = 1,
    /// Tier 2 (`mid_high`).
    MidHigh = 2,
    /// Tier 3 (`high`).
    High = 3,
}

impl Tier {
    /// All tiers in id order.
    pub const ALL: [Tier; 4] = [Tier::Low, Tier::Mid, Tier::MidHigh, Tier::High];

    /// The tier with integer id `id` (0..=3), or `None`.
    pub fn from_id(id: i64) -> Option<Tier> {
        match id {
            0 => Some(Tier::Low),
            1 => Some(Tier::Mid),
            2 => Some(Tier::MidHigh),
            3 => Some(Tier::High),
            _ => None,
        }
    }

    /// The integer id (0..=3).
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The canonical name: `low`, `mid`, `mid_high` or `high`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Low => "low",
            Tier::Mid => "mid",
            Tier::MidHigh => "mid_high",
            Tier::High => "high",
        }
    }

    /// The tier named `name` (exact canonical name), or `None`.
    pub fn from_name(name: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A GQR-Bench routing label: one of the three in-domain targets, or out-of-domain.
///
/// GQR-Bench's `label2domain = {0: "law", 1: "finance", 2: "healthcare", 3: "ood"}` and its
/// inverse `domain2label` (`specs/gqr.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    /// Label 0: law.
    Law = 0,
    /// Label 1: finance.
    Finance = 1,
    /// Label 2: healthcare.
    Healthcare = 2,
    /// Label 3: out-of-domain (reject).
    Ood = 3,
}

impl Domain {
    /// All domains in label order.
    pub const ALL: [Domain; 4] = [
        Domain::Law,
        Domain::Finance,
        Domain::Healthcare,
        Domain::Ood,
    ];

    /// GQR-Bench's `label2domain`: the domain for integer label `label`, or `None` outside 0..=3.
    pub fn from_label(label: i64) -> Option<Domain> {
        Domain::ALL.into_iter().find(|d| *d as i64 == label)
    }

    /// GQR-Bench's `domain2label`: the integer label (0..=3).
    pub fn label(self) -> u8 {
        self as u8
    }

    /// The domain's name: `law`, `finance`, `healthcare` or `ood`.
    pub fn name(self) -> &'static str {
        match self {
            Domain::Law => "law",
            Domain::Finance => "finance",
            Domain::Healthcare => "healthcare",
            Domain::Ood => "ood",
        }
    }

    /// The domain named `name`, or `None`.
    pub fn from_name(name: &str) -> Option<Domain> {
        Domain::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_round_trip() {
        for t in Tier::ALL {
            assert_eq!(Tier::from_id(t.id() as i64), Some(t));
            assert_eq!(Tier::from_name(t.name()), Some(t));
        }
        assert_eq!(Tier::from_id(4), None);
        assert_eq!(Tier::from_name("HIGH"), None);
        assert!(Tier::Low < Tier::High);
    }

    #[test]
    fn domains_match_gqr_label2domain() {
        let expected = [(0, "law"), (1, "finance"), (2, "healthcare"), (3, "ood")];
        for (label, name) in expected {
            let d = Domain::from_label(label).unwrap();
            assert_eq!(d.name(), name);
            assert_eq!(Domain::from_name(name).unwrap().label() as i64, label);
        }
        assert_eq!(Domain::from_label(-1), None);
        assert_eq!(Domain::from_label(4), None);
    }
}

// SPDX-License-Identifier: GPL-2.0

//! The filter algebra of the ops registry: which functions an ops traces,
//! and how the selections of several ops combine.
//!
//! A user describes what an ops traces with two hashes (the tracefs files
//! `set_ftrace_filter` and `set_ftrace_notrace`):
//!
//! - an **empty filter** means every function; a non-empty filter means
//!   only the functions it names;
//! - the **notrace** hash names functions that are never traced: notrace
//!   wins over the filter.
//!
//! The pair has one trap. When a non-empty filter is wholly covered by the
//! notrace hash (filter `{vfs_read}`, notrace `{vfs_read}`), the user asked
//! for nothing. Computing "filter minus notrace" and storing the result as a
//! filter hash turns that nothing into an empty hash, which reads as
//! *every function*. Linux 7.2 does exactly that when it builds the hashes
//! of a manager ops (function_graph's) from its sub-ops, so a sub-op that
//! asked for nothing makes the kernel trace everything.
//!
//! This module keeps the two meanings apart by type:
//!
//! - [`Selection`] is what one ops traces: every function except a set
//!   ([`Selection::All`]), or only the functions of a set
//!   ([`Selection::Only`]), which may be empty: then it traces nothing.
//!   [`Selection::from_user`] reads a user's pair with the documented
//!   semantics; [`Selection::traces`] answers for one function.
//! - [`Selection::union`] and [`union_of`] combine selections the way a
//!   manager ops combines its sub-ops (it traces what any of them traces);
//!   [`Selection::intersection`] is for an ops that must trace only what
//!   two selections both trace.
//! - [`Hashes`] is the way back to the kernel's pair of hashes, with an
//!   explicit [`Hashes::Nothing`]: no pair of hashes stands for nothing,
//!   so the caller has to decide what "nothing" means for it (not
//!   registering the ops, or keeping its sites off), and cannot store an
//!   empty filter by accident.
//!
//! The sets themselves are behind the [`FnSet`] trait; the kernel
//! implements it over its hashes, the host tests over plain sets. Every
//! operation that makes a new set may fail (the kernel allocates), and the
//! failure is returned, never hidden.

/// A set of functions, named by their call-site address.
///
/// The operations that make a new set leave their operands as they were.
/// They may fail (the kernel's hashes are allocated); the error is passed
/// on unchanged by this module.
pub trait FnSet: Sized {
    /// Why a new set could not be made.
    type Error;

    /// A new, empty set.
    fn empty() -> Result<Self, Self::Error>;
    /// The set holds the function at `ip`.
    fn contains(&self, ip: u64) -> bool;
    /// The set holds no function.
    fn is_empty(&self) -> bool;
    /// A new set of the functions in `self` or in `other`.
    fn union(&self, other: &Self) -> Result<Self, Self::Error>;
    /// A new set of the functions in both `self` and `other`.
    fn intersection(&self, other: &Self) -> Result<Self, Self::Error>;
    /// A new set of the functions in `self` but not in `other`.
    fn difference(&self, other: &Self) -> Result<Self, Self::Error>;
}

/// What one ops traces.
///
/// The two variants never mean the same thing: [`Selection::All`] covers
/// functions no set names (every function of a module loaded later, for
/// one), so no `except` set exhausts it, while [`Selection::Only`] covers
/// nothing outside its set. An empty `Only` set is a legitimate value: the
/// ops traces nothing.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Selection<S> {
    /// Every function except those in `except`.
    All {
        /// The functions never traced.
        except: S,
    },
    /// Only the functions in `set`; none when `set` is empty.
    Only {
        /// The functions traced.
        set: S,
    },
}

impl<S: FnSet> Selection<S> {
    /// The selection of a user's `filter` and `notrace` hashes, read as
    /// documented: an empty filter selects every function except
    /// `notrace`; a non-empty filter selects its functions that are not in
    /// `notrace`, which may be none.
    pub fn from_user(filter: S, notrace: S) -> Result<Self, S::Error> {
        if filter.is_empty() {
            Ok(Selection::All { except: notrace })
        } else if notrace.is_empty() {
            Ok(Selection::Only { set: filter })
        } else {
            Ok(Selection::Only {
                set: filter.difference(&notrace)?,
            })
        }
    }

    /// The selection of no function.
    pub fn nothing() -> Result<Self, S::Error> {
        Ok(Selection::Only { set: S::empty()? })
    }

    /// The selection of every function.
    pub fn everything() -> Result<Self, S::Error> {
        Ok(Selection::All {
            except: S::empty()?,
        })
    }

    /// The ops traces the function at `ip`.
    pub fn traces(&self, ip: u64) -> bool {
        match self {
            Selection::All { except } => !except.contains(ip),
            Selection::Only { set } => set.contains(ip),
        }
    }

    /// The ops traces no function at all.
    ///
    /// Only an empty [`Selection::Only`] does: [`Selection::All`] always
    /// covers functions its `except` set does not name.
    pub fn is_nothing(&self) -> bool {
        match self {
            Selection::All { .. } => false,
            Selection::Only { set } => set.is_empty(),
        }
    }

    /// The functions traced by `self` or by `other`.
    pub fn union(&self, other: &Self) -> Result<Self, S::Error> {
        match (self, other) {
            (Selection::Only { set: a }, Selection::Only { set: b }) => {
                Ok(Selection::Only { set: a.union(b)? })
            }
            (Selection::All { except }, Selection::Only { set })
            | (Selection::Only { set }, Selection::All { except }) => Ok(Selection::All {
                except: except.difference(set)?,
            }),
            (Selection::All { except: a }, Selection::All { except: b }) => Ok(Selection::All {
                except: a.intersection(b)?,
            }),
        }
    }

    /// The functions traced by both `self` and `other`.
    pub fn intersection(&self, other: &Self) -> Result<Self, S::Error> {
        match (self, other) {
            (Selection::Only { set: a }, Selection::Only { set: b }) => Ok(Selection::Only {
                set: a.intersection(b)?,
            }),
            (Selection::All { except }, Selection::Only { set })
            | (Selection::Only { set }, Selection::All { except }) => Ok(Selection::Only {
                set: set.difference(except)?,
            }),
            (Selection::All { except: a }, Selection::All { except: b }) => Ok(Selection::All {
                except: a.union(b)?,
            }),
        }
    }

    /// The selection as a pair of hashes for the kernel, or
    /// [`Hashes::Nothing`] when it traces no function.
    pub fn into_hashes(self) -> Result<Hashes<S>, S::Error> {
        match self {
            Selection::All { except } => Ok(Hashes::Filter {
                filter: S::empty()?,
                notrace: except,
            }),
            Selection::Only { set } if set.is_empty() => Ok(Hashes::Nothing),
            Selection::Only { set } => Ok(Hashes::Filter {
                filter: set,
                notrace: S::empty()?,
            }),
        }
    }

    /// The selection a [`Hashes`] value stands for: a pair read as
    /// [`Selection::from_user`] reads it, [`Hashes::Nothing`] as no
    /// function.
    ///
    /// For every selection `s`, `from_hashes(s.into_hashes())` is `s`
    /// again.
    pub fn from_hashes(hashes: Hashes<S>) -> Result<Self, S::Error> {
        match hashes {
            Hashes::Filter { filter, notrace } => Self::from_user(filter, notrace),
            Hashes::Nothing => Self::nothing(),
        }
    }
}

/// A selection as the kernel stores it: a filter and a notrace hash, or
/// the explicit statement that nothing is traced.
///
/// # Invariants
///
/// Of the values [`Selection::into_hashes`] makes (the variant's fields
/// are public, so other values can be built; [`Selection::from_hashes`]
/// reads any pair with the documented semantics):
///
/// - in [`Hashes::Filter`], either `filter` is empty (every function but
///   `notrace`) or `filter` is not empty and `notrace` is; the pair
///   therefore selects at least one function;
/// - [`Hashes::Nothing`] exactly when the selection traces no function.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Hashes<S> {
    /// Trace what `filter` selects (every function when it is empty),
    /// except the functions in `notrace`.
    Filter {
        /// The filter hash; empty means every function.
        filter: S,
        /// The notrace hash.
        notrace: S,
    },
    /// Trace no function. No pair of hashes says this; in particular an
    /// empty filter says the opposite.
    Nothing,
}

/// What a manager ops traces: every function one of its sub-ops traces.
///
/// A manager without sub-ops traces nothing.
pub fn union_of<'a, S, I>(subs: I) -> Result<Selection<S>, S::Error>
where
    S: FnSet + 'a,
    I: IntoIterator<Item = &'a Selection<S>>,
{
    let mut acc = Selection::nothing()?;
    for sub in subs {
        acc = acc.union(sub)?;
    }
    Ok(acc)
}

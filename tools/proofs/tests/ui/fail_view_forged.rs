// An entry point trusts the views C passes it (kside::abi): safe code must
// not be able to make one of any pointer, here a lent out pointer.
#![allow(unexpected_cfgs)]

#[path = "../../../../rust/kside/abi.rs"]
#[allow(unused)]
mod abi;

use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

fn forge<'c>() -> abi::Lent<'c, u64> {
    abi::Lent {
        ptr: NonNull::dangling(),
        _call: PhantomData,
    }
}

fn main() {
    let _ = forge();
}
